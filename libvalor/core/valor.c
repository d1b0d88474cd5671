// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Valor-O: region conflict detection with ownership + versions (the Valor
 * paper, section 4), eager write-write and write-read detection, lazy
 * read-write detection by read-log validation at region end.
 *
 * Cell word (one per 8-byte cell, updated only by compare-and-swap, so no
 * version increment is ever lost; the shadow keeps it in 32 bits where
 * it fits, valor_word.h says how):
 *
 *   63          28 27   24  23     22      8  7       0
 *  +--------------+-------+------+---------+---------+
 *  | version (36) |gap (4)|active| slot(15)| nmask(8)|
 *  +--------------+-------+------+---------+---------+
 *
 * The bytes NOT in nmask are at <version, slot, active>: slot last wrote
 * them and, if active, its region that did is still ongoing (the owner).
 * The bytes in nmask are behind: at <version - gap, inactive>, or, with
 * gap 0, never written at all (version 0), or, with gap 15, even: at
 * <version, inactive> while the others moved to a new owner (bytes that
 * caught up after a write of the rest).  Which thread wrote them is
 * not kept: validation needs a byte's writer only to excuse a region's
 * own write of what it read, and such a byte is owned by that region
 * (ahead, active) until the region ends and its reads are validated; a
 * report finds the writer in the write logs by version instead.
 * nmask == 0 is the common uniform cell.  This keeps compact a thread
 * writing part of a cell (whoever wrote it before), the owner then
 * writing the rest, and threads rewriting the same bytes of a cell in
 * region after region (up to 14 versions ahead of the rest, or forever
 * when the rest is never written).  Anything else (two regions' writes
 * splitting a cell, versions further apart) refines the cell:
 * nmask == 0xff marks a refined cell, whose bits 8..63 hold a pointer to
 * eight byte words of the same format.  Refinement copies every byte's
 * state, so it loses nothing.
 *
 * The all-zero word is a never-written cell: version 0, no writer.
 * Versions compare modulo 2^36 (see Documentation/engine.md for why that
 * cannot produce a false conflict and what a missed one would need).
 */
#include "internal.h"
#include "valor_fast.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

_Static_assert(VW_VER_MASK == (1ULL << WLOG_VER_BITS) - 1,
	       "a write-log entry holds a whole version");

static inline uint64_t ver_distance(uint64_t now, uint64_t then)
{
	return (now - then) & VW_VER_MASK;
}

/* --- the write log (a slot's ring; this region's part is the write set) */

static void wlog_append_free(struct valor_thread *th, uint64_t lo, uint64_t hi,
			     uint64_t site);
/* Versions a report looks for: (then, now], or any when @any. */
struct ver_window {
	bool any;
	uint64_t then, now;
};

/*
 * A copy of ring entry @e, whose owner may be rewriting it as we read:
 * it zeroes ->cell first and publishes it last (wlog_next()), so fields
 * read between two equal loads of ->cell and ->what are one entry's.
 * Read without that check, a report once named the site of the owner's
 * next write, of another cell.  False: empty, or changing under us.
 */
static bool wlog_entry_copy(const struct wlog_entry *e, struct wlog_entry *out)
{
	for (int tries = 0; tries < 3; tries++) {
		uint64_t cell =
			atomic_load_explicit(&e->cell, memory_order_acquire);
		uint64_t what =
			atomic_load_explicit(&e->what, memory_order_acquire);

		if (!cell)
			return false;
		out->site = __atomic_load_n(&e->site, __ATOMIC_RELAXED);
		out->who = __atomic_load_n(&e->who, __ATOMIC_RELAXED);
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&e->cell, memory_order_relaxed) ==
			    cell &&
		    atomic_load_explicit(&e->what, memory_order_relaxed) ==
			    what) {
			atomic_init(&out->cell, cell);
			atomic_init(&out->what, what);
			return true;
		}
	}
	return false;
}

static bool wlog_covers(const struct wlog_entry *e, uint64_t first,
			uint64_t cell, unsigned byte, bool writes_only,
			const struct ver_window *win)
{
	uint64_t addr = (cell << CELL_SHIFT) + byte, d;
	uint64_t what = atomic_load_explicit(&e->what, memory_order_relaxed);

	if (what & WLOG_FREE) {
		uint64_t lo = ((first - 1) << CELL_SHIFT) +
			      ((what >> WLOG_LO_OFF_SHIFT) & (CELL_SIZE - 1));
		uint64_t hi = what & ((1ULL << WLOG_HI_BITS) - 1);

		return !writes_only && addr >= lo && addr < hi;
	}
	if (first != cell + 1 ||
	    !((what >> WLOG_MASK_SHIFT) & 0xff & (1U << byte)))
		return false;
	if (win->any)
		return true;
	d = ver_distance(what & VW_VER_MASK, win->then);
	return d && d <= ver_distance(win->now, win->then);
}

static bool runs_find(struct valor_ctx *ctx, struct slot *s, uint64_t cell,
		      uint64_t skip_tid, struct valor_access_info *out);

/* The write that write-log (or spilled-run) entry @e records. */
static void writer_of(const struct wlog_entry *e, struct valor_access_info *out)
{
	out->tid = wlog_who_tid(e->who);
	out->site = e->site;
	out->region = wlog_who_region(e->who);
	out->is_write = true;
}

/*
 * The most recent entry of @slot's ring for byte @byte of @cell, made by
 * another thread than @skip_tid: the write (or, unless @writes_only, the
 * free) that a report names as the other access.  *@covers (if not
 * NULL) gets the bytes of the cell that write took.
 */
static bool wlog_find(struct valor_ctx *ctx, uint32_t slot, uint64_t cell,
		      unsigned byte, uint64_t skip_tid, bool writes_only,
		      const struct ver_window *win,
		      struct valor_access_info *out, uint8_t *covers)
{
	struct slot *s = &ctx->slots[slot];
	struct wlog_ring *r;
	uint64_t head, n;
	bool found = false;

	if (!slot || slot >= ctx->nslots)
		return false;
	/*
	 * Counted before the ring is loaded, so that its owner, having
	 * replaced it, sees us and does not free it (wlog_grow()).  Head
	 * first: a ring loaded after it holds every entry below it that
	 * is still kept (the owner copies before it publishes).
	 */
	atomic_fetch_add(&ctx->wlog_readers, 1);
	head = atomic_load_explicit(&s->wlog_head, memory_order_acquire);
	r = atomic_load(&s->wlog);
	n = !r ? 0 : head < r->cap ? head : r->cap;
	for (uint64_t i = 1; i <= n; i++) {
		struct wlog_entry e;

		if (!wlog_entry_copy(&r->e[(head - i) & (r->cap - 1)], &e) ||
		    !wlog_covers(&e, atomic_load(&e.cell), cell, byte,
				 writes_only, win))
			continue;
		if (wlog_who_is(e.who, skip_tid))
			continue;
		writer_of(&e, out);
		if (covers && !(atomic_load(&e.what) & WLOG_FREE))
			*covers = (uint8_t)(e.what >> WLOG_MASK_SHIFT);
		found = true;
		break;
	}
	atomic_fetch_sub(&ctx->wlog_readers, 1);
	/*
	 * A range the slot wrote since as a run (write_run()) is not in the
	 * ring: the newer of the two.  The slot's newest write of the cell
	 * is the one a report wants: the last writer's made the version a
	 * read is validated against, and any write does for an eager one.
	 */
	struct valor_access_info run;

	if (runs_find(ctx, s, cell, skip_tid, &run) &&
	    (!found || run.region > out->region)) {
		*out = run;
		if (covers)
			*covers = 0xff;
		return true;
	}
	return found;
}

/*
 * Who made the write of byte @byte of @cell that another thread's
 * access conflicts with, for the report: @slot is the byte's last writer
 * (its owner if @eager).
 */
static void writer_info(struct valor_thread *th, uint64_t cell, unsigned byte,
			uint32_t slot, bool eager, const struct ver_window *win,
			struct valor_access_info *out, uint8_t *covers)
{
	struct valor_ctx *ctx = th->ctx;

	memset(out, 0, sizeof(*out));
	out->is_write = true;
	if (covers)
		*covers = 0xff;
	if (slot && slot != th->slot &&
	    wlog_find(ctx, slot, cell, byte, 0, eager, win, out, covers))
		return;
	if (slot && slot != th->slot) {
		/* Overwritten in the ring: the slot's last occupant. */
		out->tid = atomic_load(&ctx->slots[slot].tid);
		return;
	}
	/* The last writer is us: look for another thread's write. */
	for (uint32_t s = 1; s < ctx->nslots && ctx->slots[s].used; s++)
		if (s != th->slot && wlog_find(ctx, s, cell, byte, th->tid,
					       false, win, out, covers))
			return;
	/* Our own slot's ring may hold a previous occupant's write. */
	wlog_find(ctx, th->slot, cell, byte, th->tid, false, win, out, covers);
}

static void report(struct valor_thread *th, struct conflict_queue *q,
		   uint32_t kind, uint64_t cell, uint8_t mask,
		   const struct valor_access_info *first,
		   const struct valor_access_info *second, bool lazy)
{
	struct valor_conflict c = {
		.kind = kind,
		.lazy = lazy,
		.first = *first,
		.second = *second,
	};

	for_each_run(mask, lo, len) {
		c.addr = (cell << CELL_SHIFT) + lo;
		c.size = len;
		conflict_push(th, q, &c);
	}
}

static void report_eager(struct valor_thread *th, uint32_t kind, uint64_t cell,
			 uint8_t mask, uint32_t owner, bool is_write,
			 uint64_t site)
{
	struct valor_access_info first, second = {
		.tid = th->tid,
		.site = site,
		.region = th->clock,
		.is_write = is_write,
	};

	static const struct ver_window any = { .any = true };

	struct valor_access_info writer[CELL_SIZE];
	uint8_t bytes[CELL_SIZE];
	unsigned n = 0;

	/*
	 * The write of the lowest byte, then of the lowest it did not
	 * take, ...: bytes named by one line of one thread are one report
	 * even where their entries differ (versions of a refined cell's
	 * bytes drift apart, and so do its entries).
	 */
	while (mask) {
		uint8_t covers, part;
		unsigned k;

		writer_info(th, cell, __builtin_ctz(mask), owner, true, &any,
			    &first, &covers);
		part = (mask & covers) | (mask & -mask);
		mask &= ~part;
		for (k = 0; k < n; k++)
			if (writer[k].tid == first.tid &&
			    writer[k].site == first.site)
				break;
		if (k == n) {
			writer[n] = first;
			bytes[n++] = 0;
		}
		bytes[k] |= part;
	}
	for (unsigned k = 0; k < n; k++)
		report(th, &th->eager, kind, cell, bytes[k], &writer[k],
		       &second, false);
}

/*
 * Conflicts found byte by byte (a refined cell, a free), gathered per
 * other region: an access of several bytes is one report per write of
 * that region it meets (report_eager() names the write of the lowest
 * byte, then of the lowest that write did not take), as in a compact
 * cell, not one report per byte.  Looked up byte by byte, a writer that
 * went on writing meanwhile had overwritten its entry for some bytes
 * and not others: the bundled example printed reports of 1 to 7 bytes
 * of an 8-byte counter.
 */
struct byte_conflicts {
	uint32_t slot[CELL_SIZE];
	uint8_t mask[CELL_SIZE];
	unsigned n;
};

static void byte_conflict_add(struct byte_conflicts *bc, uint32_t slot,
			      unsigned b)
{
	unsigned k = 0;

	while (k < bc->n && bc->slot[k] != slot)
		k++;
	if (k == bc->n) {
		bc->slot[bc->n] = slot;
		bc->mask[bc->n++] = 0;
	}
	bc->mask[k] |= 1U << b;
}

static bool report_byte_conflicts(struct valor_thread *th, uint32_t kind,
				  uint64_t cell,
				  const struct byte_conflicts *bc,
				  bool is_write, uint64_t site)
{
	for (unsigned k = 0; k < bc->n; k++)
		report_eager(th, kind, cell, bc->mask[k], bc->slot[k], is_write,
			     site);
	return bc->n;
}

/* --- release without locks */

/*
 * A region end gives up the cells the region owns.  Done with a CAS per
 * cell, that was a quarter of lu's time and an eighth of fft's, radix's
 * and ocean's: the region's own words change under it only where another
 * thread replaces one in which it owns bytes (refining the cell to write
 * other bytes of it, a conflicting write of a byte, a free), so a large
 * release walks with plain stores, and those replacements keep out of
 * the walk instead.  The occupant announces the walk (slot->releasing)
 * and waits for no meddler; a meddler announces itself (slot->meddlers)
 * and backs off if the owner walks.  Each side stores its flag and then
 * loads the other's, both sequentially consistent, so at least one sees
 * the other: no CAS over the owner's word falls between the walk's load
 * of that word and its store, and no refined block such a CAS frees is
 * walked.  The meddler holds its announcement over one CAS only, and
 * waits holding none, so the two never wait for each other.
 */

/* A write set this large is released by a walk: a CAS costs about a fence. */
#define RELEASE_WALK_MIN 16U

void (*eng_release_walk_hook)(struct valor_thread *th, uint64_t cell);

/*
 * Before a CAS over a word in which the regions of the @n slots at
 * @owners own bytes: false after waiting out a walk of one of them, when
 * the caller loads the word again and starts over.
 */
static __attribute__((noinline, cold)) bool
meddle_begin(struct valor_thread *th, const uint32_t *owners, unsigned n)
{
	struct slot *slots = th->ctx->slots;

	for (unsigned i = 0; i < n; i++)
		atomic_fetch_add(&slots[owners[i]].meddlers, 1);
	for (unsigned i = 0; i < n; i++) {
		struct slot *s = &slots[owners[i]];

		if (!atomic_load(&s->releasing))
			continue;
		for (unsigned k = 0; k < n; k++)
			atomic_fetch_sub(&slots[owners[k]].meddlers, 1);
		atomic_fetch_add_explicit(&th->ctx->meddle_waits, 1,
					  memory_order_relaxed);
		while (atomic_load_explicit(&s->releasing,
					    memory_order_acquire))
			eng_cpu_relax();
		return false;
	}
	return true;
}

static void meddle_end(struct valor_thread *th, const uint32_t *owners,
		       unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		atomic_fetch_sub_explicit(&th->ctx->slots[owners[i]].meddlers,
					  1, memory_order_release);
}

/*
 * CAS @p from *@w to @nw, where @owner's region (0: none, or ours) owns
 * bytes of *@w.  As a failed CAS, false leaves the current word in *@w.
 */
static bool cas_over(struct valor_thread *th, shadow_word *p, uint64_t *w,
		     uint64_t nw, uint32_t owner)
{
	bool done;

	if (!owner || owner == th->slot)
		return atomic_compare_exchange_strong(p, w, nw);
	if (!meddle_begin(th, &owner, 1)) {
		*w = atomic_load(p);
		return false;
	}
	done = atomic_compare_exchange_strong(p, w, nw);
	meddle_end(th, &owner, 1);
	return done;
}

/* The same for the cell word at @p (cw_cas()). */
static bool cell_cas_over(struct valor_thread *th, cell_word *p, uint64_t *w,
			  uint64_t nw, uint32_t owner)
{
	struct shadow *s = &th->ctx->shadow;
	bool done;

	if (!owner || owner == th->slot)
		return cw_cas(s, p, w, nw);
	if (!meddle_begin(th, &owner, 1)) {
		*w = cw_load(s, p);
		return false;
	}
	done = cw_cas(s, p, w, nw);
	meddle_end(th, &owner, 1);
	return done;
}

uint32_t cw_widen(struct shadow *s, uint64_t w)
{
	static const char full[] =
		"valor: more than 8,388,607 cells need a wide shadow word; "
		"giving up\n";
	uint32_t i = shadow_wide_new(s);

	if (!i) {
		(void)!write(STDERR_FILENO, full, sizeof(full) - 1);
		abort();
	}
	atomic_store_explicit(&s->wide[i], w, memory_order_relaxed);
	return i << CW_INDEX_SHIFT | CW_ESCAPE;
}

/* The slot of another region that owns bytes of compact word @w, or 0. */
static uint32_t other_owner(const struct valor_thread *th, uint64_t w)
{
	return (w & VW_ACTIVE) && vw_slot(w) != th->slot ? vw_slot(w) : 0;
}

/* --- refinement */

/*
 * A block of byte words: the shadow's own, which a cell word can name,
 * or, once those are all taken, the arena's, behind a wide word.
 */
static shadow_word *refined_block_new(struct valor_ctx *ctx)
{
	shadow_word *blk = shadow_block_new(&ctx->shadow);

	return blk ? blk : arena_alloc(&ctx->arena, 8 * sizeof(*blk));
}

static void refined_block_free(struct valor_ctx *ctx, shadow_word *blk)
{
	if (shadow_block_owns(&ctx->shadow, blk))
		shadow_block_free(&ctx->shadow, blk);
	else
		arena_free(&ctx->arena, blk, 8 * sizeof(*blk));
}

static __attribute__((noinline)) bool refine(struct valor_thread *th,
					     cell_word *p, uint64_t w)
{
	struct valor_ctx *ctx = th->ctx;
	shadow_word *blk = refined_block_new(ctx);

	if (!blk)
		return false;
	for (unsigned b = 0; b < CELL_SIZE; b++) {
		struct byte_state s = vw_byte(w, b);

		atomic_init(&blk[b], vw_make(s.ver, s.slot, s.active, 0, 0));
	}
	if (!cell_cas_over(th, p, &w,
			   ((uint64_t)(uintptr_t)blk << 8) | VW_REFINED,
			   other_owner(th, w))) {
		refined_block_free(ctx, blk);
		return true; /* someone else changed it: the caller retries */
	}
	th->st.cells_refined++;
	return true;
}

/* --- writes */

/*
 * Write bytes @m of a refined cell, byte by byte.  Each byte's write-log
 * entry goes in right after its CAS, as a compact cell's does (bytes
 * that got one version share an entry, wlog_append_bytes()): another
 * thread that meets the byte owned looks for the write in our ring, and
 * with the entries appended after all eight CASes, it often looked too
 * early and reported the write's site unknown.
 */
static void write_refined(struct valor_thread *th, uint64_t cell,
			  shadow_word *blk, uint8_t m, uint64_t site,
			  bool *eager)
{
	struct byte_conflicts bc = { .n = 0 };

	wlog_make_room(th);
	for (unsigned b = 0; b < CELL_SIZE; b++) {
		uint64_t bw, nw;

		if (!(m & (1U << b)))
			continue;
		bw = atomic_load_explicit(&blk[b], memory_order_acquire);
		do {
			if ((bw & VW_ACTIVE) && vw_slot(bw) == th->slot)
				goto next_byte;
			nw = vw_make(vw_ver(bw) + 1, th->slot, true, 0, 0);
		} while (!cas_over(th, &blk[b], &bw, nw, other_owner(th, bw)));
		th->st.version_bumps++;
		wlog_append_bytes(th, cell, 1U << b, vw_ver(nw), site);
		if (bw & VW_ACTIVE)
			byte_conflict_add(&bc, vw_slot(bw), b);
next_byte:;
	}
	if (report_byte_conflicts(th, VALOR_CONFLICT_WW, cell, &bc, true, site))
		*eager = true;
}

/* Write bytes @m of @cell, whose word is at @p, not owned by the region. */
static int write_cell_at(struct valor_thread *th, cell_word *p, uint64_t cell,
			 uint8_t m, uint64_t site, bool *eager)
{
	struct shadow *sh = &th->ctx->shadow;
	uint32_t me = th->slot;
	uint64_t w, nw;

	wlog_make_room(th);
	w = cw_load(sh, p);
	for (;;) {
		uint8_t nm = w & VW_NMASK;
		uint32_t slot = vw_slot(w);
		bool active = w & VW_ACTIVE;
		uint64_t ver = vw_ver(w);
		unsigned gap = vw_gap(w);

		if (vw_refined(w)) {
			write_refined(th, cell, vw_block(w), m, site, eager);
			return 0;
		}
		if (active && slot == me) {
			if (!(m & nm))
				return 0;
			/* Bytes exactly one write behind catch up. */
			if (!vw_one_behind(w))
				goto split;
			nw = vw_after_catch_up(w, m);
			if (cw_cas(sh, p, &w, nw)) {
				wlog_append_bytes(th, cell, m & nm, ver, site);
				return 0;
			}
			continue;
		}
		if (active)
			goto split; /* another thread's region owns it */
		if (!nm) {
			nw = vw_after_first_write(w, me, m);
		} else if (m == (~nm & 0xff)) {
			/* The same bytes again; the rest stays behind. */
			if (gap == VW_GAP_EVEN)
				nw = vw_make(ver + 1, me, true, nm, 1);
			else if (gap == 0)
				nw = vw_make(ver + 1, me, true, nm, 0);
			else if (gap < VW_GAP_MAX)
				nw = vw_make(ver + 1, me, true, nm, gap + 1);
			else
				goto split;
		} else if (m == nm && vw_one_behind(w)) {
			/* The bytes behind catch up: they lead, the rest is even. */
			nw = vw_make(ver, me, true, ~m & 0xff, VW_GAP_EVEN);
		} else if (m == nm && gap == VW_GAP_EVEN) {
			nw = vw_make(ver + 1, me, true, ~m & 0xff, 1);
		} else if (m == 0xff && gap == VW_GAP_EVEN) {
			nw = vw_make(ver + 1, me, true, 0, 0);
		} else {
			goto split;
		}
		if (cw_cas(sh, p, &w, nw)) {
			th->st.version_bumps++;
			wlog_append(th, cell, m, vw_ver(nw), site);
			return 0;
		}
		continue;
split:
		/* Another owner, or states a compact word cannot express. */
		if (!refine(th, p, w))
			return -ENOMEM;
		w = cw_load(sh, p);
	}
}

static int write_cell(struct valor_thread *th, uint64_t cell, uint8_t m,
		      uint64_t site, bool *eager)
{
	cell_word *p = shadow_cell_get(&th->ctx->shadow, cell);
	uint64_t w;

	if (!p)
		return -ENOMEM;
	w = cw_load(&th->ctx->shadow, p);
	/* The common case: the region owns the bytes already. */
	if ((w & VW_ACTIVE) && vw_slot(w) == th->slot && !vw_refined(w) &&
	    !(m & w & VW_NMASK))
		return 0;
	return write_cell_at(th, p, cell, m, site, eager);
}

/* --- the read log */

#define RLOG_FIRST_ENTRIES 256U

/* The log lost or shrank entries: no filter entry may vouch for them. */
static void rfilter_invalidate(struct valor_thread *th)
{
	th->rown_hi = 0;
	if (++th->rgen > RFILTER_GEN_MAX) {
		memset(th->rfilter, 0, sizeof(th->rfilter[0]));
		th->rgen = 1;
	}
}

/*
 * Threads that read little keep a small log: it starts at a page or two
 * and doubles up to the configured size.  False when it cannot grow.
 */
static bool rlog_grow(struct valor_thread *th)
{
	uint32_t cap = th->rlog_cap * 2;
	struct rlog_entry *bigger;

	if (cap > th->ctx->p.read_log_entries)
		cap = th->ctx->p.read_log_entries;
	if (cap <= th->rlog_cap)
		return false;
	bigger = eng_realloc(th->rlog, (size_t)cap * sizeof(*th->rlog));
	if (!bigger)
		return false;
	th->rlog = bigger;
	th->rlog_cap = cap;
	return true;
}

/* A full log grows or, at its configured size, splits the region. */
void rlog_make_room(struct valor_thread *th)
{
	if (rlog_grow(th))
		return;
	/* A full log is validated and emptied: the region splits. */
	th->st.read_log_overflows++;
	valor_o_validate(th, true);
}

/*
 * The log reached a size whose part of the group index is larger: its
 * entries move to their slots in the larger part, so that a sweep's
 * groups go on finding them (a column walk's second column otherwise
 * logs its first rows' groups again).  They go where rlog_join_group()
 * would have put them: a later entry of a (group, site) takes the slot
 * over from an earlier.
 */
__attribute__((noinline, cold)) void rgroup_spread(struct valor_thread *th)
{
	uint32_t mask = rgroup_mask_for(th->rlog_n, th->rgroup_mask);

	memset(th->rgroup, 0, ((size_t)mask + 1) * sizeof(*th->rgroup));
	for (uint32_t n = 1; n <= th->rlog_n; n++) {
		const struct rlog_entry *e = &th->rlog[n - 1];
		uint64_t group = rlog_group(e->cell);
		uint32_t i = rgroup_slot(group, e->site, mask);
		uint32_t *slot = &th->rgroup[i];

		for (unsigned way = 0; way < 2; way++, i ^= RGROUP_LINE_SLOTS) {
			uint32_t k = th->rgroup[i];

			if (!k ||
			    rgroup_key_is(&th->rlog[k - 1], group, e->site)) {
				slot = &th->rgroup[i];
				break;
			}
		}
		*slot = n;
	}
}

static void read_cell(struct valor_thread *th, uint64_t cell, uint8_t m,
		      uint64_t site, bool *eager)
{
	/*
	 * Reads create the leaf too: a free skips leaves that do not
	 * exist, and must not skip memory with pending reads.
	 */
	cell_word *p = shadow_cell_get(&th->ctx->shadow, cell);
	uint64_t w = p ? cw_load(&th->ctx->shadow, p) : 0;

	if (vw_refined(w)) {
		shadow_word *blk = vw_block(w);
		struct byte_conflicts bc = { .n = 0 };
		uint64_t bw[CELL_SIZE];

		for (unsigned b = 0; b < CELL_SIZE; b++) {
			if (!(m & (1U << b)))
				continue;
			bw[b] = atomic_load_explicit(&blk[b],
						     memory_order_acquire);
			if ((bw[b] & VW_ACTIVE) && vw_slot(bw[b]) != th->slot)
				byte_conflict_add(&bc, vw_slot(bw[b]), b);
		}
		if (report_byte_conflicts(th, VALOR_CONFLICT_WR, cell, &bc,
					  false, site))
			*eager = true;
		/*
		 * Bytes read at one byte word share an entry: validation
		 * compares each byte of an entry with its snapshot, and a
		 * conflict it finds is then one report of those bytes.
		 */
		for (unsigned b = 0; b < CELL_SIZE; b++) {
			uint8_t same = 0;

			if (!(m & (1U << b)))
				continue;
			for (unsigned c = b; c < CELL_SIZE; c++)
				if ((m & (1U << c)) && bw[c] == bw[b])
					same |= 1U << c;
			m &= ~same;
			rlog_append(th, cell, bw[b], same, site);
			rfilter_note(th, cell, same);
		}
		return;
	}
	if ((w & VW_ACTIVE) && vw_slot(w) != th->slot) {
		uint8_t hit = m & ~w & 0xff;

		if (hit) {
			report_eager(th, VALOR_CONFLICT_WR, cell, hit,
				     vw_slot(w), false, site);
			*eager = true;
		}
	}
	rlog_append(th, cell, w, m, site);
	rfilter_note(th, cell, m);
}

/*
 * Ordering rule: a read-write conflict that validation would find
 * happened before this eager one, so report it first.  Once per region:
 * the first eager conflict is the one a fail-stop program stops at, and
 * validating the whole log at every later one would make a racy loop
 * quadratic (what the region still owes is reported at its end).
 */
static void validate_before_eager(struct valor_thread *th)
{
	if (th->ordered)
		return;
	th->ordered = true;
	valor_o_validate(th, false);
}

int valor_o_write_cell(struct valor_thread *th, cell_word *p, uint64_t cell,
		       uint8_t m, uint64_t site)
{
	bool eager = false;

	write_cell_at(th, p, cell, m, site, &eager);
	if (eager)
		validate_before_eager(th);
	return conflict_deliver(th);
}

#define WSPILL_MAX (1U << 16)
#define WSPILL_CELL_BITS 45 /* SHADOW_ADDR_BITS - CELL_SHIFT */
#define WSPILL_STEP2 (1ULL << WSPILL_CELL_BITS)
#define WSPILL_COUNT_SHIFT (WSPILL_CELL_BITS + 1)
#define WSPILL_COUNT_MAX ((1ULL << (64 - WSPILL_COUNT_SHIFT)) - 1)

_Static_assert(WSPILL_CELL_BITS == SHADOW_ADDR_BITS - CELL_SHIFT,
	       "a spilled word holds any cell");

static uint64_t wspill_cell(uint64_t v)
{
	return v & (WSPILL_STEP2 - 1);
}

static uint64_t wspill_step(uint64_t v)
{
	return v & WSPILL_STEP2 ? 2 : 1;
}

/* Cells after the first in the run of spilled word @v. */
static uint64_t wspill_more(uint64_t v)
{
	return v >> WSPILL_COUNT_SHIFT;
}

enum wspill_result { WSPILL_FULL, WSPILL_NEW, WSPILL_JOINED };
static bool wspill_room(struct valor_thread *th);
static enum wspill_result wspill_add_run(struct valor_thread *th,
					 uint64_t start, uint64_t n,
					 unsigned step, uint64_t site);
static void wspill_publish(struct valor_thread *th, enum wspill_result r,
			   const struct wlog_entry *e);

/*
 * Whole cells of a range write (a loop's write range, a memset, a
 * struct copy), or of a strided one (@step 2: every other cell, a
 * red-black sweep), from @cell on below @end: those no region owns and
 * no byte of which is behind are taken over as
 * valor_o_write_first_try() does, but recorded as a run on the spill
 * list rather than as entries of the write log; those this region owns
 * already need nothing.  A range written cell after cell then costs a
 * word or two there, where the ring took 40 bytes a cell, written now
 * and read again at region end: that traffic was most of the cost of a
 * region's first writes of an array.  A report about such a write names
 * the run's site, as for spilled entries.  Returns where it stopped:
 * the first cell at or past @end, or a cell that needs the general path
 * (owned by another region, refined, bytes behind, its word changed
 * under us, or no room left on the list).
 */
static uint64_t write_run(struct valor_thread *th, uint64_t cell, uint64_t end,
			  unsigned step, uint64_t site)
{
	struct wlog_entry e = { .site = site,
				.who = wlog_who(th->tid, th->clock) };
	cell_word *p = NULL;
	uint64_t start = cell, n = 0;
	uint32_t ours = cw_owned_whole(th->slot);

	for (; cell < end; cell += step) {
		uint32_t c, nc;

		/* A new leaf: the first cell, or one that crossed into it. */
		if (!p || (cell & (SHADOW_LEAF_WORDS - 1)) < step) {
			p = shadow_cell_get(&th->ctx->shadow, cell);
			if (!p)
				break;
		} else {
			p += step;
		}
		c = atomic_load_explicit(p, memory_order_acquire);
		if ((c & CW_OWNED_MASK) == ours) {
			/* Ours: in the write set already (a row written again). */
			if (n)
				wspill_publish(th,
					       wspill_add_run(th, start, n,
							      step, site),
					       &e);
			n = 0;
			continue;
		}
		/* Owned by another region, wide, bytes behind: not here. */
		if (c & (CW_ACTIVE | CW_NMASK))
			break;
		nc = cw_after_whole_write(c, th->slot);
		if (!nc)
			break;
		/* A run's word is reserved before its first cell is taken. */
		if (!n && !wspill_room(th))
			break;
		/*
		 * Four cells a lock prefix where the machine has a 16-byte
		 * compare-and-swap, two where it has not (lu -18% for two):
		 * aligned groups, all free.
		 */
		if (step == 1 && th->ctx->cas_pair && !(cell & 3) &&
		    cell + 3 < end && n + 4 <= WSPILL_COUNT_MAX) {
			_Atomic uint64_t *q = (_Atomic uint64_t *)p;
			uint64_t lo = atomic_load_explicit(
					 &q[0], memory_order_acquire),
				 hi = atomic_load_explicit(
					 &q[1], memory_order_acquire);
			uint64_t nlo = cw_pair_after_whole_write(lo, th->slot),
				 nhi = cw_pair_after_whole_write(hi, th->slot);

			if (nlo && nhi && eng_cas_pair(q, lo, hi, nlo, nhi)) {
				th->st.version_bumps += 4;
				if (!n)
					start = cell;
				n += 4;
				cell += 3;
				p += 3;
				continue;
			}
		}
		if (step == 1 && !(cell & 1) && cell + 1 < end &&
		    n + 2 <= WSPILL_COUNT_MAX) {
			_Atomic uint64_t *pair = (_Atomic uint64_t *)p;
			uint64_t was = atomic_load_explicit(
				pair, memory_order_acquire);
			uint64_t now = cw_pair_after_whole_write(was, th->slot);

			if (now &&
			    atomic_compare_exchange_strong(pair, &was, now)) {
				th->st.version_bumps += 2;
				if (!n)
					start = cell;
				n += 2;
				cell++;
				p++;
				continue;
			}
		}
		if (!atomic_compare_exchange_strong_explicit(
			    p, &c, nc, memory_order_acq_rel,
			    memory_order_acquire))
			break;
		th->st.version_bumps++;
		if (!n)
			start = cell;
		if (++n == WSPILL_COUNT_MAX + 1) {
			wspill_publish(th,
				       wspill_add_run(th, start, n, step, site),
				       &e);
			n = 0;
		}
	}
	if (n)
		wspill_publish(th, wspill_add_run(th, start, n, step, site),
			       &e);
	return cell < end ? cell : end;
}

static bool access_cells(struct valor_thread *th, uintptr_t addr, size_t size,
			 bool is_write, uint64_t site, bool *eager);

/*
 * Whole cells written, @step apart from @cell on below @end: runs where
 * write_run() takes them, the general path for each cell it stops at.
 * False when out of memory.
 */
static bool write_whole_cells(struct valor_thread *th, uint64_t cell,
			      uint64_t end, unsigned step, uint64_t site,
			      bool *eager)
{
	while (cell < end) {
		cell = write_run(th, cell, end, step, site);
		if (cell >= end)
			break;
		if (!access_cells(th, cell << CELL_SHIFT, CELL_SIZE, true, site,
				  eager))
			return false;
		cell += step;
	}
	return true;
}

/* An access of the cells of [@addr, @addr + @size), one by one. */
static bool access_cells(struct valor_thread *th, uintptr_t addr, size_t size,
			 bool is_write, uint64_t site, bool *eager)
{
	uint64_t cell;
	uint8_t m;

	/*
	 * Several cells (a 16-byte value, a struct copy): each cell's part
	 * gets the fast path's look first, so that its reads are logged
	 * once per region like any other.
	 */
	for_each_cell(addr, size, cell, m) {
		uintptr_t a = (cell << CELL_SHIFT) + __builtin_ctz(m);
		cell_word *p = NULL;
		uint64_t w = 0;

		switch (valor_o_fast_check(th, th->shadow_top, a, mask_bytes(m),
					   is_write, true, &p, &w)) {
		case VALOR_FAST_DONE:
			continue;
		case VALOR_FAST_LOG:
			rlog_take_read(th, cell, w, m, site);
			continue;
		case VALOR_FAST_WRITE:
			if (valor_o_write_first_try(th, p, cell, w, m, site))
				continue;
			if (write_cell_at(th, p, cell, m, site, eager))
				return false; /* out of memory */
			continue;
		default:
			break;
		}
		if (is_write) {
			if (write_cell(th, cell, m, site, eager))
				return false;
		} else {
			read_cell(th, cell, m, site, eager);
		}
	}
	return true;
}

/*
 * A read of two whole cells or more: a group's cells at once where
 * valor_o_read_run() can take them, the rest (and the ends) one cell
 * at a time.
 */
static void read_range(struct valor_thread *th, uintptr_t addr, uintptr_t end,
		       uint64_t site, bool *eager)
{
	uint64_t lo = (addr + CELL_SIZE - 1) >> CELL_SHIFT,
		 hi = end >> CELL_SHIFT;

	if (addr < lo << CELL_SHIFT)
		access_cells(th, addr, (lo << CELL_SHIFT) - addr, false, site,
			     eager);
	while (lo < hi) {
		unsigned k = 0;

		if (th->mode == THREAD_FAST)
			k = valor_o_read_run(th, th->shadow_top, lo,
					     rlog_group_run(lo, 1, hi - lo), 1,
					     site);
		if (!k) {
			access_cells(th, lo << CELL_SHIFT, CELL_SIZE, false,
				     site, eager);
			k = 1;
		}
		lo += k;
	}
	if (end > hi << CELL_SHIFT)
		access_cells(th, hi << CELL_SHIFT, end - (hi << CELL_SHIFT),
			     false, site, eager);
}

int valor_o_access(struct valor_thread *th, uintptr_t addr, size_t size,
		   bool is_write, uint64_t site)
{
	uintptr_t end = addr + size;
	uint64_t lo = (addr + CELL_SIZE - 1) >> CELL_SHIFT,
		 hi = end >> CELL_SHIFT;
	bool eager = false;

	int fast = valor_o_fast(th, th->shadow_top, addr, size, is_write, site);

	if (fast != VALOR_FAST_MISS)
		return fast;
	if (!is_write && hi >= lo + 2) {
		read_range(th, addr, end, site, &eager);
		goto out;
	}
	if (!is_write || hi < lo + 2) {
		access_cells(th, addr, size, is_write, site, &eager);
		goto out;
	}
	/* A write of two whole cells or more: runs, and the ends. */
	if (addr < lo << CELL_SHIFT &&
	    !access_cells(th, addr, (lo << CELL_SHIFT) - addr, true, site,
			  &eager))
		goto out;
	if (!write_whole_cells(th, lo, hi, 1, site, &eager))
		goto out;
	if (hi << CELL_SHIFT < end)
		access_cells(th, hi << CELL_SHIFT, end - (hi << CELL_SHIFT),
			     true, site, &eager);
out:
	if (eager)
		validate_before_eager(th);
	return conflict_deliver(th);
}

/*
 * The cells of a strided write the region now owns whole go into the
 * filter, as a read of them would put them (rlog_take_read()): a
 * stencil that writes every other cell of a row and then reads the row
 * whole (red-black relaxation) finds the row held, a look at its chunks,
 * instead of a cell word per cell.
 */
static void rfilter_note_written(struct valor_thread *th, uint64_t cell,
				 uint64_t end, unsigned step)
{
	cell_word *p = NULL;
	uint64_t first = 0, last = 0;

	for (; cell < end; cell += step) {
		if (!p || (cell & (SHADOW_LEAF_WORDS - 1)) < step)
			p = shadow_cell_peek(&th->ctx->shadow, cell);
		else
			p += step;
		if (!p)
			break;
		if (!cw_read_of_own_write(
			    th, atomic_load_explicit(p, memory_order_relaxed)))
			continue;
		rfilter_note(th, cell, 0xff);
		if (!last)
			first = cell;
		last = cell + 1;
	}
	if (last)
		rfilter_note_owned(th, first, last);
}

int valor_o_write_cells(struct valor_thread *th, uint64_t cell, uint64_t count,
			unsigned step, uint64_t site)
{
	bool eager = false;

	write_whole_cells(th, cell, cell + count * step, step, site, &eager);
	if (th->mode == THREAD_FAST)
		rfilter_note_written(th, cell, cell + count * step, step);
	if (eager)
		validate_before_eager(th);
	return conflict_deliver(th);
}

/* --- validation and region end */

/*
 * Check bytes @which of read-log entry @e against the cell now, report a
 * read-write conflict for those written since (by another thread, or
 * twice), and return them.
 */
/*
 * Whether bytes @which, read when their cell word was @snap, are still
 * as read or were written once since by this thread, the word now being
 * @w: decided without looking at the bytes one by one when they share
 * one version then and now (the common case: an ownership ended, or
 * this region wrote what it had read).  False: look at each byte.
 */
static inline bool read_unchanged(const struct valor_thread *th, uint64_t snap,
				  uint8_t which, uint64_t w)
{
	uint64_t d;

	if (w == snap)
		return true;
	if (vw_refined(w) || (which & (w | snap) & VW_NMASK))
		return false;
	d = ver_distance(vw_ver(w), vw_ver(snap));
	return !d || (d == 1 && vw_slot(w) == th->slot);
}

static uint8_t check_entry_word(struct valor_thread *th,
				const struct rlog_entry *e, uint8_t which,
				uint64_t w)
{
	uint8_t bad = 0;
	uint32_t writer = 0;
	unsigned wbyte = 0;
	struct ver_window win = { 0 };

	if (read_unchanged(th, e->snapshot, which, w))
		return 0;
	for (unsigned b = 0; b < CELL_SIZE; b++) {
		struct byte_state then, now;
		uint64_t d;

		if (!(which & (1U << b)))
			continue;
		then = vw_byte(e->snapshot, b);
		now = vw_byte(byte_word(w, b), b);
		d = ver_distance(now.ver, then.ver);
		if ((d && now.slot != th->slot) || d >= 2) {
			bad |= 1U << b;
			writer = now.slot;
			wbyte = b;
			win.then = then.ver;
			win.now = now.ver;
		}
	}
	if (bad) {
		struct valor_access_info first = {
			.tid = th->tid,
			.site = e->site,
			.region = th->clock,
			.is_write = false,
		}, second;

		writer_info(th, e->cell, wbyte, writer, false, &win, &second,
			    NULL);
		report(th, &th->lazy, VALOR_CONFLICT_RW, e->cell, bad, &first,
		       &second, true);
	}
	return bad;
}

static uint8_t check_entry(struct valor_thread *th, const struct rlog_entry *e,
			   uint8_t which)
{
	return check_entry_word(th, e, which,
				cw_peek_load(&th->ctx->shadow, e->cell));
}

/* Bytes @mask of entry @e's group cell @cell, as an entry of its own. */
static struct rlog_entry more_cell(const struct rlog_entry *e, uint64_t cell,
				   uint8_t mask)
{
	struct rlog_entry one = {
		.snapshot = e->snapshot,
		.site = e->site,
		.cell = cell,
		.mask = mask,
	};

	return one;
}

/*
 * A validation that keeps the log found part of a grouped cell written:
 * the rest becomes an entry of its own, or, with no room for one, the
 * cell stays in the group (its written bytes may then be reported again
 * at the next validation, never missed).
 */
#define VALIDATE_SPLITS 16

/*
 * Cell @cell, the @k-th of entry @e's group, against its word in @leaf
 * (NULL: none): report what was written since, drop it from @e, or
 * split off the rest of it (validate_entry()).
 */
static void validate_more_cell(struct valor_thread *th, struct rlog_entry *e,
			       cell_word *leaf, uint64_t cell, unsigned k,
			       bool keep, struct rlog_entry *split,
			       unsigned *nsplit)
{
	uint64_t w = leaf ? cw_load(&th->ctx->shadow,
				    &leaf[cell & (SHADOW_LEAF_WORDS - 1)]) :
			    0;
	uint8_t which = rlog_more_mask(e, k), bad;
	struct rlog_entry one;

	if (read_unchanged(th, e->snapshot, which, w))
		return;
	one = more_cell(e, cell, which);
	bad = check_entry_word(th, &one, which, w);
	if (!bad)
		return;
	if (bad != which && keep) {
		if (*nsplit == VALIDATE_SPLITS ||
		    th->rlog_n + VALIDATE_SPLITS > th->rlog_cap)
			return;
		split[(*nsplit)++] = more_cell(e, cell, which & ~bad);
	}
	rlog_more_clear(e, k);
}

/*
 * Whether the cell words of @cells, a half group's rlog_more_cells()
 * from @cell on in @leaf, all are @snapshot, with one branch, not one
 * per cell: the halves a sweep reads whole, or every other cell of
 * (ocean's red-black neighbours, each site's entry every other cell),
 * nobody wrote since.  False for any other shape of @cells.
 */
static inline bool half_unchanged(cell_word *leaf, uint64_t cell,
				  uint64_t cells, uint64_t snapshot)
{
	cell_word *p = &leaf[cell & (SHADOW_LEAF_WORDS - 1)];
	unsigned step, i = 0;
	uint32_t off = 0, snap;

	/* A wide word is never equal to a compact one. */
	if (!cw_fits(snapshot))
		return false;
	snap = cw_compress(snapshot);
	if (cells == RLOG_MORE_ALL) {
		step = 1;
	} else if (cells == RLOG_MORE_EVEN) {
		step = 2;
	} else if (cells == RLOG_MORE_ODD) {
		step = 2;
		i = 1;
	} else {
		return false;
	}
	for (; i < 32; i += step)
		off |= atomic_load_explicit(&p[i], memory_order_relaxed) ^ snap;
	atomic_thread_fence(memory_order_acquire);
	return !off;
}

/*
 * Validate entry @e against the leaf of its group (NULL: none): report
 * what was written since, drop it from @e.  The rest of a cell partly
 * reported goes to @split when @keep (the log is kept) and there is
 * room for it there.
 */
static void validate_entry(struct valor_thread *th, struct rlog_entry *e,
			   cell_word *leaf, bool keep, struct rlog_entry *split,
			   unsigned *nsplit)
{
	uint64_t w = 0, base = e->cell & ~(uint64_t)(RLOG_GROUP_CELLS - 1);

	if (e->mask) {
		if (leaf)
			w = cw_load(&th->ctx->shadow,
				    &leaf[e->cell & (SHADOW_LEAF_WORDS - 1)]);
		/* Each read is reported once. */
		if (w != e->snapshot)
			e->mask &= ~check_entry_word(th, e, e->mask, w);
	}
	for (unsigned h = 0; h < 2; h++) {
		uint64_t cells = rlog_more_cells(e->more[h]);
		/*
		 * The entry's own cell (where a sweep's entry has moved on
		 * to, its last) completes the shape: its word must match too.
		 */
		uint64_t own = (e->cell - base) / 32 == h ?
				       1ULL << (2 * ((e->cell - base) % 32)) :
				       0;

		if (leaf && cells &&
		    half_unchanged(leaf, base + h * 32, cells | own,
				   e->snapshot))
			continue;
		for (; cells; cells &= cells - 1) {
			unsigned k = h * 32 + __builtin_ctzll(cells) / 2;

			validate_more_cell(th, e, leaf, base + k, k, keep,
					   split, nsplit);
		}
	}
}

/*
 * --- Frees that leave zero words
 *
 * A free is a write of the block: every cell word takes a version past
 * its last, so that another thread's pending read of the block fails
 * its validation.  A word no thread ever wrote (0, on a shadow page
 * that may still be the kernel's zero page) would be copied onto a page
 * of its own for it: a block that uninstrumented code filled (a
 * compressor's state inside its library) or that nobody touched cost a
 * page of shadow per 512 bytes at its free, every time.  So a free of a
 * large block leaves such words as they are and publishes its range in
 * a ring instead (struct zfree); a reader checks its log against every
 * free published after its log's first entry before it validates,
 * forgets, or logs another read at version 0.  A read in its log of a
 * cell in the range whose word is still 0 was made before the free and
 * is reported against it, as the bumped version would have been at
 * validation.  A read after the free finds the free already checked,
 * and takes the word as it is: 0, not the version the free would have
 * given it, which only a later write changes, as it would that version.
 */
size_t eng_zfree_min = 64U << 10;

/* The log has no entry: no free from now on concerns what it held. */
static void zfree_log_empty(struct valor_thread *th)
{
	th->zfree_seen = atomic_load_explicit(&th->ctx->zfree_head,
					      memory_order_acquire);
	if (!th->zfree_idle) {
		atomic_store_explicit(&th->ctx->slots[th->slot].zfree_need,
				      ZFREE_NONE, memory_order_release);
		th->zfree_idle = true;
	}
}

/*
 * The log's first entry is about to go in: freers must keep the entries
 * published from now on.  The store and the load of the head are both
 * sequentially consistent, as a freer's load of zfree_need and store of
 * the head are: either the freer sees our need, or we see its entry
 * (and skip it: the log is empty).
 */
void valor_o_zfree_log_starts(struct valor_thread *th)
{
	struct valor_ctx *ctx = th->ctx;

	atomic_store_explicit(&ctx->slots[th->slot].zfree_need,
			      atomic_load_explicit(&ctx->zfree_head,
						   memory_order_acquire),
			      memory_order_seq_cst);
	th->zfree_idle = false;
	th->zfree_seen =
		atomic_load_explicit(&ctx->zfree_head, memory_order_seq_cst);
}

static bool rlog_may_hold(const struct valor_thread *th, uint64_t first,
			  uint64_t last);

/* Bytes @m of @cell, read by @e, meet free @f: report them. */
static void zfree_report(struct valor_thread *th, const struct rlog_entry *e,
			 uint64_t cell, uint8_t m, const struct zfree *f)
{
	struct valor_access_info first = {
		.tid = th->tid,
		.site = e->site,
		.region = th->clock,
		.is_write = false,
	};

	report(th, &th->lazy, VALOR_CONFLICT_RW, cell, m, &first, &f->who,
	       true);
}

/* Whether @cell is in @f's range and its word still 0 (left by the free). */
static bool zfree_left(struct valor_thread *th, const struct zfree *f,
		       uint64_t cell)
{
	return cell >= f->lo && cell < f->hi &&
	       !cw_peek_load(&th->ctx->shadow, cell);
}

/*
 * Our reads of cells free @f left at word 0 were made before it: report
 * them and drop them, as validation drops a read it reports.
 */
static void zfree_check(struct valor_thread *th, const struct zfree *f)
{
	bool dropped = false;

	if (!rlog_may_hold(th, f->lo, f->hi - 1))
		return;
	for (uint32_t i = 0; i < th->rlog_n; i++) {
		struct rlog_entry *e = &th->rlog[i];
		uint64_t base = e->cell & ~(uint64_t)(RLOG_GROUP_CELLS - 1);

		if (base + RLOG_GROUP_CELLS <= f->lo || base >= f->hi)
			continue;
		if (e->mask && zfree_left(th, f, e->cell)) {
			zfree_report(th, e, e->cell, e->mask, f);
			e->mask = 0;
			dropped = true;
		}
		for (unsigned h = 0; h < 2; h++) {
			uint64_t cells = rlog_more_cells(e->more[h]);

			for (; cells; cells &= cells - 1) {
				unsigned k =
					h * 32 + __builtin_ctzll(cells) / 2;

				if (!zfree_left(th, f, base + k))
					continue;
				zfree_report(th, e, base + k,
					     rlog_more_mask(e, k), f);
				rlog_more_clear(e, k);
				dropped = true;
			}
		}
	}
	if (dropped)
		rfilter_invalidate(th);
}

/* Check the log against every free published since we last looked. */
void valor_o_zfree_catch_up(struct valor_thread *th)
{
	struct valor_ctx *ctx = th->ctx;
	uint64_t head =
		atomic_load_explicit(&ctx->zfree_head, memory_order_acquire);

	for (; th->zfree_seen != head; th->zfree_seen++)
		if (th->rlog_n)
			zfree_check(th,
				    &ctx->zfree[th->zfree_seen % ZFREE_RING]);
	if (!th->zfree_idle)
		atomic_store_explicit(&ctx->slots[th->slot].zfree_need, head,
				      memory_order_release);
}

/*
 * Publish a free of cells [@lo, @hi) that will leave zero words; false
 * when the ring has no entry every thread is done with (the free
 * then bumps them all).
 */
static bool zfree_publish(struct valor_thread *th, uint64_t lo, uint64_t hi,
			  uint64_t site)
{
	struct valor_ctx *ctx = th->ctx;
	uint64_t head, need = ZFREE_NONE;
	struct zfree *f;

	eng_lock(&ctx->zfree_lock);
	head = atomic_load_explicit(&ctx->zfree_head, memory_order_relaxed);
	for (uint32_t s = 1; s < ctx->nslots && ctx->slots[s].used; s++) {
		uint64_t n = atomic_load_explicit(&ctx->slots[s].zfree_need,
						  memory_order_seq_cst);

		if (n < need)
			need = n;
	}
	if (need != ZFREE_NONE && head - need >= ZFREE_RING) {
		eng_unlock(&ctx->zfree_lock);
		return false;
	}
	f = &ctx->zfree[head % ZFREE_RING];
	f->lo = lo;
	f->hi = hi;
	f->who = (struct valor_access_info){
		.tid = th->tid,
		.site = site,
		.region = th->clock,
		.is_write = true,
	};
	atomic_store_explicit(&ctx->zfree_head, head + 1, memory_order_seq_cst);
	eng_unlock(&ctx->zfree_lock);
	return true;
}

void valor_o_validate(struct valor_thread *th, bool reset)
{
	struct rlog_entry split[VALIDATE_SPLITS];
	uint64_t leaf_index = UINT64_MAX;
	cell_word *leaf = NULL;
	unsigned nsplit = 0;
	uint32_t kept = 0;
	/*
	 * An empty log at a region end (a lock held briefly) costs nothing:
	 * a short log clears the words its own entries set, not all of them
	 * (a word an entry that left the log set may stay: a filter may
	 * say "maybe" too often, never "no" wrongly).  A reset keeps no
	 * entry, so that is done on the way.
	 */
	bool clear_each = reset && th->rlog_n <= RBLOOM_BITS / 64 / 8;

	if (zfree_pending(th))
		valor_o_zfree_catch_up(th);
	rfilter_invalidate(th);
	th->rlog_shape++;
	th->st.validations++;
	for (uint32_t i = 0; i < th->rlog_n; i++) {
		const struct rlog_entry *ep = &th->rlog[i];
		uint64_t ti = ep->cell >> (SHADOW_LEAF_SHIFT - CELL_SHIFT);
		struct rlog_entry e;

		if (clear_each)
			th->rbloom[(rlog_group(ep->cell) / 64) %
				   (RBLOOM_BITS / 64)] = 0;
		/* Logs run along arrays: one leaf lookup per run. */
		if (ti != leaf_index) {
			leaf_index = ti;
			leaf = (cell_word *)atomic_load_explicit(
				&th->ctx->shadow.top[ti], memory_order_acquire);
		}
		/*
		 * Most entries of a short region are one cell nobody wrote
		 * since: one load and one compare, what validate_entry()
		 * would conclude after copying and walking the entry.
		 */
		if (likely(leaf && ep->mask && !(ep->more[0] | ep->more[1]) &&
			   cw_load(&th->ctx->shadow,
				   &leaf[ep->cell & (SHADOW_LEAF_WORDS - 1)]) ==
				   ep->snapshot)) {
			if (!reset)
				th->rlog[kept++] = *ep;
			continue;
		}
		e = *ep;
		validate_entry(th, &e, leaf, !reset, split, &nsplit);
		if (!reset && !rlog_entry_empty(&e))
			th->rlog[kept++] = e;
	}
	/* Room: kept <= rlog_n and rlog_n + VALIDATE_SPLITS <= rlog_cap. */
	for (unsigned i = 0; i < nsplit; i++)
		th->rlog[kept++] = split[i];
	if (!kept && !clear_each && th->rlog_n > RBLOOM_BITS / 64 / 8) {
		memset(th->rbloom, 0, RBLOOM_BITS / 8);
	} else if (!kept && !clear_each) {
		for (uint32_t i = 0; i < th->rlog_n; i++) {
			uint64_t g = rlog_group(th->rlog[i].cell);

			th->rbloom[(g / 64) % (RBLOOM_BITS / 64)] = 0;
		}
	}
	th->rlog_n = kept;
	if (!kept)
		zfree_log_empty(th);
}

/* May the log hold an entry for a cell in [first, last]? */
static bool rlog_may_hold(const struct valor_thread *th, uint64_t first,
			  uint64_t last)
{
	if (!th->rlog_n)
		return false;
	first = rlog_group(first);
	last = rlog_group(last);
	if (last - first >= RBLOOM_BITS)
		return true;
	for (uint64_t g = first; g <= last; g++)
		if (th->rbloom[(g / 64) % (RBLOOM_BITS / 64)] &
		    (1ULL << (g % 64)))
			return true;
	return false;
}

/*
 * Our region's ownership of the cell at @p (or of its bytes) ends: by
 * CAS, or by plain stores within a release walk (@walking: no other
 * thread replaces the word meanwhile), calling @hook, if any, between
 * the load and the store of a compact word.
 */
static inline __attribute__((always_inline)) void
release_cell_as(struct valor_thread *th, cell_word *cp, uint64_t cell,
		bool walking, void (*hook)(struct valor_thread *, uint64_t))
{
	uint32_t c = atomic_load_explicit(cp, memory_order_acquire);
	shadow_word *p;
	uint64_t w;

	/* Compact: the common case, in its own form. */
	while (!cw_escaped(c) && (c & CW_ACTIVE) && cw_slot(c) == th->slot) {
		if (walking) {
			if (hook)
				hook(th, cell);
			atomic_store_explicit(cp, c & ~CW_ACTIVE,
					      memory_order_release);
			return;
		}
		if (atomic_compare_exchange_weak(cp, &c, c & ~CW_ACTIVE))
			return;
	}
	if (!cw_escaped(c))
		return;
	if (!cw_wide(c)) {
		w = cw_block_word(&th->ctx->shadow, c);
		goto bytes;
	}
	/* A wide word is the cell's for good: its own CAS and stores. */
	p = cw_wide_word(&th->ctx->shadow, c);
	w = atomic_load_explicit(p, memory_order_acquire);
	/* Without a walk, another thread may refine the cell under us. */
	while (!vw_refined(w) && (w & VW_ACTIVE) && vw_slot(w) == th->slot) {
		if (walking) {
			if (hook)
				hook(th, cell);
			atomic_store_explicit(p, w & ~VW_ACTIVE,
					      memory_order_release);
			return;
		}
		if (atomic_compare_exchange_weak(p, &w, w & ~VW_ACTIVE))
			return;
	}
	if (!vw_refined(w))
		return;
bytes:
	for (unsigned b = 0; b < CELL_SIZE; b++) {
		shadow_word *bp = &vw_block(w)[b];
		uint64_t bw = atomic_load_explicit(bp, memory_order_acquire);

		while ((bw & VW_ACTIVE) && vw_slot(bw) == th->slot) {
			if (walking) {
				atomic_store_explicit(bp, bw & ~VW_ACTIVE,
						      memory_order_release);
				break;
			}
			if (atomic_compare_exchange_weak(bp, &bw,
							 bw & ~VW_ACTIVE))
				break;
		}
	}
}

static void release_cell(struct valor_thread *th, cell_word *p)
{
	release_cell_as(th, p, 0, false, NULL);
}

/*
 * The region's write set fills the ring: its oldest half makes room, and
 * the cells, which the region still owns, move to the spill list that
 * region end releases too.  Their entries' sites are lost (a report about
 * one of those writes names the writing thread only).  The list holds
 * runs: a spilled word is a cell, a step of 1 or 2 cells and a count, so
 * that a sweep (or a red-black sweep) over an array spills a few words;
 * scattered cells spill as bits (wbits_spill()).  Past WSPILL_MAX words,
 * a 65th shadow leaf of bits, or without memory, the region ends early
 * instead (the paper's "conceptual split"): validate, give up ownership,
 * start a new region.
 */

/*
 * The newest spilled run of @s with @cell, not made by @skip_tid: the
 * write a report names when the write log no longer holds it.  The
 * owner may be extending the newest run meanwhile: a count read short
 * only misses the cell.
 */
static bool runs_find(struct valor_ctx *ctx, struct slot *s, uint64_t cell,
		      uint64_t skip_tid, struct valor_access_info *out)
{
	struct wlog_ring *r;
	uint64_t head, n;
	bool found = false;

	/* As wlog_find(): counted, head first, then the ring. */
	atomic_fetch_add(&ctx->wlog_readers, 1);
	head = atomic_load_explicit(&s->runs_head, memory_order_acquire);
	r = atomic_load(&s->runs);
	n = !r ? 0 : head < r->cap ? head : r->cap;
	for (uint64_t i = 1; i <= n; i++) {
		struct wlog_entry run;
		uint64_t word, first, k;

		if (!wlog_entry_copy(&r->e[(head - i) & (r->cap - 1)], &run))
			continue;
		word = atomic_load(&run.what);
		first = wspill_cell(word);
		if (cell < first || (cell - first) % wspill_step(word))
			continue;
		k = (cell - first) / wspill_step(word);
		if (k > wspill_more(word) || wlog_who_is(run.who, skip_tid))
			continue;
		writer_of(&run, out);
		found = true;
		break;
	}
	atomic_fetch_sub(&ctx->wlog_readers, 1);
	return found;
}

static size_t ring_bytes(uint64_t cap)
{
	return sizeof(struct wlog_ring) + cap * sizeof(struct wlog_entry);
}

struct wlog_ring *ring_alloc(uint64_t cap)
{
	struct wlog_ring *r = mmap(NULL, ring_bytes(cap),
				   PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (r == MAP_FAILED)
		return NULL;
	r->cap = cap;
	return r;
}

void ring_free(struct wlog_ring *r)
{
	if (r)
		munmap(r, ring_bytes(r->cap));
}

/*
 * Double the ring at @ring, of which the entries below @head are kept:
 * each moves to the place its index has in the bigger ring, which is
 * then published.  A reader that loaded the old ring (wlog_find() and
 * runs_find() count themselves in ctx->wlog_readers first) goes on
 * reading it, and it is kept until the context ends; with no reader it
 * is freed at once.  NULL without memory.
 */
static struct wlog_ring *ring_double(struct valor_ctx *ctx,
				     struct wlog_ring *_Atomic *ring,
				     uint64_t head)
{
	struct wlog_ring *old =
		atomic_load_explicit(ring, memory_order_relaxed);
	uint64_t cap = 2 * old->cap;
	uint64_t n = head < old->cap ? head : old->cap;
	struct wlog_ring *r = ring_alloc(cap);

	if (!r)
		return NULL;
	r->older = old;
	for (uint64_t i = head - n; i != head; i++) {
		const struct wlog_entry *from = &old->e[i & (old->cap - 1)];
		struct wlog_entry *to = &r->e[i & (cap - 1)];

		atomic_init(&to->cell,
			    atomic_load_explicit(&from->cell,
						 memory_order_relaxed));
		atomic_init(&to->what,
			    atomic_load_explicit(&from->what,
						 memory_order_relaxed));
		to->site = from->site;
		to->who = from->who;
	}
	atomic_store(ring, r);
	if (!atomic_load(&ctx->wlog_readers)) {
		r->older = old->older;
		ring_free(old);
	}
	return r;
}

/*
 * The open region's runs fill the ring: double it, so that a report
 * still names the site of each cell the region owns.  The region's
 * spill list is bounded (WSPILL_MAX words, a run each at most), and so
 * is the ring.  NULL when it cannot grow: the oldest run is then
 * overwritten, and a report names the writing thread only.
 */
static struct wlog_ring *runs_grow(struct valor_thread *th, struct slot *s,
				   uint64_t head)
{
	if (2 * atomic_load_explicit(&s->runs, memory_order_relaxed)->cap >
	    WSPILL_MAX)
		return NULL;
	return ring_double(th->ctx, &s->runs, head);
}

/* Room for one more word on the spill list, or false. */
static bool wspill_room(struct valor_thread *th)
{
	uint32_t cap = th->wspill_cap ? 2 * th->wspill_cap : 1024;
	uint64_t *v;

	if (th->wspill_n < th->wspill_cap)
		return true;
	if (cap > WSPILL_MAX)
		return false;
	v = eng_realloc(th->wspill, (size_t)cap * sizeof(*v));
	if (!v)
		return false;
	th->wspill = v;
	th->wspill_cap = cap;
	return true;
}

/*
 * Add @cell, written from @site, to the spill list: it joins the newest
 * run when it continues it from the same site (a report names the run's
 * site for each of its cells), or is the run's last cell again (bytes
 * of one cell written one by one, maybe by neighbouring statements: the
 * report then names the first of them).
 */
static enum wspill_result wspill_add(struct valor_thread *th, uint64_t cell,
				     uint64_t site)
{
	if (th->wspill_n) {
		uint64_t *v = &th->wspill[th->wspill_n - 1];
		uint64_t first = wspill_cell(*v), more = wspill_more(*v);

		if (cell == first + more * wspill_step(*v))
			return WSPILL_JOINED;
		if (more < WSPILL_COUNT_MAX && site == th->wspill_site) {
			if (!more && (cell == first + 1 || cell == first + 2)) {
				*v |= (cell == first + 2 ? WSPILL_STEP2 : 0) |
				      1ULL << WSPILL_COUNT_SHIFT;
				return WSPILL_JOINED;
			}
			if (more &&
			    cell == first + (more + 1) * wspill_step(*v)) {
				*v += 1ULL << WSPILL_COUNT_SHIFT;
				return WSPILL_JOINED;
			}
		}
	}
	if (!wspill_room(th))
		return WSPILL_FULL;
	th->wspill[th->wspill_n++] = cell;
	th->wspill_site = site;
	return WSPILL_NEW;
}

/*
 * Add the @n cells from @start, @step (1 or 2) apart, written from
 * @site, to the spill list: they extend the newest run when they
 * continue it at its step from the same site, else start one.  The
 * caller made room (wspill_room()).
 */
static enum wspill_result wspill_add_run(struct valor_thread *th,
					 uint64_t start, uint64_t n,
					 unsigned step, uint64_t site)
{
	uint64_t step_bit = step == 2 ? WSPILL_STEP2 : 0;

	if (th->wspill_n && site == th->wspill_site) {
		uint64_t *v = &th->wspill[th->wspill_n - 1];
		uint64_t more = wspill_more(*v);

		if ((*v & WSPILL_STEP2) == step_bit &&
		    start == wspill_cell(*v) + (more + 1) * step &&
		    more + n <= WSPILL_COUNT_MAX) {
			*v += n << WSPILL_COUNT_SHIFT;
			return WSPILL_JOINED;
		}
	}
	th->wspill[th->wspill_n++] = start | step_bit |
				     (n - 1) << WSPILL_COUNT_SHIFT;
	th->wspill_site = site;
	return WSPILL_NEW;
}

/*
 * Tell reports about the newest spilled run: a new record for a new run
 * (from spilled entry @e), else the longer run in the newest record.
 */
static void wspill_publish(struct valor_thread *th, enum wspill_result r,
			   const struct wlog_entry *e)
{
	struct slot *s = &th->ctx->slots[th->slot];
	uint64_t head =
		atomic_load_explicit(&s->runs_head, memory_order_relaxed);
	uint64_t word = th->wspill[th->wspill_n - 1];
	struct wlog_ring *ring =
		atomic_load_explicit(&s->runs, memory_order_relaxed);
	struct wlog_entry *run;

	if (r == WSPILL_JOINED) {
		if (head)
			atomic_store_explicit(
				&ring->e[(head - 1) & (ring->cap - 1)].what,
				word, memory_order_release);
		return;
	}
	if (head - th->runs_start >= ring->cap) {
		struct wlog_ring *bigger = runs_grow(th, s, head);

		if (bigger)
			ring = bigger;
	}
	run = &ring->e[head & (ring->cap - 1)];
	atomic_store_explicit(&run->cell, 0, memory_order_relaxed);
	/* Readers see the zero before any new field (wlog_entry_copy()). */
	atomic_thread_fence(memory_order_release);
	run->site = e->site;
	run->who = e->who;
	atomic_store_explicit(&run->what, word, memory_order_relaxed);
	atomic_store_explicit(&run->cell, 1, memory_order_release);
	atomic_store_explicit(&s->runs_head, head + 1, memory_order_release);
}

/* The newest spilled word changed in place: tell reports. */
static void wspill_flush(struct valor_thread *th, uint64_t *last, uint64_t word)
{
	*last = word;
	wspill_publish(th, WSPILL_JOINED, NULL);
}

/*
 * A region's write set filled half the ring: double it.  The kept entries
 * move to the places their indexes have in the bigger ring; readers
 * that loaded the old one go on reading it, which stays allocated.
 */
static int wlog_grow(struct valor_thread *th)
{
	struct slot *s = &th->ctx->slots[th->slot];
	struct wlog_ring *r = ring_double(
		th->ctx, &s->wlog,
		atomic_load_explicit(&s->wlog_head, memory_order_relaxed));

	if (!r)
		return -ENOMEM;
	s->wlog_mask = r->cap - 1;
	s->wlog_room = wlog_room(th->ctx, r->cap);
	return 0;
}

/*
 * The cell + 1 of ring entry @e if it records a write (0 for an empty
 * entry or a free), counting in *@jumps a cell that is not within two
 * cells after the one before (*@prev): how spills judge scattered.
 */
static inline uint64_t spill_entry_cell(const struct wlog_entry *e,
					uint64_t *prev, uint64_t *jumps)
{
	uint64_t first = atomic_load_explicit(&e->cell, memory_order_relaxed);

	if (!first ||
	    (atomic_load_explicit(&e->what, memory_order_relaxed) & WLOG_FREE))
		return 0;
	*jumps += *prev && (first < *prev || first - *prev > 2);
	*prev = first;
	return first;
}

/*
 * The bitmap functions are cold: they are rare next to the paths of
 * every access, and among them in .text they moved those paths enough
 * to make gcc's ocean 11% slower with no change in what it ran (its
 * statistics were the same to the count); placed apart, it ran 3%
 * faster than before them, radix, fft and ocean with the pass within
 * 2%.
 *
 * The bitmap of shadow leaf @leaf: the one last used, one the thread
 * has, a new one, or one no cell of this region is in (its bits are
 * all clear), given over to @leaf.  NULL when the region has cells in
 * WBITS_LEAVES leaves already (more than a gigabyte of data), or
 * without memory.
 */
static __attribute__((cold)) struct wbits *wbits_of(struct valor_thread *th,
						    uint64_t leaf)
{
	uint8_t *hint = &th->wbits_hint[leaf % WBITS_LEAVES];
	struct wbits *b;

	if (*hint < th->wbits_n && th->wbits[*hint].leaf == leaf)
		return &th->wbits[*hint];
	for (uint32_t i = 0; i < th->wbits_n; i++) {
		if (th->wbits[i].leaf == leaf) {
			*hint = (uint8_t)i;
			return &th->wbits[i];
		}
	}
	for (uint32_t i = 0; i < th->wbits_n; i++) {
		if (th->wbits[i].hi <= th->wbits[i].lo) {
			th->wbits[i].leaf = leaf;
			*hint = (uint8_t)i;
			return &th->wbits[i];
		}
	}
	if (!th->wbits)
		th->wbits = eng_calloc(WBITS_LEAVES, sizeof(*th->wbits));
	if (!th->wbits || th->wbits_n == WBITS_LEAVES)
		return NULL;
	b = &th->wbits[th->wbits_n];
	/* Untouched pages cost nothing: a page per 262,144 cells written. */
	b->bits = mmap(NULL, WBITS_WORDS * sizeof(uint64_t),
		       PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (b->bits == MAP_FAILED) {
		b->bits = NULL;
		return NULL;
	}
	b->leaf = leaf;
	b->lo = WBITS_WORDS;
	b->hi = 0;
	*hint = (uint8_t)th->wbits_n++;
	return b;
}

/*
 * The ring's entries [@start, @end), a region's scattered first writes,
 * as bits: release then walks them in the order of their addresses.
 * False when a cell finds no bitmap (the caller splits the region;
 * cells already set are released twice, which changes nothing).
 */
static __attribute__((cold)) bool wbits_spill(struct valor_thread *th,
					      uint64_t start, uint64_t end)
{
	struct slot *s = &th->ctx->slots[th->slot];
	uint64_t prev = 0, jumps = 0;

	for (uint64_t i = start; i != end; i++) {
		uint64_t first = spill_entry_cell(wlog_at(s, i), &prev, &jumps);
		uint64_t cell = first - 1, k, bit;
		struct wbits *b;

		if (!first)
			continue;
		b = wbits_of(th, cell >> (SHADOW_LEAF_SHIFT - CELL_SHIFT));
		if (!b)
			return false;
		k = (cell & (SHADOW_LEAF_WORDS - 1)) >> (WBITS_LINE_SHIFT + 6);
		bit = 1ULL << ((cell >> WBITS_LINE_SHIFT) % 64);
		th->wbits_lines += !(b->bits[k] & bit);
		b->bits[k] |= bit;
		if (k < b->lo)
			b->lo = (uint32_t)k;
		if (k >= b->hi)
			b->hi = (uint32_t)k + 1;
	}
	th->wspill_scattered = jumps > (end - start + 7) / 8;
	return true;
}

/* Give up the cells of the region's bitmaps, clearing them. */
static __attribute__((cold)) void
wbits_release(struct valor_thread *th, bool walking,
	      void (*hook)(struct valor_thread *, uint64_t))
{
	for (uint32_t i = 0; i < th->wbits_n; i++) {
		struct wbits *b = &th->wbits[i];
		uint64_t base = b->leaf << (SHADOW_LEAF_SHIFT - CELL_SHIFT);
		cell_word *leaf;

		if (b->hi <= b->lo)
			continue;
		leaf = shadow_cell_peek(&th->ctx->shadow, base);
		for (uint32_t k = b->lo; k < b->hi; k++) {
			uint64_t bits = b->bits[k];

			if (!bits)
				continue;
			b->bits[k] = 0;
			for (; leaf && bits; bits &= bits - 1) {
				uint64_t at = ((uint64_t)k * 64 +
					       __builtin_ctzll(bits))
					      << WBITS_LINE_SHIFT;

				for (unsigned c = 0; c < WBITS_LINE_CELLS; c++)
					release_cell_as(th, &leaf[at + c],
							base + at + c, walking,
							hook);
			}
		}
		b->lo = WBITS_WORDS;
		b->hi = 0;
	}
	th->wbits_lines = 0;
}

static __attribute__((cold)) void wbits_fini(struct valor_thread *th)
{
	for (uint32_t i = 0; i < th->wbits_n; i++)
		munmap(th->wbits[i].bits, WBITS_WORDS * sizeof(uint64_t));
	eng_free(th->wbits);
	th->wbits = NULL;
	th->wbits_n = 0;
	th->wbits_lines = 0;
}

__attribute__((noinline)) void wlog_spill(struct valor_thread *th)
{
	struct valor_ctx *ctx = th->ctx;
	struct slot *s = &ctx->slots[th->slot];
	uint64_t half, start, end;
	uint64_t *last = NULL, word = 0, next = 0, run_site = 0;
	uint64_t prev = 0, jumps = 0; /* cell + 1 of the entry before */
	bool dirty = false;

	if (s->wlog_mask + 1 < ctx->wlog_cap && wlog_grow(th) == 0)
		return;
	/* The largest ring, or no memory for a bigger one: spill. */
	half = (s->wlog_mask + 1) / 2 ? (s->wlog_mask + 1) / 2 : 1;
	start = th->region_start;
	end = start + half;
	th->st.write_log_overflows++;
	/*
	 * A region that writes scattered cells (a hash table's slots, a
	 * radix sort's buckets, an FFT's butterflies) would spill a word
	 * per cell and release them in the order it wrote them: it keeps
	 * them as bits of a bitmap per shadow leaf instead, which release
	 * walks in address order.  It used to split here: a compressor
	 * whose hash tables took a split every 16,384 cells claimed their
	 * cells again in every piece (zstd -T2 -6 on 8 MB of text: 24 M
	 * version bumps and 4.8 s; with the bits 16.5 M and 3.2 s).
	 * Scattered by the cells, not by the words: a sweep whose unrolled
	 * stores come from several sites in turn spills a word per store,
	 * but releases in order.
	 */
	if (th->wspill_scattered) {
		if (wbits_spill(th, start, end)) {
			th->region_start = end;
			return;
		}
		thread_region_boundary(th);
		return;
	}
	/* Cells come on from where the list's newest run ended. */
	if (th->wspill_n) {
		uint64_t w = th->wspill[th->wspill_n - 1];

		prev = wspill_cell(w) + wspill_more(w) * wspill_step(w) + 1;
	}
	/*
	 * A sweep continues the newest run cell after cell: that is done
	 * here on a copy of its word, written back (and published; the
	 * entries stay in the ring until this returns, so reports find
	 * them meanwhile) when something else comes.
	 */
	for (; start != end; start++) {
		struct wlog_entry *e = wlog_at(s, start);
		uint64_t first = spill_entry_cell(e, &prev, &jumps);
		enum wspill_result r;

		if (!first)
			continue;
		if (last && first - 1 == next && e->site == run_site &&
		    wspill_more(word) && wspill_more(word) < WSPILL_COUNT_MAX) {
			word += 1ULL << WSPILL_COUNT_SHIFT;
			next += wspill_step(word);
			dirty = true;
			continue;
		}
		if (dirty) {
			wspill_flush(th, last, word);
			dirty = false;
		}
		r = wspill_add(th, first - 1, e->site);
		if (r == WSPILL_FULL) {
			th->region_start = start;
			thread_region_boundary(th);
			return;
		}
		wspill_publish(th, r, e);
		last = &th->wspill[th->wspill_n - 1];
		word = *last;
		run_site = th->wspill_site;
		next = wspill_cell(word) +
		       (wspill_more(word) + 1) * wspill_step(word);
	}
	if (dirty)
		wspill_flush(th, last, word);
	th->region_start = start;
	th->wspill_scattered = jumps > (half + 7) / 8;
}

/* Give up ownership of every cell this region wrote. */
static void release_write_set(struct valor_thread *th)
{
	struct valor_ctx *ctx = th->ctx;
	struct slot *s = &ctx->slots[th->slot];
	uint64_t head =
		atomic_load_explicit(&s->wlog_head, memory_order_relaxed);
	bool walking = head - th->region_start + th->wspill_n +
			       th->wbits_lines * WBITS_LINE_CELLS >=
		       RELEASE_WALK_MIN;
	void (*hook)(struct valor_thread *, uint64_t) = eng_release_walk_hook;

	if (walking) {
		atomic_store(&s->releasing, 1);
		while (atomic_load(&s->meddlers))
			eng_cpu_relax();
	}
	for (uint64_t i = th->region_start; i != head; i++) {
		struct wlog_entry *e = wlog_at(s, i);
		uint64_t cell =
			atomic_load_explicit(&e->cell, memory_order_relaxed) -
			1;
		cell_word *p;

		if (atomic_load_explicit(&e->what, memory_order_relaxed) &
		    WLOG_FREE)
			continue;
		p = shadow_cell_peek(&ctx->shadow, cell);
		if (!p)
			continue;
		release_cell_as(th, p, cell, walking, hook);
	}
	th->region_start = head;
	for (uint32_t i = 0; i < th->wspill_n; i++) {
		uint64_t v = th->wspill[i], cell = wspill_cell(v);

		for (uint64_t k = 0; k <= wspill_more(v);
		     k++, cell += wspill_step(v)) {
			cell_word *p = shadow_cell_peek(&ctx->shadow, cell);

			if (p)
				release_cell_as(th, p, cell, walking, hook);
		}
	}
	if (th->wbits_lines)
		wbits_release(th, walking, hook);
	if (walking)
		atomic_store_explicit(&s->releasing, 0, memory_order_release);
	th->wspill_n = 0;
	th->wspill_scattered = false;
	th->runs_start =
		atomic_load_explicit(&s->runs_head, memory_order_relaxed);
}

void valor_o_region_end(struct valor_thread *th)
{
	valor_o_validate(th, true);
	release_write_set(th);
	th->ordered = false;
}

static void wlog_append_free(struct valor_thread *th, uint64_t lo, uint64_t hi,
			     uint64_t site)
{
	struct wlog_entry *e = wlog_next(th);

	atomic_store_explicit(
		&e->what,
		WLOG_FREE | (lo & (CELL_SIZE - 1)) << WLOG_LO_OFF_SHIFT |
			(hi & ((1ULL << WLOG_HI_BITS) - 1)),
		memory_order_relaxed);
	wlog_publish(th, e, lo >> CELL_SHIFT, site);
}

/* --- free: a write of the range, then its history is forgotten */

static void free_cell(struct valor_thread *th, uint64_t cell, uint8_t m,
		      uint64_t site, bool *eager)
{
	struct shadow *sh = &th->ctx->shadow;
	cell_word *p = shadow_cell_get(sh, cell);
	uint64_t w;

	if (!p)
		return;
	w = cw_load(sh, p);
	for (;;) {
		/* The other regions owning bytes, and which bytes. */
		struct byte_conflicts bc = { .n = 0 };
		uint64_t top = 0;
		bool done;

		if (m != 0xff) {
			/* Part of a cell: per byte. */
			if (!vw_refined(w)) {
				if (!refine(th, p, w))
					return;
				w = cw_load(sh, p);
				continue;
			}
			break;
		}
		/* The whole cell: becomes uniform, one past every byte. */
		if (!vw_refined(w) && !(w & VW_NMASK)) {
			/* Uniform already: one version, one possible owner. */
			if ((w & VW_ACTIVE) && vw_slot(w) != th->slot)
				for (unsigned b = 0; b < CELL_SIZE; b++)
					byte_conflict_add(&bc, vw_slot(w), b);
			top = vw_ver(w);
		} else {
			for (unsigned b = 0; b < CELL_SIZE; b++) {
				struct byte_state s =
					vw_byte(byte_word(w, b), b);

				if (s.active && s.slot != th->slot)
					byte_conflict_add(&bc, s.slot, b);
				/* Versions of one cell are close: modular. */
				if (b == 0 ||
				    ver_distance(s.ver, top) < VW_VER_MASK / 2)
					top = s.ver;
			}
		}
		if (bc.n && !meddle_begin(th, bc.slot, bc.n)) {
			w = cw_load(sh, p);
			continue;
		}
		done = cw_cas(sh, p, &w,
			      vw_make(top + 1, th->slot, false, 0, 0));
		meddle_end(th, bc.slot, bc.n);
		if (!done)
			continue;
		th->st.version_bumps++;
		if (vw_refined(w))
			refined_block_free(th->ctx, vw_block(w));
		if (report_byte_conflicts(th, VALOR_CONFLICT_WW, cell, &bc,
					  true, site))
			*eager = true;
		return;
	}

	shadow_word *blk = vw_block(w);
	struct byte_conflicts bc = { .n = 0 };

	for (unsigned b = 0; b < CELL_SIZE; b++) {
		uint64_t bw, nw;

		if (!(m & (1U << b)))
			continue;
		bw = atomic_load(&blk[b]);
		do
			nw = vw_make(vw_ver(bw) + 1, th->slot, false, 0, 0);
		while (!cas_over(th, &blk[b], &bw, nw, other_owner(th, bw)));
		th->st.version_bumps++;
		if ((bw & VW_ACTIVE) && vw_slot(bw) != th->slot)
			byte_conflict_add(&bc, vw_slot(bw), b);
	}
	if (report_byte_conflicts(th, VALOR_CONFLICT_WW, cell, &bc, true, site))
		*eager = true;
}

/*
 * The whole cells @cell (even) and the next, below @end, freed with one
 * CAS of both words where free_cell() would take each alone without a
 * report: compact, every byte current, no other region owning them.
 * A buffer freed by the thread that did not write it last (a pipeline's
 * stages) is that, cell after cell.
 */
static bool free_pair(struct valor_thread *th, uint64_t cell, uint64_t end)
{
	cell_word *p;
	uint64_t w0, w1, nw0, nw1, was;

	if ((cell & 1) || ((cell + 2) << CELL_SHIFT) > end)
		return false;
	p = shadow_cell_peek(&th->ctx->shadow, cell);
	was = atomic_load_explicit((_Atomic uint64_t *)p, memory_order_acquire);
	/* Wide words have nmask bits: they take free_cell(). */
	if (was & ((uint64_t)CW_NMASK << 32 | CW_NMASK))
		return false;
	w0 = cw_expand((uint32_t)was);
	w1 = cw_expand((uint32_t)(was >> 32));
	if (other_owner(th, w0) || other_owner(th, w1))
		return false;
	nw0 = vw_make(vw_ver(w0) + 1, th->slot, false, 0, 0);
	nw1 = vw_make(vw_ver(w1) + 1, th->slot, false, 0, 0);
	if (!cw_fits(nw0) || !cw_fits(nw1) ||
	    !atomic_compare_exchange_strong(
		    (_Atomic uint64_t *)p, &was,
		    cw_compress(nw0) | (uint64_t)cw_compress(nw1) << 32))
		return false;
	th->st.version_bumps += 2;
	return true;
}

/*
 * Check entry @e's bytes in [addr, addr + size) one last time, drop them.
 * A grouped cell partly in the range leaves the rest as an entry of its
 * own, appended: rlog_forget() made room for the two a range can cut.
 */
static uint8_t forget_mask(uint64_t cell, uint64_t addr, uint64_t size)
{
	if (cell < addr >> CELL_SHIFT || cell > (addr + size - 1) >> CELL_SHIFT)
		return 0;
	return cell_range_mask(cell, addr, size);
}

static void forget_entry(struct valor_thread *th, struct rlog_entry *e,
			 uint64_t addr, uint64_t size)
{
	uint64_t base = e->cell & ~(uint64_t)(RLOG_GROUP_CELLS - 1);
	uint8_t m = e->mask & forget_mask(e->cell, addr, size);
	unsigned k;

	if (m) {
		check_entry(th, e, m);
		e->mask &= ~m;
	}
	for_each_more_cell(e, k)
	{
		uint64_t cell = base + k;
		uint8_t which = rlog_more_mask(e, k);
		struct rlog_entry one;

		m = which & forget_mask(cell, addr, size);
		if (!m)
			continue;
		one = more_cell(e, cell, which);
		rlog_more_clear(e, k);
		if (m != which && th->rlog_n < th->rlog_cap) {
			check_entry(th, &one, m);
			one.mask = which & ~m;
			th->rlog[th->rlog_n++] = one;
			continue;
		}
		/*
		 * No room for the rest (the log is at its limit and holds the
		 * cell twice): check it all now and let it go.
		 */
		check_entry(th, &one, which);
	}
}

static uint32_t rindex_bucket(const struct valor_thread *th, uint64_t group)
{
	return (uint32_t)((group * 0x9e3779b97f4a7c15ULL) >> 32) &
	       (th->rindex_buckets - 1);
}

/*
 * Bring the index up to the whole log: from scratch when the entries
 * moved or the table is too small, else just the entries appended since.
 * False if out of memory.
 */
static bool rindex_sync(struct valor_thread *th)
{
	if (th->rindex_shape != th->rlog_shape ||
	    th->rlog_n > th->rindex_buckets) {
		uint32_t buckets = RINDEX_MIN;

		while (buckets < 2 * th->rlog_n)
			buckets *= 2;
		if (buckets > th->rindex_head_cap) {
			uint32_t *h = eng_realloc(th->rindex_head,
						  (size_t)buckets * sizeof(*h));

			if (!h)
				return false;
			th->rindex_head = h;
			th->rindex_head_cap = buckets;
		}
		memset(th->rindex_head, 0, (size_t)buckets * sizeof(uint32_t));
		th->rindex_buckets = buckets;
		th->rindex_n = 0;
		th->rindex_shape = th->rlog_shape;
	}
	if (th->rindex_next_cap < th->rlog_cap) {
		uint32_t *n = eng_realloc(th->rindex_next,
					  (size_t)th->rlog_cap * sizeof(*n));

		if (!n)
			return false;
		th->rindex_next = n;
		th->rindex_next_cap = th->rlog_cap;
	}
	for (uint32_t i = th->rindex_n; i < th->rlog_n; i++) {
		uint32_t *head = &th->rindex_head[rindex_bucket(
			th, rlog_group(th->rlog[i].cell))];

		th->rindex_next[i] = *head;
		*head = i + 1;
	}
	th->rindex_n = th->rlog_n;
	return true;
}

/*
 * Our own pending reads of [addr, addr + size) are about to lose their
 * history: check them one last time, then forget them.
 */
static void rlog_forget(struct valor_thread *th, uint64_t addr, uint64_t size)
{
	uint64_t first = addr >> CELL_SHIFT,
		 last = (addr + size - 1) >> CELL_SHIFT;
	uint32_t kept = 0, n;

	if (zfree_pending(th))
		valor_o_zfree_catch_up(th);
	if (!rlog_may_hold(th, first, last)) {
		/* Filter bytes of reads of our own writes, ours no more. */
		if (th->rown_hi > first && th->rown_lo <= last)
			rfilter_invalidate(th);
		return;
	}
	rfilter_invalidate(th);
	/*
	 * Cutting grouped cells at both ends of the range takes two more
	 * entries; with no room for them, the region splits here (as when
	 * the log fills) and nothing is left to forget.
	 */
	if (th->rlog_n + 2 > th->rlog_cap &&
	    (!rlog_grow(th) || th->rlog_n + 2 > th->rlog_cap)) {
		th->st.read_log_overflows++;
		valor_o_validate(th, true);
		return;
	}
	/* A block larger than the log is cheaper to find by walking it. */
	if (th->rlog_n >= RINDEX_MIN && last - first < th->rlog_n &&
	    rindex_sync(th)) {
		for (uint64_t g = rlog_group(first); g <= rlog_group(last);
		     g++) {
			if (!(th->rbloom[(g / 64) % (RBLOOM_BITS / 64)] &
			      (1ULL << (g % 64))))
				continue;
			for (uint32_t i = th->rindex_head[rindex_bucket(th, g)];
			     i; i = th->rindex_next[i - 1])
				if (rlog_group(th->rlog[i - 1].cell) == g)
					forget_entry(th, &th->rlog[i - 1], addr,
						     size);
		}
		return;
	}
	n = th->rlog_n;
	for (uint32_t i = 0; i < n; i++) {
		struct rlog_entry e = th->rlog[i];

		if (rlog_group(e.cell) >= rlog_group(first) &&
		    rlog_group(e.cell) <= rlog_group(last))
			forget_entry(th, &e, addr, size);
		if (!rlog_entry_empty(&e))
			th->rlog[kept++] = e;
	}
	/* Cut-off cells forget_entry() appended. */
	for (uint32_t i = n; i < th->rlog_n; i++)
		th->rlog[kept++] = th->rlog[i];
	th->rlog_n = kept;
	th->rlog_shape++;
}

int valor_o_free(struct valor_thread *th, uintptr_t addr, size_t size,
		 uint64_t site)
{
	/* Only whole cells are left: a cell partly freed is kept per byte. */
	uint64_t lo = (addr + CELL_SIZE - 1) >> CELL_SHIFT,
		 hi = (addr + size) >> CELL_SHIFT;
	bool eager = false, lazy;
	uint8_t m;

	rlog_forget(th, addr, size);
	/*
	 * The write a free stands for cannot conflict while the thread runs
	 * alone: no other region is ongoing, and none can start before this
	 * one ends (thread_update_mode()).  Its own pending reads are
	 * checked above, as in any free.
	 */
	if (th->mode == THREAD_ALONE)
		return 0;
	lazy = size >= eng_zfree_min && lo < hi &&
	       zfree_publish(th, lo, hi, site);
	for_each_present_cell(&th->ctx->shadow, addr, size, cell, m) {
		if (lazy && m == 0xff &&
		    !atomic_load_explicit(shadow_cell_peek(&th->ctx->shadow,
							   cell),
					  memory_order_relaxed))
			continue;
		if (m == 0xff && free_pair(th, cell, addr + size)) {
			cell++;
			continue;
		}
		free_cell(th, cell, m, site, &eager);
	}
	/* So that a read-write report can name the free as the write. */
	wlog_append_free(th, addr, addr + size, site);
	if (eager)
		validate_before_eager(th);
	return 0;
}

/*
 * Reused memory (a finished thread's stack): our own pending reads of it
 * are checked and dropped, and our ownership of it ends.  Versions are
 * left alone: bumping them would make another thread's pending read of
 * the memory look written, and the next user's writes bump them anyway.
 */
void valor_o_forget(struct valor_thread *th, uintptr_t addr, size_t size)
{
	struct shadow *sh = &th->ctx->shadow;
	uint64_t end = ((addr + size - 1) >> CELL_SHIFT) + 1;

	rlog_forget(th, addr, size);
	/*
	 * Every allocation comes here, and its cells are nearly all free
	 * and compact (the last free released them): a look at each word
	 * in its leaf, the release only for a word that is active or kept
	 * per byte.
	 */
	for (uint64_t cell = shadow_next_present(sh, addr >> CELL_SHIFT, end);
	     cell < end; cell = shadow_next_present(sh, cell, end)) {
		uint64_t stop =
			(cell / SHADOW_LEAF_WORDS + 1) * SHADOW_LEAF_WORDS;
		cell_word *p = shadow_cell_peek(sh, cell);

		for (stop = stop < end ? stop : end; cell < stop; cell++, p++) {
			uint32_t c =
				atomic_load_explicit(p, memory_order_relaxed);

			if ((c & CW_ACTIVE) || cw_escaped(c))
				release_cell(th, p);
		}
	}
}

/* A moved word: our ownership moves with it, other regions' ends. */
static uint64_t moved_word(struct valor_thread *th, uint64_t w, bool *ours)
{
	if (!(w & VW_ACTIVE))
		return w;
	if (vw_slot(w) == th->slot) {
		*ours = true;
		return w;
	}
	return w & ~VW_ACTIVE;
}

/*
 * mremap: cell words move to the new addresses (refined cells get a copy
 * of their bytes); the old words stay, inactive, so that pending reads
 * logged there see no write.
 */
void valor_o_move(struct valor_thread *th, uint64_t from, uint64_t to,
		  uint64_t ncells)
{
	struct shadow *sh = &th->ctx->shadow;

	/* The log's entries of the source no longer say what was read. */
	rfilter_invalidate(th);
	for (uint64_t i = 0; i < ncells; i++) {
		cell_word *src, *dst = shadow_cell_move_pair(sh, from + i,
							     to + i, &src);
		uint64_t w = src ? cw_load(sh, src) : 0;
		bool ours = false;

		if (!dst)
			continue;
		if (vw_refined(w)) {
			shadow_word *blk = refined_block_new(th->ctx);

			if (!blk)
				return;
			for (unsigned b = 0; b < CELL_SIZE; b++)
				atomic_init(
					&blk[b],
					moved_word(th,
						   atomic_load(&vw_block(w)[b]),
						   &ours));
			cw_store(sh, dst,
				 ((uint64_t)(uintptr_t)blk << 8) | VW_REFINED);
		} else {
			cw_store(sh, dst, moved_word(th, w, &ours));
		}
		if (ours) {
			/* The write set follows; reports keep the write's site. */
			static const struct ver_window any = { .any = true };
			struct valor_access_info was = { 0 };

			for (unsigned b = 0; b < CELL_SIZE && !was.site; b++)
				wlog_find(th->ctx, th->slot, from + i, b, 0,
					  true, &any, &was, NULL);
			wlog_append(th, to + i, 0xff, vw_ver(w), was.site);
		}
		if (src)
			release_cell(th, src);
	}
}

uint64_t valor_o_version(struct valor_ctx *ctx, uintptr_t addr)
{
	uint64_t w = cw_peek_load(&ctx->shadow, addr >> CELL_SHIFT);
	unsigned b = addr & (CELL_SIZE - 1);

	return vw_byte(byte_word(w, b), b).ver;
}

int valor_o_thread_init(struct valor_thread *th)
{
	th->rlog_cap = th->ctx->p.read_log_entries < RLOG_FIRST_ENTRIES ?
			       th->ctx->p.read_log_entries :
			       RLOG_FIRST_ENTRIES;
	th->rlog = eng_malloc((size_t)th->rlog_cap * sizeof(*th->rlog));
	th->rbloom = eng_calloc(RBLOOM_BITS / 64, sizeof(*th->rbloom));
	th->rgroup_mask = RGROUP_MIN - 1;
	while (th->rgroup_mask <
		       2 * (uint64_t)th->ctx->p.read_log_entries - 1 &&
	       th->rgroup_mask < RGROUP_MAX - 1)
		th->rgroup_mask = 2 * th->rgroup_mask + 1;
	th->rgroup =
		eng_calloc((size_t)th->rgroup_mask + 1, sizeof(*th->rgroup));
	if (!th->rlog || !th->rbloom || !th->rgroup) {
		valor_o_thread_fini(th);
		return -ENOMEM;
	}
	th->rgen = 1;
	th->zfree_idle = true;
	th->zfree_seen = atomic_load_explicit(&th->ctx->zfree_head,
					      memory_order_acquire);
	th->shadow_top = th->ctx->shadow.top;
	th->mode = THREAD_FAST;
	return 0;
}

/*
 * A finished thread's filter is never looked at again, but its thread
 * state stays until the thread is joined: the filter's pages (up to
 * 1.1 MB) go back to the system now, so that finished threads a program
 * joins late (a pool joined at its end) do not hold them.  Zeros are an
 * empty filter.
 */
static void rfilter_release(struct valor_thread *th)
{
	/* Only Valor's threads have one (valor_thread_create()). */
	if (th->ctx->p.analysis == VALOR_ANALYSIS_VALOR)
		eng_zero(th->rfilter, sizeof(th->rfilter[0]));
}

void valor_o_thread_fini(struct valor_thread *th)
{
	th->mode = THREAD_FULL;
	rfilter_release(th);
	atomic_store_explicit(&th->ctx->slots[th->slot].zfree_need, ZFREE_NONE,
			      memory_order_release);
	th->zfree_idle = true;
	eng_free(th->rlog);
	eng_free(th->rbloom);
	eng_free(th->rgroup);
	eng_free(th->wspill);
	th->wspill = NULL;
	th->wspill_n = th->wspill_cap = 0;
	wbits_fini(th);
	eng_free(th->rindex_head);
	eng_free(th->rindex_next);
	th->rindex_head = th->rindex_next = NULL;
	th->rindex_n = th->rindex_buckets = 0;
	th->rindex_head_cap = th->rindex_next_cap = 0;
	th->rlog = NULL;
	th->rbloom = NULL;
	th->rgroup = NULL;
	th->rlog_n = 0;
}
