/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Valor-O's fast path, inline: the accesses that need no more than a
 * look at the cell word.  The runtime's __tsan_* entry points inline the
 * check, so the common access costs no call and no frame;
 * valor_o_access() starts with it too.
 *
 *  - a write to bytes this region owns already: nothing to do;
 *  - a read of bytes no other region owns, which the read log holds
 *    already from this region: nothing to do.  The entry there
 *    finds every write by another thread after it, so after this read
 *    too, and names the same reading region: validating a second entry
 *    could only report what the first does;
 *  - a read of a compact cell not in the log yet: one entry, out of line;
 *  - any other write within one cell: straight to the cell's write
 *    analysis, out of line.
 *
 * A cell whose word is wide (valor_word.h) gets the same look, one load
 * further.  Everything else (reads of bytes another region owns, first
 * reads of a cell refined per byte, accesses spanning cells, leaves not
 * created yet) takes the full path.
 */
#ifndef VALOR_CORE_VALOR_FAST_H
#define VALOR_CORE_VALOR_FAST_H

#include "internal.h"
#include "valor_word.h"

#include <string.h>

/* The read log is full: grow it or split the region (valor.c). */
void rlog_make_room(struct valor_thread *th);

/* The log outgrew its part of the group index (valor.c). */
void rgroup_spread(struct valor_thread *th);

/*
 * Whether bytes @m, read at the word @snap, are at the version all bytes
 * of the word @then are at: then an entry at @then can take them, since
 * validation compares a byte's version and nothing else of the snapshot
 * (not its writer, not whether it was owned: a read of bytes another
 * region owned is reported when it happens).  Two cases matter: a
 * read-modify-write of the halves of an int array (read one, write it,
 * read the other), whose second read finds the other half behind the
 * region's own write at the version the first read saw; and a sweep
 * over an array that several threads wrote, once each, in the previous
 * phase (radix sort's keys, an FFT's rows), whose cells share a version
 * but not a writer.
 */
static inline __attribute__((always_inline)) bool
rlog_same_version(uint64_t then, uint64_t snap, uint8_t m)
{
	uint8_t behind = snap & VW_NMASK;

	if ((then & VW_NMASK) || vw_refined(snap))
		return false;
	if ((m & ~behind) && vw_ver(snap) != vw_ver(then))
		return false;
	return !(m & behind) ||
	       vw_byte(snap, (unsigned)__builtin_ctz(m & behind)).ver ==
		       vw_ver(then);
}

/*
 * A byte-by-byte scan by one site goes on into another cell of the
 * newest entry's group, at the same word: the entry's cell, read in
 * whole halves by now, joins the entry's other cells, and the new cell
 * takes its place.  A sweep over bytes (text, pixels) then costs an
 * entry per group and site instead of one per cell.  The entry holds
 * exactly the bytes read, all at its word, by its site.
 */
static inline __attribute__((always_inline)) bool
rlog_slide_newest(struct rlog_entry *e, uint64_t cell, uint64_t snap, uint8_t m,
		  uint64_t site)
{
	if (e->snapshot != snap || e->site != site ||
	    rlog_group(e->cell) != rlog_group(cell) || !rlog_halves(e->mask))
		return false;
	rlog_more_add(e, e->cell & (RLOG_GROUP_CELLS - 1), e->mask);
	e->cell_mask = cell | (uint64_t)m << RLOG_MASK_SHIFT;
	return true;
}

/*
 * More bytes of the cell the newest entry is for, at the same word (a
 * byte-by-byte scan), or read by the same site at the version the entry
 * saw them at (so that a report still names the read): the entry takes
 * them.
 */
static inline __attribute__((always_inline)) bool
rlog_join_newest(struct valor_thread *th, uint64_t cell, uint64_t snap,
		 uint8_t m, uint64_t site)
{
	struct rlog_entry *e;

	if (!th->rlog_n)
		return false;
	e = &th->rlog[th->rlog_n - 1];
	if (e->cell != cell)
		return rlog_slide_newest(e, cell, snap, m, site);
	if (e->snapshot != snap &&
	    (e->site != site || !rlog_same_version(e->snapshot, snap, m)))
		return false;
	rlog_mask_add(e, m);
	return true;
}

/*
 * Halves of a cell read at the word @snap, where the same site read its
 * group at that word, or at the same version, before (a sweep over an
 * array): that entry takes them.  The entry's index is at one of the
 * (group, site)'s two slots (rgroup_slot()).  *@slot is where a new
 * entry for the group and site goes: the slot of an older entry of
 * theirs, else a free one, else the first.
 */
static inline __attribute__((always_inline)) bool
rlog_join_group(struct valor_thread *th, uint64_t cell, uint64_t snap,
		uint8_t m, uint64_t site, uint32_t **slot)
{
	uint64_t group = rlog_group(cell);
	uint32_t i = rgroup_slot(group, site,
				 rgroup_mask_for(th->rlog_n, th->rgroup_mask));
	struct rlog_entry *e;

	*slot = &th->rgroup[i];
	if (!rlog_halves(m))
		return false;
	for (unsigned way = 0;; way++, i ^= RGROUP_LINE_SLOTS) {
		uint32_t k = th->rgroup[i];

		if (!k || k > th->rlog_n) {
			*slot = &th->rgroup[i];
			return false;
		}
		e = &th->rlog[k - 1];
		if (rgroup_key_is(e, group, site))
			break;
		if (way)
			return false;
	}
	*slot = &th->rgroup[i];
	if (e->snapshot != snap && !rlog_same_version(e->snapshot, snap, m))
		return false;
	if (e->cell == cell)
		rlog_mask_add(e, m);
	else
		rlog_more_add(e, cell & (RLOG_GROUP_CELLS - 1), m);
	return true;
}

/* A new entry, which *@slot names; the log has room for it. */
static inline __attribute__((always_inline)) struct rlog_entry *
rlog_new_entry(struct valor_thread *th, uint64_t cell, uint64_t snap, uint8_t m,
	       uint64_t site, uint32_t *slot)
{
	uint64_t group = rlog_group(cell);
	struct rlog_entry *e;

	th->rbloom[(group / 64) % (RBLOOM_BITS / 64)] |= 1ULL << (group % 64);
	th->st.reads_logged++;
	e = &th->rlog[th->rlog_n++];
	e->cell_mask = cell | (uint64_t)m << RLOG_MASK_SHIFT;
	e->snapshot = snap;
	e->site = site;
	e->more[0] = e->more[1] = 0;
	*slot = th->rlog_n;
	if (unlikely(!(th->rlog_n & (th->rlog_n - 1))) &&
	    rgroup_mask_for(th->rlog_n, th->rgroup_mask) !=
		    rgroup_mask_for(th->rlog_n - 1, th->rgroup_mask))
		rgroup_spread(th);
	return e;
}

void valor_o_zfree_log_starts(struct valor_thread *th);
void valor_o_zfree_catch_up(struct valor_thread *th);

/* A free that left zero words was published since the thread looked. */
static inline bool zfree_pending(const struct valor_thread *th)
{
	return unlikely(atomic_load_explicit(&th->ctx->zfree_head,
					     memory_order_acquire) !=
			th->zfree_seen);
}

/*
 * Before a read goes into the log: the log's first entry tells freers
 * from which free on it needs to hear of zero words left behind; a read
 * at word 0 while such a free waits unchecked checks the log first, so
 * that only reads from before the free meet it (internal.h, "struct
 * zfree").  One load and a compare on a read of a never-written cell.
 */
static inline __attribute__((always_inline)) void
zfree_before_append(struct valor_thread *th, uint64_t snap)
{
	if (unlikely(!th->rlog_n))
		valor_o_zfree_log_starts(th);
	else if (!snap && zfree_pending(th))
		valor_o_zfree_catch_up(th);
}

/*
 * Inline: a region's every first read of a cell comes here.  True when
 * the read took a new entry, false when an entry had room for it.
 */
static inline __attribute__((always_inline)) bool
rlog_append(struct valor_thread *th, uint64_t cell, uint64_t snap, uint8_t m,
	    uint64_t site)
{
	uint32_t *slot;

	zfree_before_append(th, snap);
	if (rlog_join_newest(th, cell, snap, m, site) ||
	    rlog_join_group(th, cell, snap, m, site, &slot))
		return false;
	if (unlikely(th->rlog_n == th->rlog_cap)) {
		rlog_make_room(th);
		zfree_before_append(th, snap); /* emptied by a validation? */
	}
	rlog_new_entry(th, cell, snap, m, site, slot);
	return true;
}

/* Bit k of @cells (k < 32) to bits 2k and 2k + 1: both halves of cell k. */
static inline uint64_t rlog_both_halves(uint32_t cells)
{
	uint64_t x = cells;

	x = (x | x << 16) & 0x0000ffff0000ffffULL;
	x = (x | x << 8) & 0x00ff00ff00ff00ffULL;
	x = (x | x << 4) & 0x0f0f0f0f0f0f0f0fULL;
	x = (x | x << 2) & 0x3333333333333333ULL;
	x = (x | x << 1) & 0x5555555555555555ULL;
	return x * 3;
}

/*
 * Whole cells of one group, bit k for the group's cell k, all read by
 * @site at the word @snap: what rlog_append() of each in turn would
 * leave, one lookup for all.  The log has room for one more entry.
 */
static inline __attribute__((always_inline)) void
rlog_append_cells(struct valor_thread *th, uint64_t group, uint64_t cells,
		  uint64_t snap, uint64_t site)
{
	uint64_t cell = group << RLOG_GROUP_SHIFT | __builtin_ctzll(cells);
	struct rlog_entry *e;
	uint32_t *slot;
	unsigned head;

	zfree_before_append(th, snap);
	if (rlog_join_group(th, cell, snap, 0xff, site, &slot))
		e = &th->rlog[*slot - 1];
	else
		e = rlog_new_entry(th, cell, snap, 0xff, site, slot);
	/* The first cell is in; the entry's own cell goes in its mask. */
	cells &= cells - 1;
	head = e->cell & (RLOG_GROUP_CELLS - 1);
	if (cells >> head & 1) {
		rlog_mask_add(e, 0xff);
		cells &= ~(1ULL << head);
	}
	e->more[0] |= rlog_both_halves((uint32_t)cells);
	e->more[1] |= rlog_both_halves((uint32_t)(cells >> 32));
}

/*
 * A filter entry starts over at nearly every first read of a short
 * region.  As a memset, its 128 bytes were a rep stos, whose start-up
 * was most of the cost; eight 16-byte stores are not.
 */
static inline __attribute__((always_inline)) void
rfilter_clear(struct rfilter *f, uint64_t cell)
{
	typedef uint8_t vec16 __attribute__((vector_size(16), aligned(1)));
	vec16 *v = (vec16 *)rfilter_mask_of(
		f, cell & ~(uint64_t)(RFILTER_CHUNK_CELLS - 1));

	_Static_assert(sizeof(f->mask[0]) == 8 * sizeof(vec16), "8 stores");
	v[0] = (vec16){ 0 };
	v[1] = (vec16){ 0 };
	v[2] = (vec16){ 0 };
	v[3] = (vec16){ 0 };
	v[4] = (vec16){ 0 };
	v[5] = (vec16){ 0 };
	v[6] = (vec16){ 0 };
	v[7] = (vec16){ 0 };
}

/*
 * Bytes @m of @cell are in the log from this region.  After the append:
 * a full log was validated and emptied by it.
 */
static inline __attribute__((always_inline)) void
rfilter_note(struct valor_thread *th, uint64_t cell, uint8_t m)
{
	uint64_t *tagp = rfilter_tag_of(th->rfilter, cell);
	uint64_t tag = rfilter_tag(cell, th->rgen);

	if (*tagp != tag) {
		rfilter_clear(th->rfilter, cell);
		*tagp = tag;
	}
	*rfilter_mask_of(th->rfilter, cell) |= m;
}

/* Whether the filter holds bytes @need of @cell from this region. */
static inline __attribute__((always_inline)) bool
rfilter_holds(struct valor_thread *th, uint64_t cell, uint8_t need)
{
	return *rfilter_tag_of(th->rfilter, cell) ==
		       rfilter_tag(cell, th->rgen) &&
	       (*rfilter_mask_of(th->rfilter, cell) & need) == need;
}

/*
 * Whether a whole chunk's masks @m are full: eight 16-byte ANDs, where
 * the byte loop the compiler made of it cost a matrix product's range
 * checks a quarter of its time.
 */
static inline __attribute__((always_inline)) bool
rfilter_chunk_full(const uint8_t *m)
{
	typedef uint8_t vec16 __attribute__((vector_size(16), aligned(1)));
	const vec16 *v = (const vec16 *)m;
	vec16 all = v[0] & v[1] & v[2] & v[3] & v[4] & v[5] & v[6] & v[7];
	uint64_t lo, hi;

	_Static_assert(RFILTER_CHUNK_CELLS == 8 * sizeof(vec16), "8 loads");
	memcpy(&lo, &all, 8);
	memcpy(&hi, (const uint8_t *)&all + 8, 8);
	return (lo & hi) == ~0ULL;
}

/*
 * Whether the filter holds every byte of [@addr, @addr + @size), @size 1
 * to 64, for the neighbouring reads the pass checks as one span: a tag
 * (two where the span crosses into the next chunk) and one word of mask
 * bytes, about what one access's look costs.  Consecutive cells' mask
 * bytes are consecutive, across chunks too, so eight of them read as a
 * little-endian word have bit j for byte j from the first cell's start:
 * the span's bytes are one run of bits.  A span over more than eight
 * cells, or across the end of the mask array, is left to the caller's
 * slow path (false).
 */
static inline __attribute__((always_inline)) bool
rfilter_holds_span(struct valor_thread *th, uintptr_t addr, size_t size)
{
	const uint64_t cells = (uint64_t)RFILTER_ENTRIES * RFILTER_CHUNK_CELLS;
	uint64_t off = addr & (CELL_SIZE - 1), cell = addr >> CELL_SHIFT;
	uint64_t last = (addr + size - 1) >> CELL_SHIFT;
	uint64_t need, have;

	_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
		       "the span's mask bytes are read as one word");
	if ((addr >> SHADOW_ADDR_BITS) || off + size > 64 ||
	    *rfilter_tag_of(th->rfilter, cell) != rfilter_tag(cell, th->rgen))
		return false;
	if (__builtin_expect((cell ^ last) >> RFILTER_CHUNK_SHIFT, 0) &&
	    (*rfilter_tag_of(th->rfilter, last) !=
		     rfilter_tag(last, th->rgen) ||
	     (last & (cells - 1)) < (cell & (cells - 1))))
		return false;
	memcpy(&have, rfilter_mask_of(th->rfilter, cell), sizeof(have));
	need = (~0ULL >> (64 - size)) << off;
	return (have & need) == need;
}

/*
 * Whether the region owns every byte of the @size bytes at @addr, whole
 * cells of one shadow leaf (8-aligned, @size 8 to 64), all current: one
 * test of all their cell words, for the neighbouring writes the pass
 * checks as one span.  Anything else is left to the caller (false).
 */
static inline __attribute__((always_inline)) bool
valor_o_owns_span(struct valor_thread *th, shadow_word *_Atomic *top,
		  uintptr_t addr, size_t size)
{
	uint64_t cell = addr >> CELL_SHIFT, n = size >> CELL_SHIFT;
	uint32_t ours = cw_owned_whole(th->slot), off = 0;
	cell_word *leaf;

	if (((addr | size) & (CELL_SIZE - 1)) ||
	    (cell & (SHADOW_LEAF_WORDS - 1)) + n > SHADOW_LEAF_WORDS)
		return false;
	leaf = shadow_fast_leaf(top, addr, CELL_SIZE);
	if (!leaf)
		return false;
	for (uint64_t i = 0; i < n; i++)
		off |= atomic_load_explicit(
			       &leaf[(cell & (SHADOW_LEAF_WORDS - 1)) + i],
			       memory_order_acquire) ^
		       ours;
	return !(off & CW_OWNED_MASK);
}

/*
 * Whether the filter holds every byte of [@addr, @addr + @len), @len > 0:
 * a range this region has read already, which a read of it again need
 * not log (what the fast check decides for each access, for a whole
 * range at once: a row read again for every column of a matrix
 * product).  The cells between the two ends need full masks: one tag
 * per chunk and an AND over its mask bytes.
 */
static inline bool rfilter_holds_range(struct valor_thread *th, uintptr_t addr,
				       size_t len)
{
	uint64_t first = addr >> CELL_SHIFT;
	uint64_t last = (addr + len - 1) >> CELL_SHIFT;
	uint8_t head = (uint8_t)(0xffU << (addr & (CELL_SIZE - 1)));
	uint8_t tail =
		(uint8_t)(0xffU >> (CELL_SIZE - 1 -
				    ((addr + len - 1) & (CELL_SIZE - 1))));

	if (first == last)
		return rfilter_holds(th, first, head & tail);
	if (!rfilter_holds(th, first, head) || !rfilter_holds(th, last, tail))
		return false;
	for (uint64_t cell = first + 1, end; cell < last; cell = end + 1) {
		const uint8_t *m = rfilter_mask_of(th->rfilter, cell);
		uint8_t all = 0xff;

		end = cell | (RFILTER_CHUNK_CELLS - 1);
		if (end > last - 1)
			end = last - 1;
		if (*rfilter_tag_of(th->rfilter, cell) !=
		    rfilter_tag(cell, th->rgen))
			return false;
		if (end - cell == RFILTER_CHUNK_CELLS - 1) {
			if (!rfilter_chunk_full(m))
				return false;
			continue;
		}
		for (uint64_t i = 0; i <= end - cell; i++)
			all &= m[i];
		if (all != 0xff)
			return false;
	}
	return true;
}

/*
 * A read of a cell the region has written whole and still owns needs no
 * log entry: no other thread can write the cell before the region ends
 * without first taking it from the region, and that write conflicts
 * with the region's own write, which its claim reports (write-write)
 * as the read's entry would have at validation (read-write).  The two
 * regions are the same, so the verdict is too; the report names the
 * region's write instead of its later read.
 */
static inline bool vw_read_of_own_write(const struct valor_thread *th,
					uint64_t w)
{
	return (w & VW_OWNED_MASK) == vw_owned_whole(th->slot);
}

/* The same for compact cell word @c. */
static inline bool cw_read_of_own_write(const struct valor_thread *th,
					uint32_t c)
{
	return (c & CW_OWNED_MASK) == cw_owned_whole(th->slot);
}

/*
 * The filter takes cells [@first, @end) of reads of the region's own
 * writes, which no entry backs: note where they are.
 */
static inline void rfilter_note_owned(struct valor_thread *th, uint64_t first,
				      uint64_t end)
{
	if (!th->rown_hi || first < th->rown_lo)
		th->rown_lo = first;
	if (end > th->rown_hi)
		th->rown_hi = end;
}

/*
 * Bytes @m of compact cell @cell, at word @w, read: into the log, or,
 * for a cell the region owns whole, only into the filter.
 */
static inline __attribute__((always_inline)) void
rlog_take_read(struct valor_thread *th, uint64_t cell, uint64_t w, uint8_t m,
	       uint64_t site)
{
	if (vw_read_of_own_write(th, w))
		rfilter_note_owned(th, cell, cell + 1);
	else if (rlog_append(th, cell, w, m, site) &&
		 th->rlog_n <= RFILTER_YOUNG_ENTRIES)
		return; /* the filter takes the cell at its next read */
	rfilter_note(th, cell, m);
}

/* Log a read of a compact cell; inline in the runtime's slow path too. */
static inline __attribute__((always_inline)) int
valor_o_log_read(struct valor_thread *th, uint64_t cell, uint64_t w, uint8_t m,
		 uint64_t site)
{
	rlog_take_read(th, cell, w, m, site);
	return conflict_deliver(th);
}

/*
 * How many cells, @step apart from @cell on, lie in @cell's group: at
 * most @most.  What valor_o_read_run() can be given at once.
 */
static inline unsigned rlog_group_run(uint64_t cell, unsigned step,
				      uint64_t most)
{
	uint64_t n = ((cell | (RLOG_GROUP_CELLS - 1)) - cell) / step + 1;

	return (unsigned)(n < most ? n : most);
}

/*
 * Whether filter bytes @have hold all of @n cells @step apart (1 or 2),
 * eight bytes at a look: a run the region has read already, the rows a
 * stencil reads again (ocean's row above), without a branch per cell.
 */
static inline bool rfilter_run_held(const uint8_t *have, unsigned n,
				    unsigned step)
{
	const uint64_t sel = step == 1 ? ~0ULL : 0x00ff00ff00ff00ffULL;
	unsigned bytes = (n - 1) * step + 1, i = 0;

	if (step > 2)
		return false;
	for (; i + 8 <= bytes; i += 8) {
		uint64_t v;

		__builtin_memcpy(&v, have + i, sizeof(v));
		if ((v & sel) != sel)
			return false;
	}
	for (; i < bytes; i += step)
		if (have[i] != 0xff)
			return false;
	return true;
}

/*
 * A read of @n whole cells of one group, @step cells apart from @cell
 * on (1: a range; 2: every other element of an array of doubles), as a
 * sweep makes them: the cells the filter does not hold yet, from the
 * first up to one whose word differs or whose filter byte is partial,
 * join one entry with one lookup and a few stores, where each alone
 * cost a call of valor_o_log_read() (a third of a histogram's time).
 * The cells the filter holds are skipped, as the inline check skips
 * them.  Nothing here can find a conflict or end the region.  Returns
 * how many of the @n cells it took; 0 when the first needs the
 * one-cell path (a word kept per byte or owned by another region, a
 * leaf not made yet, a full log, which may end the region).
 */
static inline __attribute__((always_inline)) unsigned
valor_o_read_run(struct valor_thread *th, shadow_word *_Atomic *top,
		 uint64_t cell, unsigned n, unsigned step, uint64_t site)
{
	uint64_t tag = rfilter_tag(cell, th->rgen), cells = 0, own = 0;
	uint64_t *tagp = rfilter_tag_of(th->rfilter, cell);
	uint8_t *have = rfilter_mask_of(th->rfilter, cell);
	bool fresh = *tagp != tag;
	uint32_t ours = cw_owned_whole(th->slot), c0 = 0;
	const cell_word *leaf;
	unsigned k;

	_Static_assert(SHADOW_LEAF_WORDS % RLOG_GROUP_CELLS == 0 &&
			       RFILTER_CHUNK_CELLS % RLOG_GROUP_CELLS == 0,
		       "a group lies in one leaf and one filter chunk");
	if (!fresh && rfilter_run_held(have, n, step))
		return n;
	leaf = shadow_fast_leaf(top, cell << CELL_SHIFT, CELL_SIZE);
	if (!leaf || th->rlog_n == th->rlog_cap)
		return 0;
	leaf += cell & (SHADOW_LEAF_WORDS - 1);
	for (k = 0; k < n; k++) {
		uint8_t held = fresh ? 0 : have[k * step];
		uint32_t c;

		if (held == 0xff)
			continue;
		if (held)
			break;
		c = atomic_load_explicit(&leaf[k * step], memory_order_acquire);
		if ((c & CW_OWNED_MASK) == ours) {
			own |= 1ULL
			       << ((cell + k * step) & (RLOG_GROUP_CELLS - 1));
			continue;
		}
		if (!cells) {
			if (cw_escaped(c) ||
			    ((c & CW_ACTIVE) && cw_slot(c) != th->slot))
				break;
			c0 = c;
		} else if (c != c0) {
			break;
		}
		cells |= 1ULL << ((cell + k * step) & (RLOG_GROUP_CELLS - 1));
	}
	if (!(cells | own))
		return k;
	if (cells)
		rlog_append_cells(th, rlog_group(cell), cells, cw_expand(c0),
				  site);
	if (fresh) {
		rfilter_clear(th->rfilter, cell);
		*tagp = tag;
	}
	/*
	 * Each of the first k cells is held whole already or taken now
	 * (anything else stopped the loop), so the filter holds them all:
	 * no test of the cell's bit per byte stored.
	 */
	for (unsigned i = 0; i < k; i++)
		have[i * step] = 0xff;
	if (own)
		rfilter_note_owned(th, cell, cell + (uint64_t)k * step);
	return k;
}

/*
 * Out of line: a write of bytes @m of one cell the region does not own,
 * whose word is at @p.
 */
int valor_o_write_cell(struct valor_thread *th, cell_word *p, uint64_t cell,
		       uint8_t m, uint64_t site);

/* The region's write set fills the ring: spill half of it (valor.c). */
void wlog_spill(struct valor_thread *th);

/*
 * The write log: a slot's ring, of which this region's part is its write
 * set; inline here for the region-first write below.  Called before a
 * write changes a cell: a full ring spills half.
 */
static inline __attribute__((always_inline)) void
wlog_make_room(struct valor_thread *th)
{
	struct valor_ctx *ctx = th->ctx;
	uint64_t head = atomic_load_explicit(&ctx->slots[th->slot].wlog_head,
					     memory_order_relaxed);

	if (unlikely(head - th->region_start >= ctx->slots[th->slot].wlog_room))
		wlog_spill(th);
}

/* The next ring entry, invalidated for readers until published. */
static inline __attribute__((always_inline)) struct wlog_entry *
wlog_next(struct valor_thread *th)
{
	struct valor_ctx *ctx = th->ctx;
	struct slot *s = &ctx->slots[th->slot];
	uint64_t head;
	struct wlog_entry *e;

	wlog_make_room(th);
	head = atomic_load_explicit(&s->wlog_head, memory_order_relaxed);
	e = wlog_at(s, head);
	atomic_store_explicit(&e->cell, 0, memory_order_relaxed);
	/* Readers see the zero before any new field (wlog_entry_copy()). */
	atomic_thread_fence(memory_order_release);
	return e;
}

static inline __attribute__((always_inline)) void
wlog_publish(struct valor_thread *th, struct wlog_entry *e, uint64_t cell,
	     uint64_t site)
{
	struct slot *s = &th->ctx->slots[th->slot];

	e->site = site;
	e->who = wlog_who(th->tid, th->clock);
	atomic_store_explicit(&e->cell, cell + 1, memory_order_release);
	atomic_store_explicit(
		&s->wlog_head,
		atomic_load_explicit(&s->wlog_head, memory_order_relaxed) + 1,
		memory_order_release);
}

static inline __attribute__((always_inline)) void
wlog_append(struct valor_thread *th, uint64_t cell, uint8_t mask, uint64_t ver,
	    uint64_t site)
{
	struct wlog_entry *e = wlog_next(th);

	atomic_store_explicit(&e->what,
			      (ver & VW_VER_MASK) | (uint64_t)mask
							    << WLOG_MASK_SHIFT,
			      memory_order_relaxed);
	wlog_publish(th, e, cell, site);
}

/*
 * Bytes @mask of @cell caught up with the version this region gave the
 * rest of it.  A thread filling a cell byte by byte does this seven
 * times; when its newest entry is that cell's, from the same site, the
 * entry takes the bytes instead of seven more entries filling the log.
 */
static inline __attribute__((always_inline)) void
wlog_append_bytes(struct valor_thread *th, uint64_t cell, uint8_t mask,
		  uint64_t ver, uint64_t site)
{
	struct valor_ctx *ctx = th->ctx;
	struct slot *s = &ctx->slots[th->slot];
	uint64_t head =
		atomic_load_explicit(&s->wlog_head, memory_order_relaxed);
	struct wlog_entry *e = wlog_at(s, head - 1);
	uint64_t what;

	if (head == th->region_start ||
	    atomic_load_explicit(&e->cell, memory_order_relaxed) != cell + 1 ||
	    e->site != site) {
		wlog_append(th, cell, mask, ver, site);
		return;
	}
	what = atomic_load_explicit(&e->what, memory_order_relaxed);
	if ((what & WLOG_FREE) || (what & VW_VER_MASK) != (ver & VW_VER_MASK)) {
		wlog_append(th, cell, mask, ver, site);
		return;
	}
	atomic_store_explicit(&e->what,
			      what | (uint64_t)mask << WLOG_MASK_SHIFT,
			      memory_order_relaxed);
}

/*
 * A region's first write of a cell, inline: the two transitions of
 * write_cell_at() that array sweeps between barriers make, without its
 * two calls: bytes of a cell no region owns, with no byte behind
 * (vw_after_first_write()), and more bytes of a cell this region owns
 * whose bytes behind are one write behind, an int array's second half
 * (vw_after_catch_up()).  False when neither applies (bytes further
 * behind, an owner, a refined cell) or the word changed under us: the
 * caller takes the general path, which looks at the word again.
 */
static inline __attribute__((always_inline)) bool
valor_o_write_first_try(struct valor_thread *th, cell_word *p, uint64_t cell,
			uint64_t w, uint8_t m, uint64_t site)
{
	uint64_t ver = vw_ver(w), nw;
	uint8_t nm = w & VW_NMASK;
	/*
	 * For a wide cell's word this is no compact word the cell can
	 * hold (its nmask is not 0xff, the escape's is): the CAS fails, and
	 * the general path takes the write.
	 */
	uint32_t c = cw_compress(w);

	if (!(w & VW_ACTIVE) && !nm) {
		nw = vw_after_first_write(w, th->slot, m);
		if (!cw_fits(nw))
			return false;
		wlog_make_room(th);
		if (!atomic_compare_exchange_strong_explicit(
			    p, &c, cw_compress(nw), memory_order_acq_rel,
			    memory_order_acquire))
			return false;
		th->st.version_bumps++;
		wlog_append(th, cell, m, ver + 1, site);
		return true;
	}
	if ((w & VW_ACTIVE) && vw_slot(w) == th->slot && !vw_refined(w) &&
	    (m & nm) && vw_one_behind(w)) {
		wlog_make_room(th);
		nw = vw_after_catch_up(w, m);
		if (!atomic_compare_exchange_strong_explicit(
			    p, &c, cw_compress(nw), memory_order_acq_rel,
			    memory_order_acquire))
			return false;
		wlog_append_bytes(th, cell, m & nm, ver, site);
		return true;
	}
	return false;
}

/* The same, or else valor_o_write_cell(). */
static inline __attribute__((always_inline)) int
valor_o_write_first(struct valor_thread *th, cell_word *p, uint64_t cell,
		    uint64_t w, uint8_t m, uint64_t site)
{
	if (valor_o_write_first_try(th, p, cell, w, m, site))
		return 0;
	return valor_o_write_cell(th, p, cell, m, site);
}

#define VALOR_FAST_MISS (-1)

/* What an access needs once valor_o_fast_check() has looked at it. */
enum valor_fast_action {
	VALOR_FAST_DONE, /* nothing */
	VALOR_FAST_LOG, /* a first read of a compact cell: log it */
	VALOR_FAST_WRITE, /* a write of one cell the region does not own */
	VALOR_FAST_FULL_READ, /* the full path */
	VALOR_FAST_FULL_WRITE,
};

/*
 * Look at an access without calling anything or changing anything but
 * the thread's own read log and filter.  For VALOR_FAST_LOG, *@w is the
 * cell word the read saw; for VALOR_FAST_WRITE, *@p is where the cell
 * word is.  @th->mode must be THREAD_FAST; @top is its context's shadow
 * table (th->shadow_top), which a caller with a single context passes
 * from a global so that finding the cell word does not wait for the
 * load of @th.  With @join, a read of more bytes of the newest log
 * entry's cell joins the entry here for any size (below).
 */
static inline __attribute__((always_inline)) enum valor_fast_action
valor_o_fast_check(struct valor_thread *th, shadow_word *_Atomic *top,
		   uintptr_t addr, size_t size, bool is_write, bool join,
		   cell_word **p, uint64_t *w)
{
	uint64_t off = addr & (CELL_SIZE - 1), cell = addr >> CELL_SHIFT;
	enum valor_fast_action full = is_write ? VALOR_FAST_FULL_WRITE :
						 VALOR_FAST_FULL_READ;
	cell_word *leaf;
	uint32_t c;
	uint8_t *have = NULL;
	uint64_t tag = 0;
	uint8_t m;

	/* A range (size > 8) leaves below; the shift stays defined for it. */
	m = (uint8_t)(((1U << (size & 31)) - 1) << off);
	if (!is_write) {
		/*
		 * The filter before the cell word: a read the log holds from
		 * this region is done whatever the word says now.  A write by
		 * another region since that read conflicts with the read, so
		 * validation reports it; the cell word would only have named
		 * the same two regions earlier.  A column walk re-reading a
		 * matrix then misses in its data but not in its shadow.
		 */
		if (__builtin_expect(!shadow_fast_fits(addr, size), 0))
			return full;
		tag = rfilter_tag(cell, th->rgen);
		have = rfilter_mask_of(th->rfilter, cell);
		if (*rfilter_tag_of(th->rfilter, cell) == tag &&
		    (*have & m) == m)
			return VALOR_FAST_DONE;
		/*
		 * The read that follows the check cannot start before the
		 * cell word's miss is over and the log has the read: start
		 * its miss now, so that a pointer chase (a hash chain) waits
		 * for one miss per node, not two in a row.
		 */
		__builtin_prefetch((const void *)addr, 0, 3);
	}
	leaf = shadow_fast_leaf(top, addr, size);
	if (__builtin_expect(!leaf, 0))
		return full;
	*p = &leaf[cell & (SHADOW_LEAF_WORDS - 1)];
	c = atomic_load_explicit(*p, memory_order_acquire);
	if (__builtin_expect(cw_escaped(c), 0)) {
		/* Kept per byte: the full path. */
		if (!cw_wide(c))
			return full;
		/* A cell of its own 64-bit word: the same look, one load on. */
		*w = atomic_load_explicit(cw_wide_word(&th->ctx->shadow, c),
					  memory_order_acquire);
		if (is_write)
			return (*w & VW_ACTIVE) && vw_slot(*w) == th->slot &&
					       !vw_refined(*w) &&
					       !(m & *w & VW_NMASK) ?
				       VALOR_FAST_DONE :
				       VALOR_FAST_WRITE;
		/* Kept per byte, or owned by another region: the full path. */
		if (vw_refined(*w) ||
		    ((*w & VW_ACTIVE) && vw_slot(*w) != th->slot))
			return full;
		return VALOR_FAST_LOG;
	}
	if (is_write) {
		if ((c & (CW_ACTIVE | CW_SLOT_MAX << CW_SLOT_SHIFT)) ==
			    cw_owned_whole(th->slot) &&
		    !(m & c & CW_NMASK))
			return VALOR_FAST_DONE;
		*w = cw_expand(c);
		return VALOR_FAST_WRITE;
	}
	if ((c & CW_ACTIVE) && cw_slot(c) != th->slot)
		return full;
	*w = cw_expand(c);
	/*
	 * More bytes of the cell the newest entry is for, unchanged (a
	 * byte-by-byte scan): what the out-of-line append would do.  The
	 * runtime's check does it for byte reads only: in the others the
	 * two registers it needs cost more than the call (k-means' int
	 * reads, 9% slower).
	 */
	if ((join || size == 1) && th->rlog_n &&
	    th->rlog[th->rlog_n - 1].cell == cell &&
	    th->rlog[th->rlog_n - 1].snapshot == *w) {
		if (*rfilter_tag_of(th->rfilter, cell) == tag) {
			rlog_mask_add(&th->rlog[th->rlog_n - 1], m);
			*rfilter_mask_of(th->rfilter, cell) |= m;
			return VALOR_FAST_DONE;
		}
	}
	return VALOR_FAST_LOG;
}

/*
 * Do what valor_o_fast_check() asked for: the result valor_o_access()
 * would return, or VALOR_FAST_MISS for the full path.
 */
static inline __attribute__((always_inline)) int
valor_o_fast_act(struct valor_thread *th, enum valor_fast_action a,
		 uintptr_t addr, size_t size, cell_word *p, uint64_t w,
		 uint64_t site)
{
	uint64_t off = addr & (CELL_SIZE - 1);
	uint8_t m = (uint8_t)(((1U << size) - 1) << off);

	switch (a) {
	case VALOR_FAST_DONE:
		return 0;
	case VALOR_FAST_LOG:
		return valor_o_log_read(th, addr >> CELL_SHIFT, w, m, site);
	case VALOR_FAST_WRITE:
		return valor_o_write_first(th, p, addr >> CELL_SHIFT, w, m,
					   site);
	default:
		return VALOR_FAST_MISS;
	}
}

/*
 * The result valor_o_access() would return, or VALOR_FAST_MISS when the
 * access needs the full path.
 */
static inline __attribute__((always_inline)) int
valor_o_fast(struct valor_thread *th, shadow_word *_Atomic *top, uintptr_t addr,
	     size_t size, bool is_write, uint64_t site)
{
	cell_word *p = NULL;
	uint64_t w = 0;
	enum valor_fast_action a =
		valor_o_fast_check(th, top, addr, size, is_write, true, &p, &w);

	return valor_o_fast_act(th, a, addr, size, p, w, site);
}

#endif /* VALOR_CORE_VALOR_FAST_H */
