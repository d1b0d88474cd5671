// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * FastTrack (Flanagan and Freund, PLDI 2009): happens-before race
 * detection with vector clocks, where a location's last write is one
 * epoch and its reads are one epoch until two concurrent reads need a
 * read vector (the read set).  Done here on a cell's records at once
 * (hbcell.h); per byte it is the paper's algorithm, but for the reads
 * a read set keeps (fasttrack_read()).
 */
#include "hb_verdict.h"
#include "hbcell.h"
#include "internal.h"

/*
 * A write of @todo: the last writes and the reads of those bytes that
 * do not happen before it race with it; then it is the bytes' write,
 * and of their reads only the writer's own stays.
 */
static void fasttrack_write(const struct hb_op *op, struct hb_work *w,
			    const struct hb_look *l, uint8_t todo)
{
	uint32_t slot = op->th->slot;

	for (uint32_t i = 0; i < w->n; i++) {
		struct hb_xrec *r = &w->v[i];
		uint8_t bytes = r->mask & todo;

		if (!bytes)
			continue;
		if (!happens_before(op->th, r->epoch))
			hb_report(op,
				  r->is_write ? VALOR_CONFLICT_WW :
						VALOR_CONFLICT_RW,
				  r, bytes);
		if (r->is_write || epoch_slot(r->epoch) != slot)
			r->mask &= (uint8_t)~todo;
	}
	hb_add(w, op, l, todo);
}

/*
 * A read of @todo: the last writes that do not happen before it race
 * with it.  Earlier reads that happen before it go (the thread's own
 * among them): a later write that races with one of them races with
 * this read too, on the same bytes, so the read set keeps only reads
 * concurrent with each other and finds the same races as the paper's
 * read vector, with as many entries as there are concurrent readers.
 */
static void fasttrack_read(const struct hb_op *op, struct hb_work *w,
			   const struct hb_look *l, uint8_t todo)
{
	for (uint32_t i = 0; i < w->n; i++) {
		struct hb_xrec *r = &w->v[i];
		uint8_t bytes = r->mask & todo;

		if (!bytes)
			continue;
		if (r->is_write) {
			if (!happens_before(op->th, r->epoch))
				hb_report(op, VALOR_CONFLICT_WR, r, bytes);
		} else if (happens_before(op->th, r->epoch)) {
			r->mask &= (uint8_t)~todo;
		}
	}
	hb_add(w, op, l, todo);
}

bool fasttrack_cell(const struct hb_op *op, struct hb_work *w, uint8_t m)
{
	struct hb_look l = hb_look(w, op);
	/* Bytes this epoch wrote (or read) already are left alone. */
	uint8_t todo = m & (uint8_t)~l.covered;

	if (!todo)
		return false;
	if (op->is_write)
		fasttrack_write(op, w, &l, todo);
	else
		fasttrack_read(op, w, &l, todo);
	return true;
}

void fasttrack_access(struct valor_thread *th, uintptr_t addr, size_t size,
		      bool is_write, uint64_t site)
{
	hb_apply(th, addr, size, is_write, false, site);
}

void fasttrack_free(struct valor_thread *th, uintptr_t addr, size_t size,
		    uint64_t site)
{
	hb_apply(th, addr, size, true, true, site);
}
