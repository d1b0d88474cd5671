// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * FastTrack (Flanagan and Freund, PLDI 2009): happens-before race
 * detection with vector clocks, where a location's last write is one
 * epoch and its reads are one epoch until two concurrent reads need a
 * read vector (the read set).  Done here on a cell's records at once
 * (hbcell.h); per byte it is the paper's algorithm.
 */
#include "hbcell.h"
#include "internal.h"

/* Does the access at @epoch happen before the current point of @th? */
static bool happens_before(const struct valor_thread *th, uint64_t epoch)
{
	return epoch_clock(epoch) <= vclock_get(&th->vc, epoch_slot(epoch));
}

/* Report the records of one kind that race with the access on @todo. */
static void report_racing(const struct hb_op *op, const struct hb_work *w,
			  uint8_t todo, bool writes, uint32_t kind)
{
	for (uint32_t i = 0; i < w->n; i++) {
		const struct hb_xrec *r = &w->v[i];
		uint8_t bytes = r->mask & todo;

		if (bytes && r->is_write == writes &&
		    !happens_before(op->th, r->epoch))
			hb_report(op, kind, r, bytes);
	}
}

static void fasttrack_read(const struct hb_op *op, struct hb_work *w,
			   uint8_t todo)
{
	uint32_t slot = op->th->slot;
	uint8_t once = 0, twice = 0, single;

	report_racing(op, w, todo, true, VALOR_CONFLICT_WR);
	for (uint32_t i = 0; i < w->n; i++) {
		if (!w->v[i].is_write) {
			twice |= once & w->v[i].mask;
			once |= w->v[i].mask;
		}
	}
	/*
	 * A byte read once keeps that read only while it is concurrent with
	 * this one (then the two make a read set); a read set keeps every
	 * entry; either way the thread's own earlier read is replaced.
	 */
	single = once & ~twice;
	for (uint32_t i = 0; i < w->n; i++) {
		struct hb_xrec *r = &w->v[i];

		if (r->is_write || !(r->mask & todo))
			continue;
		if (epoch_slot(r->epoch) == slot)
			r->mask &= (uint8_t)~todo;
		else if (happens_before(op->th, r->epoch))
			r->mask &= (uint8_t) ~(todo & single);
	}
	hb_add(w, op, todo);
}

bool fasttrack_cell(const struct hb_op *op, struct hb_work *w, uint8_t m)
{
	/* Bytes this epoch wrote (or read) already are left alone. */
	uint8_t todo = m & (uint8_t)~hb_covered(w, op->epoch, op->is_write);

	if (!todo)
		return false;
	if (!op->is_write) {
		fasttrack_read(op, w, todo);
		return true;
	}
	report_racing(op, w, todo, true, VALOR_CONFLICT_WW);
	report_racing(op, w, todo, false, VALOR_CONFLICT_RW);
	hb_write_update(w, op, op->th->slot, todo);
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
