/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The Valor-O cell word (valor.c explains the format), shared by the
 * engine and the runtime's inline fast path (valor_fast.h).
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

#endif /* VALOR_CORE_VALOR_WORD_H */
