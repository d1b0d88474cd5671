// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Live heap blocks, for reports ("heap block of 64 bytes allocated by
 * thread T2 at ...") and for free(), which needs the size of the block
 * it ends.
 *
 * 64 shards, each an open-addressing table (linear probing, deletion by
 * backward shift, so no tombstones) keyed by the block's start and
 * guarded by its own rt_lock: an allocation or a free takes exactly one
 * shard lock for a few loads and stores.  Tables live in mmap'd memory
 * and double when 3/4 full.
 *
 * Which block contains an address (report path only): glibc's blocks
 * start at multiples of 16, so we look up the starts at and below the
 * address, 16 bytes at a time, up to HEAP_SCAN_BYTES below it.  A block
 * larger than that is also listed in its shard's "large" array, which a
 * lookup then scans.  Frees of large blocks stay O(1): the entry keeps
 * its index in that array and removal swaps the last one in.
 */
#include "report.h"

#include <string.h>
#include <sys/mman.h>

#define HEAP_SHARDS 64
#define HEAP_MIN_SLOTS 256U
#define HEAP_SCAN_BYTES 4096
#define HEAP_ALIGN 16
#define NOT_LARGE UINT32_MAX

struct heap_entry {
	uintptr_t start; /* 0: free slot */
	size_t size;
	uint64_t tid;
	uint32_t stack;
	uint32_t large; /* index in the shard's large array, or NOT_LARGE */
};

struct heap_shard {
	atomic_int lock;
	uint32_t mask; /* slots - 1; 0 until the first block */
	uint32_t count;
	uint32_t nlarge, large_cap;
	struct heap_entry *tab;
	uintptr_t *large; /* starts of the shard's blocks > HEAP_SCAN_BYTES */
} __attribute__((aligned(64)));

static struct heap_shard shards[HEAP_SHARDS];

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

static void *map_zeroed(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The slot of @start in @s, or NULL. */
static struct heap_entry *slot_find(struct heap_shard *s, uintptr_t start,
				    uint64_t h)
{
	if (!s->tab)
		return NULL;
	for (uint32_t i = home_slot(s, h);; i = (i + 1) & s->mask) {
		struct heap_entry *e = &s->tab[i];

		if (e->start == start)
			return e;
		if (!e->start)
			return NULL;
	}
}

static struct heap_entry *slot_insert(struct heap_shard *s, uintptr_t start,
				      uint64_t h)
{
	for (uint32_t i = home_slot(s, h);; i = (i + 1) & s->mask) {
		struct heap_entry *e = &s->tab[i];

		if (!e->start || e->start == start)
			return e;
	}
}

static bool grow(struct heap_shard *s)
{
	uint32_t slots = s->tab ? 2 * (s->mask + 1) : HEAP_MIN_SLOTS;
	struct heap_entry *old = s->tab, *tab;
	uint32_t old_slots = s->tab ? s->mask + 1 : 0;

	tab = map_zeroed((size_t)slots * sizeof(*tab));
	if (!tab)
		return false;
	s->tab = tab;
	s->mask = slots - 1;
	for (uint32_t i = 0; i < old_slots; i++)
		if (old[i].start)
			*slot_insert(s, old[i].start,
				     start_hash(old[i].start)) = old[i];
	if (old)
		munmap(old, (size_t)old_slots * sizeof(*old));
	return true;
}

static bool large_add(struct heap_shard *s, struct heap_entry *e)
{
	if (s->nlarge == s->large_cap) {
		uint32_t cap = s->large_cap ? 2 * s->large_cap : 512;
		uintptr_t *l = map_zeroed((size_t)cap * sizeof(*l));

		if (!l)
			return false;
		if (s->large) {
			memcpy(l, s->large, s->nlarge * sizeof(*l));
			munmap(s->large, s->large_cap * sizeof(*l));
		}
		s->large = l;
		s->large_cap = cap;
	}
	e->large = s->nlarge;
	s->large[s->nlarge++] = e->start;
	return true;
}

static void large_remove(struct heap_shard *s, uint32_t idx)
{
	uintptr_t moved = s->large[--s->nlarge];

	if (idx == s->nlarge)
		return;
	s->large[idx] = moved;
	slot_find(s, moved, start_hash(moved))->large = idx;
}

/* Remove the entry in slot @i, shifting back the run that follows it. */
static void slot_remove(struct heap_shard *s, uint32_t i)
{
	for (uint32_t j = i;;) {
		uint32_t home;

		j = (j + 1) & s->mask;
		if (!s->tab[j].start)
			break;
		home = home_slot(s, start_hash(s->tab[j].start));
		/* Can entry j move to the hole at i? (home not in (i, j]) */
		if (((j - home) & s->mask) >= ((j - i) & s->mask)) {
			s->tab[i] = s->tab[j];
			i = j;
		}
	}
	s->tab[i].start = 0;
}

void rt_heap_record(uintptr_t addr, size_t size, uint32_t stack, uint64_t tid)
{
	uint64_t h = start_hash(addr);
	struct heap_shard *s = shard_of(h);
	struct heap_entry *e;

	if (!addr)
		return;
	rt_lock(&s->lock);
	if ((s->count + 1) * 4 > (s->mask + 1) * 3 || !s->tab) {
		if (!grow(s)) {
			rt_unlock(&s->lock);
			return; /* out of memory: the block is not described */
		}
	}
	e = slot_insert(s, addr, h);
	if (e->start) {
		/* Recorded twice without a free we saw: replace it. */
		if (e->large != NOT_LARGE)
			large_remove(s, e->large);
	} else {
		s->count++;
	}
	*e = (struct heap_entry){
		.start = addr,
		.size = size,
		.tid = tid,
		.stack = stack,
		.large = NOT_LARGE,
	};
	if (size > HEAP_SCAN_BYTES)
		large_add(s, e);
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
		size = e->size;
		if (e->large != NOT_LARGE)
			large_remove(s, e->large);
		slot_remove(s, (uint32_t)(e - s->tab));
		s->count--;
	}
	rt_unlock(&s->lock);
	return size;
}

static bool lookup_start(uintptr_t start, struct rt_heap_block *out)
{
	uint64_t h = start_hash(start);
	struct heap_shard *s = shard_of(h);
	struct heap_entry *e;

	rt_lock(&s->lock);
	e = slot_find(s, start, h);
	if (e) {
		out->start = e->start;
		out->size = e->size;
		out->tid = e->tid;
		out->stack = e->stack;
	}
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
		for (uint32_t j = 0; j < s->nlarge && !found; j++) {
			uintptr_t start = s->large[j];
			struct heap_entry *e;

			if (addr < start)
				continue;
			e = slot_find(s, start, start_hash(start));
			if (e && addr - start < e->size) {
				out->start = e->start;
				out->size = e->size;
				out->tid = e->tid;
				out->stack = e->stack;
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
