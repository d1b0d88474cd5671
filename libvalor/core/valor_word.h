/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Valor-O cell word (valor.c explains the format), shared by the
 * engine and the runtime's inline fast path (valor_fast.h).
 *
 * The analysis reasons about 64-bit words (VW_*, below).  The shadow
 * keeps 32 bits a cell (CW_*): the same fields, narrower, which hold
 * nearly every cell of a program (a version up to 2,047, a slot up to
 * 1,023, bytes behind by at most one write or at the version itself),
 * and halve the shadow's memory and cache misses.  Any other word is
 * an escape (nmask 0xff, which no compact word has, since 0xff marks a
 * refined 64-bit word): for a refined cell, the index of its block of
 * byte words in the shadow's pool; for any other, the index of a 64-bit
 * word in the shadow's wide table, which the "wide" cell keeps from
 * then on.  cw_load(), cw_cas() and cw_store() read and replace a cell's
 * 64-bit word in any form; only the inline checks look at the 32-bit
 * form itself.
 */
#ifndef VALOR_CORE_VALOR_WORD_H
#define VALOR_CORE_VALOR_WORD_H

#include "shadow.h"

#include <stdbool.h>
#include <stdint.h>

#define VW_SLOT_SHIFT 8
#define VW_SLOT_MASK 0x7fffULL
#define VW_ACTIVE (1ULL << 23)
#define VW_GAP_SHIFT 24
#define VW_GAP_MAX 14U /* the furthest bytes behind can be */
#define VW_GAP_EVEN 15U /* bytes "behind" at the version itself */
#define VW_VER_SHIFT 28
#define VW_VER_MASK ((1ULL << 36) - 1)
#define VW_NMASK 0xffULL
#define VW_REFINED 0xffULL

/*
 * A whole cell the region of slot @slot owns, all its bytes current and
 * not refined: (w & VW_OWNED_MASK) == vw_owned_whole(slot).  The XOR of
 * several words with the latter, ORed and masked, tests them at once.
 */
#define VW_OWNED_MASK (VW_ACTIVE | VW_SLOT_MASK << VW_SLOT_SHIFT | VW_NMASK)

static inline uint64_t vw_owned_whole(uint32_t slot)
{
	return VW_ACTIVE | (uint64_t)slot << VW_SLOT_SHIFT;
}

struct byte_state {
	uint64_t ver;
	uint32_t slot;
	bool active;
};

static inline bool vw_refined(uint64_t w)
{
	return (w & VW_NMASK) == VW_REFINED;
}

static inline uint32_t vw_slot(uint64_t w)
{
	return (uint32_t)((w >> VW_SLOT_SHIFT) & VW_SLOT_MASK);
}

static inline uint64_t vw_ver(uint64_t w)
{
	return w >> VW_VER_SHIFT;
}

static inline unsigned vw_gap(uint64_t w)
{
	return (unsigned)(w >> VW_GAP_SHIFT) & 0xf;
}

static inline uint64_t vw_make(uint64_t ver, uint32_t slot, bool active,
			       uint8_t nmask, unsigned gap)
{
	return ((ver & VW_VER_MASK) << VW_VER_SHIFT) |
	       ((uint64_t)gap << VW_GAP_SHIFT) | (active ? VW_ACTIVE : 0) |
	       ((uint64_t)slot << VW_SLOT_SHIFT) | nmask;
}

/* The bytes behind in @w are exactly one write behind the rest. */
static inline bool vw_one_behind(uint64_t w)
{
	return vw_gap(w) == 1 || (vw_gap(w) == 0 && vw_ver(w) == 1);
}

/*
 * Region slot @me writes bytes @m of a cell no region owns, none of
 * whose bytes is behind: they lead at the next version, the rest (if
 * any) stays one behind (behind the first version: never written).
 */
static inline uint64_t vw_after_first_write(uint64_t w, uint32_t me, uint8_t m)
{
	uint64_t ver = vw_ver(w);

	return vw_make(ver + 1, me, true, ~m & 0xff, m != 0xff && ver ? 1 : 0);
}

/*
 * Bytes @m of a cell the writing region owns, whose bytes behind are
 * one write behind (vw_one_behind()), catch up: no new version.
 */
static inline uint64_t vw_after_catch_up(uint64_t w, uint8_t m)
{
	uint8_t left = w & VW_NMASK & ~m;

	return vw_make(vw_ver(w), vw_slot(w), true, left, left ? vw_gap(w) : 0);
}

static inline shadow_word *vw_block(uint64_t w)
{
	return (shadow_word *)(uintptr_t)(w >> 8);
}

/*
 * State of byte @b of a compact cell word or of a byte word.  A byte
 * behind (in nmask) has no recorded writer: slot 0 (valor.c says why
 * no verdict needs it).
 */
static inline struct byte_state vw_byte(uint64_t w, unsigned b)
{
	struct byte_state s = { vw_ver(w), vw_slot(w), !!(w & VW_ACTIVE) };

	if (w & (1U << b)) {
		unsigned gap = vw_gap(w);

		if (!gap)
			s.ver = 0;
		else if (gap != VW_GAP_EVEN)
			s.ver = (s.ver - gap) & VW_VER_MASK;
		s.slot = 0;
		s.active = false;
	}
	return s;
}

/* Current word of byte @b given its cell word @w (byte word if refined). */
static inline uint64_t byte_word(uint64_t w, unsigned b)
{
	if (vw_refined(w))
		return atomic_load_explicit(&vw_block(w)[b],
					    memory_order_acquire);
	return w;
}

/* --- the 32-bit form in the shadow */

#define CW_SLOT_SHIFT 8
#define CW_SLOT_MAX 1023U
#define CW_ACTIVE (1U << 18)
#define CW_GAP_SHIFT 19 /* 0: no gap, 1: one write behind, 2: VW_GAP_EVEN */
#define CW_VER_SHIFT 21
#define CW_VER_MAX 2047U
#define CW_NMASK 0xffU
#define CW_ESCAPE 0xffU /* nmask of a word that is no compact word */
#define CW_BLOCK (1U << 8) /* an escape to a block of byte words */
#define CW_INDEX_SHIFT 9
#define CW_OWNED_MASK (CW_ACTIVE | CW_SLOT_MAX << CW_SLOT_SHIFT | CW_NMASK)

_Static_assert(VW_SLOT_SHIFT == CW_SLOT_SHIFT && VW_NMASK == CW_NMASK,
	       "a compact word's low bits are its 64-bit word's");
_Static_assert(SHADOW_WIDE_BITS <= 32 - CW_INDEX_SHIFT &&
		       SHADOW_BLOCK_BITS <= 32 - CW_INDEX_SHIFT,
	       "an escape holds any index");

/*
 * Not a compact word: an escape, to the cell's wide word or (CW_BLOCK)
 * straight to the block of byte words of a refined cell.
 */
static inline bool cw_escaped(uint32_t c)
{
	return (c & CW_NMASK) == CW_ESCAPE;
}

static inline bool cw_wide(uint32_t c)
{
	return cw_escaped(c) && !(c & CW_BLOCK);
}

static inline uint32_t cw_index(uint32_t c)
{
	return c >> CW_INDEX_SHIFT;
}

/* A whole cell slot @slot's region owns, as vw_owned_whole(). */
static inline uint32_t cw_owned_whole(uint32_t slot)
{
	/* A slot past CW_SLOT_MAX never owns a compact word: no match. */
	return slot <= CW_SLOT_MAX ? CW_ACTIVE | slot << CW_SLOT_SHIFT : ~0U;
}

static inline uint32_t cw_slot(uint32_t c)
{
	return (c >> CW_SLOT_SHIFT) & CW_SLOT_MAX;
}

/* The 64-bit word of compact word @c (not wide). */
static inline uint64_t cw_expand(uint32_t c)
{
	uint32_t g = (c >> CW_GAP_SHIFT) & 3;

	/* Gap codes 0, 1, 2 are gaps 0, 1 and VW_GAP_EVEN (15). */
	return (uint64_t)(c & (CW_NMASK | CW_SLOT_MAX << CW_SLOT_SHIFT)) |
	       (c & CW_ACTIVE ? VW_ACTIVE : 0) |
	       (uint64_t)(g ^ ((g >> 1) * 13)) << VW_GAP_SHIFT |
	       (uint64_t)(c >> CW_VER_SHIFT) << VW_VER_SHIFT;
}

/* Whether 64-bit word @w has a compact form. */
static inline bool cw_fits(uint64_t w)
{
	unsigned gap = vw_gap(w);

	return !vw_refined(w) && vw_slot(w) <= CW_SLOT_MAX &&
	       vw_ver(w) <= CW_VER_MAX && (gap <= 1 || gap == VW_GAP_EVEN);
}

/* The compact form of @w, which cw_fits(). */
static inline uint32_t cw_compress(uint64_t w)
{
	unsigned gap = vw_gap(w);

	return (uint32_t)(w & (CW_NMASK | CW_SLOT_MAX << CW_SLOT_SHIFT)) |
	       (w & VW_ACTIVE ? CW_ACTIVE : 0) |
	       (gap == VW_GAP_EVEN ? 2U : gap) << CW_GAP_SHIFT |
	       (uint32_t)vw_ver(w) << CW_VER_SHIFT;
}

/*
 * Compact word @c, which no region owns and no byte of which is behind,
 * after slot @me's region writes it whole (vw_after_first_write()); 0
 * when that does not fit in a compact word.
 */
static inline uint32_t cw_after_whole_write(uint32_t c, uint32_t me)
{
	uint32_t ver = c >> CW_VER_SHIFT;

	if (ver >= CW_VER_MAX || me > CW_SLOT_MAX)
		return 0;
	return (ver + 1) << CW_VER_SHIFT | CW_ACTIVE | me << CW_SLOT_SHIFT;
}

/*
 * Two neighbouring compact words @two (the lower cell in the low half)
 * after slot @me's region writes both whole, or 0 unless both are
 * cw_after_whole_write()'s kind of word and their results fit.
 */
static inline uint64_t cw_pair_after_whole_write(uint64_t two, uint32_t me)
{
	uint32_t c0 = (uint32_t)two, c1 = (uint32_t)(two >> 32), n0, n1;

	if ((c0 | c1) & (CW_ACTIVE | CW_NMASK))
		return 0;
	n0 = cw_after_whole_write(c0, me);
	n1 = cw_after_whole_write(c1, me);
	if (!n0 || !n1)
		return 0;
	return n0 | (uint64_t)n1 << 32;
}

static inline shadow_word *cw_wide_word(struct shadow *s, uint32_t c)
{
	return &s->wide[cw_index(c)];
}

/* The refined 64-bit word of a block escape @c. */
static inline uint64_t cw_block_word(struct shadow *s, uint32_t c)
{
	shadow_word *blk = &s->blocks[(uint64_t)cw_index(c) * CELL_SIZE];

	return (uint64_t)(uintptr_t)blk << 8 | VW_REFINED;
}

/* The 64-bit word of a cell word @c that is not wide. */
static inline uint64_t cw_narrow_word(struct shadow *s, uint32_t c)
{
	return cw_escaped(c) ? cw_block_word(s, c) : cw_expand(c);
}

/* The 64-bit word of the cell at @p. */
static inline uint64_t cw_load(struct shadow *s, cell_word *p)
{
	uint32_t c = atomic_load_explicit(p, memory_order_acquire);

	if (__builtin_expect(cw_wide(c), 0))
		return atomic_load_explicit(cw_wide_word(s, c),
					    memory_order_acquire);
	return cw_narrow_word(s, c);
}

/* The cell's 64-bit word, or 0 where its leaf was never made. */
static inline uint64_t cw_peek_load(struct shadow *s, uint64_t cell)
{
	cell_word *p = shadow_cell_peek(s, cell);

	return p ? cw_load(s, p) : 0;
}

/* A new wide word holding @w, and the escape naming it (valor.c). */
uint32_t cw_widen(struct shadow *s, uint64_t w);

/*
 * The 32-bit word that stands for @w in a cell that is not wide: its
 * compact form, an escape to its block of byte words where the block
 * is one of the shadow's, else a new wide word.
 */
static inline uint32_t cw_encode(struct shadow *s, uint64_t w)
{
	if (cw_fits(w))
		return cw_compress(w);
	if (vw_refined(w) && shadow_block_owns(s, vw_block(w)))
		return (uint32_t)(shadow_block_index(s, vw_block(w))
				  << CW_INDEX_SHIFT) |
		       CW_BLOCK | CW_ESCAPE;
	return cw_widen(s, w);
}

/*
 * Compare-and-swap the 64-bit word of the cell at @p from *@w to @nw, as
 * atomic_compare_exchange_strong() would: false leaves the cell's word
 * in *@w.  A cell whose new state has no 32-bit form becomes wide.
 */
static inline bool cw_cas(struct shadow *s, cell_word *p, uint64_t *w,
			  uint64_t nw)
{
	uint32_t c = atomic_load_explicit(p, memory_order_acquire);
	uint64_t now;

	if (cw_wide(c))
		return atomic_compare_exchange_strong(cw_wide_word(s, c), w,
						      nw);
	now = cw_narrow_word(s, c);
	if (now != *w) {
		*w = now;
		return false;
	}
	if (atomic_compare_exchange_strong(p, &c, cw_encode(s, nw)))
		return true;
	*w = cw_load(s, p);
	return false;
}

/*
 * Store @w as the word of the cell at @p, where no other thread replaces
 * it meanwhile (a release walk, a new leaf's cell).
 */
static inline void cw_store(struct shadow *s, cell_word *p, uint64_t w)
{
	uint32_t c = atomic_load_explicit(p, memory_order_relaxed);

	if (cw_wide(c))
		atomic_store_explicit(cw_wide_word(s, c), w,
				      memory_order_release);
	else
		atomic_store_explicit(p, cw_encode(s, w), memory_order_release);
}

#endif /* VALOR_CORE_VALOR_WORD_H */
