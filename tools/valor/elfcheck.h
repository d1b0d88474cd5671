/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether a program was built with `valor cc`: its ELF symbols say which
 * ThreadSanitizer runtime, if any, provides the __tsan_* entry points.
 */
#ifndef VALOR_TOOL_ELFCHECK_H
#define VALOR_TOOL_ELFCHECK_H

enum elf_runtime {
	ELF_RUNTIME_VALOR, /* __tsan_init and the Valor runtime are in it */
	ELF_RUNTIME_LIBTSAN, /* instrumented, but linked with libtsan */
	ELF_RUNTIME_NONE, /* no __tsan_init: not instrumented */
	ELF_NOT_ELF, /* a script, or some other file */
	ELF_UNREADABLE, /* open or libelf failed; see errno / message */
};

/**
 * elf_runtime_of() - which race-detection runtime @path is linked with
 * @path: an executable
 * @why:  filled with a short reason for ELF_UNREADABLE and ELF_NOT_ELF
 * @len:  size of @why
 *
 * Looks at .symtab and .dynsym (so stripped programs work too) and the
 * DT_NEEDED entries.
 */
enum elf_runtime elf_runtime_of(const char *path, char *why, unsigned len);

#endif /* VALOR_TOOL_ELFCHECK_H */
