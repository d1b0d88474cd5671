// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * FastRCD (the Valor paper, section 3.1, Algorithms 1 and 2): eager region
 * conflict detection.  A region is ongoing while its epoch's clock is
 * still its slot's clock; slots' clocks only grow, across occupants, so an
 * epoch of an exited thread is never ongoing.  Done here on a cell's
 * records at once (hbcell.h); per byte it is the paper's algorithm.
 */
#include "hb_verdict.h"
#include "hbcell.h"
#include "internal.h"

/*
 * Accesses of other threads' ongoing regions conflict with this one
 * (reads only with a write).  A write leaves of the bytes' records only
 * the writer's own reads; a read replaces the thread's own earlier read
 * and drops reads of regions that ended (the read map keeps only
 * ongoing readers).
 */
bool fastrcd_cell(const struct hb_op *op, struct hb_work *w, uint8_t m)
{
	struct hb_look l = hb_look(w, op);
	/* Bytes this region wrote (or read) already are left alone. */
	uint8_t todo = m & (uint8_t)~l.covered;
	uint32_t slot = op->th->slot;

	if (!todo)
		return false;
	for (uint32_t i = 0; i < w->n; i++) {
		struct hb_xrec *r = &w->v[i];
		uint8_t bytes = r->mask & todo;
		bool own, live;

		if (!bytes)
			continue;
		own = epoch_slot(r->epoch) == slot;
		live = !own && ongoing(op->th->ctx, r->epoch);
		if (live && (op->is_write || r->is_write))
			hb_report(op,
				  !r->is_write ? VALOR_CONFLICT_RW :
				  op->is_write ? VALOR_CONFLICT_WW :
						 VALOR_CONFLICT_WR,
				  r, bytes);
		if (op->is_write ? r->is_write || !own : !r->is_write && !live)
			r->mask &= (uint8_t)~todo;
	}
	hb_add(w, op, &l, todo);
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
