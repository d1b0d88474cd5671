/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The contract between the runtime and Valor's LLVM pass
 * (libvalor/instrument/, Documentation/instrumentation-pass.md).
 *
 * The pass inlines the runtime's own access check into the program: it
 * inserts a call to __valor_check_{read,write}{1,2,4,8,16}(addr) before
 * an access (__valor_check_{read,write}_span(addr, size) before the
 * first of neighbouring accesses it checks as one, and
 * __valor_prefetch_{read,write}(addr) before a lock call for the first
 * accesses of the critical section) and inlines the definition compiled from
 * libvalor/instrument/check.c, which includes the runtime's headers.
 * The check therefore sees the runtime's structures (the thread state
 * behind rt_cur_vt, the shadow table, the read filter) laid out exactly
 * as the runtime it was built with lays them out: the two are one build
 * and must be used together.  VALOR_PASS_ABI_VERSION names that pairing.
 * Every instrumented module refers to __valor_pass_abi_v<N>, which only
 * a runtime of the same version defines, so a program whose objects
 * were compiled by another version fails to link, naming that symbol,
 * instead of running a check that misreads the runtime's memory.
 * Bump the version whenever anything the check reads or writes changes
 * layout or meaning (struct valor_thread, the cell word, the read log,
 * the filter, the shadow table), or when an entry point below changes.
 *
 * What the pass emits for the rest of a program's memory operations is
 * the ThreadSanitizer ABI the runtime already implements (the inlined
 * check itself calls __tsan_{read,write}N for a thread not on Valor's
 * fast path): __tsan_{read,write}_range (odd sizes, and the ranges a
 * loop's accesses are checked as), __tsan_vptr_{read,update} and the
 * __tsan_atomic* operations, and calls to memcpy, memmove and memset,
 * which the runtime intercepts.  Each of those, and each entry point
 * below, takes its return address as the access's site: it is called
 * straight from the instrumented function.
 */
#ifndef VALOR_RUNTIME_PASS_ABI_H
#define VALOR_RUNTIME_PASS_ABI_H

#include "pass_abi_version.h"
#include "valor_fast.h"

extern const int VALOR_PASS_ABI_SYMBOL;

_Static_assert(offsetof(struct valor_thread, rfilter) ==
		       VALOR_PASS_ABI_THREAD_BYTES,
	       "struct valor_thread changed: bump VALOR_PASS_ABI_VERSION "
	       "and set VALOR_PASS_ABI_THREAD_BYTES (pass_abi_version.h)");

/* The out-of-line paths of the inlined check (tsan_access.h's). */
void __valor_pass_read_first(uintptr_t addr, uint8_t m, uint64_t w);
void __valor_pass_access_slow(uintptr_t addr, size_t size,
			      enum valor_fast_action a, cell_word *p,
			      uint64_t w);
/* The ranges of reads and writes the pass checks before a loop. */
void __valor_pass_read_range(void *addr, size_t len);
void __valor_pass_read_span(void *addr, size_t size);
void __valor_pass_write_span(void *addr, size_t size);
void __valor_pass_write_range(void *addr, size_t len);

/*
 * The accesses of a loop nest, checked once before it: @size bytes at
 * @base, repeated for each loop (innermost first) count times, stride
 * bytes apart (a stride may be negative; a loop the pass has no use for
 * is stride 0, count 1).  The pass emits it where the bytes form one
 * block whatever the counts (a matrix's columns, walked for every
 * column); the runtime checks exactly the bytes described, block or not.
 */
#define VALOR_PASS_NEST_DIMS 3
void __valor_pass_read_nest(void *base, size_t size, intptr_t stride1,
			    size_t count1, intptr_t stride2, size_t count2,
			    intptr_t stride3, size_t count3);
void __valor_pass_write_nest(void *base, size_t size, intptr_t stride1,
			     size_t count1, intptr_t stride2, size_t count2,
			     intptr_t stride3, size_t count3);

#endif /* VALOR_RUNTIME_PASS_ABI_H */
