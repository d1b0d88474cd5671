// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Cells of FastRCD and FastTrack: finding them in the shadow, the lock,
 * the same-epoch check without it, loading and storing a cell's records,
 * the record operations both analyses are made of, frees, and moves
 * (see hbcell.h).
 */
#include "hbcell.h"
#include "hb_verdict.h"
#include "internal.h"

#include <errno.h>
#include <string.h>

#define EXT_FIRST_CAP 8

/* A field of a cell read or written outside the lock-holder's view. */
#define UNLOCKED(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define PUBLISH(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

static size_t ext_bytes(uint32_t cap)
{
	return sizeof(struct hb_ext) + cap * sizeof(struct hb_xrec);
}

static struct hb_cell *cell_in(void *leaf, uint64_t cell)
{
	return (struct hb_cell *)leaf + (cell & (SHADOW_LEAF_WORDS - 1));
}

/* The cell's record, its leaf created if need be; NULL if out of memory. */
static struct hb_cell *cell_get(struct shadow *sh, uint64_t cell)
{
	void *leaf = shadow_leaf_get(sh, cell);

	return leaf ? cell_in(leaf, cell) : NULL;
}

/* The cell's record if its leaf exists. */
static struct hb_cell *cell_peek(struct shadow *sh, uint64_t cell)
{
	void *leaf = shadow_leaf_peek(sh, cell);

	return leaf ? cell_in(leaf, cell) : NULL;
}

/*
 * Do records of @epoch and kind cover bytes @m?  Read without the lock,
 * and a yes only if no lock holder came in between.  An ext block is
 * looked into only once the head shows that the pointer and its
 * capacity belong together; arena memory stays mapped and a block keeps
 * its size when reused, so a scan of a block freed meanwhile stays
 * inside it, and the head decides whether what it read counts.
 */
static bool covers_unlocked(struct hb_cell *c, uint64_t epoch, bool is_write,
			    uint8_t m)
{
	uint64_t h = atomic_load_explicit(&c->head, memory_order_acquire);
	uint8_t cov = 0;

	if (h & HB_LOCKED)
		return false;
	if (!(h & HB_EXT)) {
		if (!hb_head_covers(c, h, epoch, is_write, m))
			return false;
	} else {
		const struct hb_ext *x = UNLOCKED(c->ext);
		uint32_t n, cap;

		atomic_thread_fence(memory_order_acquire);
		if (!x ||
		    atomic_load_explicit(&c->head, memory_order_relaxed) != h)
			return false;
		n = UNLOCKED(x->n);
		cap = UNLOCKED(x->cap);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&c->head, memory_order_relaxed) != h)
			return false;
		for (uint32_t i = 0; i < n && i < cap; i++)
			if (UNLOCKED(x->v[i].is_write) == is_write &&
			    UNLOCKED(x->v[i].epoch) == epoch)
				cov |= UNLOCKED(x->v[i].mask);
		if ((cov & m) != m)
			return false;
	}
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&c->head, memory_order_relaxed) == h;
}

/*
 * The records of a cell, lock held, with room for one more: 1 if that
 * took a bigger ext block (the cell changed), -ENOMEM if there was none.
 */
static int work_load(struct arena *ar, struct hb_cell *c, uint64_t h,
		     struct hb_work *w)
{
	struct hb_ext *x;
	int grew = 0;

	if (!(h & HB_EXT)) {
		/* Every record, empty ones too: they keep their places. */
		w->ext = NULL;
		w->v = w->local;
		w->cap = HB_RECS + 1;
		w->n = HB_RECS;
		for (unsigned i = 0; i < HB_RECS; i++) {
			unsigned r = hb_head_rec(h, i);

			w->local[i] = (struct hb_xrec){
				.epoch = c->rec[i].epoch,
				.site = c->rec[i].site,
				.mask = (uint8_t)r,
				.is_write = !!(r & HB_REC_WRITE),
			};
		}
		return 0;
	}
	x = c->ext;
	if (x->n == x->cap) {
		struct hb_ext *bigger = arena_alloc(ar, ext_bytes(2 * x->cap));

		if (!bigger)
			return -ENOMEM;
		memcpy(bigger, x, ext_bytes(x->n));
		bigger->cap = 2 * x->cap;
		PUBLISH(c->ext, bigger);
		arena_free(ar, x, ext_bytes(x->cap));
		x = bigger;
		grew = 1;
	}
	w->ext = x;
	w->v = x->v;
	w->n = x->n;
	w->cap = x->cap;
	return grew;
}

/* Records without bytes go; returns how many stay. */
static uint32_t work_compact(struct hb_work *w)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < w->n; i++)
		if (w->v[i].mask)
			w->v[n++] = w->v[i];
	return w->n = n;
}

/* A record's bits in the head: mask and kind, nothing if it is empty. */
static uint64_t head_bits(const struct hb_xrec *r, unsigned i)
{
	unsigned bits = r->mask | (r->is_write ? HB_REC_WRITE : 0);

	return r->mask ? (uint64_t)bits << HB_REC_SHIFT(i) : 0;
}

/* Publish record @r as the cell's record @i (lock held). */
static void rec_publish(struct hb_cell *c, unsigned i, const struct hb_xrec *r)
{
	PUBLISH(c->rec[i].epoch, r->epoch);
	PUBLISH(c->rec[i].site, r->site);
}

/*
 * Write the records back; returns the new head (still locked).  Records
 * that stayed in the cell kept their places, epochs and sites -- an
 * analysis only changes their masks -- so only a record it added is
 * written there.
 */
static uint64_t work_store(struct valor_thread *th, struct hb_cell *c,
			   uint64_t h, struct hb_work *w)
{
	struct arena *ar = &th->ctx->arena;
	uint64_t nh = (h & ~(HB_MASKS | HB_EXT)) + HB_VERSION_ONE;

	if (!w->ext) {
		struct hb_xrec *added = &w->v[HB_RECS];
		int place = -1;

		if (w->n > HB_RECS && added->mask) {
			for (unsigned i = 0; i < HB_RECS && place < 0; i++)
				if (!w->v[i].mask)
					place = (int)i;
			if (place < 0) {
				struct hb_ext *x = arena_alloc(
					ar, ext_bytes(EXT_FIRST_CAP));

				if (x) {
					x->cap = EXT_FIRST_CAP;
					x->n = HB_RECS + 1;
					memcpy(x->v, w->v,
					       x->n * sizeof(*x->v));
					PUBLISH(c->ext, x);
					th->st.cells_refined++;
					return nh | HB_EXT;
				}
				place = 0; /* out of memory: the oldest is lost */
			}
			w->v[place] = *added;
			rec_publish(c, (unsigned)place, added);
		}
		for (unsigned i = 0; i < HB_RECS; i++)
			nh |= head_bits(&w->v[i], i);
		return nh;
	}
	if (work_compact(w) > HB_RECS) {
		w->ext->n = w->n;
		return nh | HB_EXT;
	}
	/* Back in the cell: the block goes once it has been read. */
	for (uint32_t i = 0; i < w->n; i++) {
		rec_publish(c, i, &w->v[i]);
		nh |= head_bits(&w->v[i], i);
	}
	PUBLISH(c->ext, NULL);
	arena_free(ar, w->ext, ext_bytes(w->ext->cap));
	return nh;
}

void hb_report(const struct hb_op *op, uint32_t kind, const struct hb_xrec *r,
	       uint8_t bytes)
{
	struct valor_thread *th = op->th;
	uint64_t tid = slot_tid_at(th->ctx, r->epoch);

	for_each_run(bytes, lo, len) {
		struct valor_conflict c = {
			.kind = kind,
			.addr = (op->cell << CELL_SHIFT) + lo,
			.size = len,
			.first = {
				.tid = tid,
				.site = r->site,
				.region = epoch_clock(r->epoch),
				.is_write = r->is_write,
			},
			.second = {
				.tid = th->tid,
				.site = op->site,
				.region = th->clock,
				.is_write = op->is_write,
			},
		};

		conflict_push(th, &th->eager, &c);
	}
}

static inline bool analyse(const struct hb_op *op, struct hb_work *w, uint8_t m)
{
	if (op->th->ctx->p.analysis == VALOR_ANALYSIS_FASTRCD)
		return fastrcd_cell(op, w, m);
	return fasttrack_cell(op, w, m);
}

/* A free is checked as a write, then the bytes forget everything. */
static bool free_cell(const struct hb_op *op, struct hb_work *w, uint8_t m)
{
	analyse(op, w, m);
	for (uint32_t i = 0; i < w->n; i++)
		w->v[i].mask &= (uint8_t)~m;
	return true;
}

/*
 * The analysis of bytes @m of cell @c: in place (hb_cell_inline()) when
 * @in_place and it can be, else on the records copied out.
 */
static void apply_cell(struct hb_op *op, struct hb_cell *c, uint8_t m,
		       bool is_free, bool in_place)
{
	struct valor_thread *th = op->th;
	uint64_t h = hb_cell_lock(c);
	struct hb_work w;
	int grew;
	bool changed;

	if (in_place && !(h & HB_EXT) && hb_cell_inline_any(op, c, &h, m)) {
		hb_cell_unlock(c, h);
		return;
	}
	grew = work_load(&th->ctx->arena, c, h, &w);
	if (grew < 0) {
		hb_cell_unlock(c, h);
		return;
	}
	changed = is_free ? free_cell(op, &w, m) : analyse(op, &w, m);
	if (changed || grew)
		h = work_store(th, c, h, &w);
	hb_cell_unlock(c, h);
}

/* A free only visits cells that have history. */
static void hb_free_range(struct hb_op *op, uint64_t addr, uint64_t size)
{
	struct shadow *sh = &op->th->ctx->shadow;
	uint8_t m;

	for_each_present_cell(sh, addr, size, cell, m) {
		struct hb_cell *c = cell_peek(sh, cell);

		if (!(atomic_load_explicit(&c->head, memory_order_relaxed) &
		      (HB_MASKS | HB_EXT | HB_LOCKED)))
			continue;
		op->cell = cell;
		apply_cell(op, c, m, true, false);
	}
}

/* Empty the cell, lock held; returns the new head. */
static uint64_t cell_clear(struct arena *ar, struct hb_cell *c, uint64_t h)
{
	if (h & HB_EXT) {
		arena_free(ar, c->ext, ext_bytes(c->ext->cap));
		PUBLISH(c->ext, NULL);
	}
	return (h & ~(HB_MASKS | HB_EXT)) + HB_VERSION_ONE;
}

/* Reused memory: existing records are emptied, without a check. */
void hb_forget(struct valor_thread *th, uintptr_t addr, size_t size)
{
	struct valor_ctx *ctx = th->ctx;
	struct shadow *sh = &ctx->shadow;

	for_each_present_cell_index(sh, addr, size, cell) {
		struct hb_cell *c = cell_peek(sh, cell);
		uint64_t h;

		if (!(atomic_load_explicit(&c->head, memory_order_relaxed) &
		      (HB_MASKS | HB_EXT | HB_LOCKED)))
			continue;
		h = hb_cell_lock(c);
		hb_cell_unlock(c, cell_clear(&ctx->arena, c, h));
	}
}

/* mremap: the cells' records move to the new addresses. */
void hb_move(struct valor_thread *th, uint64_t from, uint64_t to,
	     uint64_t ncells)
{
	struct valor_ctx *ctx = th->ctx;
	struct shadow *sh = &ctx->shadow;

	for (uint64_t i = 0; i < ncells; i++) {
		struct hb_cell *src = cell_peek(sh, from + i);
		struct hb_cell *dst = cell_peek(sh, to + i);
		uint64_t hs, hd;

		if (!src && !dst)
			continue;
		if (!dst)
			dst = cell_get(sh, to + i);
		if (!dst)
			continue;
		/* What was at @to is forgotten. */
		hd = cell_clear(&ctx->arena, dst, hb_cell_lock(dst));
		if (src) {
			hs = hb_cell_lock(src);
			for (unsigned r = 0; r < HB_RECS; r++) {
				PUBLISH(dst->rec[r].epoch, src->rec[r].epoch);
				PUBLISH(dst->rec[r].site, src->rec[r].site);
			}
			PUBLISH(dst->ext, src->ext);
			hd |= hs & (HB_MASKS | HB_EXT);
			PUBLISH(src->ext, NULL);
			hb_cell_unlock(src, (hs & ~(HB_MASKS | HB_EXT)) +
						    HB_VERSION_ONE);
		}
		hb_cell_unlock(dst, hd);
	}
}

void hb_apply(struct valor_thread *th, uintptr_t addr, size_t size,
	      bool is_write, bool is_free, uint64_t site)
{
	struct shadow *sh = &th->ctx->shadow;
	struct hb_op op = {
		.th = th,
		.epoch = epoch_make(th->slot, th->clock),
		.site = site,
		.is_write = is_write || is_free,
	};
	uint64_t cell;
	uint8_t m;

	if (is_free) {
		hb_free_range(&op, addr, size);
		return;
	}
	for_each_cell(addr, size, cell, m) {
		struct hb_cell *c = cell_get(sh, cell);

		if (!c)
			return;
		if (covers_unlocked(c, op.epoch, op.is_write, m))
			continue;
		op.cell = cell;
		apply_cell(&op, c, m, false, true);
	}
}

void hb_access_cell(struct valor_thread *th, struct hb_cell *c, uint64_t cell,
		    uint8_t m, bool is_write, uint64_t site)
{
	struct hb_op op = {
		.th = th,
		.cell = cell,
		.epoch = epoch_make(th->slot, th->clock),
		.site = site,
		.is_write = is_write,
	};

	if (unlikely(th->exited))
		return;
	apply_cell(&op, c, m, false, false);
	conflict_deliver(th);
}
