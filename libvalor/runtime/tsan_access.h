/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The check every access entry point inlines (tsan_access.c, and the
 * range and vtable entry points of tsan_abi.c), and the out-of-line
 * paths it calls, which tsan_abi.c defines.
 *
 * The fixed-size entry points are built without a frame pointer: the
 * check then needs no frame, and saves three instructions on every
 * access.  The out-of-line paths keep theirs, so a report's walk up
 * the frame pointers still finds the program's frames; it passes
 * straight from an out-of-line path to the caller of the function that
 * made the access, which the walk recognizes by the return address into
 * the entry points' section (VALOR_ACCESS_SECTION).
 *
 * That section holds the code that runs without the busy guard: the
 * entry points and FastRCD's and FastTrack's in-place step (on_hb_cell).
 * A signal handler that interrupts it runs unanalysed
 * (intercept_signal.c).
 */
#ifndef VALOR_RUNTIME_TSAN_ACCESS_H
#define VALOR_RUNTIME_TSAN_ACCESS_H

#include "rt.h"
#include "hb_fast.h"
#include "valor_fast.h"

#define SITE() ((uintptr_t)__builtin_return_address(0) - 1)
/*
 * The site an out-of-line path is given: @site, or for 0 (what the
 * fixed-size entry points pass) the return address of the function the
 * check is inlined into, loaded only on the way out: a hit never needs
 * it.
 */
#define SITE_OR_CALLER(site) ((site) ? (site) : SITE())

/*
 * The section of the code above (rt_pc_in_access_code(): the report's
 * frame walk and the signal wrapper look for it).
 */
#define VALOR_ACCESS_SECTION valor_access_text
#define VALOR_ACCESS_SECTION_NAME "valor_access_text"

/* rt.ctx's shadow table: a global, so the fast path need not load it. */
extern RT_HIDDEN shadow_word *_Atomic *rt_shadow_top;
/* FastRCD or FastTrack: hb_fast.h's check before the engine's. */
extern RT_HIDDEN bool rt_hb;

RT_HIDDEN __attribute__((noinline)) void
on_access_slow(uintptr_t addr, size_t size, uintptr_t site,
	       enum valor_fast_action a, cell_word *p, uint64_t w);
RT_HIDDEN __attribute__((noinline)) void
on_read_first(uintptr_t addr, uint8_t m, uintptr_t site, uint64_t w);
/* A loop nest's dimension (pass_abi.h): @count blocks, @stride apart. */
struct nest_dim {
	intptr_t stride;
	size_t count;
};

/*
 * The block of a nest at indices @idx, one per dimension of @d; the
 * last block (each index at its count - 1) when @idx is NULL.
 */
static inline uintptr_t nest_block_at(uintptr_t base, const struct nest_dim *d,
				      unsigned n, const size_t *idx)
{
	for (unsigned k = 0; k < n; k++)
		base += (uintptr_t)d[k].stride *
			(idx ? idx[k] : d[k].count - 1);
	return base;
}

/*
 * Whether a nest's blocks of @extent bytes (strides positive, counts
 * nonzero) fill at least half of the bytes from the first to the end
 * of the last.
 */
static inline bool nest_is_close(size_t extent, const struct nest_dim *d,
				 unsigned n)
{
	size_t blocks = 1, hull = extent;

	for (unsigned k = 0; k < n; k++) {
		blocks *= d[k].count;
		hull += (size_t)d[k].stride * (d[k].count - 1);
	}
	return blocks * extent * 2 >= hull;
}

/* Step @idx to the next block, innermost first; false after the last. */
static inline bool nest_block_next(const struct nest_dim *d, unsigned n,
				   size_t *idx)
{
	unsigned i = 0;

	while (i < n && ++idx[i] == d[i].count)
		idx[i++] = 0;
	return i < n;
}

RT_HIDDEN __attribute__((noinline)) void
on_nest_walk(uintptr_t base, size_t extent, const struct nest_dim *d,
	     unsigned n, bool is_write, uintptr_t site);
RT_HIDDEN __attribute__((noinline)) void
on_access_full(uintptr_t addr, size_t size, bool is_write, uintptr_t site);
RT_HIDDEN __attribute__((noinline)) void on_hb_cell(struct hb_cell *c,
						    uintptr_t addr, size_t size,
						    bool is_write,
						    uintptr_t site);

/*
 * How the inline check calls its out-of-line paths.  In the runtime's
 * entry points, with the site the check knows (SITE_OR_CALLER()).  The
 * same check inlined into the program by the LLVM pass (pass_abi.h)
 * cannot name its own pc, so there it calls the pass's entry points,
 * which take their return address, in the program, as the site.
 */
#ifndef VALOR_CHECK_IN_PROGRAM
#define CALL_READ_FIRST(addr, m, site, w) \
	on_read_first(addr, m, SITE_OR_CALLER(site), w)
#define CALL_ACCESS_SLOW(addr, size, site, a, p, w) \
	on_access_slow(addr, size, SITE_OR_CALLER(site), a, p, w)
#endif

static inline __attribute__((always_inline)) void
on_access_hb(struct valor_thread *th, uintptr_t addr, size_t size,
	     bool is_write, uintptr_t site)
{
	struct hb_cell *c = NULL;

	switch (hb_fast_check(th, rt_shadow_top, addr, size, is_write, &c)) {
	case HB_FAST_SEEN:
		return;
	case HB_FAST_CELL:
		on_hb_cell(c, addr, size, is_write, SITE_OR_CALLER(site));
		return;
	default:
		on_access_full(addr, size, is_write, SITE_OR_CALLER(site));
	}
}

/*
 * Valor's common accesses are done here, inline (valor_fast.h): a write
 * the region owns already, a read the log holds already.  Only the rest
 * pays for a call.
 */
static inline __attribute__((always_inline)) void
on_access_fast(struct valor_thread *th, uintptr_t addr, size_t size,
	       bool is_write, uintptr_t site)
{
	enum valor_fast_action a;
	cell_word *p = NULL;
	uint64_t w = 0;

	a = valor_o_fast_check(th, rt_shadow_top, addr, size, is_write, false,
			       &p, &w);
	if (likely(a == VALOR_FAST_DONE))
		return;
	/* The bytes the check looked at (it computes the same mask). */
	if (a == VALOR_FAST_LOG)
		CALL_READ_FIRST(addr,
				(uint8_t)(((1U << size) - 1)
					  << (addr & (CELL_SIZE - 1))),
				site, w);
	else
		CALL_ACCESS_SLOW(addr, size, site, a, p, w);
}

/*
 * A thread not on Valor's fast path: FastRCD, FastTrack, a thread not
 * analysed yet.  The runtime's entry points check it here; the check
 * the pass inlines calls the ABI entry point of the access instead.
 */
static inline __attribute__((always_inline)) void
on_access_other(struct valor_thread *th, const volatile void *addr, size_t size,
		bool is_write, uintptr_t site)
{
	if (rt_hb && size == 16 && !((uintptr_t)addr & (CELL_SIZE - 1))) {
		/* Two cells, two looks (as for Valor, below). */
		on_access_hb(th, (uintptr_t)addr, 8, is_write, site);
		on_access_hb(th, (uintptr_t)addr + 8, 8, is_write, site);
	} else if (rt_hb) {
		on_access_hb(th, (uintptr_t)addr, size, is_write, site);
	} else {
		on_access_full((uintptr_t)addr, size, is_write,
			       SITE_OR_CALLER(site));
	}
}

#ifndef VALOR_CHECK_IN_PROGRAM
#define CALL_OTHER_MODE(th, addr, size, is_write, site) \
	on_access_other(th, addr, size, is_write, site)
#define COUNT_ALONE(th) ((th)->st.accesses_alone++)
#endif

static inline __attribute__((always_inline)) void
on_access(const volatile void *addr, size_t size, bool is_write, uintptr_t site)
{
	/* NULL unless the thread runs analysed and is not busy (rt.h). */
	struct valor_thread *th = rt_cur_vt;

	if (unlikely(!th))
		return;
	if (unlikely(th->mode != THREAD_FAST)) {
		if (th->mode == THREAD_ALONE)
			COUNT_ALONE(th);
		else
			CALL_OTHER_MODE(th, addr, size, is_write, site);
		return;
	}
	/*
	 * An aligned 16-byte value (a complex double, a pair) is two cells:
	 * two looks, where the check of one access would send it to the
	 * full path.  The first half's slow path may end a region (a full
	 * write set), after which the thread may run alone: look again.
	 */
	if (size == 16 && !((uintptr_t)addr & (CELL_SIZE - 1))) {
		on_access_fast(th, (uintptr_t)addr, 8, is_write, site);
		if (likely(th->mode == THREAD_FAST))
			on_access_fast(th, (uintptr_t)addr + 8, 8, is_write,
				       site);
		return;
	}
	on_access_fast(th, (uintptr_t)addr, size, is_write, site);
}

#endif /* VALOR_RUNTIME_TSAN_ACCESS_H */
