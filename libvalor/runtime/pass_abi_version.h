/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The version of the runtime's contract with the LLVM pass (pass_abi.h
 * says what it covers and when to bump it), apart so that the pass's
 * C++ can include it without the runtime's C headers.
 */
#ifndef VALOR_RUNTIME_PASS_ABI_VERSION_H
#define VALOR_RUNTIME_PASS_ABI_VERSION_H

#define VALOR_PASS_ABI_VERSION 5
#define VALOR_PASS_ABI_SYMBOL __valor_pass_abi_v5
#define VALOR_PASS_ABI_SYMBOL_NAME "__valor_pass_abi_v5"

/*
 * Where struct valor_thread's read filter starts in this version (on
 * LP64): pass_abi.h stops the build when a change to the structure
 * moves it, the reminder to bump the version and to set this anew.
 */
#define VALOR_PASS_ABI_THREAD_BYTES 456

#endif /* VALOR_RUNTIME_PASS_ABI_VERSION_H */
