// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * FastRCD (the Valor paper, section 3.1, Algorithms 1 and 2): eager region
 * conflict detection.  A region is ongoing while its epoch's clock is
 * still its slot's clock; slots' clocks only grow, across occupants, so an
 * epoch of an exited thread is never ongoing.
 */
#include "hbcell.h"
#include "internal.h"

static bool ongoing(const struct valor_ctx *ctx, uint64_t epoch)
{
	uint32_t slot = epoch_slot(epoch);

	return epoch && epoch_clock(epoch) ==
				atomic_load_explicit(&ctx->slots[slot].clock,
						     memory_order_acquire);
}

/* Another thread's region that is still going on? */
static bool other_ongoing(const struct hb_op *op, uint64_t epoch)
{
	return epoch && epoch_slot(epoch) != op->th->slot &&
	       ongoing(op->th->ctx, epoch);
}

static void fastrcd_read(const struct hb_op *op, struct hb_byte *b,
			 unsigned byte)
{
	struct valor_ctx *ctx = op->th->ctx;
	struct hb_access me = { op->epoch, op->site, op->th->tid };

	if (hb_readset_has(b, op->epoch))
		return; /* read already in this region */
	if (other_ongoing(op, b->w.epoch))
		hb_report(op, VALOR_CONFLICT_WR, byte, &b->w, true);

	if (!b->rs) {
		if (!b->r.epoch || epoch_slot(b->r.epoch) == op->th->slot ||
		    !ongoing(ctx, b->r.epoch)) {
			b->r = me;
			return;
		}
		hb_readset_put(&op->th->ctx->arena, b, &me);
		return;
	}
	/* Read map: keep only readers whose regions are ongoing. */
	uint32_t kept = 0;

	for (uint32_t i = 0; i < b->rs->n; i++)
		if (ongoing(ctx, b->rs->v[i].epoch))
			b->rs->v[kept++] = b->rs->v[i];
	b->rs->n = kept;
	hb_readset_put(&op->th->ctx->arena, b, &me);
}

static void fastrcd_write(const struct hb_op *op, struct hb_byte *b,
			  unsigned byte)
{
	if (b->w.epoch == op->epoch)
		return; /* written already in this region */
	if (other_ongoing(op, b->w.epoch))
		hb_report(op, VALOR_CONFLICT_WW, byte, &b->w, true);
	if (b->rs) {
		for (uint32_t i = 0; i < b->rs->n; i++)
			if (other_ongoing(op, b->rs->v[i].epoch))
				hb_report(op, VALOR_CONFLICT_RW, byte,
					  &b->rs->v[i], false);
	} else if (other_ongoing(op, b->r.epoch)) {
		hb_report(op, VALOR_CONFLICT_RW, byte, &b->r, false);
	}
	b->w = (struct hb_access){ op->epoch, op->site, op->th->tid };
	hb_byte_keep_own_read(&op->th->ctx->arena, b, epoch_slot(op->epoch));
}

void fastrcd_byte(const struct hb_op *op, struct hb_byte *b, unsigned byte)
{
	if (op->is_write)
		fastrcd_write(op, b, byte);
	else
		fastrcd_read(op, b, byte);
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
