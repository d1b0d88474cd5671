// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fixed-size access entry points of the ThreadSanitizer ABI
 * (tsan_abi.c has the rest): one inline check each (tsan_access.h).
 * This file is built with -fomit-frame-pointer and its functions go to
 * a section of their own; tsan_access.h says why and what that asks of
 * the report's stack walk.
 */
#include "tsan_access.h"

/*
 * Aligned, unaligned and volatile accesses are all the same to the
 * engine, which accepts any address and size.  The volatile and
 * read-write variants are emitted only with non-default flags (gcc
 * --param tsan-distinguish-volatile=1, clang -mllvm
 * -tsan-distinguish-volatile, -mllvm -tsan-compound-read-before-write).
 */
/*
 * Each entry point starts a cache line: where the linker happened to put
 * them moved whole workloads by 5%, with the same instructions.
 */
#define ACCESS_ENTRY                          \
	RT_EXPORT __attribute__((aligned(64), \
				 section(VALOR_ACCESS_SECTION_NAME)))

#define DEFINE_ACCESS(name, size, is_write)         \
	ACCESS_ENTRY void name(void *addr)          \
	{                                           \
		on_access(addr, size, is_write, 0); \
	}

#define DEFINE_ACCESS_SIZES(prefix, is_write) \
	DEFINE_ACCESS(prefix##1, 1, is_write) \
	DEFINE_ACCESS(prefix##2, 2, is_write) \
	DEFINE_ACCESS(prefix##4, 4, is_write) \
	DEFINE_ACCESS(prefix##8, 8, is_write) \
	DEFINE_ACCESS(prefix##16, 16, is_write)

#define DEFINE_UNALIGNED_SIZES(prefix, is_write) \
	DEFINE_ACCESS(prefix##2, 2, is_write)    \
	DEFINE_ACCESS(prefix##4, 4, is_write)    \
	DEFINE_ACCESS(prefix##8, 8, is_write)    \
	DEFINE_ACCESS(prefix##16, 16, is_write)

/* gcc and clang */
DEFINE_ACCESS_SIZES(__tsan_read, false)
DEFINE_ACCESS_SIZES(__tsan_write, true)
/* clang (gcc turns an unaligned access into a range) */
DEFINE_UNALIGNED_SIZES(__tsan_unaligned_read, false)
DEFINE_UNALIGNED_SIZES(__tsan_unaligned_write, true)
/* gcc and clang, with tsan-distinguish-volatile */
DEFINE_ACCESS_SIZES(__tsan_volatile_read, false)
DEFINE_ACCESS_SIZES(__tsan_volatile_write, true)
/* clang, with tsan-distinguish-volatile */
DEFINE_UNALIGNED_SIZES(__tsan_unaligned_volatile_read, false)
DEFINE_UNALIGNED_SIZES(__tsan_unaligned_volatile_write, true)
