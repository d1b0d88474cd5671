// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * FastRCD (the Valor paper, section 3.1, Algorithms 1 and 2): eager region
 * conflict detection.  A region is ongoing while its epoch's clock is
 * still its slot's clock; slots' clocks only grow, across occupants, so an
 * epoch of an exited thread is never ongoing.  Done here on a cell's
 * records at once (hbcell.h); per byte it is the paper's algorithm.
 */
#include "hbcell.h"
#include "internal.h"

static bool ongoing(const struct valor_ctx *ctx, uint64_t epoch)
{
	uint32_t slot = epoch_slot(epoch);

	return epoch_clock(epoch) ==
	       atomic_load_explicit(&ctx->slots[slot].clock,
				    memory_order_acquire);
}

/* Report the records of one kind of other threads' ongoing regions. */
static void report_ongoing(const struct hb_op *op, const struct hb_work *w,
			   uint8_t todo, bool writes, uint32_t kind)
{
	for (uint32_t i = 0; i < w->n; i++) {
		const struct hb_xrec *r = &w->v[i];
		uint8_t bytes = r->mask & todo;

		if (bytes && r->is_write == writes &&
		    epoch_slot(r->epoch) != op->th->slot &&
		    ongoing(op->th->ctx, r->epoch))
			hb_report(op, kind, r, bytes);
	}
}

bool fastrcd_cell(const struct hb_op *op, struct hb_work *w, uint8_t m)
{
	/* Bytes this region wrote (or read) already are left alone. */
	uint8_t todo = m & (uint8_t)~hb_covered(w, op->epoch, op->is_write);

	if (!todo)
		return false;
	if (op->is_write) {
		report_ongoing(op, w, todo, true, VALOR_CONFLICT_WW);
		report_ongoing(op, w, todo, false, VALOR_CONFLICT_RW);
		hb_write_update(w, op, op->th->slot, todo);
		return true;
	}
	report_ongoing(op, w, todo, true, VALOR_CONFLICT_WR);
	/*
	 * The read map keeps only readers whose regions are ongoing, and
	 * the thread's own earlier read is replaced.
	 */
	for (uint32_t i = 0; i < w->n; i++) {
		struct hb_xrec *r = &w->v[i];

		if (!r->is_write && (r->mask & todo) &&
		    (epoch_slot(r->epoch) == op->th->slot ||
		     !ongoing(op->th->ctx, r->epoch)))
			r->mask &= (uint8_t)~todo;
	}
	hb_add(w, op, todo);
	return true;
}

void fastrcd_access(struct valor_thread *th, uintptr_t addr, size_t size,
		    bool is_write, uint64_t site)
{
	hb_apply(th, addr, size, is_write, false, site);
}

void fastrcd_free(struct valor_thread *th, uintptr_t addr, size_t size,
		  uint64_t site)
{
	hb_apply(th, addr, size, true, true, site);
}
