/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The same-epoch check of FastRCD and FastTrack, inline, for the
 * runtime's access entry points: an access the thread's current epoch
 * (region) made already -- a write record of this epoch covering the
 * bytes written, a read record covering the bytes read -- changes
 * nothing and needs no call.  This is hbcell.c's covers_unlocked() for
 * a cell whose records are all in the cell (hb_head_covers(), shared);
 * the rest is the engine's.
 */
#ifndef VALOR_CORE_HB_FAST_H
#define VALOR_CORE_HB_FAST_H

#include "hb_verdict.h"
#include "hbcell.h"
#include "internal.h"

enum hb_fast_action {
	HB_FAST_SEEN, /* the epoch made this access already: nothing to do */
	HB_FAST_CELL, /* one cell, *@c: hb_access_cell() */
	HB_FAST_FULL, /* the engine's full path (valor_access()) */
};

/*
 * Look at an access of @size bytes at @addr by @th (FastRCD or
 * FastTrack, a context whose shadow table is @top) without changing
 * anything.
 */
static inline __attribute__((always_inline)) enum hb_fast_action
hb_fast_check(const struct valor_thread *th, shadow_word *_Atomic *top,
	      uintptr_t addr, size_t size, bool is_write, struct hb_cell **c)
{
	uint64_t off = addr & (CELL_SIZE - 1), cell = addr >> CELL_SHIFT;
	/* A range (size > 8) leaves below; the shift stays defined for it. */
	uint8_t m = (uint8_t)(((1U << (size & 31)) - 1) << off);
	shadow_word *leaf;
	uint64_t h;

	leaf = shadow_fast_leaf(top, addr, size);
	if (__builtin_expect(!leaf, 0))
		return HB_FAST_FULL;
	*c = (struct hb_cell *)leaf + (cell & (SHADOW_LEAF_WORDS - 1));
	h = atomic_load_explicit(&(*c)->head, memory_order_acquire);
	if (h & (HB_LOCKED | HB_EXT))
		return HB_FAST_CELL;
	if (!hb_head_covers(*c, h, epoch_make(th->slot, th->clock), is_write,
			    m))
		return HB_FAST_CELL;
	/* Only if no lock holder moved records meanwhile. */
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&(*c)->head, memory_order_relaxed) == h ?
		       HB_FAST_SEEN :
		       HB_FAST_CELL;
}

#endif /* VALOR_CORE_HB_FAST_H */
