// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Cells of FastRCD and FastTrack: creation, locking, splitting, read sets,
 * frees, and the loop that applies one analysis to the bytes an access
 * touches (see hbcell.h).
 */
#include "hbcell.h"
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define READSET_MIN 4

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static void cell_lock(struct hb_cell *c)
{
	uint32_t s = atomic_load_explicit(&c->seq, memory_order_relaxed);

	for (;;) {
		if (!(s & 1) &&
		    atomic_compare_exchange_weak_explicit(&c->seq, &s, s + 1,
							  memory_order_acquire,
							  memory_order_relaxed))
			return;
		cpu_relax();
		s = atomic_load_explicit(&c->seq, memory_order_relaxed);
	}
}

static void cell_unlock(struct hb_cell *c)
{
	atomic_store_explicit(
		&c->seq,
		atomic_load_explicit(&c->seq, memory_order_relaxed) + 1,
		memory_order_release);
}

/* A field of a cell read without its lock; the sequence check decides. */
#define UNLOCKED(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

/*
 * Would the access leave the cell unchanged (the same epoch wrote, or
 * read, it already)?  Decided without the lock: the answer counts only
 * if no lock holder came in between.  Read sets live in the arena, whose
 * memory stays mapped, and are looked into only after the sequence shows
 * that the pointer and its capacity belong together.
 */
static bool same_epoch_unlocked(struct hb_cell *c, const struct hb_op *op)
{
	uint32_t s = atomic_load_explicit(&c->seq, memory_order_acquire);
	const struct hb_byte *b = &c->whole;
	const struct hb_readset *rs;
	bool same = false;

	if ((s & 1) || UNLOCKED(c->split))
		return false;
	if (op->is_write) {
		same = UNLOCKED(b->w.epoch) == op->epoch;
	} else {
		rs = UNLOCKED(b->rs);
		if (!rs) {
			same = UNLOCKED(b->r.epoch) == op->epoch;
		} else {
			uint32_t n, cap;

			atomic_thread_fence(memory_order_acquire);
			if (atomic_load_explicit(&c->seq,
						 memory_order_relaxed) != s)
				return false;
			n = UNLOCKED(rs->n);
			cap = UNLOCKED(rs->cap);
			atomic_thread_fence(memory_order_acquire);
			if (atomic_load_explicit(&c->seq,
						 memory_order_relaxed) != s)
				return false;
			for (uint32_t i = 0; i < n && i < cap && !same; i++)
				same = UNLOCKED(rs->v[i].epoch) == op->epoch;
		}
	}
	atomic_thread_fence(memory_order_acquire);
	return same && atomic_load_explicit(&c->seq, memory_order_relaxed) == s;
}

static struct hb_cell *cell_get(struct valor_ctx *ctx, uint64_t cell)
{
	shadow_word *p = shadow_get(&ctx->shadow, cell);
	uint64_t w, expected = 0;
	struct hb_cell *c;

	if (!p)
		return NULL;
	w = atomic_load_explicit(p, memory_order_acquire);
	if (likely(w))
		return (struct hb_cell *)(uintptr_t)w;
	c = arena_alloc(&ctx->arena, sizeof(*c));
	if (!c)
		return NULL;
	atomic_store_explicit(&c->seq, 0, memory_order_relaxed);
	if (!atomic_compare_exchange_strong(p, &expected, (uintptr_t)c)) {
		arena_free(&ctx->arena, c, sizeof(*c));
		return (struct hb_cell *)(uintptr_t)expected;
	}
	return c;
}

bool hb_readset_has(const struct hb_byte *b, uint64_t epoch)
{
	if (!b->rs)
		return b->r.epoch == epoch;
	for (uint32_t i = 0; i < b->rs->n; i++)
		if (b->rs->v[i].epoch == epoch)
			return true;
	return false;
}

/* Add @a to the read set, replacing an entry of the same slot. */
static size_t readset_bytes(uint32_t cap)
{
	return sizeof(struct hb_readset) + cap * sizeof(struct hb_access);
}

int hb_readset_put(struct arena *ar, struct hb_byte *b,
		   const struct hb_access *a)
{
	struct hb_readset *rs = b->rs;
	uint32_t slot = epoch_slot(a->epoch);

	if (!rs) {
		rs = arena_alloc(ar, readset_bytes(READSET_MIN));
		if (!rs)
			return -ENOMEM;
		rs->cap = READSET_MIN;
		rs->n = 0;
		if (b->r.epoch)
			rs->v[rs->n++] = b->r;
		b->r.epoch = 0;
		b->rs = rs;
	}
	for (uint32_t i = 0; i < rs->n; i++) {
		if (epoch_slot(rs->v[i].epoch) == slot) {
			rs->v[i] = *a;
			return 0;
		}
	}
	if (rs->n == rs->cap) {
		uint32_t cap = 2 * rs->cap;
		struct hb_readset *bigger = arena_alloc(ar, readset_bytes(cap));

		if (!bigger)
			return -ENOMEM;
		memcpy(bigger, rs, readset_bytes(rs->n));
		bigger->cap = cap;
		arena_free(ar, rs, readset_bytes(rs->cap));
		rs = bigger;
		b->rs = rs;
	}
	rs->v[rs->n++] = *a;
	return 0;
}

void hb_byte_clear_reads(struct arena *ar, struct hb_byte *b)
{
	if (b->rs)
		arena_free(ar, b->rs, readset_bytes(b->rs->cap));
	b->rs = NULL;
	memset(&b->r, 0, sizeof(b->r));
}

/*
 * After a write by @slot: forget every read but @slot's own.  The
 * algorithms of the papers forget all reads (a later conflict with the
 * writer's read is also one with its write), but keeping the writer's
 * read lets a report name both conflicting accesses of that thread.
 */
void hb_byte_keep_own_read(struct arena *ar, struct hb_byte *b, uint32_t slot)
{
	struct hb_access own = { 0 };

	if (b->rs) {
		for (uint32_t i = 0; i < b->rs->n; i++)
			if (epoch_slot(b->rs->v[i].epoch) == slot)
				own = b->rs->v[i];
	} else if (b->r.epoch && epoch_slot(b->r.epoch) == slot) {
		own = b->r;
	}
	hb_byte_clear_reads(ar, b);
	b->r = own;
}

static int byte_copy(struct arena *ar, struct hb_byte *dst,
		     const struct hb_byte *src)
{
	*dst = *src;
	if (src->rs) {
		size_t bytes = readset_bytes(src->rs->cap);

		dst->rs = arena_alloc(ar, bytes);
		if (!dst->rs)
			return -ENOMEM;
		memcpy(dst->rs, src->rs, bytes);
	}
	return 0;
}

static int cell_split(struct valor_ctx *ctx, struct valor_thread *th,
		      struct hb_cell *c)
{
	struct hb_byte *bytes = c->bytes;

	if (!bytes) {
		bytes = arena_alloc(&ctx->arena, CELL_SIZE * sizeof(*bytes));
		if (!bytes)
			return -ENOMEM;
	}
	for (unsigned i = 0; i < CELL_SIZE; i++) {
		if (byte_copy(&ctx->arena, &bytes[i], &c->whole)) {
			while (i--)
				hb_byte_clear_reads(&ctx->arena, &bytes[i]);
			if (!c->bytes)
				arena_free(&ctx->arena, bytes,
					   CELL_SIZE * sizeof(*bytes));
			return -ENOMEM;
		}
	}
	hb_byte_clear_reads(&ctx->arena, &c->whole);
	memset(&c->whole, 0, sizeof(c->whole));
	c->bytes = bytes;
	c->split = true;
	th->st.cells_refined++;
	return 0;
}

void hb_report(const struct hb_op *op, uint32_t kind, unsigned byte,
	       const struct hb_access *earlier, bool earlier_is_write)
{
	struct valor_thread *th = op->th;
	struct valor_conflict c = {
		.kind = kind,
		.addr = (op->cell << CELL_SHIFT) + byte,
		.size = op->width,
		.first = {
			.tid = earlier->tid,
			.site = earlier->site,
			.region = epoch_clock(earlier->epoch),
			.is_write = earlier_is_write,
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

/* Would this access leave the whole-cell record unchanged?  (Same epoch.) */
static bool whole_unchanged(const struct hb_cell *c, const struct hb_op *op)
{
	if (op->is_write)
		return c->whole.w.epoch == op->epoch;
	return hb_readset_has(&c->whole, op->epoch);
}

static void apply_byte(const struct hb_op *op, struct hb_byte *b, unsigned byte)
{
	if (op->th->ctx->p.analysis == VALOR_ANALYSIS_FASTRCD)
		fastrcd_byte(op, b, byte);
	else
		fasttrack_byte(op, b, byte);
}

static void free_byte(const struct hb_op *op, struct hb_byte *b, unsigned byte)
{
	/* A free is checked as a write, then forgets everything. */
	apply_byte(op, b, byte);
	hb_byte_clear_reads(&op->th->ctx->arena, b);
	memset(&b->w, 0, sizeof(b->w));
}

static void apply_cell(struct valor_thread *th, struct hb_cell *c,
		       struct hb_op *op, uint8_t m, bool is_free)
{
	struct valor_ctx *ctx = th->ctx;

	if (!c->split) {
		if (m == 0xff) {
			/* One record for all eight bytes: report all eight. */
			op->width = CELL_SIZE;
			if (is_free)
				free_byte(op, &c->whole, 0);
			else
				apply_byte(op, &c->whole, 0);
			op->width = 1;
			return;
		}
		if (!is_free && whole_unchanged(c, op))
			return;
		if (cell_split(ctx, th, c))
			return;
	}
	for (unsigned b = 0; b < CELL_SIZE; b++) {
		if (!(m & (1U << b)))
			continue;
		if (is_free)
			free_byte(op, &c->bytes[b], b);
		else
			apply_byte(op, &c->bytes[b], b);
	}
	if (is_free && m == 0xff) {
		/* Wholly forgotten: the cell is one history again. */
		for (unsigned b = 0; b < CELL_SIZE; b++)
			hb_byte_clear_reads(&ctx->arena, &c->bytes[b]);
		c->split = false;
		memset(&c->whole, 0, sizeof(c->whole));
	}
}

/* A free only visits cells that have history: no record, nothing to do. */
static void hb_free_range(struct valor_thread *th, struct hb_op *op,
			  uint64_t addr, uint64_t size)
{
	struct shadow *sh = &th->ctx->shadow;
	uint8_t m;

	for_each_present_cell(sh, addr, size, cell, m) {
		struct hb_cell *c =
			(struct hb_cell *)(uintptr_t)shadow_load(sh, cell);

		if (!c)
			continue;
		op->cell = cell;
		cell_lock(c);
		apply_cell(th, c, op, m, true);
		cell_unlock(c);
	}
}

/* Reused memory: existing records are emptied, without a check. */
void hb_forget(struct valor_thread *th, uintptr_t addr, size_t size)
{
	struct valor_ctx *ctx = th->ctx;
	struct shadow *sh = &ctx->shadow;

	for_each_present_cell_index(sh, addr, size, cell) {
		struct hb_cell *c =
			(struct hb_cell *)(uintptr_t)shadow_load(sh, cell);

		if (!c)
			continue;
		cell_lock(c);
		if (c->split)
			for (unsigned b = 0; b < CELL_SIZE; b++)
				hb_byte_clear_reads(&ctx->arena, &c->bytes[b]);
		hb_byte_clear_reads(&ctx->arena, &c->whole);
		memset(&c->whole, 0, sizeof(c->whole));
		c->split = false;
		cell_unlock(c);
	}
}

/* mremap: the cells' records move to the new addresses. */
void hb_move(struct valor_thread *th, uint64_t from, uint64_t to,
	     uint64_t ncells)
{
	struct shadow *sh = &th->ctx->shadow;

	for (uint64_t i = 0; i < ncells; i++) {
		shadow_word *src,
			*dst = shadow_move_pair(sh, from + i, to + i, &src);

		if (!dst)
			continue;
		/* What was at @to is forgotten (its record leaks to the arena). */
		atomic_store(dst, src ? atomic_exchange(src, 0) : 0);
	}
}

void hb_apply(struct valor_thread *th, uintptr_t addr, size_t size,
	      bool is_write, bool is_free, uint64_t site)
{
	struct valor_ctx *ctx = th->ctx;
	struct hb_op op = {
		.th = th,
		.epoch = epoch_make(th->slot, th->clock),
		.site = site,
		.is_write = is_write || is_free,
		.width = 1,
	};
	uint64_t cell;
	uint8_t m;

	if (is_free) {
		hb_free_range(th, &op, addr, size);
		return;
	}
	for_each_cell(addr, size, cell, m) {
		struct hb_cell *c = cell_get(ctx, cell);

		if (!c)
			return;
		op.cell = cell;
		if (same_epoch_unlocked(c, &op))
			continue;
		cell_lock(c);
		apply_cell(th, c, &op, m, false);
		cell_unlock(c);
	}
}
