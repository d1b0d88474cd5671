/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Symbolization for reports (symbolize.c): code addresses to function,
 * file:line and module with libdw, inlined calls expanded; data
 * addresses to the global symbol that covers them.  Results are cached
 * for the life of the process, and the strings they point to never move.
 *
 * Report path only: libdw allocates with malloc, so callers must be busy
 * (the interceptors then pass straight to glibc).  Thread-safe: one
 * internal lock (never a pthread one) around libdw and the cache.
 */
#ifndef VALOR_RUNTIME_SYMBOLIZE_H
#define VALOR_RUNTIME_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rt_frame {
	uintptr_t pc;
	const char *function; /* NULL if unknown */
	const char *file; /* full path, NULL if unknown */
	unsigned line; /* 0 if unknown */
	unsigned column; /* 0 if unknown */
	const char *module; /* path of the ELF object, NULL if unknown */
	uintptr_t module_base; /* pc - module_base is the module offset */
	bool inlined; /* this call was inlined into the next frame */
	bool runtime; /* code of the runtime or engine itself */
	bool exported; /* outermost frame of a pc: a global symbol */
};

/*
 * Symbolize @pc into at most @max frames, innermost first: more than one
 * when @pc is in inlined code (the inlined functions, then the function
 * they were inlined into, each with the line of its call).  Returns the
 * number of frames written, at least 1 when @max > 0 (a frame with only
 * the pc, and the module if known, when there is no symbol).
 */
unsigned rt_symbolize_pc(uintptr_t pc, struct rt_frame *out, unsigned max);

struct rt_data_symbol {
	const char *name; /* without a symbol version (@GLIBC_2.2.5) */
	uintptr_t start;
	size_t size;
	const char *module;
	uintptr_t module_base;
};

/* The data symbol whose [start, start+size) contains @addr. */
bool rt_symbolize_data(uintptr_t addr, struct rt_data_symbol *out);

/*
 * A report begins: it may re-read the process's mappings once if an
 * address is in no known module (a library opened with dlopen since).
 */
void rt_symbolize_begin(void);

/* In the child of fork(): another thread of the parent may hold the lock. */
void rt_symbolize_after_fork_child(void);

#endif /* VALOR_RUNTIME_SYMBOLIZE_H */
