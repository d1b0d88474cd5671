/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shadow memory: a fixed-size record per 8-byte cell of the analysed
 * address space, in a two-level table.  The top level maps 16 MiB chunks
 * of the 48-bit address space to leaves of 2^21 records; both are
 * reserved with MAP_NORESERVE and only the pages an analysis touches
 * become resident, so an untouched record reads as zero, every
 * analysis's initial state.
 *
 * What a record is belongs to the analysis: Valor-O's is one 32-bit cell
 * word (valor_word.h, and the accessors below), with a table of 64-bit
 * words beside the leaves for the cells that outgrow it; FastRCD's and FastTrack's is a
 * 64-byte struct hb_cell (hbcell.h), which keeps their metadata where
 * the address maps it instead of behind a pointer.  Leaves are installed
 * with a compare-and-swap and never removed while the context lives, so
 * a record's address is stable.
 */
#ifndef VALOR_CORE_SHADOW_H
#define VALOR_CORE_SHADOW_H

#include "sys.h"
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CELL_SHIFT 3
#define CELL_SIZE (1U << CELL_SHIFT)
#define SHADOW_ADDR_BITS 48 /* VALOR_ADDR_LIMIT */
#define SHADOW_LEAF_SHIFT 24
#define SHADOW_LEAF_WORDS (1UL << (SHADOW_LEAF_SHIFT - CELL_SHIFT))
#define SHADOW_TOP_ENTRIES (1UL << (SHADOW_ADDR_BITS - SHADOW_LEAF_SHIFT))

typedef _Atomic uint64_t shadow_word;
/* Valor-O's record: a 32-bit cell word (valor_word.h). */
typedef _Atomic uint32_t cell_word;

/*
 * Wide words: the 64-bit cell words of the cells whose state a 32-bit
 * word cannot hold, by index (valor_word.h); index 0 is never handed
 * out.  Blocks: the eight byte words of a refined cell, by index, so
 * that a 32-bit word can name its block.
 */
#define SHADOW_WIDE_BITS 23
#define SHADOW_WIDE_WORDS (1UL << SHADOW_WIDE_BITS)
#define SHADOW_BLOCK_BITS 23
#define SHADOW_BLOCKS (1UL << SHADOW_BLOCK_BITS)
#define SHADOW_BLOCK_WORDS 8

struct shadow {
	shadow_word *_Atomic *top;
	size_t leaf_bytes; /* SHADOW_LEAF_WORDS records of the analysis */
	bool huge; /* leaves in transparent huge pages */
	_Atomic uint64_t mapped_bytes;
	shadow_word *wide; /* SHADOW_WIDE_WORDS, reserved; NULL: none */
	_Atomic uint32_t wide_next;
	/* SHADOW_BLOCKS blocks, reserved with the wide words. */
	shadow_word *blocks;
	struct eng_lock blocks_lock;
	uint32_t blocks_next; /* never handed out from here on */
	shadow_word *blocks_free; /* linked through their first word */
	/* Installed leaves, for shadow_fini(); appended under @leaves_lock. */
	struct eng_lock leaves_lock;
	shadow_word **leaves;
	size_t nleaves, leaves_cap;
};

/*
 * @record_shift: log2 of the bytes of one cell's record (2: a cell word,
 * with a table of wide words beside it);
 * @huge: ask for transparent huge pages for the leaves (fewer page
 * faults and TLB flushes; more memory where accesses are sparse).
 */
int shadow_init(struct shadow *s, unsigned record_shift, bool huge);
void shadow_fini(struct shadow *s);
shadow_word *shadow_leaf_create(struct shadow *s, uint64_t top_index);
/* A fresh wide word, or 0 when all are taken (shadow.c). */
uint32_t shadow_wide_new(struct shadow *s);
/* A zeroed block of byte words, or NULL when all are taken. */
shadow_word *shadow_block_new(struct shadow *s);
/* Block @blk, no longer any cell's, to be handed out again. */
void shadow_block_free(struct shadow *s, shadow_word *blk);

static inline bool shadow_block_owns(const struct shadow *s,
				     const shadow_word *blk)
{
	return s->blocks && blk >= s->blocks &&
	       blk < s->blocks + SHADOW_BLOCKS * SHADOW_BLOCK_WORDS;
}

static inline uint64_t shadow_block_index(const struct shadow *s,
					  const shadow_word *blk)
{
	return (uint64_t)(blk - s->blocks) / SHADOW_BLOCK_WORDS;
}

/*
 * [@addr, @addr + @size) is a new block large enough to be used whole
 * (SHADOW_DENSE_MIN): its records may take huge pages.
 */
void shadow_advise_dense(struct shadow *s, uint64_t addr, uint64_t size);

#define SHADOW_DENSE_MIN (4UL << 20)

static inline int shadow_addr_ok(uint64_t addr, uint64_t size)
{
	return size <= (1ULL << SHADOW_ADDR_BITS) &&
	       addr <= (1ULL << SHADOW_ADDR_BITS) - size;
}

/* The leaf of @cell, creating it; NULL only when out of memory. */
static inline void *shadow_leaf_get(struct shadow *s, uint64_t cell)
{
	uint64_t ti = cell >> (SHADOW_LEAF_SHIFT - CELL_SHIFT);
	shadow_word *leaf =
		atomic_load_explicit(&s->top[ti], memory_order_acquire);

	if (__builtin_expect(!leaf, 0))
		leaf = shadow_leaf_create(s, ti);
	return leaf;
}

/* The leaf of @cell, or NULL if it was never created. */
static inline void *shadow_leaf_peek(struct shadow *s, uint64_t cell)
{
	return atomic_load_explicit(
		&s->top[cell >> (SHADOW_LEAF_SHIFT - CELL_SHIFT)],
		memory_order_acquire);
}

/* The cell word of @cell, or NULL if its leaf was never created. */
static inline cell_word *shadow_cell_peek(struct shadow *s, uint64_t cell)
{
	cell_word *leaf = shadow_leaf_peek(s, cell);

	return leaf ? &leaf[cell & (SHADOW_LEAF_WORDS - 1)] : NULL;
}

/* The cell word of @cell, creating its leaf; NULL only when out of memory. */
static inline cell_word *shadow_cell_get(struct shadow *s, uint64_t cell)
{
	cell_word *leaf = shadow_leaf_get(s, cell);

	return leaf ? &leaf[cell & (SHADOW_LEAF_WORDS - 1)] : NULL;
}

/*
 * Moving cell @from to cell @to (mremap): the target's word, created when
 * either side has a leaf, or NULL when there is nothing to move; *@src is
 * the source's word or NULL.
 */
static inline cell_word *shadow_cell_move_pair(struct shadow *s, uint64_t from,
					       uint64_t to, cell_word **src)
{
	*src = shadow_cell_peek(s, from);
	if (!*src && !shadow_leaf_peek(s, to))
		return NULL;
	return shadow_cell_get(s, to);
}

/*
 * An access of @size bytes at @addr is within one cell, and analysed;
 * false too for a 2- or 4-byte access not aligned to its size.
 */
static inline __attribute__((always_inline)) bool
shadow_fast_fits(uint64_t addr, uint64_t size)
{
	const uint64_t high = ~((1ULL << SHADOW_ADDR_BITS) - 1);

	/* One test for the common sizes, whose check inlines everywhere. */
	if (__builtin_constant_p(size) && size == CELL_SIZE)
		return !(addr & (high | (CELL_SIZE - 1)));
	if (__builtin_constant_p(size) && size == 1)
		return !(addr & high);
	/* Misaligned within a cell is rare enough for the slow path. */
	if (__builtin_constant_p(size) && (size == 2 || size == 4))
		return !(addr & (high | (size - 1)));
	return (addr & (CELL_SIZE - 1)) + size <= CELL_SIZE && !(addr & high);
}

/*
 * The leaf an inline check looks into for an access of @size bytes at
 * @addr, with the table @top passed in (a global, in the runtime): NULL
 * when the access crosses a cell, lies beyond the analysed space or has
 * no leaf yet, all three cases for the caller's slow path.
 */
static inline __attribute__((always_inline)) void *
shadow_fast_leaf(shadow_word *_Atomic *top, uint64_t addr, uint64_t size)
{
	if (__builtin_expect(!shadow_fast_fits(addr, size), 0))
		return NULL;
	return atomic_load_explicit(&top[addr >> SHADOW_LEAF_SHIFT],
				    memory_order_acquire);
}

/*
 * The first cell at or after @cell, up to @end (exclusive), whose leaf
 * exists; @end if none.  Lets a free of a huge range skip the address
 * space no access ever touched.
 */
static inline uint64_t shadow_next_present(struct shadow *s, uint64_t cell,
					   uint64_t end)
{
	const uint64_t per_leaf = SHADOW_LEAF_WORDS;

	while (cell < end && !shadow_leaf_peek(s, cell))
		cell = (cell / per_leaf + 1) * per_leaf;
	return cell < end ? cell : end;
}

#endif /* VALOR_CORE_SHADOW_H */
