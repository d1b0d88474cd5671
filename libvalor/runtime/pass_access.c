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
 * The accesses of [@a, @end) cell by cell, each as the inline check
 * makes it: a read the filter holds costs a compare, the others reach
 * the log (or the write set) one by one, as the loop's own would.
 * Returns where it stopped: @end, or the first cell left when a cell's
 * check ended the region and the thread left Valor's fast path.
 */
static inline __attribute__((always_inline)) uintptr_t
check_cells(struct valor_thread *th, uintptr_t a, uintptr_t end, bool is_write,
	    uintptr_t site)
{
	while (a < end && likely(th->mode == THREAD_FAST)) {
		uintptr_t next = (a | (CELL_SIZE - 1)) + 1;

		on_access_fast(th, a, (next < end ? next : end) - a, is_write,
			       site);
		a = next;
	}
	return a;
}

/* What is left of a range once the thread left the fast path. */
static inline void check_rest(uintptr_t a, uintptr_t end, bool is_write,
			      uintptr_t site)
{
	if (a < end)
		on_access((void *)a, end - a, is_write, site);
}

/*
 * A loop's reads, checked once before it (the pass's loop coalescing),
 * a filter chunk (1 KiB) at a time: nothing to do for a chunk this
 * region has read every byte of already (the filter says so without a
 * look at the cells); the others cell by cell.  A chunk at a time, so
 * that a row whose filter entry lost one chunk to a column walk costs
 * that chunk only.
 */
PASS_ENTRY void __valor_pass_read_range(void *addr, size_t len)
{
	const uintptr_t chunk = (uintptr_t)RFILTER_CHUNK_CELLS << CELL_SHIFT;
	uintptr_t a = (uintptr_t)addr, end = a + len;
	struct valor_thread *th = rt_cur_vt;

	if (!th || th->mode != THREAD_FAST) {
		check_rest(a, end, false, SITE());
		return;
	}
	while (a < end) {
		uintptr_t next = (a | (chunk - 1)) + 1, stop;

		if (next > end)
			next = end;
		if (!rfilter_holds_range(th, a, next - a)) {
			stop = check_cells(th, a, next, false, SITE());
			if (stop < next || th->mode != THREAD_FAST) {
				check_rest(stop, end, false, SITE());
				return;
			}
		}
		a = next;
	}
}

/*
 * A loop's writes, checked once before it (-valor-coalesce-writes=1):
 * cell by cell, as the inline check makes them, so that the write set
 * gets the entries the loop's own writes would give it.
 */
PASS_ENTRY void __valor_pass_write_range(void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, end = a + len;
	struct valor_thread *th = rt_cur_vt;

	if (th && th->mode == THREAD_FAST)
		a = check_cells(th, a, end, true, SITE());
	check_rest(a, end, true, SITE());
}
