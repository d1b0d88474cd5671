// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Stack capture and the stack depot.
 *
 * Capture walks frame pointers (programs are built with
 * -fno-omit-frame-pointer, and so is the runtime): on x86-64 and arm64 a
 * frame pointer points at {caller's frame pointer, return address}.  The
 * walk stays inside the calling thread's stack, so a frame without a
 * frame pointer (glibc's start_thread) ends it instead of crashing it.
 *
 * The depot hash-conses stacks: an allocation site captured a million
 * times is stored once.  It is lock-free: entries are appended to one
 * mmap'd arena (MAP_NORESERVE, only used pages cost memory) with an
 * atomic bump, and pushed on a bucket's chain with a compare-and-swap;
 * an id is the entry's offset in the arena / 8.  Entries are never
 * removed.  No malloc, no lock: capture may run inside the allocator's
 * interceptor and in the child of fork().
 */
#include "stackdepot.h"
#include "rt.h"

#include <sched.h>
#include <string.h>
#include <sys/mman.h>

/* The main thread's stack top (ld.so), for before rt_cur has bounds. */
extern void *__libc_stack_end;

#define DEPOT_ARENA_SIZE (256UL << 20)
#define DEPOT_BUCKETS (1U << 18)
/* A main-thread frame pointer this far below __libc_stack_end is not one. */
#define MAIN_STACK_GUESS (256UL << 20)

struct depot_entry {
	uint32_t next; /* id of the next entry in the bucket, 0 at the end */
	uint32_t n;
	uint64_t hash;
	uintptr_t pc[];
};

static atomic_int depot_state; /* 0 none, 1 starting, 2 ready, 3 failed */
static char *arena;
static atomic_size_t arena_used;
static _Atomic uint32_t *buckets;

static bool depot_ready(void)
{
	int s = atomic_load_explicit(&depot_state, memory_order_acquire);

	if (likely(s == 2))
		return true;
	if (s != 0)
		return false; /* failed, or starting elsewhere: no stack */
	if (!atomic_compare_exchange_strong(&depot_state, &s, 1))
		return false;
	arena = mmap(NULL, DEPOT_ARENA_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	buckets = mmap(NULL, DEPOT_BUCKETS * sizeof(*buckets),
		       PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (arena == MAP_FAILED || buckets == MAP_FAILED) {
		atomic_store(&depot_state, 3);
		return false;
	}
	/* Offset 0 would be id 0, "no stack". */
	atomic_store(&arena_used, 16);
	atomic_store_explicit(&depot_state, 2, memory_order_release);
	return true;
}

static uint64_t stack_hash(const uintptr_t *pc, unsigned n)
{
	uint64_t h = 0x9E3779B97F4A7C15ULL * (n + 1);

	for (unsigned i = 0; i < n; i++) {
		h ^= pc[i];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
	}
	return h;
}

static struct depot_entry *entry_of(uint32_t id)
{
	return (struct depot_entry *)(arena + (size_t)id * 8);
}

/* An entry equal to (@pc, @n) on the chain from @id, or 0. */
static uint32_t chain_find(uint32_t id, uint64_t hash, const uintptr_t *pc,
			   unsigned n)
{
	for (; id; id = entry_of(id)->next) {
		const struct depot_entry *e = entry_of(id);

		if (e->hash == hash && e->n == n &&
		    !memcmp(e->pc, pc, n * sizeof(*pc)))
			return id;
	}
	return 0;
}

static uint32_t depot_put(const uintptr_t *pc, unsigned n)
{
	uint64_t hash = stack_hash(pc, n);
	_Atomic uint32_t *bucket = &buckets[hash & (DEPOT_BUCKETS - 1)];
	uint32_t head = atomic_load_explicit(bucket, memory_order_acquire);
	uint32_t id = chain_find(head, hash, pc, n), old;
	size_t size = sizeof(struct depot_entry) + n * sizeof(*pc), off;
	struct depot_entry *e;

	if (id)
		return id;
	off = atomic_fetch_add(&arena_used, size);
	if (off + size > DEPOT_ARENA_SIZE)
		return 0; /* full: new stacks are no longer kept */
	id = (uint32_t)(off / 8);
	e = entry_of(id);
	e->n = n;
	e->hash = hash;
	memcpy(e->pc, pc, n * sizeof(*pc));
	for (;;) {
		e->next = head;
		old = head;
		if (atomic_compare_exchange_weak_explicit(bucket, &head, id,
							  memory_order_release,
							  memory_order_acquire))
			return id;
		/*
		 * Another thread pushed first, maybe this very stack: look
		 * at what it added (our entry is then wasted, rarely).
		 */
		for (uint32_t i = head; i && i != old; i = entry_of(i)->next) {
			const struct depot_entry *o = entry_of(i);

			if (o->hash == hash && o->n == n &&
			    !memcmp(o->pc, pc, n * sizeof(*pc)))
				return i;
		}
	}
}

const uintptr_t *rt_stack_get(uint32_t id, unsigned *n)
{
	const struct depot_entry *e;

	*n = 0;
	if (!id ||
	    atomic_load_explicit(&depot_state, memory_order_acquire) != 2 ||
	    (size_t)id * 8 >= atomic_load(&arena_used))
		return NULL;
	e = entry_of(id);
	*n = e->n;
	return e->pc;
}

/* ---- unwinding ---- */

/* The part of the calling thread's stack a walk from @fp may read. */
static void walk_bounds(uintptr_t fp, uintptr_t *lo, uintptr_t *hi)
{
	struct rt_thread *t = rt_cur;
	uintptr_t end = (uintptr_t)__libc_stack_end;

	*lo = fp;
	if (t && t->stack_hi > t->stack_lo && fp >= t->stack_lo &&
	    fp < t->stack_hi)
		*hi = t->stack_hi;
	else if (end > fp && end - fp < MAIN_STACK_GUESS)
		*hi = end; /* the main thread before it has a state */
	else
		*hi = fp; /* unknown stack (signal stack, ...): no walk */
}

/*
 * A return into an entry point (tsan_access.h), from an out-of-line
 * path: the frame below it is the caller of the function that made the
 * access, whose own pc is the access's site, which that path noted.
 */
static uintptr_t frame_pc(uintptr_t ret)
{
	struct rt_thread *t;

	if (rt_pc_in_access_code(ret - 1)) {
		t = rt_cur;
		if (t && t->access_site)
			return t->access_site;
	}
	return ret - 1;
}

static inline __attribute__((always_inline)) unsigned
fp_walk(uintptr_t fp, uintptr_t *out, unsigned max)
{
	uintptr_t lo, hi;
	unsigned n = 0;

	walk_bounds(fp, &lo, &hi);
	while (n < max && fp >= lo && fp + 2 * sizeof(uintptr_t) <= hi &&
	       !(fp & (sizeof(uintptr_t) - 1))) {
		uintptr_t next = ((const uintptr_t *)fp)[0];
		uintptr_t ret = ((const uintptr_t *)fp)[1];

		if (ret < 4096)
			break;
		out[n++] = frame_pc(ret);
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}

__attribute__((noinline)) unsigned rt_stack_walk(uintptr_t *out, unsigned max)
{
	return fp_walk((uintptr_t)__builtin_frame_address(0), out, max);
}

/*
 * @skip frames are dropped, counting the caller of rt_stack_capture as
 * frame 0; @pc, when not 0, is the pc the kept stack should start with
 * (a site, or a return address): if the walk passes it within the first
 * frames the stack starts there, else @pc is put first.
 */
__attribute__((noinline)) uint32_t rt_stack_capture(uintptr_t pc, unsigned skip)
{
	uintptr_t raw[RT_STACK_MAX + 24], f[RT_STACK_MAX];
	unsigned depth = rt.opt.stack_depth > 0 ? (unsigned)rt.opt.stack_depth :
						  32;
	unsigned want, n, start = skip, m = 0;
	bool prepend = pc != 0;

	if (!depot_ready())
		return 0;
	if (depth > RT_STACK_MAX)
		depth = RT_STACK_MAX;
	if (skip > 12)
		skip = start = 12;
	want = depth + skip + 8;
	n = fp_walk((uintptr_t)__builtin_frame_address(0), raw, want);
	if (pc) {
		for (unsigned i = 0; i < n && i < skip + 8; i++) {
			if (raw[i] == pc || raw[i] + 1 == pc) {
				start = i;
				prepend = false;
				break;
			}
		}
	}
	if (prepend)
		f[m++] = pc;
	for (unsigned i = start; i < n && m < depth; i++)
		f[m++] = raw[i];
	if (!m)
		return 0;
	return depot_put(f, m);
}
