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
					 enum valor_fast_action a, cell_word *p,
					 uint64_t w)
{
	on_access_slow(addr, size, SITE(), a, p, w);
}

/*
 * Where the writes of [@a, @end) stop being to cells this region owns
 * already: the cells a loop writes again (an FFT's later stages over
 * its row) cost a look each, not a call.
 */
static inline __attribute__((always_inline)) uintptr_t
skip_owned(struct valor_thread *th, uintptr_t a, uintptr_t end)
{
	const uint32_t ours = cw_owned_whole(th->slot);

	while (a < end) {
		uintptr_t next = (a | (CELL_SIZE - 1)) + 1;
		uint64_t cell = a >> CELL_SHIFT, n;
		cell_word *p = NULL;
		uint64_t w = 0;

		/*
		 * Whole cells of one leaf eight words (32 bytes) at a
		 * time, with no branch per word: half of an FFT's range
		 * calls were this look, a word at a time.
		 */
		n = ((cell | (SHADOW_LEAF_WORDS - 1)) + 1) - cell;
		if (n > (end - a) >> CELL_SHIFT)
			n = (end - a) >> CELL_SHIFT;
		if (!(a & (CELL_SIZE - 1)) && n >= 8) {
			cell_word *leaf =
				shadow_fast_leaf(rt_shadow_top, a, CELL_SIZE);
			uint64_t k = 0;

			if (!leaf)
				break;
			p = &leaf[cell & (SHADOW_LEAF_WORDS - 1)];
			for (; k + 8 <= n; k += 8) {
				uint32_t off = 0;

				for (unsigned i = 0; i < 8; i++)
					off |= atomic_load_explicit(
						       &p[k + i],
						       memory_order_acquire) ^
					       ours;
				if (off & CW_OWNED_MASK)
					break;
			}
			if (k) {
				a += k << CELL_SHIFT;
				continue;
			}
		}
		if (next > end)
			next = end;
		if (valor_o_fast_check(th, rt_shadow_top, a, next - a, true,
				       false, &p, &w) != VALOR_FAST_DONE)
			break;
		a = next;
	}
	return a;
}

/*
 * Where the reads of [@a, @end) stop being of bytes the read filter
 * holds from this region, a chunk (1 KiB) at a time: the walk starts
 * there, with no second look at the chunks before it.
 */
static inline __attribute__((always_inline)) uintptr_t
skip_held(struct valor_thread *th, uintptr_t a, uintptr_t end)
{
	const uintptr_t chunk = (uintptr_t)RFILTER_CHUNK_CELLS << CELL_SHIFT;

	while (a < end) {
		uintptr_t next = (a | (chunk - 1)) + 1;

		if (next > end)
			next = end;
		if (!rfilter_holds_range(th, a, next - a))
			break;
		a = next;
	}
	return a;
}

/*
 * The blocks a loop nest's accesses, checked once before it, stand for
 * (check_nest() below): with nothing to do, inline, for a range the
 * region has read all of already (the read filter says so without a
 * look at the cells: a row read again for every column of a matrix
 * product) or owns all of already; the rest in one call, which walks
 * them cell by cell (on_nest_walk()).  A thread off Valor's fast path
 * checks each block as one access; a thread not analysed, or busy
 * (rt_cur_vt NULL), none.
 */
static inline __attribute__((always_inline)) void
check_blocks(uintptr_t base, size_t extent, const struct nest_dim *d,
	     unsigned n, bool is_write, uintptr_t site)
{
	struct valor_thread *th = rt_cur_vt;

	if (!th)
		return;
	if (th->mode == THREAD_FAST) {
		if (!n) {
			uintptr_t end = base + extent;

			base = is_write ? skip_owned(th, base, end) :
					  skip_held(th, base, end);
			if (base == end)
				return;
			extent = end - base;
		} else if (nest_is_close(extent, d, n)) {
			/*
			 * Blocks that fill half their hull or more (an FFT
			 * stage's half-blocks): the hull owned or read
			 * whole, with no look at where the blocks are,
			 * means every block is.  A look only: nothing of
			 * the gaps is claimed or logged.
			 */
			uintptr_t end =
				nest_block_at(base, d, n, NULL) + extent;

			if ((is_write ? skip_owned(th, base, end) :
					skip_held(th, base, end)) == end)
				return;
		}
		on_nest_walk(base, extent, d, n, is_write, site);
		return;
	}
	if (th->mode == THREAD_ALONE) {
		/* What on_access() would do for each block. */
		size_t blocks = 1;

		for (unsigned i = 0; i < n; i++)
			blocks *= d[i].count;
		th->st.accesses_alone += blocks;
		return;
	}
	size_t idx[VALOR_PASS_NEST_DIMS] = { 0 };

	do
		on_access((void *)nest_block_at(base, d, n, idx), extent,
			  is_write, site);
	while (nest_block_next(d, n, idx));
}

/* A loop's reads as one range (the pass's loop coalescing). */
PASS_ENTRY void __valor_pass_read_range(void *addr, size_t len)
{
	if (len)
		check_blocks((uintptr_t)addr, len, NULL, 0, false, SITE());
}

/*
 * Neighbouring reads checked as one span (pass_abi.h) that the read
 * filter's inline look did not find all of: each cell's part as the
 * inline check takes an access, so that a span read for the first time
 * in a region (a hash node's key and link) costs what its reads did
 * one by one, not a range's walk.
 */
PASS_ENTRY void __valor_pass_read_span(void *addr, size_t size)
{
	uintptr_t a = (uintptr_t)addr, end = a + size, site = SITE();
	struct valor_thread *th = rt_cur_vt;

	if (!th)
		return;
	if (th->mode != THREAD_FAST) {
		check_blocks(a, size, NULL, 0, false, site);
		return;
	}
	while (a < end) {
		uintptr_t next = (a | (CELL_SIZE - 1)) + 1;
		enum valor_fast_action act;
		cell_word *p = NULL;
		uint64_t w = 0;
		size_t n;

		if (next > end)
			next = end;
		n = next - a;
		/* A slow path may have ended the region and left the mode. */
		if (th->mode != THREAD_FAST) {
			on_access((const void *)a, n, false, site);
			a = next;
			continue;
		}
		/*
		 * With the newest entry's look for any size (refined): a
		 * span that starts in the middle of a cell the log's newest
		 * entry is for (the fields after those a span before read)
		 * extends that entry instead of calling.
		 */
		act = valor_o_fast_check(th, rt_shadow_top, a, n, false, true,
					 &p, &w);
		if (act == VALOR_FAST_LOG)
			on_read_first(a,
				      (uint8_t)(((1U << n) - 1)
						<< (a & (CELL_SIZE - 1))),
				      site, w);
		else if (act != VALOR_FAST_DONE)
			on_access_slow(a, n, site, act, p, w);
		a = next;
	}
}

/*
 * Neighbouring writes checked as one span (pass_abi.h), whole cells,
 * that the inline look did not find all owned: a cell at a time, as
 * the inline check takes an access.
 */
PASS_ENTRY void __valor_pass_write_span(void *addr, size_t size)
{
	uintptr_t a = (uintptr_t)addr, end = a + size, site = SITE();

	while (a < end) {
		uintptr_t next = (a | (CELL_SIZE - 1)) + 1;

		if (next > end)
			next = end;
		on_access((const void *)a, next - a, true, site);
		a = next;
	}
}

/* A loop's writes as one range. */
PASS_ENTRY void __valor_pass_write_range(void *addr, size_t len)
{
	if (len)
		check_blocks((uintptr_t)addr, len, NULL, 0, true, SITE());
}

/*
 * The bytes a loop nest's accesses touch (pass_abi.h): @size bytes at
 * @base, repeated for each dimension count times, stride apart.  The
 * dimensions whose stride is at most the extent the others below them
 * cover merge into one block (a matrix's columns walked for every
 * column: the whole matrix); the rest, if any, are walked block by
 * block (a strided walk: an element at a time).  Exact either way:
 * every byte checked is one the nest touches.
 */
static inline __attribute__((always_inline)) void
check_nest(uintptr_t base, size_t size, struct nest_dim *d, unsigned n,
	   bool is_write, uintptr_t site)
{
	size_t extent = size;
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
	check_blocks(base, extent, d + n, kept - n, is_write, site);
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
