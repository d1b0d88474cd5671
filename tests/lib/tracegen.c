// SPDX-License-Identifier: GPL-2.0
/* Random multi-threaded event traces (see tracegen.h for their shape). */
#include "tracegen.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define MAX_TIDS 8 /* trace thread ids 0..7 */
#define SECOND_ROOT 7 /* a root thread that thread 0 did not create */
#define MAX_MUTEXES 3
#define RO_START 40 /* [40, 48): written only before any create */

uint64_t tracegen_next(struct tracegen_rng *r)
{
	uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint32_t tracegen_below(struct tracegen_rng *r, uint32_t n)
{
	return (uint32_t)(((tracegen_next(r) >> 32) * n) >> 32);
}

int tracegen_chance(struct tracegen_rng *r, uint32_t num, uint32_t den)
{
	return tracegen_below(r, den) < num;
}

uint64_t tracegen_seed(uint64_t base, uint64_t index)
{
	struct tracegen_rng r = { base ^ (index * 0xd1342543de82ef95ULL) };

	tracegen_next(&r);
	return tracegen_next(&r);
}

enum thread_state { UNUSED, LIVE, EXITED, JOINED };

struct gen {
	struct tracegen_rng rng;
	struct valor_event *ev;
	size_t n;
	size_t len;

	enum thread_state state[MAX_TIDS];
	uint32_t joined_by[MAX_TIDS];
	uint32_t held[MAX_TIDS]; /* mutexes held, a bit per mutex */
	int holder[MAX_MUTEXES]; /* tid, or -1 */
	uint32_t nmutexes;
	uint32_t natomics;
	/* Mutex i guards shared bytes [bound[i], bound[i + 1]). */
	uint32_t bound[MAX_MUTEXES + 1];

	uint32_t max_live;
	uint32_t max_creates;
	uint32_t creates;
	bool created_any; /* thread 0 is no longer alone */

	bool sloppy_trace;
	size_t sloppy_from;
	uint32_t sloppy_per_mille;
	size_t second_root_at; /* SIZE_MAX: no second root */

	uint32_t cur;
};

static uint32_t rnd(struct gen *g, uint32_t n)
{
	return tracegen_below(&g->rng, n);
}

static bool chance(struct gen *g, uint32_t num, uint32_t den)
{
	return tracegen_chance(&g->rng, num, den);
}

/* Whether this step breaks the discipline (sloppy traces only). */
static bool sloppy(struct gen *g)
{
	return g->sloppy_trace && g->n >= g->sloppy_from &&
	       chance(g, g->sloppy_per_mille, 1000);
}

static void emit(struct gen *g, struct valor_event e)
{
	g->ev[g->n++] = e;
}

static struct valor_event event(uint16_t kind, uint32_t tid)
{
	return (struct valor_event){ .kind = kind, .tid = tid };
}

/*
 * A random range inside [lo, hi): the usual sizes, odd ones, a few
 * cells at once (a struct copy, a loop's reads checked as one range),
 * and offsets that are aligned, misaligned or cross cells.
 */
static void pick_range(struct gen *g, uint32_t lo, uint32_t hi, uint32_t *off,
		       uint32_t *size)
{
	static const uint32_t sizes[] = { 1,  1, 2, 4, 4,  8, 8,
					  16, 3, 5, 7, 24, 40 };
	uint32_t s, o;

	do
		s = sizes[rnd(g, sizeof(sizes) / sizeof(sizes[0]))];
	while (s > hi - lo);
	o = lo + rnd(g, hi - lo - s + 1);
	if (chance(g, 1, 2)) {
		uint32_t align = s >= 8 ? 8 : (s & (s - 1)) ? 1 : s;
		uint32_t down = o / align * align;

		if (down >= lo)
			o = down;
	}
	*off = o;
	*size = s;
}

static uint32_t live_count(struct gen *g)
{
	uint32_t k = 0;

	for (uint32_t t = 0; t < MAX_TIDS; t++)
		k += g->state[t] == LIVE;
	return k;
}

static uint32_t pick_thread(struct gen *g)
{
	uint32_t live[MAX_TIDS], k = 0;

	if (g->n == g->second_root_at)
		g->state[SECOND_ROOT] = LIVE;
	if (g->state[g->cur] == LIVE && chance(g, 3, 4))
		return g->cur;
	for (uint32_t t = 0; t < MAX_TIDS; t++)
		if (g->state[t] == LIVE)
			live[k++] = t;
	return live[rnd(g, k)];
}

/* A thread id @c may create now, or -1. */
static int child_tid(struct gen *g, uint32_t c)
{
	uint32_t fresh[MAX_TIDS], reuse[MAX_TIDS], nf = 0, nr = 0;

	for (uint32_t t = 1; t < SECOND_ROOT; t++) {
		if (g->state[t] == UNUSED)
			fresh[nf++] = t;
		/*
		 * Disciplined reuse: the joiner creates, so everything the
		 * previous owner did happens before the new thread.
		 */
		else if (g->state[t] == JOINED &&
			 (g->joined_by[t] == c || sloppy(g)))
			reuse[nr++] = t;
	}
	if (nr && (!nf || chance(g, 1, 3)))
		return (int)reuse[rnd(g, nr)];
	if (nf)
		return (int)fresh[rnd(g, nf)];
	return -1;
}

static int exited_tid(struct gen *g)
{
	uint32_t v[MAX_TIDS], k = 0;

	for (uint32_t t = 0; t < MAX_TIDS; t++)
		if (g->state[t] == EXITED)
			v[k++] = t;
	return k ? (int)v[rnd(g, k)] : -1;
}

static int free_mutex(struct gen *g)
{
	uint32_t v[MAX_MUTEXES], k = 0;

	for (uint32_t i = 0; i < g->nmutexes; i++)
		if (g->holder[i] < 0)
			v[k++] = i;
	return k ? (int)v[rnd(g, k)] : -1;
}

static int held_mutex(struct gen *g, uint32_t c)
{
	uint32_t v[MAX_MUTEXES], k = 0;

	for (uint32_t i = 0; i < g->nmutexes; i++)
		if (g->held[c] & (1U << i))
			v[k++] = i;
	return k ? (int)v[rnd(g, k)] : -1;
}

static uint64_t mutex_addr(uint32_t i)
{
	return TRACEGEN_MUTEX_BASE + i * 0x40;
}

static uint64_t private_addr(uint32_t tid)
{
	return TRACEGEN_PRIVATE_BASE + tid * TRACEGEN_PRIVATE_STRIDE;
}

/* Whether thread @c may touch any shared byte without a lock. */
static bool alone(struct gen *g, uint32_t c)
{
	return c == 0 && !g->created_any;
}

/*
 * A strided access within [lo, hi) (valor_access_strided()): two or more
 * elements of 1-8 bytes, 0-16 bytes apart beyond their size.  Half are
 * 8 bytes every 16 from a cell boundary, the red-black sweep that Valor
 * takes as runs of every other cell.  False if no two elements fit.
 */
static bool pick_strided(struct gen *g, uint32_t lo, uint32_t hi, uint32_t *off,
			 uint32_t *size, uint64_t *arg)
{
	static const uint32_t sizes[] = { 1, 2, 4, 8 };
	uint32_t s, stride, most, count, span, o;
	bool sweep = chance(g, 1, 2);

	s = sweep ? 8 : sizes[rnd(g, sizeof(sizes) / sizeof(sizes[0]))];
	stride = sweep ? 16 : s + rnd(g, 17);
	if (hi - lo < stride + s)
		return false;
	most = (hi - lo - s) / stride + 1;
	count = 2 + rnd(g, most - 1);
	span = (count - 1) * stride + s;
	o = lo + rnd(g, hi - lo - span + 1);
	if (sweep && o / 8 * 8 >= lo)
		o = o / 8 * 8;
	*off = o;
	*size = s;
	*arg = VALOR_ACCESS_STRIDED(stride, count);
	return true;
}

static void do_access(struct gen *g, uint32_t c, uint64_t base, uint32_t lo,
		      uint32_t hi, bool is_write)
{
	struct valor_event e = event(VALOR_EV_ACCESS, c);
	uint32_t off, size;
	uint64_t arg;

	e.flags = is_write ? VALOR_EVF_WRITE : 0;
	if (chance(g, 1, 10) && pick_strided(g, lo, hi, &off, &size, &arg)) {
		e.flags |= VALOR_EVF_STRIDED;
		e.arg = arg;
	} else
		pick_range(g, lo, hi, &off, &size);
	e.addr = base + off;
	e.size = size;
	emit(g, e);
}

static void do_free(struct gen *g, uint32_t c, uint64_t base, uint32_t lo,
		    uint32_t hi)
{
	struct valor_event e =
		event(chance(g, 1, 8) ? VALOR_EV_MUNMAP : VALOR_EV_FREE, c);
	uint32_t off, size;

	pick_range(g, lo, hi, &off, &size);
	e.addr = base + off;
	e.arg = size;
	emit(g, e);
}

static uint32_t random_used_tid(struct gen *g)
{
	uint32_t v[MAX_TIDS], k = 0;

	for (uint32_t t = 0; t < MAX_TIDS; t++)
		if (g->state[t] != UNUSED)
			v[k++] = t;
	return v[rnd(g, k)];
}

/*
 * A sweep of whole cells within [lo, hi) of the sweep area: every cell
 * (a strided access of 8 bytes every 8) or every other one (every 16),
 * from a cell boundary.  Else, or if no two cells fit, an access as
 * do_access() makes them (another thread's write into a swept stretch).
 */
static void do_sweep(struct gen *g, uint32_t c, uint32_t lo, uint32_t hi,
		     bool is_write)
{
	struct valor_event e = event(VALOR_EV_ACCESS, c);
	uint32_t first = (lo + 7) / 8, end = hi / 8, stride, count, most;

	stride = chance(g, 1, 2) ? 8 : 16;
	if (chance(g, 1, 3) || end <= first ||
	    (most = (end - first - 1) / (stride / 8) + 1) < 2) {
		do_access(g, c, TRACEGEN_SWEEP_BASE, lo, hi, is_write);
		return;
	}
	count = 2 + rnd(g, most - 1);
	first += rnd(g, end - first - ((count - 1) * (stride / 8) + 1) + 1);
	e.flags = VALOR_EVF_STRIDED | (is_write ? VALOR_EVF_WRITE : 0);
	e.addr = TRACEGEN_SWEEP_BASE + 8 * (uint64_t)first;
	e.size = 8;
	e.arg = VALOR_ACCESS_STRIDED(stride, count);
	emit(g, e);
}

/* An access of [lo, hi) of the shared area, or of its sweep twin. */
static void shared_or_sweep(struct gen *g, uint32_t c, uint32_t lo, uint32_t hi,
			    bool is_write)
{
	if (chance(g, 1, 6))
		do_sweep(g, c, lo * TRACEGEN_SWEEP_SCALE,
			 hi * TRACEGEN_SWEEP_SCALE, is_write);
	else
		do_access(g, c, TRACEGEN_SHARED_BASE, lo, hi, is_write);
}

static void shared_access(struct gen *g, uint32_t c)
{
	bool is_write = chance(g, 1, 2);
	int m;

	if (sloppy(g) || alone(g, c)) {
		shared_or_sweep(g, c, 0, TRACEGEN_SHARED_SIZE, is_write);
		return;
	}
	m = held_mutex(g, c);
	if (m >= 0)
		shared_or_sweep(g, c, g->bound[m], g->bound[m + 1], is_write);
	else if (c != SECOND_ROOT)
		shared_or_sweep(g, c, RO_START, TRACEGEN_SHARED_SIZE, false);
	else
		do_access(g, c, private_addr(c), 0, TRACEGEN_PRIVATE_SIZE,
			  is_write);
}

static void private_access(struct gen *g, uint32_t c)
{
	uint32_t owner = sloppy(g) ? random_used_tid(g) : c;

	do_access(g, c, private_addr(owner), 0, TRACEGEN_PRIVATE_SIZE,
		  chance(g, 1, 2));
}

static void free_range(struct gen *g, uint32_t c)
{
	int m;

	if (sloppy(g)) {
		if (chance(g, 3, 4))
			do_free(g, c, TRACEGEN_SHARED_BASE, 0,
				TRACEGEN_SHARED_SIZE);
		else
			do_free(g, c, private_addr(random_used_tid(g)), 0,
				TRACEGEN_PRIVATE_SIZE);
		return;
	}
	if (alone(g, c)) {
		do_free(g, c, TRACEGEN_SHARED_BASE, 0, TRACEGEN_SHARED_SIZE);
		return;
	}
	m = held_mutex(g, c);
	if (m >= 0)
		do_free(g, c, TRACEGEN_SHARED_BASE, g->bound[m],
			g->bound[m + 1]);
	else
		do_free(g, c, private_addr(c), 0, TRACEGEN_PRIVATE_SIZE);
}

enum action {
	A_CREATE,
	A_EXIT,
	A_JOIN,
	A_ACQUIRE,
	A_RELEASE,
	A_ATOMIC,
	A_SHARED,
	A_PRIVATE,
	A_FREE,
	A_REGION_END,
	A_VALIDATE,
	A_COUNT
};

static enum action pick_action(struct gen *g, uint32_t c)
{
	uint32_t w[A_COUNT] = { 0 }, total = 0, r;
	bool late = g->n > g->len / 2;

	if (live_count(g) < g->max_live && g->creates < g->max_creates)
		w[A_CREATE] = c == 0 ? 8 : 3;
	if (c != 0 && !g->held[c])
		w[A_EXIT] = late ? 3 : 1;
	if (exited_tid(g) >= 0)
		w[A_JOIN] = 6;
	if (free_mutex(g) >= 0 && __builtin_popcount(g->held[c]) < 2)
		w[A_ACQUIRE] = 6;
	if (g->held[c])
		w[A_RELEASE] = 8;
	if (g->natomics)
		w[A_ATOMIC] = 2;
	w[A_SHARED] = 20;
	w[A_PRIVATE] = 6;
	w[A_FREE] = 2;
	w[A_REGION_END] = 1;
	w[A_VALIDATE] = 1;

	for (int a = 0; a < A_COUNT; a++)
		total += w[a];
	r = rnd(g, total);
	for (int a = 0; a < A_COUNT; a++) {
		if (r < w[a])
			return (enum action)a;
		r -= w[a];
	}
	return A_SHARED;
}

static void step(struct gen *g)
{
	uint32_t c = pick_thread(g);
	struct valor_event e;
	int x;

	g->cur = c;
	switch (pick_action(g, c)) {
	case A_CREATE:
		x = child_tid(g, c);
		if (x < 0)
			break;
		e = event(VALOR_EV_THREAD_CREATE, c);
		e.arg = (uint64_t)x;
		emit(g, e);
		g->state[x] = LIVE;
		g->held[x] = 0;
		g->creates++;
		g->created_any = true;
		return;
	case A_EXIT:
		emit(g, event(VALOR_EV_THREAD_EXIT, c));
		g->state[c] = EXITED;
		return;
	case A_JOIN:
		x = exited_tid(g);
		e = event(VALOR_EV_THREAD_JOIN, c);
		e.arg = (uint64_t)x;
		emit(g, e);
		g->state[x] = JOINED;
		g->joined_by[x] = c;
		return;
	case A_ACQUIRE:
		x = free_mutex(g);
		e = event(VALOR_EV_ACQUIRE, c);
		e.addr = mutex_addr((uint32_t)x);
		emit(g, e);
		g->holder[x] = (int)c;
		g->held[c] |= 1U << x;
		return;
	case A_RELEASE:
		x = held_mutex(g, c);
		e = event(VALOR_EV_RELEASE, c);
		e.addr = mutex_addr((uint32_t)x);
		emit(g, e);
		g->holder[x] = -1;
		g->held[c] &= ~(1U << x);
		return;
	case A_ATOMIC:
		e = event(chance(g, 1, 2) ? VALOR_EV_ACQUIRE : VALOR_EV_RELEASE,
			  c);
		e.addr = TRACEGEN_ATOMIC_BASE + 8 * rnd(g, g->natomics);
		e.flags = VALOR_EVF_ATOMIC;
		emit(g, e);
		return;
	case A_SHARED:
		shared_access(g, c);
		return;
	case A_PRIVATE:
		break;
	case A_FREE:
		free_range(g, c);
		return;
	case A_REGION_END:
		emit(g, event(VALOR_EV_REGION_END, c));
		return;
	case A_VALIDATE:
		emit(g, event(VALOR_EV_VALIDATE, c));
		return;
	case A_COUNT:
		break;
	}
	private_access(g, c);
}

size_t tracegen_make(uint64_t seed, struct valor_event *ev,
		     struct tracegen_info *info)
{
	struct gen g = { .rng = { seed }, .ev = ev };

	g.len = 20 + rnd(&g, TRACEGEN_MAX_EVENTS - 20 + 1);
	g.nmutexes = 1 + rnd(&g, MAX_MUTEXES);
	g.natomics = rnd(&g, 3);
	g.max_live = 3 + rnd(&g, 4);
	g.max_creates = g.max_live - 1 + rnd(&g, 3);
	for (uint32_t i = 0; i < MAX_MUTEXES; i++)
		g.holder[i] = -1;

	/* Guarded parts meet at random bytes, usually inside a cell. */
	g.bound[0] = 0;
	g.bound[g.nmutexes] = RO_START;
	for (uint32_t i = 1; i < g.nmutexes; i++) {
		uint32_t b;
		bool taken;

		do {
			b = 1 + rnd(&g, RO_START - 1);
			taken = false;
			for (uint32_t j = 1; j < i; j++)
				taken |= g.bound[j] == b;
		} while (taken);
		g.bound[i] = b;
	}
	for (uint32_t i = 1; i < g.nmutexes; i++)
		for (uint32_t j = i + 1; j < g.nmutexes; j++)
			if (g.bound[j] < g.bound[i]) {
				uint32_t t = g.bound[i];

				g.bound[i] = g.bound[j];
				g.bound[j] = t;
			}

	g.sloppy_trace = chance(&g, 3, 5);
	g.sloppy_from = rnd(&g, (uint32_t)(g.len * 3 / 4));
	g.sloppy_per_mille = 100 + rnd(&g, 500);
	g.second_root_at = SIZE_MAX;
	if (g.sloppy_trace && chance(&g, 1, 8))
		g.second_root_at = g.sloppy_from;

	g.state[0] = LIVE;
	while (g.n < g.len)
		step(&g);
	if (info) {
		info->sloppy = g.sloppy_trace;
		info->sloppy_from = g.sloppy_trace ? g.sloppy_from : g.n;
	}
	return g.n;
}

static void print_sync(const struct valor_event *e, const char *macro,
		       const char *kind)
{
	if (e->flags & VALOR_EVF_ATOMIC)
		printf("T_EV(%s, %u, .addr = 0x%llx, "
		       ".flags = VALOR_EVF_ATOMIC),",
		       kind, e->tid, (unsigned long long)e->addr);
	else
		printf("%s(%u, 0x%llx),", macro, e->tid,
		       (unsigned long long)e->addr);
}

void tracegen_print(const struct valor_event *ev, size_t n, size_t mark)
{
	for (size_t i = 0; i < n; i++) {
		const struct valor_event *e = &ev[i];
		unsigned long long addr = e->addr, arg = e->arg;

		printf("#   /* %3zu */ ", i);
		switch (e->kind) {
		case VALOR_EV_THREAD_CREATE:
			printf("T_CREATE(%u, %llu),", e->tid, arg);
			break;
		case VALOR_EV_THREAD_EXIT:
			printf("T_EXIT(%u),", e->tid);
			break;
		case VALOR_EV_THREAD_JOIN:
			printf("T_JOIN(%u, %llu),", e->tid, arg);
			break;
		case VALOR_EV_ACQUIRE:
			print_sync(e, "T_ACQ", "VALOR_EV_ACQUIRE");
			break;
		case VALOR_EV_RELEASE:
			print_sync(e, "T_REL", "VALOR_EV_RELEASE");
			break;
		case VALOR_EV_ACCESS:
			if (e->flags & VALOR_EVF_STRIDED) {
				printf("%s(%u, 0x%llx, %u, %u, %u),",
				       e->flags & VALOR_EVF_WRITE ? "T_WRS" :
								    "T_RDS",
				       e->tid, addr, e->size,
				       VALOR_ACCESS_STRIDE(arg),
				       VALOR_ACCESS_COUNT(arg));
				break;
			}
			printf("%s(%u, 0x%llx, %u),",
			       e->flags & VALOR_EVF_WRITE ? "T_WR" : "T_RD",
			       e->tid, addr, e->size);
			break;
		case VALOR_EV_FREE:
			printf("T_FREE(%u, 0x%llx, %llu),", e->tid, addr, arg);
			break;
		case VALOR_EV_MUNMAP:
			printf("T_EV(VALOR_EV_MUNMAP, %u, .addr = 0x%llx, "
			       ".arg = %llu),",
			       e->tid, addr, arg);
			break;
		case VALOR_EV_REGION_END:
			printf("T_END(%u),", e->tid);
			break;
		case VALOR_EV_VALIDATE:
			printf("T_VALIDATE(%u),", e->tid);
			break;
		default:
			printf("T_EV(%u, %u, .addr = 0x%llx, .size = %u, "
			       ".arg = %llu, .flags = 0x%x),",
			       e->kind, e->tid, addr, e->size, arg, e->flags);
			break;
		}
		printf("%s\n", i == mark ? " /* <-- first conflict */" : "");
	}
}
