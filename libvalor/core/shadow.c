// SPDX-License-Identifier: LGPL-2.1-or-later
/* Reserving and growing the two-level shadow table (see shadow.h). */
#include "shadow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define TOP_BYTES (SHADOW_TOP_ENTRIES * sizeof(shadow_word *))
#define WIDE_BYTES (SHADOW_WIDE_WORDS * sizeof(shadow_word))
#define BLOCK_SIZE (SHADOW_BLOCK_WORDS * sizeof(shadow_word))
#define BLOCK_BYTES (SHADOW_BLOCKS * BLOCK_SIZE)

static void *reserve(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

int shadow_init(struct shadow *s, unsigned record_shift, bool huge)
{
	s->huge = huge;
	s->leaf_bytes = SHADOW_LEAF_WORDS << record_shift;
	s->top = reserve(TOP_BYTES);
	if (!s->top)
		return -ENOMEM;
	atomic_init(&s->mapped_bytes, TOP_BYTES);
	eng_lock_init(&s->leaves_lock);
	s->leaves = NULL;
	s->nleaves = s->leaves_cap = 0;
	s->wide = NULL;
	atomic_init(&s->wide_next, 1);
	s->blocks = NULL;
	s->blocks_next = 0;
	s->blocks_free = NULL;
	eng_lock_init(&s->blocks_lock);
	if (record_shift == 2) {
		s->wide = reserve(WIDE_BYTES + BLOCK_BYTES);
		if (!s->wide) {
			munmap(s->top, TOP_BYTES);
			s->top = NULL;
			return -ENOMEM;
		}
		s->blocks = s->wide + SHADOW_WIDE_WORDS;
	}
	return 0;
}

/*
 * Blocks are handed out again once free: a thread racing with the free
 * reads stale byte words or zeros, as from the context's arena before
 * (valor.c keeps such a reader from acting on them).
 */
shadow_word *shadow_block_new(struct shadow *s)
{
	shadow_word *blk = NULL;

	eng_lock(&s->blocks_lock);
	if (s->blocks_free) {
		blk = s->blocks_free;
		s->blocks_free = *(shadow_word **)blk;
	} else if (s->blocks_next < SHADOW_BLOCKS) {
		blk = &s->blocks[(uint64_t)s->blocks_next++ *
				 SHADOW_BLOCK_WORDS];
		if (!(s->blocks_next % (4096 / BLOCK_SIZE)))
			atomic_fetch_add_explicit(&s->mapped_bytes, 4096,
						  memory_order_relaxed);
	}
	eng_unlock(&s->blocks_lock);
	if (blk)
		memset(blk, 0, BLOCK_SIZE);
	return blk;
}

void shadow_block_free(struct shadow *s, shadow_word *blk)
{
	eng_lock(&s->blocks_lock);
	*(shadow_word **)blk = s->blocks_free;
	s->blocks_free = blk;
	eng_unlock(&s->blocks_lock);
}

/*
 * Wide words are never given back: a cell that needed one keeps it (its
 * version only grows), so the table holds one word per such cell, plus
 * one for each lost race to make a cell wide.
 */
uint32_t shadow_wide_new(struct shadow *s)
{
	uint32_t i = atomic_fetch_add_explicit(&s->wide_next, 1,
					       memory_order_relaxed);

	if (i >= SHADOW_WIDE_WORDS) {
		atomic_store_explicit(&s->wide_next, SHADOW_WIDE_WORDS,
				      memory_order_relaxed);
		return 0;
	}
	if (!(i % (4096 / sizeof(shadow_word))))
		atomic_fetch_add_explicit(&s->mapped_bytes, 4096,
					  memory_order_relaxed);
	return i;
}

void shadow_fini(struct shadow *s)
{
	if (!s->top)
		return;
	for (size_t i = 0; i < s->nleaves; i++)
		munmap(s->leaves[i], s->leaf_bytes);
	eng_free(s->leaves);
	if (s->wide)
		munmap(s->wide, WIDE_BYTES + BLOCK_BYTES);
	munmap(s->top, TOP_BYTES);
	s->top = NULL;
}

static int remember_leaf(struct shadow *s, shadow_word *leaf)
{
	int ret = 0;

	eng_lock(&s->leaves_lock);
	if (s->nleaves == s->leaves_cap) {
		size_t cap = s->leaves_cap ? 2 * s->leaves_cap : 16;
		shadow_word **v = eng_realloc(s->leaves, cap * sizeof(*v));

		if (!v) {
			ret = -ENOMEM;
			goto out;
		}
		s->leaves = v;
		s->leaves_cap = cap;
	}
	s->leaves[s->nleaves++] = leaf;
out:
	eng_unlock(&s->leaves_lock);
	return ret;
}

shadow_word *shadow_leaf_create(struct shadow *s, uint64_t top_index)
{
	shadow_word *fresh = reserve(s->leaf_bytes), *expected = NULL;

	if (!fresh)
		return NULL;
	/*
	 * Huge pages where asked for: an access checks its record before
	 * it writes it, so a 4 KiB page of records is first mapped to the
	 * zero page and then copied, which flushes the TLBs of every CPU
	 * the process runs on (12-20% of FastRCD's time in fft and radix).
	 * A huge page takes that once per 2 MiB.  Advice only: where the
	 * kernel has no transparent huge pages, nothing changes.
	 */
	if (s->huge)
		madvise(fresh, s->leaf_bytes, MADV_HUGEPAGE);
	if (remember_leaf(s, fresh)) {
		munmap(fresh, s->leaf_bytes);
		return NULL;
	}
	if (!atomic_compare_exchange_strong(&s->top[top_index], &expected,
					    fresh)) {
		/*
		 * Another thread installed the leaf first: use theirs.  Ours
		 * stays on the list (unmapped at shadow_fini) because taking
		 * it off would need the lock again for a rare race.
		 */
		return expected;
	}
	atomic_fetch_add(&s->mapped_bytes, s->leaf_bytes);
	return fresh;
}

#define HUGE_PAGE (2UL << 20)

/*
 * Sparse data keeps 4 KiB pages of records in a context without @huge
 * (Valor's: a huge page for a few scattered heap nodes costs 2 MiB), but
 * a block of several MiB is nearly always written whole, and then its
 * records are first read on the zero page and copied at the first
 * write, a TLB flush of every CPU per 4 KiB (11% of an FFT's time, 8%
 * of a radix sort's).  The 2 MiB pages wholly inside the block's records
 * take huge pages: memory the block's use would have touched anyway.
 */
void shadow_advise_dense(struct shadow *s, uint64_t addr, uint64_t size)
{
	uint64_t end = addr + size;
	unsigned record_shift =
		__builtin_ctzl(s->leaf_bytes / SHADOW_LEAF_WORDS);

	if (s->huge)
		return;
	while (addr < end) {
		uint64_t ti = addr >> SHADOW_LEAF_SHIFT;
		uint64_t stop = (ti + 1) << SHADOW_LEAF_SHIFT;
		uintptr_t from, to;
		char *leaf;

		if (stop > end)
			stop = end;
		leaf = (char *)atomic_load_explicit(&s->top[ti],
						    memory_order_acquire);
		if (!leaf)
			leaf = (char *)shadow_leaf_create(s, ti);
		if (!leaf)
			return;
		from = (uintptr_t)leaf +
		       (((addr >> CELL_SHIFT) & (SHADOW_LEAF_WORDS - 1))
			<< record_shift);
		to = from + (((stop - addr) >> CELL_SHIFT) << record_shift);
		from = (from + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
		to &= ~(HUGE_PAGE - 1);
		if (to > from)
			madvise((void *)from, to - from, MADV_HUGEPAGE);
		addr = stop;
	}
}
