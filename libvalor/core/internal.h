/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Engine internals shared by the analyses: the context, thread slots and
 * handles, per-thread logs, conflict delivery.
 *
 * Locking: ctx->lock guards slot allocation, the retired-stats totals and
 * the arena's chunk list; it is never taken on an access.  Everything an
 * access touches is either owned by the calling thread's handle, updated
 * with single-word atomics (Valor), or guarded by a per-cell spinlock
 * (FastRCD, FastTrack).  Conflicts are queued on the thread and delivered
 * when the engine call returns, with no lock held.
 */
#ifndef VALOR_CORE_INTERNAL_H
#define VALOR_CORE_INTERNAL_H

#include "sys.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <valor/engine.h>

#include "arena.h"
#include "shadow.h"
#include "vclock.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Epochs of FastRCD and FastTrack: slot in the top 16 bits, clock below. */
#define EPOCH_CLOCK_BITS 48
#define EPOCH_CLOCK_MASK ((1ULL << EPOCH_CLOCK_BITS) - 1)

static inline uint64_t epoch_make(uint32_t slot, uint64_t clock)
{
	return ((uint64_t)slot << EPOCH_CLOCK_BITS) |
	       (clock & EPOCH_CLOCK_MASK);
}

static inline uint32_t epoch_slot(uint64_t e)
{
	return (uint32_t)(e >> EPOCH_CLOCK_BITS);
}

static inline uint64_t epoch_clock(uint64_t e)
{
	return e & EPOCH_CLOCK_MASK;
}

/*
 * One entry of a slot's write log: a cell the slot's thread wrote first in
 * one of its regions.  The entries of the current region are Valor-O's
 * write set; older ones stay until overwritten so that a read-write report
 * can name the writer even after the writer's region (or life) ended.
 * @cell is published last (release) so another thread reading the entry
 * for a report sees the fields that go with it.
 */
struct wlog_entry {
	_Atomic uint64_t cell; /* cell index + 1; 0 = empty */
	/*
	 * A write: the version its bytes got and the bytes of the cell it
	 * took over (WLOG_VER, WLOG_MASK).  A free (WLOG_FREE; nothing to
	 * release at region end): the bytes [lo, hi) it covered, lo being
	 * @cell's first byte plus WLOG_LO_OFF.  One word, so that an entry
	 * is 32 bytes: a region writes one per cell it takes over.  Atomic
	 * because the owner may add bytes to its newest entry after
	 * publishing it (wlog_append_bytes()).
	 */
	_Atomic uint64_t what;
	uint64_t site;
	/*
	 * The writing thread and its region in one word (wlog_who()):
	 * only reports read them, and an entry of 32 bytes instead of 40
	 * makes the largest ring 128 KB smaller and a cell's first write
	 * one store less.
	 */
	uint64_t who;
};

/*
 * A thread id past 2^24 keeps its low bits: a report may then name
 * another thread with the same low bits.  A region number past 2^40
 * wraps: reports compare them only to pick the newer of two writes and
 * to merge neighbouring reports.
 */
#define WLOG_REGION_BITS 40
#define WLOG_REGION_MASK ((1ULL << WLOG_REGION_BITS) - 1)

static inline uint64_t wlog_who(uint64_t tid, uint64_t region)
{
	return tid << WLOG_REGION_BITS | (region & WLOG_REGION_MASK);
}

static inline uint64_t wlog_who_tid(uint64_t who)
{
	return who >> WLOG_REGION_BITS;
}

static inline uint64_t wlog_who_region(uint64_t who)
{
	return who & WLOG_REGION_MASK;
}

/* Whether thread @tid wrote @who, as far as its bits tell. */
static inline bool wlog_who_is(uint64_t who, uint64_t tid)
{
	return wlog_who_tid(who) == wlog_who_tid(wlog_who(tid, 0));
}

#define WLOG_FREE (1ULL << 63)
#define WLOG_VER_BITS 36 /* VW_VER_MASK */
#define WLOG_MASK_SHIFT WLOG_VER_BITS
#define WLOG_HI_BITS 49 /* an end of a 48-bit address range */
#define WLOG_LO_OFF_SHIFT WLOG_HI_BITS

/*
 * A slot's write log: a ring that starts small and doubles, up to
 * ctx->wlog_cap, when a region's write set fills half of it (the owner
 * copies it into the bigger one; the other half keeps earlier regions'
 * writes for reports), so a thread of short regions keeps 40 KB instead
 * of the 640 KB of the largest ring.  Other threads read rings only for
 * reports, counted in ctx->wlog_readers, and take the capacity from the
 * ring they loaded: a replaced ring is freed at once when no one reads,
 * else kept until the context ends (@older).
 */
struct wlog_ring {
	uint64_t cap; /* entries, a power of two */
	struct wlog_ring *older; /* the ring this one replaced */
	struct wlog_entry e[];
};

#define WLOG_FIRST_ENTRIES 1024U

/*
 * A ring of @cap entries (a power of two), zeroed, or NULL; and its
 * release.  Mapped rather than taken from the C library's heap, so that
 * its pages cost memory only once they are used: a slot's ring of runs
 * is used only when a region spills, and its calloc'd copy was resident
 * from the start (33 KB a slot).
 */
struct wlog_ring *ring_alloc(uint64_t cap);
void ring_free(struct wlog_ring *r);

/*
 * A thread slot: the small integer an epoch or an owner field names.
 * Slots outlive their threads: the clock continues across occupants so
 * that an epoch of an earlier occupant never looks like a current one.
 */
struct slot {
	_Atomic uint64_t clock; /* current region / own VC entry */
	/*
	 * Valor: the occupant's release walk stores without a lock prefix
	 * while @releasing, and starts only with no @meddlers, the threads
	 * between announcing and finishing a CAS over a word in which the
	 * occupant's region owns bytes (valor.c, "Release without locks").
	 */
	_Atomic uint32_t releasing;
	_Atomic uint32_t meddlers;
	_Atomic uint64_t tid; /* logical id of the last occupant */
	uint64_t final_clock; /* clock at the last occupant's exit */
	bool used; /* has ever had an occupant */
	bool live; /* has an occupant now */
	struct wlog_ring *_Atomic wlog; /* the occupant replaces it */
	uint64_t wlog_mask; /* wlog->cap - 1, for the occupant */
	uint64_t wlog_room; /* a write set this big grows or spills */
	_Atomic uint64_t wlog_head;
	/*
	 * Runs of cells whose write-log entries a region spilled, with the
	 * site that wrote them, for reports: a ring (cell != 0: present;
	 * what: the spill word, valor.c) of WSPILL_RUNS entries at first,
	 * which the occupant doubles rather than overwrite a run of its
	 * open region, and replaces as it does the write log's.
	 */
	struct wlog_ring *_Atomic runs;
	_Atomic uint64_t runs_head;
	/*
	 * FastRCD and FastTrack: the slot's occupants in order, each from
	 * the clock it started at, so that a record's epoch names its
	 * thread (slot_tid_at()).  Appended under ctx->lock.
	 */
	struct slot_occupant *occ;
	uint32_t nocc, occ_cap;
	/*
	 * Valor: the oldest entry of ctx->zfree the occupant may still
	 * check its reads against, ZFREE_NONE while its read log is empty.
	 */
	_Atomic uint64_t zfree_need;
	/*
	 * Lines of their own: a slot's write-log head moves with every
	 * region-first write of its thread, its clock at every region end,
	 * and FastRCD reads other slots' clocks on every conflict check.
	 */
} __attribute__((aligned(64)));

struct slot_occupant {
	uint64_t first_clock;
	uint64_t tid;
};

/* Entry @i of @s's ring, for its occupant (the only thread that grows it). */
static inline struct wlog_entry *wlog_at(struct slot *s, uint64_t i)
{
	struct wlog_ring *r =
		atomic_load_explicit(&s->wlog, memory_order_relaxed);

	return &r->e[i & s->wlog_mask];
}

#define WSPILL_RUNS 1024U

/*
 * One entry of a Valor read log: a cell, the bytes read, the state seen.
 * An entry also stands for cells of its group (RLOG_GROUP_CELLS aligned
 * cells, 512 bytes of memory) whose halves or whole the same site read
 * at the same cell word: a sweep over an array of 8- or 4-byte values
 * is one entry per group and site instead of one per cell or value.
 */
struct rlog_entry {
	uint64_t snapshot; /* cell word (or byte word) when read */
	uint64_t site;
	union {
		struct {
			uint64_t cell : 56; /* cell index */
			uint64_t mask : 8; /* bytes of the cell read */
		};
		/*
		 * Both as one word, for the paths that add bytes to an entry
		 * and soon load its cell again: a byte store into the mask
		 * would stall that load (no store forwarding to a wider load).
		 * The x86-64 and AArch64 ABIs lay bitfields out from the
		 * least significant bit: the mask is the top byte.
		 */
		uint64_t cell_mask;
	};
	/* bits 2k, 2k + 1: bytes 0-3, 4-7 of cell (group start + k) read */
	uint64_t more[2];
};

#define RLOG_MASK_SHIFT 56

static inline void rlog_mask_add(struct rlog_entry *e, uint8_t m)
{
	e->cell_mask |= (uint64_t)m << RLOG_MASK_SHIFT;
}

#define RLOG_GROUP_SHIFT 6
#define RLOG_GROUP_CELLS (1U << RLOG_GROUP_SHIFT)

/* The bytes of a read a group entry can take: whole halves. */
static inline bool rlog_halves(uint8_t m)
{
	return m == 0xff || m == 0x0f || m == 0xf0;
}

/* Add halves @m (rlog_halves()) of the group's cell @k to @e. */
static inline void rlog_more_add(struct rlog_entry *e, unsigned k, uint8_t m)
{
	uint64_t b = (m & 0x0f ? 1 : 0) | (m & 0xf0 ? 2 : 0);

	e->more[k / 32] |= b << (2 * (k % 32));
}

/* The bytes of the group's cell @k that @e says were read. */
static inline uint8_t rlog_more_mask(const struct rlog_entry *e, unsigned k)
{
	uint64_t b = e->more[k / 32] >> (2 * (k % 32));

	return (uint8_t)((b & 1 ? 0x0f : 0) | (b & 2 ? 0xf0 : 0));
}

static inline void rlog_more_clear(struct rlog_entry *e, unsigned k)
{
	e->more[k / 32] &= ~(3ULL << (2 * (k % 32)));
}

static inline bool rlog_entry_empty(const struct rlog_entry *e)
{
	return !e->mask && !e->more[0] && !e->more[1];
}

/* rlog_more_cells() of a half group's every cell, even cells, odd cells. */
#define RLOG_MORE_ALL 0x5555555555555555ULL
#define RLOG_MORE_EVEN 0x1111111111111111ULL
#define RLOG_MORE_ODD 0x4444444444444444ULL

/* One bit (the lower) per cell that bits 2k, 2k + 1 of @more name. */
static inline uint64_t rlog_more_cells(uint64_t more)
{
	return (more | more >> 1) & RLOG_MORE_ALL;
}

/* Each cell of @e's group it holds halves of: k, the group's cell. */
#define for_each_more_cell(e, k)                                            \
	for (unsigned __w = 0; __w < 2; __w++)                              \
		for (uint64_t __b = rlog_more_cells((e)->more[__w]);        \
		     __b && ((k) = __w * 32 + __builtin_ctzll(__b) / 2, 1); \
		     __b &= __b - 1)

static inline uint64_t rlog_group(uint64_t cell)
{
	return cell >> RLOG_GROUP_SHIFT;
}

/*
 * Where to find the entry a whole-cell read can join: an entry index + 1
 * at one of two slots for (group, site), checked before use (a stale or
 * colliding slot just costs a new entry).  The index must find most
 * entries, or a region whose reads outgrow the read filter fills its
 * log with copies; two slots to choose from let it do so with 8 slots
 * an entry, where one slot per key needed 32 (see rgroup_mask_for()).
 */
#define RGROUP_MIN 4096U
#define RGROUP_MAX (1U << 22) /* 16 MB of index for the largest logs */
#define RGROUP_LINE_SLOTS 16U /* one cache line of slots */

/*
 * The first of the two slots; the second is the same place in the
 * neighbouring cache line (index ^ RGROUP_LINE_SLOTS), which the
 * adjacent-line prefetch often brings in with the first.
 */
static inline uint32_t rgroup_slot(uint64_t group, uint64_t site, uint32_t mask)
{
	/*
	 * A multiply, not an XOR of the two: a column walk's groups are a
	 * row apart and its sites (an unrolled loop's loads) a few bytes
	 * apart, and XORed they collide by the hundred (engine_api_test's
	 * column walk).  Sixteen groups in a row share the hash and so one
	 * cache line of slots: a sweep's next group finds its slot in the
	 * line the last one loaded, where a slot per group anywhere in the
	 * table (512 KiB at the default size) missed the cache every time.
	 * The slot is looked up out of line only.
	 */
	uint64_t h = ((group >> 4) ^ (site << 20)) * 0x9e3779b97f4a7c15ULL;

	return ((uint32_t)(h >> 32) << 4 | (uint32_t)(group & 15)) & mask;
}

/* Whether @e is an entry of @group read by @site: the index's key. */
static inline bool rgroup_key_is(const struct rlog_entry *e, uint64_t group,
				 uint64_t site)
{
	return rlog_group(e->cell) == group && e->site == site;
}

/*
 * The part of the index a log of @n entries uses: 8 slots an entry,
 * RGROUP_MIN at least, @full at most.  A short region (a critical
 * section's few reads) then finds its slots in 16 KiB that stay in the
 * cache, where a slot anywhere in the whole table missed it on nearly
 * every first read; the pages it does not touch stay out of memory.
 * The part must stay sparse: engine_api_test's column walk needs 960
 * entries; with one slot per key it logged 2,285 at 2 slots an entry,
 * 1,280 at 8 and 960 only at 32, when the index (128 bytes an entry)
 * took three times the memory of the log.  When the log reaches a size
 * with a larger part, rgroup_spread() moves the entries into it.  Past
 * RGROUP_PARTS_UPTO entries it takes the whole index at once: each
 * spread clears its part and moves every entry, and doubling on up to
 * the whole index cost a program of long regions (wordcount's 14,000
 * entries each) 4% of its time in spreads, for parts already too big to
 * stay in the cache.
 */
#define RGROUP_PARTS_UPTO 4096U

static inline uint32_t rgroup_mask_for(uint32_t n, uint32_t full)
{
	uint32_t m = ~0U >> __builtin_clz(n << 3 | (RGROUP_MIN - 1));

	return m < full && n <= RGROUP_PARTS_UPTO ? m : full;
}

/*
 * Valor's read filter: which bytes of a cell the read log holds already,
 * so a repeated read costs a compare instead of an entry.  Direct mapped
 * by chunk of RFILTER_CHUNK_CELLS consecutive cells (1 KiB of memory),
 * with a byte mask per cell: a thread sweeping arrays keeps whole runs
 * of cells in one entry, where one entry per cell kept a few thousand
 * cells and lost a matrix column to conflicts.  An entry counts only
 * while the generation in its tag is the thread's rgen, which changes
 * whenever the log loses or shrinks entries (validation, a free).
 */
#define RFILTER_CHUNK_SHIFT 7
#define RFILTER_CHUNK_CELLS (1U << RFILTER_CHUNK_SHIFT)
#define RFILTER_ENTRIES 8192U
/* tag = chunk | rgen << RFILTER_GEN_SHIFT; chunks of 48-bit addresses */
#define RFILTER_GEN_SHIFT (SHADOW_ADDR_BITS - CELL_SHIFT - RFILTER_CHUNK_SHIFT)
#define RFILTER_GEN_MAX ((1U << (64 - RFILTER_GEN_SHIFT)) - 1)

/*
 * A region's first RFILTER_YOUNG_ENTRIES entries put their cells in the
 * filter at the cell's second read, not its first.  A short region (a
 * lookup under a lock) reads each of its few cells once, and the filter
 * entry it would start over for each (128 mask bytes, two cache lines
 * far from anything the program touches) cost a hash table's lookups a
 * third of their first-read calls; a read seen twice is noted, so a
 * loop over a few cells still stops calling after its first pass.
 */
#define RFILTER_YOUNG_ENTRIES 16U

/*
 * A scattered write set (valor.c, wlog_spill()): one bit per line of
 * WBITS_LINE_CELLS cells (a cache line of 32-bit cell words) of a shadow
 * leaf, 16 KiB of address space mapped when the leaf's first cell spills and
 * touched only where cells are; [lo, hi) bounds the words with bits,
 * so that release reads only those.  Release gives up the cells of a
 * line that the region owns, and only those: the others are not active
 * or are another slot's.
 */
#define WBITS_LEAVES 64U
#define WBITS_LINE_SHIFT 4
#define WBITS_LINE_CELLS (1U << WBITS_LINE_SHIFT)
#define WBITS_WORDS (SHADOW_LEAF_WORDS / WBITS_LINE_CELLS / 64)
_Static_assert(WBITS_LINE_CELLS * sizeof(cell_word) == 64,
	       "a line of the bitmap is a cache line of cell words");

struct wbits {
	uint64_t leaf; /* cell >> (SHADOW_LEAF_SHIFT - CELL_SHIFT) */
	uint64_t *bits;
	uint32_t lo, hi;
};

/*
 * Which groups of cells may have entries in the read log, one bit per
 * group modulo RBLOOM_BITS, set on append and cleared when the log
 * empties: a free of memory the thread has not read since skips the
 * walk of its log.
 */
#define RBLOOM_BITS 16384U

/*
 * A free must look at the log's entries for the freed cells.  Past
 * RINDEX_MIN entries it finds them through a hash index (group -> chain
 * of entry indexes) instead of walking the whole log at every free (a
 * program freeing its nodes after reading them all).  The index is
 * built lazily, only when a free needs it, and extended by the entries
 * appended since; entries keep their places (a forgotten read just loses
 * its bytes), so it stays right until validation moves them.
 */
#define RINDEX_MIN 64U

/*
 * The tags and the masks in two arrays: a cell's mask byte is then at
 * its cell index modulo the masks' size, and the check finds it and its
 * tag with a mask and a shift each, no multiply by an entry's size.
 */
struct rfilter {
	uint64_t tag[RFILTER_ENTRIES]; /* 0: never valid (rgen starts at 1) */
	uint8_t mask[RFILTER_ENTRIES][RFILTER_CHUNK_CELLS];
	/* The last cell's mask bytes may be read as a word (span check). */
	uint8_t mask_tail[8];
};

/* The tag of @cell's chunk. */
static inline uint64_t *rfilter_tag_of(struct rfilter *f, uint64_t cell)
{
	return &f->tag[(cell >> RFILTER_CHUNK_SHIFT) & (RFILTER_ENTRIES - 1)];
}

/* The mask byte of @cell; the chunk's 128 start at the one of cell 0. */
static inline uint8_t *rfilter_mask_of(struct rfilter *f, uint64_t cell)
{
	return (uint8_t *)f->mask +
	       (cell & (RFILTER_ENTRIES * RFILTER_CHUNK_CELLS - 1));
}

static inline uint64_t rfilter_tag(uint64_t cell, uint32_t rgen)
{
	return (cell >> RFILTER_CHUNK_SHIFT) |
	       ((uint64_t)rgen << RFILTER_GEN_SHIFT);
}

struct conflict_queue {
	struct valor_conflict *v;
	uint32_t n, cap;
};

struct thread_stats {
	uint64_t regions;
	uint64_t version_bumps;
	uint64_t read_log_overflows;
	uint64_t write_log_overflows;
	uint64_t validations;
	uint64_t reads_logged;
	uint64_t cells_refined;
	uint64_t conflicts;
	uint64_t accesses_alone;
};

/*
 * How a thread's accesses are analysed.  The runtime's inline path
 * reads it first: anything but THREAD_FAST is its one unlikely branch.
 */
enum thread_mode {
	THREAD_FULL = 0, /* every access is the analysis's (valor_access()) */
	THREAD_FAST, /* Valor: valor_fast.h first */
	THREAD_ALONE, /* no other thread is live: accesses are skipped */
};

struct valor_thread {
	struct valor_ctx *ctx;
	uint64_t tid;
	uint32_t slot;
	bool exited;
	uint64_t clock; /* mirror of ctx->slots[slot].clock */

	/* Valor */
	uint8_t mode; /* enum thread_mode; only the thread itself sets it */
	shadow_word *_Atomic *shadow_top; /* ctx->shadow.top */
	uint32_t rgen;
	/*
	 * Cells [rown_lo, rown_hi) hold every filter byte this generation
	 * set for a read of a cell the region owned (no log entry stands
	 * behind it); rown_hi 0: none.  A free or reuse of memory there
	 * ends the ownership, so it clears the filter (rlog_forget()).
	 */
	uint64_t rown_lo, rown_hi;
	uint64_t *rbloom; /* RBLOOM_BITS: groups that may be in the log */
	uint32_t *rgroup; /* entries whole-cell reads can join, by rgroup_slot() */
	uint32_t rgroup_mask;
	/* Entries [0, rindex_n) of the log by cell, for frees (RINDEX_MIN). */
	uint32_t *rindex_head; /* rindex_buckets chains: entry index + 1 */
	uint32_t *rindex_next; /* per entry: next index + 1 in its chain */
	uint32_t rindex_n, rindex_buckets, rindex_head_cap, rindex_next_cap;
	uint64_t rlog_shape; /* changes when entries move or go */
	uint64_t rindex_shape;
	struct rlog_entry *rlog;
	uint32_t rlog_n;
	uint32_t rlog_cap; /* grows up to p.read_log_entries */
	uint64_t region_start; /* first write-log index of this region */
	/* Cells the region owns whose write-log entries it overwrote. */
	uint64_t *wspill;
	uint32_t wspill_n, wspill_cap;
	uint64_t wspill_site; /* of the newest spilled run */
	uint64_t runs_start; /* the slot's runs_head when the region began */
	bool wspill_scattered; /* the last spill hardly ran: to the bitmaps */
	/* Scattered cells the region owns, a bitmap per shadow leaf. */
	struct wbits *wbits; /* WBITS_LEAVES of them once needed */
	uint32_t wbits_n;
	uint8_t wbits_hint[WBITS_LEAVES]; /* by leaf modulo: a guess */
	uint64_t wbits_lines; /* bits set this region */
	bool ordered; /* ordering-rule validation done this region */
	uint64_t zfree_seen; /* ctx->zfree entries checked: all before it */
	bool zfree_idle; /* our slot's zfree_need is ZFREE_NONE */

	/* FastTrack: this thread's vector clock (own entry == clock). */
	struct vclock vc;

	struct conflict_queue lazy; /* found by validation: delivered first */
	struct conflict_queue eager;
	struct thread_stats st;

	struct valor_thread *next_all, *prev_all; /* ctx->threads list */

	/*
	 * Valor's read filter (one, none for the other analyses): part of
	 * the thread, so the fast path reaches it without loading a
	 * pointer first.
	 */
	struct rfilter rfilter[];
};

/*
 * A free of a large block leaves the words of its cells that no thread
 * ever wrote (0) as they are, and says so here instead: bumping them,
 * as a free does any other cell, would copy their shadow pages off the
 * kernel's zero page, a page of shadow for every 512 bytes freed that
 * no instrumented code ever wrote (valor.c, "Frees that leave zero
 * words").  A thread whose log holds a read of such a cell from before
 * the free reports it when it next looks at the ring: at its next
 * validation, free or reuse, or log entry at version 0.
 */
#define ZFREE_RING 64U
#define ZFREE_NONE UINT64_MAX

struct zfree {
	uint64_t lo, hi; /* the freed cells [lo, hi) */
	struct valor_access_info who; /* the free, as a report names it */
};

/* Blocks at least this large free lazily (tests lower it to reach it). */
extern size_t eng_zfree_min;

struct sync_table;

struct valor_ctx {
	struct valor_params p;
	struct shadow shadow;
	struct arena arena;

	struct eng_lock lock;
	struct slot *slots; /* [0] unused: slot 0 means "none" */
	void *slots_mem; /* what was allocated for @slots (aligned in it) */
	uint32_t nslots; /* max_threads + 1 */
	uint32_t *free_slots; /* stack of recyclable slots */
	uint32_t nfree;
	uint32_t next_unused; /* slots never used start here */
	uint32_t wlog_cap; /* largest write-log ring, a power of two */
	uint64_t next_tid;

	struct valor_thread *threads; /* every handle not yet freed */
	struct thread_stats retired;
	uint64_t threads_created;
	_Atomic uint32_t nlive; /* created and not exited */
	_Atomic uint64_t njoined; /* threads valor_thread_join() took */
	_Atomic uint32_t wlog_readers; /* threads reading another's ring */
	_Atomic uint64_t meddle_waits; /* CASes that waited out a release walk */
	bool cas_pair; /* eng_cas_pair() works here */
	uint32_t nroots; /* created without a parent */

	/* Valor: frees that left zero words, a ring (struct zfree). */
	struct eng_lock zfree_lock; /* freers publishing */
	_Atomic uint64_t zfree_head; /* entries published so far */
	struct zfree zfree[ZFREE_RING];

	struct sync_table *sync; /* FastTrack: sync object clocks */
};

/* A write set of this many entries grows a ring of @cap, or spills. */
static inline uint64_t wlog_room(const struct valor_ctx *ctx, uint64_t cap)
{
	return cap < ctx->wlog_cap ? cap / 2 : cap;
}

/* ctx.c */
void thread_stats_add(struct thread_stats *to, const struct thread_stats *s);

/*
 * valor.c: NULL but in tests, called between a release walk's load and
 * store of a compact cell word it owns (tests/core/release_walk_test.c).
 */
extern void (*eng_release_walk_hook)(struct valor_thread *th, uint64_t cell);

/* thread.c */
void thread_region_boundary(struct valor_thread *th);
void thread_update_mode(struct valor_thread *th);
void thread_deliver(struct valor_thread *th);
uint64_t slot_tid_at(struct valor_ctx *ctx, uint64_t epoch);

/* report.c */
void conflict_push(struct valor_thread *th, struct conflict_queue *q,
		   const struct valor_conflict *c);
int conflict_deliver_queued(struct valor_thread *th);

/* Deliver what the call found; nothing to do on almost every call. */
static inline int conflict_deliver(struct valor_thread *th)
{
	if (__builtin_expect(!th->lazy.n && !th->eager.n, 1))
		return 0;
	return conflict_deliver_queued(th);
}
void conflict_queue_free(struct conflict_queue *q);

/* valor.c: Valor-O */
int valor_o_access(struct valor_thread *th, uintptr_t addr, size_t size,
		   bool is_write, uint64_t site);
/*
 * Whole cells written: @count of them from @cell on, @step (1 or 2)
 * apart.  Taken as runs on the spill list where they can be.
 */
int valor_o_write_cells(struct valor_thread *th, uint64_t cell, uint64_t count,
			unsigned step, uint64_t site);
int valor_o_free(struct valor_thread *th, uintptr_t addr, size_t size,
		 uint64_t site);
void valor_o_forget(struct valor_thread *th, uintptr_t addr, size_t size);
void valor_o_move(struct valor_thread *th, uint64_t from, uint64_t to,
		  uint64_t ncells);
void valor_o_validate(struct valor_thread *th, bool reset);
void valor_o_region_end(struct valor_thread *th);
uint64_t valor_o_version(struct valor_ctx *ctx, uintptr_t addr);
int valor_o_thread_init(struct valor_thread *th);
void valor_o_thread_fini(struct valor_thread *th);

/* hbcell.c: FastRCD and FastTrack cells */
void hb_forget(struct valor_thread *th, uintptr_t addr, size_t size);
void hb_move(struct valor_thread *th, uint64_t from, uint64_t to,
	     uint64_t ncells);

/* fastrcd.c */
void fastrcd_access(struct valor_thread *th, uintptr_t addr, size_t size,
		    bool is_write, uint64_t site);
void fastrcd_free(struct valor_thread *th, uintptr_t addr, size_t size,
		  uint64_t site);

/* fasttrack.c */
void fasttrack_access(struct valor_thread *th, uintptr_t addr, size_t size,
		      bool is_write, uint64_t site);
void fasttrack_free(struct valor_thread *th, uintptr_t addr, size_t size,
		    uint64_t site);

/* synctab.c: FastTrack's clocks of synchronization objects */
struct sync_table *sync_table_new(void);
void sync_table_free(struct sync_table *t);
int sync_acquire(struct sync_table *t, uintptr_t obj, struct vclock *into);
int sync_release(struct sync_table *t, uintptr_t obj,
		 const struct vclock *from);

/* Iterate the cells of [addr, addr + size): cell index and byte mask. */
static inline uint8_t cell_mask(uint64_t lo, uint64_t hi)
{
	/* bytes [lo, hi) of a cell, 0 <= lo < hi <= 8 */
	return (uint8_t)(((1U << hi) - 1) & ~((1U << lo) - 1));
}

#define for_each_cell(addr, size, cell, mask)                                   \
	for (uint64_t __a = (addr), __end = (addr) + (size);                    \
	     __a < __end &&                                                     \
	     ((cell) = __a >> CELL_SHIFT,                                       \
	     (mask) = cell_mask(__a & (CELL_SIZE - 1),                          \
				((__end - ((cell) << CELL_SHIFT)) > CELL_SIZE ? \
					 CELL_SIZE :                            \
					 (__end - ((cell) << CELL_SHIFT)))),    \
	     1);                                                                \
	     __a = ((cell) + 1) << CELL_SHIFT)

/*
 * How many bytes contiguous mask @m (not 0) has.  Not a popcount: without
 * -mpopcnt that is a call into libgcc.
 */
static inline unsigned mask_bytes(uint8_t m)
{
	return (unsigned)__builtin_ctz(~((unsigned)m >> __builtin_ctz(m)));
}

/* The bytes of cell @cell that [addr, addr + size) covers. */
static inline uint8_t cell_range_mask(uint64_t cell, uint64_t addr,
				      uint64_t size)
{
	uint64_t base = cell << CELL_SHIFT;
	uint64_t lo = addr > base ? addr - base : 0;
	uint64_t hi = addr + size - base;

	return cell_mask(lo, hi < CELL_SIZE ? hi : CELL_SIZE);
}

/*
 * The cells of [addr, addr + size) that can have history (their leaf
 * exists): frees, forgets and munmaps of huge ranges visit only memory
 * some access touched.  The second form also gives the bytes of each
 * cell that the range covers.
 */
#define for_each_present_cell_index(sh, addr, size, cell)                  \
	for (uint64_t __e = (((addr) + (size)-1) >> CELL_SHIFT) + 1,       \
		      cell = shadow_next_present(sh, (addr) >> CELL_SHIFT, \
						 __e);                     \
	     cell < __e; cell = shadow_next_present(sh, cell + 1, __e))

#define for_each_present_cell(sh, addr, size, cell, mask) \
	for_each_present_cell_index(sh, addr, size, cell) \
		if (((mask) = cell_range_mask(cell, addr, size)), 1)

/* Bytes of @mask as consecutive runs: calls fn(lo, len) per run. */
#define for_each_run(mask, lo, len)                        \
	for (unsigned __m = (mask), lo = 0, len = 0;       \
	     __m && ((lo) = __builtin_ctz(__m),            \
		    (len) = __builtin_ctz(~(__m >> (lo))), \
		    __m &= ~(((1U << (len)) - 1) << (lo)), 1);)

#endif /* VALOR_CORE_INTERNAL_H */
