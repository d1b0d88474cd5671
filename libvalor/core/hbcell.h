/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-cell metadata of FastRCD and FastTrack, kept in the shadow itself:
 * one 64-byte struct hb_cell per 8-byte cell, where the cell's address
 * maps it.  A cell's history is a set of access records, each an epoch,
 * a site, whether it was a write, and the bytes of the cell it stands
 * for.  Per byte that is exactly the state of the papers' algorithms:
 * the one write record covering a byte is its last write (W), the read
 * records covering it are its reads (R: an epoch when there is one, a
 * read set or read map when there are more).  Bytes with the same
 * history share a record, so an 8-byte value costs one record per kind
 * and a byte array read by one thread one record per cell, where a
 * record per byte (or a split into eight) would cost eight.
 *
 * Up to HB_RECS records live in the cell, their byte masks in its head
 * word; a cell that needs more moves all of them to an arena block
 * (@ext, and HB_EXT in the head).
 *
 * The head is also the cell's lock and version: bit 0 is set while a
 * thread changes the cell, and every change bumps the version.  The
 * same-epoch check -- the common case, which changes nothing -- reads
 * the head, the records, and the head again, without the lock, so a
 * read-shared cell is read by every thread without its cache line
 * bouncing (hb_fast.h has the runtime's inline copy of the check).
 */
#ifndef VALOR_CORE_HBCELL_H
#define VALOR_CORE_HBCELL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"

#define HB_CELL_SHIFT 6 /* log2 sizeof(struct hb_cell) */
#define HB_RECS 3 /* records kept in the cell itself */

/* The head word */
#define HB_LOCKED (1ULL << 0)
#define HB_EXT (1ULL << 1) /* the records are in @ext */
#define HB_REC_BITS 9 /* per record in the cell: 8 mask bits, is-write */
#define HB_REC_SHIFT(i) (2 + HB_REC_BITS * (i))
#define HB_REC_WRITE (1U << 8)
#define HB_VERSION_SHIFT (2 + HB_REC_BITS * HB_RECS)
#define HB_VERSION_ONE (1ULL << HB_VERSION_SHIFT)
#define HB_MASKS (HB_VERSION_ONE - 1 - HB_LOCKED - HB_EXT)

/* Record @i's mask and kind in head @h (0: no record). */
static inline unsigned hb_head_rec(uint64_t h, unsigned i)
{
	return (unsigned)(h >> HB_REC_SHIFT(i)) & (HB_REC_WRITE | 0xff);
}

/* A record in the cell; its mask and kind are in the head. */
struct hb_rec {
	uint64_t epoch; /* slot << 48 | clock */
	uint64_t site;
};

struct hb_ext;

struct hb_cell {
	_Atomic uint64_t head;
	struct hb_ext *ext;
	struct hb_rec rec[HB_RECS];
};

_Static_assert(sizeof(struct hb_cell) == 1U << HB_CELL_SHIFT,
	       "an hb_cell is the shadow record of a cell");

/* Take the cell's lock; returns the head as it was, unlocked. */
static inline uint64_t hb_cell_lock(struct hb_cell *c)
{
	uint64_t h = atomic_load_explicit(&c->head, memory_order_relaxed);

	for (;;) {
		if (!(h & HB_LOCKED) &&
		    atomic_compare_exchange_weak_explicit(
			    &c->head, &h, h | HB_LOCKED, memory_order_acquire,
			    memory_order_relaxed))
			return h;
		eng_cpu_relax();
		h = atomic_load_explicit(&c->head, memory_order_relaxed);
	}
}

/* Release it with @head (without HB_LOCKED), which readers then see. */
static inline void hb_cell_unlock(struct hb_cell *c, uint64_t head)
{
	atomic_store_explicit(&c->head, head & ~HB_LOCKED,
			      memory_order_release);
}

/*
 * Does one record in cell @c, of @epoch and kind, cover bytes @m, as head
 * @h describes the records?  Read without the lock: a yes counts only if
 * the head is still @h afterwards (the caller looks again).  @h must
 * show the records in the cell (no HB_EXT).  Bytes two records cover
 * between them get a no, and the locked path finds them covered.
 */
static inline bool hb_head_covers(const struct hb_cell *c, uint64_t h,
				  uint64_t epoch, bool is_write, uint8_t m)
{
	unsigned want = is_write ? HB_REC_WRITE : 0;

#pragma GCC unroll 3
	for (unsigned i = 0; i < HB_RECS; i++) {
		unsigned r = (unsigned)(h >> HB_REC_SHIFT(i));

		if ((r & HB_REC_WRITE) == want && (r & m) == m &&
		    __atomic_load_n(&c->rec[i].epoch, __ATOMIC_RELAXED) ==
			    epoch)
			return true;
	}
	return false;
}

/* A record with its mask: in an ext block, and while a cell is changed. */
struct hb_xrec {
	uint64_t epoch;
	uint64_t site;
	uint8_t mask; /* 0: no record */
	bool is_write;
};

struct hb_ext {
	uint32_t n, cap;
	struct hb_xrec v[];
};

/* A cell's records while its lock is held: room for one more. */
struct hb_work {
	struct hb_xrec *v;
	uint32_t n, cap;
	struct hb_ext *ext; /* where @v lives, if not @local */
	struct hb_xrec local[HB_RECS + 1];
};

/* What the analysis of one cell needs to know about the access. */
struct hb_op {
	struct valor_thread *th;
	uint64_t cell;
	uint64_t epoch; /* the accessing thread's current epoch */
	uint64_t site;
	bool is_write;
};

/*
 * What a cell's records say about an access before it changes them:
 * @covered, the bytes records of its epoch and kind stand for already;
 * @same, the record it would merge into (same epoch, site and kind), or
 * -1.  Records of different sites stay apart, so that a report names the
 * access to the bytes it is about.
 */
struct hb_look {
	uint8_t covered;
	int same;
};

static inline struct hb_look hb_look(const struct hb_work *w,
				     const struct hb_op *op)
{
	struct hb_look l = { .same = -1 };

	for (uint32_t i = 0; i < w->n; i++) {
		const struct hb_xrec *r = &w->v[i];

		if (r->epoch == op->epoch && r->is_write == op->is_write) {
			l.covered |= r->mask;
			if (r->site == op->site)
				l.same = (int)i;
		}
	}
	return l;
}

/* The access's record for @bytes, merged into @l's if there is one. */
static inline void hb_add(struct hb_work *w, const struct hb_op *op,
			  const struct hb_look *l, uint8_t bytes)
{
	if (l->same >= 0) {
		w->v[l->same].mask |= bytes;
		return;
	}
	/* hb_work always has room for one more. */
	w->v[w->n++] = (struct hb_xrec){
		.epoch = op->epoch,
		.site = op->site,
		.mask = bytes,
		.is_write = op->is_write,
	};
}

/* Report @bytes of the access against earlier record @r. */
void hb_report(const struct hb_op *op, uint32_t kind, const struct hb_xrec *r,
	       uint8_t bytes);

/*
 * fastrcd.c and fasttrack.c: an access of bytes @m of the cell, lock
 * held.  True if the records changed.
 */
bool fastrcd_cell(const struct hb_op *op, struct hb_work *w, uint8_t m);
bool fasttrack_cell(const struct hb_op *op, struct hb_work *w, uint8_t m);

/* What an analysis does with an earlier record of bytes an access touches. */
enum hb_verdict {
	HB_KEEP, /* the record keeps those bytes */
	HB_DROP, /* they leave the record */
	HB_RACE, /* a conflict to report: the general path's work */
};

/*
 * An analysis's common steps on a cell whose records are all in it (no
 * HB_EXT), lock held, without copying them out: nothing to report, and
 * the access's record merges into one or takes a free place.  What
 * fastrcd_cell() and fasttrack_cell() do then, with @judge deciding each
 * record's fate as they would.  *@h is the head the lock was taken at;
 * on true it is the new head (the same if nothing changed) and the
 * records are written.  False changes nothing: the general path must do
 * it (a conflict to report, or a fourth record).
 */
static inline __attribute__((always_inline)) bool
hb_cell_inline(const struct hb_op *op, struct hb_cell *c, uint64_t *h,
	       uint8_t m,
	       enum hb_verdict (*judge)(const struct hb_op *op, uint64_t epoch,
					bool was_write))
{
	unsigned kind[HB_RECS], want = op->is_write ? HB_REC_WRITE : 0;
	uint64_t epoch[HB_RECS], nh;
	uint8_t mask[HB_RECS], covered = 0, todo;
	int same = -1, place = -1;

	/* hb_look() */
#pragma GCC unroll 3
	for (unsigned i = 0; i < HB_RECS; i++) {
		unsigned r = hb_head_rec(*h, i);

		mask[i] = (uint8_t)r;
		kind[i] = r & HB_REC_WRITE;
		epoch[i] = c->rec[i].epoch;
		/* An empty record's mask is 0: it covers nothing. */
		if (epoch[i] == op->epoch && kind[i] == want) {
			covered |= mask[i];
			if (mask[i] && c->rec[i].site == op->site)
				same = (int)i;
		}
	}
	todo = m & (uint8_t)~covered;
	if (!todo)
		return true;
#pragma GCC unroll 3
	for (unsigned i = 0; i < HB_RECS; i++) {
		if (!(mask[i] & todo))
			continue;
		switch (judge(op, epoch[i], kind[i])) {
		case HB_RACE:
			return false;
		case HB_DROP:
			mask[i] &= (uint8_t)~todo;
			break;
		case HB_KEEP:
			break;
		}
	}
	/* hb_add(), in the first free place as work_store() would */
	if (same >= 0) {
		mask[same] |= todo;
	} else {
#pragma GCC unroll 3
		for (unsigned i = 0; i < HB_RECS && place < 0; i++)
			if (!mask[i])
				place = (int)i;
		if (place < 0)
			return false;
		mask[place] = todo;
		kind[place] = want;
		__atomic_store_n(&c->rec[place].epoch, op->epoch,
				 __ATOMIC_RELAXED);
		__atomic_store_n(&c->rec[place].site, op->site,
				 __ATOMIC_RELAXED);
	}
	nh = (*h & ~(HB_MASKS | HB_EXT)) + HB_VERSION_ONE;
#pragma GCC unroll 3
	for (unsigned i = 0; i < HB_RECS; i++)
		if (mask[i])
			nh |= (uint64_t)(mask[i] | kind[i]) << HB_REC_SHIFT(i);
	*h = nh;
	return true;
}

void hb_apply(struct valor_thread *th, uintptr_t addr, size_t size,
	      bool is_write, bool is_free, uint64_t site);
/*
 * An access of bytes @m of one cell, whose record @c the caller found
 * (hb_fast.h) and whose in-place step hb_try_cell() could not take: what
 * hb_apply() does for that cell, without finding it or trying that step
 * again.  Delivers what it finds.
 */
void hb_access_cell(struct valor_thread *th, struct hb_cell *c, uint64_t cell,
		    uint8_t m, bool is_write, uint64_t site);

#endif /* VALOR_CORE_HBCELL_H */
