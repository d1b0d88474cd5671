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
 * The reads of [@a, @end) cell by cell, each as the inline check makes
 * it: a read the filter holds costs a compare, the others reach the log
 * one by one, as the loop's own would.  Returns where it stopped: @end,
 * or the first cell left when a cell's check ended the region and the
 * thread left Valor's fast path.
 */
static inline __attribute__((always_inline)) uintptr_t
read_cells(struct valor_thread *th, uintptr_t a, uintptr_t end, uintptr_t site)
{
	while (a < end && likely(th->mode == THREAD_FAST)) {
		uintptr_t next = (a | (CELL_SIZE - 1)) + 1;

		on_access_fast(th, a, (next < end ? next : end) - a, false,
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
 * A block a loop's accesses, checked once before it, stand for: reads a
 * filter chunk (1 KiB) at a time, with nothing to do for a chunk this
 * region has read every byte of already (the filter says so without a
 * look at the cells), the others cell by cell; so that a row whose
 * filter entry lost one chunk to a column walk costs that chunk only.
 * Writes in one call to the engine, which takes the cells no region
 * owns over as runs of its write set (write_run() in valor.c).
 */
static inline __attribute__((always_inline)) void
check_block(struct valor_thread *th, uintptr_t a, uintptr_t end, bool is_write,
	    uintptr_t site)
{
	const uintptr_t chunk = (uintptr_t)RFILTER_CHUNK_CELLS << CELL_SHIFT;

	if (!th || th->mode != THREAD_FAST) {
		check_rest(a, end, is_write, site);
		return;
	}
	if (is_write) {
		on_access_full(a, end - a, true, site);
		return;
	}
	while (a < end) {
		uintptr_t next = (a | (chunk - 1)) + 1, stop;

		if (next > end)
			next = end;
		if (!rfilter_holds_range(th, a, next - a)) {
			stop = read_cells(th, a, next, site);
			if (stop < next || th->mode != THREAD_FAST) {
				check_rest(stop, end, false, site);
				return;
			}
		}
		a = next;
	}
}

/* A loop's reads as one range (the pass's loop coalescing). */
PASS_ENTRY void __valor_pass_read_range(void *addr, size_t len)
{
	check_block(rt_cur_vt, (uintptr_t)addr, (uintptr_t)addr + len, false,
		    SITE());
}

/* A loop's writes as one range. */
PASS_ENTRY void __valor_pass_write_range(void *addr, size_t len)
{
	check_block(rt_cur_vt, (uintptr_t)addr, (uintptr_t)addr + len, true,
		    SITE());
}

struct nest_dim {
	intptr_t stride;
	size_t count;
};

/*
 * The bytes a loop nest's accesses touch (pass_abi.h): @size bytes at
 * @base, repeated for each dimension count times, stride apart.  The
 * dimensions whose stride is at most the extent the others below them
 * cover merge into one block (a matrix's columns walked for every
 * column: the whole matrix); the rest, if any, are walked here, a block
 * at a time.  Exact either way: every byte checked is one the nest
 * touches.
 */
static inline __attribute__((always_inline)) void
check_nest(uintptr_t base, size_t size, struct nest_dim *d, unsigned n,
	   bool is_write, uintptr_t site)
{
	struct valor_thread *th = rt_cur_vt;
	size_t extent = size, idx[VALOR_PASS_NEST_DIMS] = { 0 };
	unsigned kept = 0;

	if (!size)
		return;
	/* Downward walks from their lowest address; drop the dimensions
	 * that do not move, and the loops that run once. */
	for (unsigned i = 0; i < n; i++) {
		if (!d[i].count)
			return;
		if (d[i].stride < 0) {
			base += (uintptr_t)d[i].stride * (d[i].count - 1);
			d[i].stride = -d[i].stride;
		}
		if (d[i].stride && d[i].count > 1)
			d[kept++] = d[i];
	}
	for (unsigned i = 1; i < kept; i++)
		for (unsigned j = i; j && d[j].stride < d[j - 1].stride; j--) {
			struct nest_dim t = d[j];

			d[j] = d[j - 1];
			d[j - 1] = t;
		}
	n = 0;
	while (n < kept && (size_t)d[n].stride <= extent) {
		extent += (size_t)d[n].stride * (d[n].count - 1);
		n++;
	}
	d += n;
	kept -= n;
	for (;;) {
		uintptr_t a = base;

		for (unsigned i = 0; i < kept; i++)
			a += (uintptr_t)d[i].stride * idx[i];
		check_block(th, a, a + extent, is_write, site);
		th = rt_cur_vt;
		unsigned i = 0;

		while (i < kept && ++idx[i] == d[i].count)
			idx[i++] = 0;
		if (i == kept)
			return;
	}
}

/* The entry points' common body; each takes its own return address. */
static inline __attribute__((always_inline)) void
nest_entry(void *base, size_t size, intptr_t stride1, size_t count1,
	   intptr_t stride2, size_t count2, intptr_t stride3, size_t count3,
	   bool is_write, uintptr_t site)
{
	struct nest_dim d[VALOR_PASS_NEST_DIMS] = { { stride1, count1 },
						    { stride2, count2 },
						    { stride3, count3 } };

	check_nest((uintptr_t)base, size, d, VALOR_PASS_NEST_DIMS, is_write,
		   site);
}

PASS_ENTRY void __valor_pass_read_nest(void *base, size_t size,
				       intptr_t stride1, size_t count1,
				       intptr_t stride2, size_t count2,
				       intptr_t stride3, size_t count3)
{
	nest_entry(base, size, stride1, count1, stride2, count2, stride3,
		   count3, false, SITE());
}

PASS_ENTRY void __valor_pass_write_nest(void *base, size_t size,
					intptr_t stride1, size_t count1,
					intptr_t stride2, size_t count2,
					intptr_t stride3, size_t count3)
{
	nest_entry(base, size, stride1, count1, stride2, count2, stride3,
		   count3, true, SITE());
}
