/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Valor-O's fast path, inline: the accesses that need no more than a
 * look at the cell word.  The runtime's __tsan_* entry points inline it,
 * so the common access costs no call; valor_o_access() starts with it.
 *
 *  - a write to bytes this region owns already: nothing to do;
 *  - a read of bytes no other region owns, which the read log holds
 *    already from this region: nothing to do.  The entry there
 *    finds every write by another thread after it, so after this read
 *    too, and names the same reading region: validating a second entry
 *    could only report what the first does;
 *  - a read of a compact cell not in the log yet: one entry, out of line;
 *  - any other write within one cell: straight to the cell's write
 *    analysis, out of line.
 *
 * Everything else (reads of bytes another region owns, first reads of a
 * cell refined per byte, accesses spanning cells, leaves not created
 * yet) takes the full path.
 */
#ifndef VALOR_CORE_VALOR_FAST_H
#define VALOR_CORE_VALOR_FAST_H

#include "internal.h"
#include "valor_word.h"

/* Out of line: log a read of a compact cell (valor.c). */
int valor_o_log_read(struct valor_thread *th, uint64_t cell, uint64_t w,
		     uint8_t m, uint64_t site);
/*
 * Out of line: a write of bytes @m of one cell the region does not own,
 * whose word is at @p.
 */
int valor_o_write_cell(struct valor_thread *th, shadow_word *p, uint64_t cell,
		       uint8_t m, uint64_t site);

#define VALOR_FAST_MISS (-1)

/*
 * The result valor_o_access() would return, or VALOR_FAST_MISS when the
 * access needs the full path.  @th->valor_fast must be true; @top is its
 * context's shadow table (th->shadow_top), which a caller with a single
 * context passes from a global so that finding the cell word does not
 * wait for the load of @th.
 */
static inline __attribute__((always_inline)) int
valor_o_fast(struct valor_thread *th, shadow_word *_Atomic *top, uintptr_t addr,
	     size_t size, bool is_write, uint64_t site)
{
	uint64_t off = addr & (CELL_SIZE - 1), cell = addr >> CELL_SHIFT;
	shadow_word *leaf;
	struct rfilter_entry *f;
	uint64_t w, tag;
	uint8_t m;

	if (__builtin_expect(off + size > CELL_SIZE ||
				     addr >= (1ULL << SHADOW_ADDR_BITS),
			     0))
		return VALOR_FAST_MISS;
	leaf = atomic_load_explicit(
		&top[cell >> (SHADOW_LEAF_SHIFT - CELL_SHIFT)],
		memory_order_acquire);
	if (__builtin_expect(!leaf, 0))
		return VALOR_FAST_MISS;
	w = atomic_load_explicit(&leaf[cell & (SHADOW_LEAF_WORDS - 1)],
				 memory_order_acquire);
	m = (uint8_t)(((1U << (off + size)) - 1) & ~((1U << off) - 1));
	if (is_write)
		return (w & VW_ACTIVE) && vw_slot(w) == th->slot &&
				       !vw_refined(w) && !(m & w & VW_NMASK) ?
			       0 :
			       valor_o_write_cell(
				       th,
				       &leaf[cell & (SHADOW_LEAF_WORDS - 1)],
				       cell, m, site);
	if (vw_refined(w)) {
		/* Bytes another region owns are a conflict: the full path. */
		shadow_word *blk = vw_block(w);

		for (unsigned b = off; b < off + size; b++) {
			uint64_t bw = atomic_load_explicit(
				&blk[b], memory_order_acquire);

			if ((bw & VW_ACTIVE) && vw_slot(bw) != th->slot)
				return VALOR_FAST_MISS;
		}
	} else if ((w & VW_ACTIVE) && vw_slot(w) != th->slot) {
		return VALOR_FAST_MISS;
	}
	f = rfilter_entry(th->rfilter, cell);
	tag = rfilter_tag(cell, th->rgen);
	if (f->tag == tag) {
		uint8_t *have = &f->mask[cell & (RFILTER_CHUNK_CELLS - 1)];

		if ((*have & m) == m)
			return 0;
		/*
		 * More bytes of the cell the newest entry is for, unchanged
		 * (a byte-by-byte scan): what the out-of-line append would do.
		 */
		if (!vw_refined(w) && th->rlog_n &&
		    th->rlog[th->rlog_n - 1].cell == cell &&
		    th->rlog[th->rlog_n - 1].snapshot == w) {
			th->rlog[th->rlog_n - 1].mask |= m;
			*have |= m;
			return 0;
		}
	}
	/* A refined cell is logged byte by byte, by the full path. */
	if (vw_refined(w))
		return VALOR_FAST_MISS;
	return valor_o_log_read(th, cell, w, m, site);
}

#endif /* VALOR_CORE_VALOR_FAST_H */
