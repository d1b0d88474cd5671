/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The version of the runtime's contract with the LLVM pass (pass_abi.h
 * says what it covers and when to bump it), apart so that the pass's
 * C++ can include it without the runtime's C headers.
 */
#ifndef VALOR_RUNTIME_PASS_ABI_VERSION_H
#define VALOR_RUNTIME_PASS_ABI_VERSION_H

#define VALOR_PASS_ABI_VERSION 3
#define VALOR_PASS_ABI_SYMBOL __valor_pass_abi_v3
#define VALOR_PASS_ABI_SYMBOL_NAME "__valor_pass_abi_v3"

#endif /* VALOR_RUNTIME_PASS_ABI_VERSION_H */
