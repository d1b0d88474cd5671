// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The access check the LLVM pass inlines into the program
 * (libvalor/runtime/pass_abi.h).  Built to LLVM bitcode with the
 * runtime's headers and embedded in the pass plugin: the pass links in
 * the definitions a module calls and inlines every call.  This is the
 * runtime's own inline check (tsan_access.h), so the two cannot drift
 * apart; only its calls out of line differ (the CALL_* hooks below).
 *
 * Valor's fast path is inlined whole.  A thread on any other path
 * (FastRCD and FastTrack, a thread not analysed yet) costs a call to the
 * ABI entry point of the same size: inlining the happens-before check
 * as well would double the code every access adds.
 */
#define VALOR_CHECK_IN_PROGRAM
#define CALL_READ_FIRST(addr, m, site, w) \
	((void)(site), __valor_pass_read_first(addr, m, w))
#define CALL_ACCESS_SLOW(addr, size, site, a, p, w) \
	((void)(site), __valor_pass_access_slow(addr, size, a, p, w))
#define CALL_OTHER_MODE(th, addr, size, is_write, site) \
	((void)(th), (void)(site), abi_entry(size, is_write)((void *)(addr)))
/*
 * A thread alone skips its accesses uncounted: a counter in memory
 * bumped by every access of a loop is a chain of dependent stores, 15%
 * of pipeline (its serial check after the join) and 6% of ocean.  The
 * runtime's own paths (the ABI, ranges, interceptors) still count.
 */
#define COUNT_ALONE(th) ((void)(th))

#include <stdbool.h>
#include <stddef.h>

#define DECLARE_ABI_ENTRIES(size)           \
	void __tsan_read##size(void *addr); \
	void __tsan_write##size(void *addr);
DECLARE_ABI_ENTRIES(1)
DECLARE_ABI_ENTRIES(2)
DECLARE_ABI_ENTRIES(4)
DECLARE_ABI_ENTRIES(8)
DECLARE_ABI_ENTRIES(16)

/*
 * The ThreadSanitizer ABI's entry point for an access (tsan_access.c),
 * for the threads the inline check leaves to the runtime: called
 * straight from the program, it takes the access's site from its return
 * address like the check's own slow paths.  Constants fold the switch.
 */
typedef void (*abi_entry_fn)(void *addr);

static inline __attribute__((always_inline)) abi_entry_fn
abi_entry(size_t size, bool is_write)
{
	switch (size) {
	case 1:
		return is_write ? __tsan_write1 : __tsan_read1;
	case 2:
		return is_write ? __tsan_write2 : __tsan_read2;
	case 4:
		return is_write ? __tsan_write4 : __tsan_read4;
	case 8:
		return is_write ? __tsan_write8 : __tsan_read8;
	default:
		return is_write ? __tsan_write16 : __tsan_read16;
	}
}

#include "pass_abi.h"
#include "tsan_access.h"

#define DEFINE_CHECK(size)                         \
	void __valor_check_read##size(void *addr)  \
	{                                          \
		on_access(addr, size, false, 0);   \
	}                                          \
	void __valor_check_write##size(void *addr) \
	{                                          \
		on_access(addr, size, true, 0);    \
	}

DEFINE_CHECK(1)
DEFINE_CHECK(2)
DEFINE_CHECK(4)
DEFINE_CHECK(8)
DEFINE_CHECK(16)

/*
 * Neighbouring reads of one base the pass checks as one span of @size
 * bytes, 2 to 64 (valor_pass.cpp, mergeNeighbours()): the read
 * filter's look inline, as for one access; all else, a first read of
 * any of its bytes included, goes out of line, a cell at a time.
 */
void __valor_check_read_span(void *addr, size_t size)
{
	struct valor_thread *th = rt_cur_vt;

	if (__builtin_expect(!th, 0))
		return;
	if (__builtin_expect(th->mode == THREAD_FAST, 1)) {
		if (__builtin_expect(
			    rfilter_holds_span(th, (uintptr_t)addr, size), 1))
			return;
	} else if (th->mode == THREAD_ALONE) {
		return;
	}
	__valor_pass_read_span(addr, size);
}

/*
 * Neighbouring writes the pass checks as one span of @size bytes, whole
 * 8-aligned cells, 8 to 64 (mergeNeighbours()): one inline test that
 * the region owns them all; else a cell at a time, out of line.
 */
void __valor_check_write_span(void *addr, size_t size)
{
	struct valor_thread *th = rt_cur_vt;

	if (__builtin_expect(!th, 0))
		return;
	if (__builtin_expect(th->mode == THREAD_FAST, 1)) {
		if (__builtin_expect(valor_o_owns_span(th, rt_shadow_top,
						       (uintptr_t)addr, size),
				     1))
			return;
	} else if (th->mode == THREAD_ALONE) {
		return;
	}
	__valor_pass_write_span(addr, size);
}

/*
 * Before a lock call, the first accesses of the critical section
 * (valor_pass.cpp, prefetchAtLocks()): their memory and, for a thread
 * on Valor's fast path, their cell words, fetched while the runtime
 * ends the region.  Nothing is read but the thread's mode and the
 * shadow table, and nothing written: a prefetch of an address that is
 * not mapped does not fault.
 */
static inline __attribute__((always_inline)) void prefetch_cell(void *addr,
								bool is_write)
{
	struct valor_thread *th = rt_cur_vt;
	uintptr_t a = (uintptr_t)addr;
	cell_word *leaf;

	if (is_write)
		__builtin_prefetch(addr, 1);
	else
		__builtin_prefetch(addr, 0);
	if (!th || th->mode != THREAD_FAST)
		return;
	leaf = shadow_fast_leaf(rt_shadow_top, a, 1);
	if (!leaf)
		return;
	if (is_write)
		__builtin_prefetch(
			&leaf[(a >> CELL_SHIFT) & (SHADOW_LEAF_WORDS - 1)], 1);
	else
		__builtin_prefetch(
			&leaf[(a >> CELL_SHIFT) & (SHADOW_LEAF_WORDS - 1)], 0);
}

void __valor_prefetch_read(void *addr)
{
	prefetch_cell(addr, false);
}

void __valor_prefetch_write(void *addr)
{
	prefetch_cell(addr, true);
}
