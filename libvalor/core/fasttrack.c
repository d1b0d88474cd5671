// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * FastTrack (Flanagan and Freund, PLDI 2009): happens-before race
 * detection with vector clocks, where a location's last write is one
 * epoch and its reads are one epoch until two concurrent reads need a
 * read vector (the read set).
 */
#include "hbcell.h"
#include "internal.h"

/* Does the access at @epoch happen before the current point of @th? */
static bool happens_before(const struct valor_thread *th, uint64_t epoch)
{
	return epoch_clock(epoch) <= vclock_get(&th->vc, epoch_slot(epoch));
}

static void fasttrack_read(const struct hb_op *op, struct hb_byte *b,
			   unsigned byte)
{
	const struct valor_thread *th = op->th;
	struct hb_access me = { op->epoch, op->site, th->tid };

	if (hb_readset_has(b, op->epoch))
		return; /* same epoch */
	if (b->w.epoch && !happens_before(th, b->w.epoch))
		hb_report(op, VALOR_CONFLICT_WR, byte, &b->w, true);
	if (!b->rs && (!b->r.epoch || happens_before(th, b->r.epoch))) {
		b->r = me; /* reads still totally ordered: one epoch */
		return;
	}
	hb_readset_put(&op->th->ctx->arena, b, &me);
}

static void fasttrack_write(const struct hb_op *op, struct hb_byte *b,
			    unsigned byte)
{
	const struct valor_thread *th = op->th;

	if (b->w.epoch == op->epoch)
		return; /* same epoch */
	if (b->w.epoch && !happens_before(th, b->w.epoch))
		hb_report(op, VALOR_CONFLICT_WW, byte, &b->w, true);
	if (b->rs) {
		for (uint32_t i = 0; i < b->rs->n; i++)
			if (!happens_before(th, b->rs->v[i].epoch))
				hb_report(op, VALOR_CONFLICT_RW, byte,
					  &b->rs->v[i], false);
	} else if (b->r.epoch && !happens_before(th, b->r.epoch)) {
		hb_report(op, VALOR_CONFLICT_RW, byte, &b->r, false);
	}
	b->w = (struct hb_access){ op->epoch, op->site, th->tid };
	hb_byte_keep_own_read(&op->th->ctx->arena, b, epoch_slot(op->epoch));
}

void fasttrack_byte(const struct hb_op *op, struct hb_byte *b, unsigned byte)
{
	if (op->is_write)
		fasttrack_write(op, b, byte);
	else
		fasttrack_read(op, b, byte);
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
