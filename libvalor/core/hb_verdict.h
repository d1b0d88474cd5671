/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What FastRCD and FastTrack decide about one earlier record of bytes an
 * access touches, and the in-place step built on it (hb_cell_inline()):
 * inline here because the runtime takes that step itself, around no
 * re-entry guard, on every first access of an epoch that needs neither
 * a report nor a block.  fastrcd.c and fasttrack.c have the general
 * path, which reports.
 */
#ifndef VALOR_CORE_HB_VERDICT_H
#define VALOR_CORE_HB_VERDICT_H

#include "hbcell.h"
#include "internal.h"
#include "vclock.h"

/* FastTrack: does the access at @epoch happen before @th's present? */
static inline bool happens_before(const struct valor_thread *th, uint64_t epoch)
{
	return epoch_clock(epoch) <= vclock_get(&th->vc, epoch_slot(epoch));
}

/* FastRCD: is the region of @epoch still going? */
static inline bool ongoing(const struct valor_ctx *ctx, uint64_t epoch)
{
	uint32_t slot = epoch_slot(epoch);

	return epoch_clock(epoch) ==
	       atomic_load_explicit(&ctx->slots[slot].clock,
				    memory_order_acquire);
}

/*
 * FastTrack: a last write or read that does not happen before the
 * access races with it (reads only with a write); a write leaves of the
 * bytes' records only the writer's own reads, a read drops the reads
 * that happen before it (fasttrack.c).
 */
static inline enum hb_verdict fasttrack_judge(const struct hb_op *op,
					      uint64_t epoch, bool was_write)
{
	bool before = happens_before(op->th, epoch);

	if (!before && (op->is_write || was_write))
		return HB_RACE;
	if (op->is_write ? was_write || epoch_slot(epoch) != op->th->slot :
			   !was_write && before)
		return HB_DROP;
	return HB_KEEP;
}

/*
 * FastRCD: another thread's ongoing region conflicts (reads only with a
 * write); a write leaves only the writer's own reads, a read drops reads
 * of regions that ended (fastrcd.c).
 */
static inline enum hb_verdict fastrcd_judge(const struct hb_op *op,
					    uint64_t epoch, bool was_write)
{
	bool own = epoch_slot(epoch) == op->th->slot;
	bool live = !own && ongoing(op->th->ctx, epoch);

	if (live && (op->is_write || was_write))
		return HB_RACE;
	if (op->is_write ? was_write || !own : !was_write && !live)
		return HB_DROP;
	return HB_KEEP;
}

/* hb_cell_inline() with the context's analysis. */
static inline __attribute__((always_inline)) bool
hb_cell_inline_any(const struct hb_op *op, struct hb_cell *c, uint64_t *h,
		   uint8_t m)
{
	if (op->th->ctx->p.analysis == VALOR_ANALYSIS_FASTRCD)
		return hb_cell_inline(op, c, h, m, fastrcd_judge);
	return hb_cell_inline(op, c, h, m, fasttrack_judge);
}

/*
 * hb_access_cell()'s work when it is the in-place step: true if it was
 * done, false if nothing was and hb_access_cell() must do it.  It calls,
 * allocates and reports nothing, so the runtime needs no re-entry guard
 * around it.
 */
static inline __attribute__((always_inline)) bool
hb_try_cell(struct valor_thread *th, struct hb_cell *c, uint8_t m,
	    bool is_write, uint64_t site)
{
	struct hb_op op = {
		.th = th,
		.epoch = epoch_make(th->slot, th->clock),
		.site = site,
		.is_write = is_write,
	};
	uint64_t h;
	bool done;

	if (__builtin_expect(th->exited, 0) ||
	    (atomic_load_explicit(&c->head, memory_order_relaxed) & HB_EXT))
		return false;
	h = hb_cell_lock(c);
	if (h & HB_EXT) {
		hb_cell_unlock(c, h);
		return false;
	}
	done = hb_cell_inline_any(&op, c, &h, m);
	/* Not done: nothing changed, and the head is as it was. */
	hb_cell_unlock(c, h);
	return done;
}

#endif /* VALOR_CORE_HB_VERDICT_H */
