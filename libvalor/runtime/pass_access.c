// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The runtime's side of the LLVM pass (pass_abi.h): the out-of-line
 * paths of the check the pass inlines into the program.  Each is called
 * from the instrumented function itself, so its return address is the
 * access's site.  Built and placed like tsan_access.c (no frame pointer,
 * the access section): a report's frame walk and the signal wrapper
 * treat both alike.
 */
#include "pass_abi.h"
#include "tsan_access.h"

#define PASS_ENTRY RT_EXPORT __attribute__((section(VALOR_ACCESS_SECTION_NAME)))

RT_EXPORT const int VALOR_PASS_ABI_SYMBOL = VALOR_PASS_ABI_VERSION;

PASS_ENTRY void __valor_pass_read_first(uintptr_t addr, uint8_t m, uint64_t w)
{
	on_read_first(addr, m, SITE(), w);
}

PASS_ENTRY void __valor_pass_access_slow(uintptr_t addr, size_t size,
					 enum valor_fast_action a,
					 shadow_word *p, uint64_t w)
{
	on_access_slow(addr, size, SITE(), a, p, w);
}

/*
 * A loop's reads, checked once before it (the pass's loop coalescing),
 * a filter chunk (1 KiB) at a time: nothing to do for a piece this region
 * has read every byte of already (the filter says so without a look at
 * the cells); the others are checked as __tsan_read_range checks them.
 * A piece at a time, so that a row whose filter entry lost one chunk to
 * a column walk costs that chunk only.
 */
/*
 * The reads of [@a, @end) cell by cell, each as the inline check reads
 * it: a cell the filter holds costs a compare, the others are logged
 * one by one and join the log's entries as the loop's own reads would.
 */
static inline __attribute__((always_inline)) void
check_cells(struct valor_thread *th, uintptr_t a, uintptr_t end, bool is_write,
	    uintptr_t site)
{
	while (a < end && likely(th->mode == THREAD_FAST)) {
		uintptr_t next = (a | (CELL_SIZE - 1)) + 1;

		on_access_fast(th, a, (next < end ? next : end) - a, is_write,
			       site);
		a = next;
	}
}

PASS_ENTRY void __valor_pass_read_range(void *addr, size_t len)
{
	const uintptr_t chunk = (uintptr_t)RFILTER_CHUNK_CELLS << CELL_SHIFT;
	uintptr_t a = (uintptr_t)addr, end = a + len;
	struct valor_thread *th = rt_cur_vt;

	if (!len)
		return;
	if (!th || th->mode != THREAD_FAST) {
		on_access(addr, len, false, SITE());
		return;
	}
	while (a < end) {
		uintptr_t next = (a | (chunk - 1)) + 1;
		size_t piece = (next < end ? next : end) - a;

		/*
		 * A piece's check may end the region (a full log) and leave
		 * the thread running alone: then the rest as one range.
		 */
		if (!rfilter_holds_range(th, a, piece)) {
			check_cells(th, a, a + piece, false, SITE());
			if (rt_cur_vt != th || th->mode != THREAD_FAST) {
				if (end > next)
					on_access((void *)next, end - next,
						  false, SITE());
				return;
			}
		}
		a = next;
	}
}

/*
 * A loop's writes, checked once before it: cell by cell, as the inline
 * check does them, so that the write log gets the entries the loop's own
 * writes would give it.
 */
PASS_ENTRY void __valor_pass_write_range(void *addr, size_t len)
{
	struct valor_thread *th = rt_cur_vt;
	uintptr_t a = (uintptr_t)addr;

	if (!len)
		return;
	if (!th || th->mode != THREAD_FAST) {
		on_access(addr, len, true, SITE());
		return;
	}
	check_cells(th, a, a + len, true, SITE());
	if (rt_cur_vt == th && th->mode == THREAD_FAST)
		return;
	/* The region ended and the thread runs alone now: nothing to log. */
}
