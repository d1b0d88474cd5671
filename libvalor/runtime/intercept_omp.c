// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * OpenMP, as GCC compiles it: calls into libgomp (GOMP_*, omp_*).
 *
 * libgomp keeps a pool of threads and hands them each parallel region's
 * work; it waits for them with futexes of its own, which no interceptor
 * sees.  Its threads are created through pthread_create once, so only
 * the first region was ordered after the code before it, and every
 * later one looked concurrent with everything: an array written in one
 * `parallel for` and read in the next was a conflict, as under
 * ThreadSanitizer with an uninstrumented libgomp.  So the calls the
 * compiler makes become the synchronization they stand for:
 *
 *   - a parallel region (GOMP_parallel and its combined forms) releases
 *     a fork object before it starts the team; each thread of the team
 *     acquires it before the region's body and releases a join object
 *     after it; the thread that started the team acquires the join
 *     object once libgomp has waited for the team;
 *   - a barrier (GOMP_barrier, and the ends of worksharing constructs
 *     that wait, GOMP_loop_end and GOMP_sections_end) is a release and
 *     an acquire of the team's barrier object, as pthread_barrier_wait;
 *   - critical sections, atomic blocks libgomp serializes, ordered
 *     sections and omp_*_lock are locks;
 *   - `single copyprivate` hands its variables over as a release by the
 *     thread that ran the single and an acquire by the others.
 *
 * Tasks (GOMP_task, GOMP_taskloop and their waits) are in
 * intercept_omp_task.c.  Documentation/runtime-interceptors.md has the
 * table.
 *
 * The real functions are looked up on first use, each by itself: a
 * program that never calls OpenMP never needs libgomp, and one whose
 * OpenMP code sits in a library loaded with dlopen finds it then.
 */
#include "intercept_omp.h"

#include <dlfcn.h>

void *rt_omp_real(void *_Atomic *slot, const char *name)
{
	void *fn = atomic_load_explicit(slot, memory_order_acquire);

	if (likely(fn))
		return fn;
	fn = dlsym(RTLD_NEXT, name);
	if (!fn)
		rt_die("valor: %s called, but no libgomp defines it\n", name);
	atomic_store_explicit(slot, fn, memory_order_release);
	return fn;
}

__thread struct omp_team *rt_omp_cur __attribute__((tls_model("initial-exec")));

/* Objects of code outside any region we saw start: one team of its own. */
static struct omp_team omp_outside;

/* Critical sections without a name, and atomic blocks, share a lock. */
static char omp_unnamed_critical, omp_atomic_lock;

struct omp_team *rt_omp_team_now(void)
{
	return rt_omp_cur ? rt_omp_cur : &omp_outside;
}

/* What every thread of the team runs in place of the region's body. */
static void omp_run_body(void *arg)
{
	struct omp_team *t = arg;

	t->outer = rt_omp_cur;
	rt_acquire(OMP_FORK(t));
	rt_omp_cur = t;
	t->body(t->data);
	rt_omp_cur = t->outer;
	rt_release(OMP_JOIN(t));
}

/*
 * Start a parallel region: @start runs libgomp's function for it with
 * omp_run_body() and the team in place of the compiler's body.
 */
#define OMP_PARALLEL(start)                                          \
	do {                                                         \
		struct omp_team team = { .body = fn, .data = data }; \
                                                                     \
		rt_release(OMP_FORK(&team));                         \
		start;                                               \
		rt_acquire(OMP_JOIN(&team));                         \
	} while (0)

void GOMP_parallel(omp_body fn, void *data, unsigned n, unsigned flags);
void GOMP_parallel_sections(omp_body fn, void *data, unsigned n, unsigned count,
			    unsigned flags);
unsigned GOMP_parallel_reductions(omp_body fn, void *data, unsigned n,
				  unsigned flags);

RT_INTERCEPTOR void GOMP_parallel(omp_body fn, void *data, unsigned n,
				  unsigned flags)
{
	OMP_PARALLEL(OMP_REAL(GOMP_parallel)(omp_run_body, &team, n, flags));
}

RT_INTERCEPTOR void GOMP_parallel_sections(omp_body fn, void *data, unsigned n,
					   unsigned count, unsigned flags)
{
	OMP_PARALLEL(OMP_REAL(GOMP_parallel_sections)(omp_run_body, &team, n,
						      count, flags));
}

RT_INTERCEPTOR unsigned GOMP_parallel_reductions(omp_body fn, void *data,
						 unsigned n, unsigned flags)
{
	unsigned r = 0;

	OMP_PARALLEL(r = OMP_REAL(GOMP_parallel_reductions)(omp_run_body, &team,
							    n, flags));
	return r;
}

/* The combined `parallel for` entry points with a schedule. */
#define OMP_PARALLEL_LOOP(name)                                               \
	void name(omp_body fn, void *data, unsigned n, long start, long end,  \
		  long incr, long chunk, unsigned flags);                     \
	RT_INTERCEPTOR void name(omp_body fn, void *data, unsigned n,         \
				 long start, long end, long incr, long chunk, \
				 unsigned flags)                              \
	{                                                                     \
		OMP_PARALLEL(OMP_REAL(name)(omp_run_body, &team, n, start,    \
					    end, incr, chunk, flags));        \
	}
#define OMP_PARALLEL_LOOP_RUNTIME(name)                                      \
	void name(omp_body fn, void *data, unsigned n, long start, long end, \
		  long incr, unsigned flags);                                \
	RT_INTERCEPTOR void name(omp_body fn, void *data, unsigned n,        \
				 long start, long end, long incr,            \
				 unsigned flags)                             \
	{                                                                    \
		OMP_PARALLEL(OMP_REAL(name)(omp_run_body, &team, n, start,   \
					    end, incr, flags));              \
	}

OMP_PARALLEL_LOOP(GOMP_parallel_loop_static)
OMP_PARALLEL_LOOP(GOMP_parallel_loop_dynamic)
OMP_PARALLEL_LOOP(GOMP_parallel_loop_guided)
OMP_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_dynamic)
OMP_PARALLEL_LOOP(GOMP_parallel_loop_nonmonotonic_guided)
OMP_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_runtime)
OMP_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_nonmonotonic_runtime)
OMP_PARALLEL_LOOP_RUNTIME(GOMP_parallel_loop_maybe_nonmonotonic_runtime)

/* ---- barriers */

void GOMP_barrier(void);
bool GOMP_barrier_cancel(void);
void GOMP_loop_end(void);
bool GOMP_loop_end_cancel(void);
void GOMP_sections_end(void);
bool GOMP_sections_end_cancel(void);

/* libgomp's @wait, which waits for the whole team, as a barrier. */
static void omp_team_waits(void (*wait)(void))
{
	uintptr_t obj = OMP_BARRIER(rt_omp_team_now());

	rt_release(obj);
	wait();
	rt_acquire(obj);
}

/* The same for a wait that may be cancelled; its result. */
static bool omp_team_waits_cancel(bool (*wait)(void))
{
	uintptr_t obj = OMP_BARRIER(rt_omp_team_now());
	bool r;

	rt_release(obj);
	r = wait();
	rt_acquire(obj);
	return r;
}

RT_INTERCEPTOR void GOMP_barrier(void)
{
	omp_team_waits(OMP_REAL(GOMP_barrier));
}

RT_INTERCEPTOR bool GOMP_barrier_cancel(void)
{
	return omp_team_waits_cancel(OMP_REAL(GOMP_barrier_cancel));
}

RT_INTERCEPTOR void GOMP_loop_end(void)
{
	omp_team_waits(OMP_REAL(GOMP_loop_end));
}

RT_INTERCEPTOR bool GOMP_loop_end_cancel(void)
{
	return omp_team_waits_cancel(OMP_REAL(GOMP_loop_end_cancel));
}

RT_INTERCEPTOR void GOMP_sections_end(void)
{
	omp_team_waits(OMP_REAL(GOMP_sections_end));
}

RT_INTERCEPTOR bool GOMP_sections_end_cancel(void)
{
	return omp_team_waits_cancel(OMP_REAL(GOMP_sections_end_cancel));
}

/*
 * `single copyprivate`: the thread that ran the single publishes its
 * variables' addresses, and libgomp's own barrier lets the others read
 * them from there.
 */
void *GOMP_single_copy_start(void);
void GOMP_single_copy_end(void *data);

RT_INTERCEPTOR void *GOMP_single_copy_start(void)
{
	void *data = OMP_REAL(GOMP_single_copy_start)();

	if (data)
		rt_acquire(OMP_COPYPRIVATE(rt_omp_team_now()));
	return data;
}

RT_INTERCEPTOR void GOMP_single_copy_end(void *data)
{
	rt_release(OMP_COPYPRIVATE(rt_omp_team_now()));
	OMP_REAL(GOMP_single_copy_end)(data);
}

/* ---- mutual exclusion */

void GOMP_critical_start(void);
void GOMP_critical_end(void);
void GOMP_critical_name_start(void **name);
void GOMP_critical_name_end(void **name);
void GOMP_atomic_start(void);
void GOMP_atomic_end(void);
void GOMP_ordered_start(void);
void GOMP_ordered_end(void);

RT_INTERCEPTOR void GOMP_critical_start(void)
{
	OMP_REAL(GOMP_critical_start)();
	rt_acquire((uintptr_t)&omp_unnamed_critical);
}

RT_INTERCEPTOR void GOMP_critical_end(void)
{
	rt_release((uintptr_t)&omp_unnamed_critical);
	OMP_REAL(GOMP_critical_end)();
}

/* A named critical section's lock is the variable the compiler made. */
RT_INTERCEPTOR void GOMP_critical_name_start(void **name)
{
	OMP_REAL(GOMP_critical_name_start)(name);
	rt_acquire((uintptr_t)name);
}

RT_INTERCEPTOR void GOMP_critical_name_end(void **name)
{
	rt_release((uintptr_t)name);
	OMP_REAL(GOMP_critical_name_end)(name);
}

RT_INTERCEPTOR void GOMP_atomic_start(void)
{
	OMP_REAL(GOMP_atomic_start)();
	rt_acquire((uintptr_t)&omp_atomic_lock);
}

RT_INTERCEPTOR void GOMP_atomic_end(void)
{
	rt_release((uintptr_t)&omp_atomic_lock);
	OMP_REAL(GOMP_atomic_end)();
}

/* Ordered sections run one after another, in the loop's order. */
RT_INTERCEPTOR void GOMP_ordered_start(void)
{
	OMP_REAL(GOMP_ordered_start)();
	rt_acquire(OMP_ORDERED(rt_omp_team_now()));
}

RT_INTERCEPTOR void GOMP_ordered_end(void)
{
	rt_release(OMP_ORDERED(rt_omp_team_now()));
	OMP_REAL(GOMP_ordered_end)();
}

/* ---- the omp_*_lock API: the lock's address is its object */

#define OMP_LOCK_FNS(kind)                               \
	void omp_set_##kind(void *lock);                 \
	void omp_unset_##kind(void *lock);               \
	int omp_test_##kind(void *lock);                 \
	RT_INTERCEPTOR void omp_set_##kind(void *lock)   \
	{                                                \
		OMP_REAL(omp_set_##kind)(lock);          \
		rt_acquire((uintptr_t)lock);             \
	}                                                \
	RT_INTERCEPTOR void omp_unset_##kind(void *lock) \
	{                                                \
		rt_release((uintptr_t)lock);             \
		OMP_REAL(omp_unset_##kind)(lock);        \
	}                                                \
	RT_INTERCEPTOR int omp_test_##kind(void *lock)   \
	{                                                \
		int r = OMP_REAL(omp_test_##kind)(lock); \
                                                         \
		if (r)                                   \
			rt_acquire((uintptr_t)lock);     \
		return r;                                \
	}

OMP_LOCK_FNS(lock)
OMP_LOCK_FNS(nest_lock)
