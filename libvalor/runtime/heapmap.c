// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Live heap blocks, for reports ("heap block of 64 bytes allocated by
 * thread T2 at ...") and for a realloc that fails, which keeps the old
 * block's description.
 *
 * 64 shards, each an open-addressing table (linear probing, deletion by
 * backward shift, so no tombstones) keyed by the block's start and
 * guarded by its own rt_lock: an allocation or a free takes exactly one
 * shard lock for a few loads and stores.  Tables double when 3/4 full;
 * they come from glibc's allocator below our interceptors, not from
 * mmap: a table of one page could land in a hole the program just
 * unmapped and means to map again (corpus mmap_reuse.c).
 *
 * A program of small objects has as many entries as objects, so an
 * entry is 16 bytes (it was 32, more than a 24-byte node it describes):
 * the start and the size share a word, the allocating thread and its
 * stack the other.  Every block comes from glibc's allocator, so starts
 * are multiples of 16 below 2^48.  A block that does not fit -- larger
 * than HEAP_SCAN_BYTES, or a thread id past 2^32 -- is "wide": its entry
 * holds an index into the shard's array of whole descriptions instead.
 *
 * Which block contains an address (report path only): we look up the
 * starts at and below the address, 16 bytes at a time, up to
 * HEAP_SCAN_BYTES below it; then the wide blocks, which a lookup scans.
 * Frees of wide blocks stay O(1): removal swaps the array's last one in
 * and repoints its entry.
 */
#include "report.h"
#include "intercept.h"

#include <string.h>

#define HEAP_SHARDS 64
#define HEAP_MIN_SLOTS 256U
#define HEAP_SCAN_BYTES 4096
#define HEAP_ALIGN 16
#define HEAP_START_BITS 48
#define HEAP_START_MASK ((1ULL << HEAP_START_BITS) - 1)
#define HEAP_WIDE 0xffffULL /* size field of a wide block's entry */

_Static_assert(HEAP_SCAN_BYTES < HEAP_WIDE, "small sizes fit an entry");

struct heap_entry {
	uint64_t start_size; /* start | size << 48; 0: free slot */
	uint64_t origin; /* stack | tid << 32, or the wide index */
};

struct heap_shard {
	atomic_int lock;
	uint32_t mask; /* slots - 1; 0 until the first block */
	uint32_t count;
	uint32_t nwide, wide_cap;
	struct heap_entry *tab;
	struct rt_heap_block *wide;
} __attribute__((aligned(64)));

static struct heap_shard shards[HEAP_SHARDS];

static uintptr_t entry_start(const struct heap_entry *e)
{
	return e->start_size & HEAP_START_MASK;
}

static uint64_t entry_size(const struct heap_entry *e)
{
	return e->start_size >> HEAP_START_BITS;
}

/*
 * A full mix (splitmix64's finalizer): with one multiply, the blocks of
 * one shard landed in regular strides of its table and linear probing
 * degenerated (1.4 us per insert for 2M sequential blocks).
 */
static uint64_t start_hash(uintptr_t start)
{
	uint64_t h = start / HEAP_ALIGN;

	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	return h ^ (h >> 31);
}

static struct heap_shard *shard_of(uint64_t h)
{
	return &shards[h % HEAP_SHARDS];
}

static uint32_t home_slot(const struct heap_shard *s, uint64_t h)
{
	return (uint32_t)(h / HEAP_SHARDS) & s->mask;
}

/* The slot of @start in @s, or NULL. */
static struct heap_entry *slot_find(struct heap_shard *s, uintptr_t start,
				    uint64_t h)
{
	if (!s->tab)
		return NULL;
	for (uint32_t i = home_slot(s, h);; i = (i + 1) & s->mask) {
		struct heap_entry *e = &s->tab[i];

		if (entry_start(e) == start)
			return e;
		if (!e->start_size)
			return NULL;
	}
}

static struct heap_entry *slot_insert(struct heap_shard *s, uintptr_t start,
				      uint64_t h)
{
	for (uint32_t i = home_slot(s, h);; i = (i + 1) & s->mask) {
		struct heap_entry *e = &s->tab[i];

		if (!e->start_size || entry_start(e) == start)
			return e;
	}
}

static bool grow(struct heap_shard *s)
{
	uint32_t slots = s->tab ? 2 * (s->mask + 1) : HEAP_MIN_SLOTS;
	struct heap_entry *old = s->tab, *tab;
	uint32_t old_slots = s->tab ? s->mask + 1 : 0;

	tab = __libc_calloc(slots, sizeof(*tab));
	if (!tab)
		return false;
	s->tab = tab;
	s->mask = slots - 1;
	for (uint32_t i = 0; i < old_slots; i++)
		if (old[i].start_size)
			*slot_insert(s, entry_start(&old[i]),
				     start_hash(entry_start(&old[i]))) = old[i];
	if (old)
		__libc_free(old);
	return true;
}

/* A wide description of a block; its index, or -1 out of memory. */
static int64_t wide_add(struct heap_shard *s, const struct rt_heap_block *w)
{
	if (s->nwide == s->wide_cap) {
		uint32_t cap = s->wide_cap ? 2 * s->wide_cap : 128;
		struct rt_heap_block *v = __libc_calloc(cap, sizeof(*v));

		if (!v)
			return -1;
		if (s->wide) {
			memcpy(v, s->wide, s->nwide * sizeof(*v));
			__libc_free(s->wide);
		}
		s->wide = v;
		s->wide_cap = cap;
	}
	s->wide[s->nwide] = *w;
	return s->nwide++;
}

static void wide_remove(struct heap_shard *s, uint32_t idx)
{
	struct rt_heap_block moved = s->wide[--s->nwide];

	if (idx == s->nwide)
		return;
	s->wide[idx] = moved;
	slot_find(s, moved.start, start_hash(moved.start))->origin = idx;
}

/* Remove the entry in slot @i, shifting back the run that follows it. */
static void slot_remove(struct heap_shard *s, uint32_t i)
{
	for (uint32_t j = i;;) {
		uint32_t home;

		j = (j + 1) & s->mask;
		if (!s->tab[j].start_size)
			break;
		home = home_slot(s, start_hash(entry_start(&s->tab[j])));
		/* Can entry j move to the hole at i? (home not in (i, j]) */
		if (((j - home) & s->mask) >= ((j - i) & s->mask)) {
			s->tab[i] = s->tab[j];
			i = j;
		}
	}
	s->tab[i].start_size = 0;
}

/* Remove entry @e and its wide description, lock held. */
static void entry_remove(struct heap_shard *s, struct heap_entry *e)
{
	if (entry_size(e) == HEAP_WIDE)
		wide_remove(s, (uint32_t)e->origin);
	slot_remove(s, (uint32_t)(e - s->tab));
	s->count--;
}

void rt_heap_record(uintptr_t addr, size_t size, uint32_t stack, uint64_t tid)
{
	uint64_t h = start_hash(addr);
	struct heap_shard *s = shard_of(h);
	struct heap_entry *e;
	uint64_t start_size, origin;

	/* Not glibc's (nothing else is recorded): not described. */
	if (!addr || addr > HEAP_START_MASK || addr % HEAP_ALIGN)
		return;
	rt_lock(&s->lock);
	/* Recorded twice without a free we saw: the new one replaces it. */
	e = slot_find(s, addr, h);
	if (e)
		entry_remove(s, e);
	if ((s->count + 1) * 4 > (s->mask + 1) * 3 || !s->tab) {
		if (!grow(s))
			goto out; /* out of memory: the block is not described */
	}
	if (size <= HEAP_SCAN_BYTES && tid <= UINT32_MAX) {
		start_size = addr | (uint64_t)size << HEAP_START_BITS;
		origin = stack | tid << 32;
	} else {
		struct rt_heap_block w = {
			.start = addr, .size = size, .tid = tid, .stack = stack
		};
		int64_t idx = wide_add(s, &w);

		if (idx < 0)
			goto out;
		start_size = addr | HEAP_WIDE << HEAP_START_BITS;
		origin = (uint64_t)idx;
	}
	e = slot_insert(s, addr, h);
	e->start_size = start_size;
	e->origin = origin;
	s->count++;
out:
	rt_unlock(&s->lock);
}

size_t rt_heap_forget(uintptr_t addr)
{
	uint64_t h = start_hash(addr);
	struct heap_shard *s = shard_of(h);
	struct heap_entry *e;
	size_t size = 0;

	if (!addr)
		return 0;
	rt_lock(&s->lock);
	e = slot_find(s, addr, h);
	if (e) {
		size = entry_size(e) == HEAP_WIDE ? s->wide[e->origin].size :
						    entry_size(e);
		entry_remove(s, e);
	}
	rt_unlock(&s->lock);
	return size;
}

/* What @e says, lock held. */
static void describe(const struct heap_shard *s, const struct heap_entry *e,
		     struct rt_heap_block *out)
{
	if (entry_size(e) == HEAP_WIDE) {
		*out = s->wide[e->origin];
		return;
	}
	out->start = entry_start(e);
	out->size = entry_size(e);
	out->tid = e->origin >> 32;
	out->stack = (uint32_t)e->origin;
}

static bool lookup_start(uintptr_t start, struct rt_heap_block *out)
{
	uint64_t h = start_hash(start);
	struct heap_shard *s = shard_of(h);
	struct heap_entry *e;

	rt_lock(&s->lock);
	e = slot_find(s, start, h);
	if (e)
		describe(s, e, out);
	rt_unlock(&s->lock);
	return e != NULL;
}

static bool contains(const struct rt_heap_block *b, uintptr_t addr)
{
	/* A zero-size block still owns its first byte for reports. */
	return addr >= b->start && addr - b->start < (b->size ? b->size : 1);
}

bool rt_heap_find(uintptr_t addr, struct rt_heap_block *out)
{
	uintptr_t p = addr & ~(uintptr_t)(HEAP_ALIGN - 1);

	for (unsigned k = 0; k <= HEAP_SCAN_BYTES / HEAP_ALIGN && p; k++) {
		if (lookup_start(p, out) && contains(out, addr))
			return true;
		p -= HEAP_ALIGN;
	}
	for (unsigned i = 0; i < HEAP_SHARDS; i++) {
		struct heap_shard *s = &shards[i];
		bool found = false;

		rt_lock(&s->lock);
		for (uint32_t j = 0; j < s->nwide && !found; j++) {
			if (contains(&s->wide[j], addr)) {
				*out = s->wide[j];
				found = true;
			}
		}
		rt_unlock(&s->lock);
		if (found)
			return true;
	}
	return false;
}

void rt_heap_after_fork_child(void)
{
	for (unsigned i = 0; i < HEAP_SHARDS; i++)
		atomic_store(&shards[i].lock, 0);
}
