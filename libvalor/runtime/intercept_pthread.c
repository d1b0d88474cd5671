// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Thread and synchronization interceptors: pthread threads, once,
 * mutexes, reader-writer locks, spinlocks, condition variables,
 * barriers, semaphores, and the same for C11 <threads.h> (whose glibc
 * implementation calls the pthread functions internally, where the
 * interceptors would not see them).
 *
 * Every lock operation becomes an acquire of the object's address after
 * the real lock succeeded; every unlock a release before the real
 * unlock (afterwards another thread may already own it).  Blocking waits
 * are never made while the thread is busy, so a signal handler that runs
 * during one is analysed like any other code.
 *
 * Thread states (struct rt_thread, rt_core.c) live in rt.threads, found
 * by pthread_t.  Who frees one:
 *   - a joinable thread: its joiner, after the real join returned (the
 *     thread has then completely exited);
 *   - a detached thread: the last of two parties, the thread itself at
 *     its very end and the detacher (or the creator, for threads created
 *     detached).  Each calls handoff_is_last() under rt.threads_lock:
 *     the first sets ->detached, the second finds it set and frees.  The
 *     exiting side marks a joinable thread too, which is harmless since
 *     only a detach (never together with a join) reads the mark.
 * A joiner or detacher *claims* the state before the real call by
 * clearing its ->self: once the real call returns glibc may give the
 * same pthread_t to a new thread, which must never find the old state.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "intercept.h"

#include <errno.h>
#include <sched.h>

/* The thread may report synchronization now (rt_enter would succeed). */
static inline bool may_sync(void)
{
	struct rt_thread *t;

	if (unlikely(!rt_running()))
		return false;
	t = rt_cur;
	return t && !t->busy && t->vt;
}

/* ---- thread lifecycle ---- */

/*
 * Threads created by pthread_create whose rt_thread_start has not run
 * yet: until then their state has no ->self and cannot be found by a
 * join or detach, which wait for it (briefly: the child starts with it).
 */
static atomic_int start_pending;

/* This thread runs under thread_start(), whose cleanup finishes it. */
static __thread bool started_here __attribute__((tls_model("initial-exec")));

struct start_arg {
	struct rt_thread *t;
	void *(*fn)(void *);
	int (*c11_fn)(void *); /* thrd_create: returns int */
	void *arg;
};

/* The second of the thread's end and its detach frees the state. */
static bool handoff_is_last(struct rt_thread *t)
{
	bool last;

	rt_lock(&rt.threads_lock);
	last = t->detached;
	t->detached = true;
	rt_unlock(&rt.threads_lock);
	return last;
}

/* Free the state of a finished thread nobody will join. */
static void thread_forget(struct rt_thread *t)
{
	if (t->vt)
		valor_thread_forget(t->vt);
	rt_thread_free(t);
}

/*
 * The thread's end, run when its start routine returns, when it calls
 * pthread_exit and when it is cancelled (after the program's own cleanup
 * handlers, which are inner ones).  Its region ends; what it still runs
 * afterwards (C++ thread_local and pthread key destructors) passes
 * through unanalysed.
 */
static void thread_end(void *arg)
{
	struct rt_thread *t = arg;

	if (unlikely(rt_cur != t)) {
		/*
		 * The thread forked and this is the child, where it is the
		 * main thread with a fresh state (rt_after_fork_child); @t
		 * belongs to the parent's analysis.  Nobody joins the child.
		 */
		t = rt_cur;
		if (t && !t->finished) {
			rt_thread_finish(t);
			rt_busy_inc(t);
		}
		return;
	}
	rt_thread_finish(t);
	rt_busy_inc(t);
	/* A detacher may free @t as soon as handoff_is_last() returns. */
	rt_cur = NULL;
	if (handoff_is_last(t))
		thread_forget(t);
}

static void *thread_run(struct start_arg *sa)
{
	if (sa->c11_fn)
		return (void *)(intptr_t)sa->c11_fn(sa->arg);
	return sa->fn(sa->arg);
}

static void *thread_start(void *p)
{
	struct start_arg sa = *(struct start_arg *)p;
	void *volatile ret = NULL; /* set after the cleanup's setjmp */

	__libc_free(p);
	rt_thread_start(sa.t);
	atomic_fetch_sub(&start_pending, 1);
	started_here = true;
	pthread_cleanup_push(thread_end, sa.t);
	ret = thread_run(&sa);
	pthread_cleanup_pop(1);
	return ret;
}

/* Undo rt_thread_new() for a thread that could not be created. */
static void thread_undo(struct rt_thread *t)
{
	rt_thread_finish(t);
	thread_forget(t);
}

static int create_thread(pthread_t *thread, const pthread_attr_t *attr,
			 void *(*fn)(void *), int (*c11_fn)(void *), void *arg)
{
	struct rt_thread *self = rt_self(), *t;
	struct start_arg *sa;
	int detach = PTHREAD_CREATE_JOINABLE;
	int r;

	/*
	 * A thread that is ignoring (busy) still gets an analysed child:
	 * ignores are per thread.  Only a thread without analysis (not
	 * known, out of slots, finished) creates unanalysed children.
	 */
	if (!self || !self->vt || self->finished)
		goto real;
	rt_busy_inc(self);
	sa = __libc_malloc(sizeof(*sa));
	t = sa ? rt_thread_new(self) : NULL;
	if (!t) {
		__libc_free(sa);
		rt_busy_dec(self);
		goto real;
	}
	if (attr && !pthread_attr_getdetachstate(attr, &detach) &&
	    detach == PTHREAD_CREATE_DETACHED)
		t->detached = true; /* the creator is the detacher */
	sa->t = t;
	sa->fn = fn;
	sa->c11_fn = c11_fn;
	sa->arg = arg;
	atomic_fetch_add(&start_pending, 1);
	rt_busy_dec(self);

	r = RT_REAL(pthread_create)(thread, attr, thread_start, sa);
	/* On success the child owns @t and @sa: do not touch them. */
	if (r) {
		atomic_fetch_sub(&start_pending, 1);
		rt_busy_inc(self);
		thread_undo(t);
		__libc_free(sa);
		rt_busy_dec(self);
	}
	return r;

real:
	if (c11_fn)
		return RT_REAL(pthread_create)(
			thread, attr, (void *(*)(void *))(void (*)(void))c11_fn,
			arg);
	return RT_REAL(pthread_create)(thread, attr, fn, arg);
}

RT_INTERCEPTOR int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
				  void *(*fn)(void *), void *arg)
{
	return create_thread(thread, attr, fn, NULL, arg);
}

/*
 * Take the state of thread @p for a join or detach (see the top of the
 * file); NULL when @p is not an analysed thread.
 */
static struct rt_thread *thread_claim(pthread_t p)
{
	for (;;) {
		/* Read first: a child counted here has not set ->self. */
		bool pending = atomic_load(&start_pending) > 0;
		struct rt_thread *t = rt_thread_by_pthread(p);

		if (t) {
			rt_lock(&rt.threads_lock);
			if (pthread_equal(t->self, p))
				t->self = 0;
			else
				t = NULL;
			rt_unlock(&rt.threads_lock);
			if (t)
				return t;
		}
		if (!pending)
			return NULL;
		sched_yield();
	}
}

/* The real join or detach failed: give the state back. */
static void thread_unclaim(struct rt_thread *t, pthread_t p)
{
	rt_lock(&rt.threads_lock);
	t->self = p;
	rt_unlock(&rt.threads_lock);
}

/* Claim, with the caller's bookkeeping invisible (signal handlers). */
static struct rt_thread *claim_for_caller(pthread_t p)
{
	struct rt_thread *me = rt_cur, *t;

	if (!rt_running())
		return NULL;
	if (me)
		rt_busy_inc(me);
	t = thread_claim(p);
	if (me)
		rt_busy_dec(me);
	return t;
}

/* The real join of @t succeeded: acquire all it did, free its state. */
static void thread_joined(struct rt_thread *t)
{
	struct rt_thread *me = rt_icpt_enter();

	/* It exited without its cleanup running (a raw exit syscall). */
	if (!t->finished)
		rt_thread_finish(t);
	if (t->vt) {
		if (me)
			valor_thread_join(me->vt, t->vt);
		else
			valor_thread_forget(t->vt);
	}
	rt_thread_free(t);
	if (me)
		rt_leave(me);
}

static int join_result(struct rt_thread *t, pthread_t p, int r)
{
	if (t) {
		if (r == 0)
			thread_joined(t);
		else
			thread_unclaim(t, p);
	}
	return r;
}

RT_INTERCEPTOR int pthread_join(pthread_t p, void **ret)
{
	struct rt_thread *t = claim_for_caller(p);

	return join_result(t, p, RT_REAL(pthread_join)(p, ret));
}

RT_INTERCEPTOR int pthread_tryjoin_np(pthread_t p, void **ret)
{
	struct rt_thread *t = claim_for_caller(p);

	return join_result(t, p, RT_REAL(pthread_tryjoin_np)(p, ret));
}

RT_INTERCEPTOR int pthread_timedjoin_np(pthread_t p, void **ret,
					const struct timespec *abstime)
{
	struct rt_thread *t = claim_for_caller(p);

	return join_result(t, p,
			   RT_REAL(pthread_timedjoin_np)(p, ret, abstime));
}

#if RT_HAVE_CLOCKJOIN
RT_INTERCEPTOR int pthread_clockjoin_np(pthread_t p, void **ret,
					clockid_t clock,
					const struct timespec *abstime)
{
	struct rt_thread *t;

	if (!RT_REAL(pthread_clockjoin_np))
		return ENOSYS;
	t = claim_for_caller(p);
	return join_result(
		t, p, rt_real_pthread_clockjoin_np(p, ret, clock, abstime));
}
#endif

static void detached(struct rt_thread *t)
{
	struct rt_thread *me = rt_cur;

	if (me)
		rt_busy_inc(me);
	if (handoff_is_last(t))
		thread_forget(t);
	if (me)
		rt_busy_dec(me);
}

RT_INTERCEPTOR int pthread_detach(pthread_t p)
{
	struct rt_thread *t = claim_for_caller(p);
	int r = RT_REAL(pthread_detach)(p);

	if (t) {
		if (r == 0)
			detached(t);
		else
			thread_unclaim(t, p);
	}
	return r;
}

RT_INTERCEPTOR void pthread_exit(void *ret)
{
	struct rt_thread *t = rt_running() ? rt_cur : NULL;

	/*
	 * Threads started by thread_start() finish in its cleanup handler,
	 * after the program's own cleanup handlers.  Others (the main
	 * thread) finish here.
	 */
	if (t && !started_here && !t->finished) {
		rt_thread_finish(t);
		rt_busy_inc(t);
	}
	RT_REAL(pthread_exit)(ret);
	__builtin_unreachable();
}

/* ---- pthread_once, call_once ---- */

/*
 * pthread_once's routine takes no argument, so the routine to run and
 * the once object travel in thread-local variables (saved around nested
 * calls).  The trampoline releases the object after the routine, before
 * glibc marks it done; every caller acquires it when pthread_once
 * returns, so everyone sees what the routine did.
 */
static __thread void (*once_routine)(void)
	__attribute__((tls_model("initial-exec")));
static __thread uintptr_t once_object
	__attribute__((tls_model("initial-exec")));

static void once_trampoline(void)
{
	void (*routine)(void) = once_routine;
	uintptr_t object = once_object;

	routine();
	rt_release(object);
}

RT_INTERCEPTOR int pthread_once(pthread_once_t *once, void (*routine)(void))
{
	void (*saved_routine)(void) = once_routine;
	uintptr_t saved_object = once_object;
	int r;

	if (!may_sync())
		return RT_REAL(pthread_once)(once, routine);
	once_routine = routine;
	once_object = (uintptr_t)once;
	r = RT_REAL(pthread_once)(once, once_trampoline);
	once_routine = saved_routine;
	once_object = saved_object;
	if (r == 0)
		rt_acquire((uintptr_t)once);
	return r;
}

/* ---- mutexes ---- */

/* A robust mutex whose owner died is locked too. */
static inline bool locked(int r)
{
	return r == 0 || r == EOWNERDEAD;
}

RT_INTERCEPTOR int pthread_mutex_lock(pthread_mutex_t *m)
{
	int r = RT_REAL(pthread_mutex_lock)(m);

	if (locked(r))
		rt_acquire((uintptr_t)m);
	return r;
}

RT_INTERCEPTOR int pthread_mutex_trylock(pthread_mutex_t *m)
{
	int r = RT_REAL(pthread_mutex_trylock)(m);

	if (locked(r))
		rt_acquire((uintptr_t)m);
	return r;
}

RT_INTERCEPTOR int pthread_mutex_timedlock(pthread_mutex_t *m,
					   const struct timespec *abstime)
{
	int r = RT_REAL(pthread_mutex_timedlock)(m, abstime);

	if (locked(r))
		rt_acquire((uintptr_t)m);
	return r;
}

#if RT_HAVE_CLOCK_WAITS
RT_INTERCEPTOR int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
					   const struct timespec *abstime)
{
	int r;

	if (!RT_REAL(pthread_mutex_clocklock))
		return ENOSYS;
	r = rt_real_pthread_mutex_clocklock(m, clock, abstime);
	if (locked(r))
		rt_acquire((uintptr_t)m);
	return r;
}
#endif

RT_INTERCEPTOR int pthread_mutex_unlock(pthread_mutex_t *m)
{
	rt_release((uintptr_t)m);
	return RT_REAL(pthread_mutex_unlock)(m);
}

/* ---- reader-writer locks ---- */

/*
 * Two synchronization objects per lock, as TSan keeps two clocks:
 * write unlocks release the lock's address, read unlocks the address
 * plus one.  Readers acquire only the first (readers do not order each
 * other), writers both.  glibc records the writer's tid in the lock,
 * which tells an unlock which kind it is (glibc's own test).
 */
static inline uintptr_t rwlock_readers(pthread_rwlock_t *l)
{
	return (uintptr_t)l + 1;
}

static void rdlocked(pthread_rwlock_t *l, int r)
{
	if (r == 0)
		rt_acquire((uintptr_t)l);
}

static void wrlocked(pthread_rwlock_t *l, int r)
{
	struct rt_thread *t;

	if (r != 0 || !(t = rt_icpt_enter()))
		return;
	valor_acquire(t->vt, (uintptr_t)l);
	valor_acquire(t->vt, rwlock_readers(l));
	rt_leave(t);
}

RT_INTERCEPTOR int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	int r = RT_REAL(pthread_rwlock_rdlock)(l);

	rdlocked(l, r);
	return r;
}

RT_INTERCEPTOR int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	int r = RT_REAL(pthread_rwlock_tryrdlock)(l);

	rdlocked(l, r);
	return r;
}

RT_INTERCEPTOR int pthread_rwlock_timedrdlock(pthread_rwlock_t *l,
					      const struct timespec *abstime)
{
	int r = RT_REAL(pthread_rwlock_timedrdlock)(l, abstime);

	rdlocked(l, r);
	return r;
}

RT_INTERCEPTOR int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	int r = RT_REAL(pthread_rwlock_wrlock)(l);

	wrlocked(l, r);
	return r;
}

RT_INTERCEPTOR int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	int r = RT_REAL(pthread_rwlock_trywrlock)(l);

	wrlocked(l, r);
	return r;
}

RT_INTERCEPTOR int pthread_rwlock_timedwrlock(pthread_rwlock_t *l,
					      const struct timespec *abstime)
{
	int r = RT_REAL(pthread_rwlock_timedwrlock)(l, abstime);

	wrlocked(l, r);
	return r;
}

#if RT_HAVE_CLOCK_WAITS
RT_INTERCEPTOR int pthread_rwlock_clockrdlock(pthread_rwlock_t *l,
					      clockid_t clock,
					      const struct timespec *abstime)
{
	int r;

	if (!RT_REAL(pthread_rwlock_clockrdlock))
		return ENOSYS;
	r = rt_real_pthread_rwlock_clockrdlock(l, clock, abstime);
	rdlocked(l, r);
	return r;
}

RT_INTERCEPTOR int pthread_rwlock_clockwrlock(pthread_rwlock_t *l,
					      clockid_t clock,
					      const struct timespec *abstime)
{
	int r;

	if (!RT_REAL(pthread_rwlock_clockwrlock))
		return ENOSYS;
	r = rt_real_pthread_rwlock_clockwrlock(l, clock, abstime);
	wrlocked(l, r);
	return r;
}
#endif

RT_INTERCEPTOR int pthread_rwlock_unlock(pthread_rwlock_t *l)
{
	struct rt_thread *t = rt_icpt_enter();

	if (t) {
		/* Only the holder writes it while we hold the lock. */
		int writer = __atomic_load_n(&l->__data.__cur_writer,
					     __ATOMIC_RELAXED);

		valor_release(t->vt, writer == t->os_tid ? (uintptr_t)l :
							   rwlock_readers(l));
		rt_leave(t);
	}
	return RT_REAL(pthread_rwlock_unlock)(l);
}

/* ---- spinlocks ---- */

RT_INTERCEPTOR int pthread_spin_lock(pthread_spinlock_t *l)
{
	int r = RT_REAL(pthread_spin_lock)(l);

	if (r == 0)
		rt_acquire((uintptr_t)l);
	return r;
}

RT_INTERCEPTOR int pthread_spin_trylock(pthread_spinlock_t *l)
{
	int r = RT_REAL(pthread_spin_trylock)(l);

	if (r == 0)
		rt_acquire((uintptr_t)l);
	return r;
}

RT_INTERCEPTOR int pthread_spin_unlock(pthread_spinlock_t *l)
{
	rt_release((uintptr_t)l);
	return RT_REAL(pthread_spin_unlock)(l);
}

/* ---- condition variables ---- */

/*
 * wait(c, m): waiting releases m; on return m is held again and the
 * signal or broadcast that woke us (a release of c) is acquired.  A
 * wait that times out acquires too (harmless: signals only add order
 * that existed).  A cancelled wait also re-locks m before the program's
 * cleanup handlers run, hence the cleanup handler of our own.
 */
static void cond_wait_cancelled(void *m)
{
	rt_acquire((uintptr_t)m);
}

#define COND_WAIT(c, m, call)                                           \
	do {                                                            \
		int r_;                                                 \
		if (!may_sync())                                        \
			return call;                                    \
		rt_release((uintptr_t)(m));                             \
		pthread_cleanup_push(cond_wait_cancelled, (void *)(m)); \
		r_ = call;                                              \
		pthread_cleanup_pop(0);                                 \
		rt_acquire((uintptr_t)(m));                             \
		rt_acquire((uintptr_t)(c));                             \
		return r_;                                              \
	} while (0)

/*
 * Symbol versions.  On x86-64, glibc has pthread_cond_*@@GLIBC_2.3.2
 * (the default) and the old pthread_cond_*@GLIBC_2.2.5 (an object that
 * points to a new-style one).  An unversioned definition in the
 * executable would capture references to both, and give old callers the
 * new implementation; so the runtime defines each version under its own
 * name with .symver, which GNU ld and gold turn into version definitions
 * of the executable (no version script needed; lld 14 ignores the
 * versions and binds both kinds of callers to the default one, which is
 * what an unversioned definition would do anyway).
 */
#if RT_HAVE_COND_COMPAT
#define COND_DEFAULT(name) rt_icpt_##name##_2_3_2
#define COND_SYMVER(name)                                                      \
	__asm__(".symver rt_icpt_" #name "_2_3_2, " #name "@@" RT_COND_VERSION \
		"\n\t"                                                         \
		".symver rt_icpt_" #name "_2_2_5, " #name                      \
		"@" RT_COND_COMPAT_VERSION);
#else
#define COND_DEFAULT(name) name
#define COND_SYMVER(name)
#endif

RT_EXPORT int COND_DEFAULT(pthread_cond_wait)(pthread_cond_t *c,
					      pthread_mutex_t *m)
{
	COND_WAIT(c, m, RT_REAL(pthread_cond_wait)(c, m));
}

RT_EXPORT int COND_DEFAULT(pthread_cond_timedwait)(pthread_cond_t *c,
						   pthread_mutex_t *m,
						   const struct timespec *t)
{
	COND_WAIT(c, m, RT_REAL(pthread_cond_timedwait)(c, m, t));
}

RT_EXPORT int COND_DEFAULT(pthread_cond_signal)(pthread_cond_t *c)
{
	rt_release((uintptr_t)c);
	return RT_REAL(pthread_cond_signal)(c);
}

RT_EXPORT int COND_DEFAULT(pthread_cond_broadcast)(pthread_cond_t *c)
{
	rt_release((uintptr_t)c);
	return RT_REAL(pthread_cond_broadcast)(c);
}

#if RT_HAVE_COND_COMPAT
/* The GLIBC_2.2.5 versions: the same events, the old real functions. */
RT_EXPORT int rt_icpt_pthread_cond_wait_2_2_5(pthread_cond_t *c,
					      pthread_mutex_t *m);
RT_EXPORT int rt_icpt_pthread_cond_timedwait_2_2_5(pthread_cond_t *c,
						   pthread_mutex_t *m,
						   const struct timespec *t);
RT_EXPORT int rt_icpt_pthread_cond_signal_2_2_5(pthread_cond_t *c);
RT_EXPORT int rt_icpt_pthread_cond_broadcast_2_2_5(pthread_cond_t *c);

int rt_icpt_pthread_cond_wait_2_2_5(pthread_cond_t *c, pthread_mutex_t *m)
{
	if (!RT_REAL(pthread_cond_wait_compat))
		return ENOSYS;
	COND_WAIT(c, m, rt_real_pthread_cond_wait_compat(c, m));
}

int rt_icpt_pthread_cond_timedwait_2_2_5(pthread_cond_t *c, pthread_mutex_t *m,
					 const struct timespec *t)
{
	if (!RT_REAL(pthread_cond_timedwait_compat))
		return ENOSYS;
	COND_WAIT(c, m, rt_real_pthread_cond_timedwait_compat(c, m, t));
}

int rt_icpt_pthread_cond_signal_2_2_5(pthread_cond_t *c)
{
	if (!RT_REAL(pthread_cond_signal_compat))
		return ENOSYS;
	rt_release((uintptr_t)c);
	return rt_real_pthread_cond_signal_compat(c);
}

int rt_icpt_pthread_cond_broadcast_2_2_5(pthread_cond_t *c)
{
	if (!RT_REAL(pthread_cond_broadcast_compat))
		return ENOSYS;
	rt_release((uintptr_t)c);
	return rt_real_pthread_cond_broadcast_compat(c);
}
#endif

COND_SYMVER(pthread_cond_wait)
COND_SYMVER(pthread_cond_timedwait)
COND_SYMVER(pthread_cond_signal)
COND_SYMVER(pthread_cond_broadcast)

#if RT_HAVE_CLOCK_WAITS
/* Only one version (GLIBC_2.30, re-exported as 2.34): plain definition. */
RT_INTERCEPTOR int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m,
					  clockid_t clock,
					  const struct timespec *abstime)
{
	if (!RT_REAL(pthread_cond_clockwait))
		return ENOSYS;
	COND_WAIT(c, m, rt_real_pthread_cond_clockwait(c, m, clock, abstime));
}
#endif

/* ---- barriers ---- */

/*
 * Everyone releases before waiting and acquires after: all arrived
 * before anyone leaves, so each leaver acquires what all did before.
 */
RT_INTERCEPTOR int pthread_barrier_wait(pthread_barrier_t *b)
{
	int r;

	if (!may_sync())
		return RT_REAL(pthread_barrier_wait)(b);
	rt_release((uintptr_t)b);
	r = RT_REAL(pthread_barrier_wait)(b);
	rt_acquire((uintptr_t)b);
	return r;
}

/* ---- semaphores ---- */

RT_INTERCEPTOR int sem_post(sem_t *s)
{
	rt_release((uintptr_t)s);
	return RT_REAL(sem_post)(s);
}

RT_INTERCEPTOR int sem_wait(sem_t *s)
{
	int r = RT_REAL(sem_wait)(s);

	if (r == 0)
		rt_acquire((uintptr_t)s);
	return r;
}

RT_INTERCEPTOR int sem_trywait(sem_t *s)
{
	int r = RT_REAL(sem_trywait)(s);

	if (r == 0)
		rt_acquire((uintptr_t)s);
	return r;
}

RT_INTERCEPTOR int sem_timedwait(sem_t *s, const struct timespec *abstime)
{
	int r = RT_REAL(sem_timedwait)(s, abstime);

	if (r == 0)
		rt_acquire((uintptr_t)s);
	return r;
}

#if RT_HAVE_CLOCK_WAITS
RT_INTERCEPTOR int sem_clockwait(sem_t *s, clockid_t clock,
				 const struct timespec *abstime)
{
	int r;

	if (!RT_REAL(sem_clockwait)) {
		errno = ENOSYS;
		return -1;
	}
	r = rt_real_sem_clockwait(s, clock, abstime);
	if (r == 0)
		rt_acquire((uintptr_t)s);
	return r;
}
#endif

/* ---- C11 threads ---- */

#if RT_HAVE_C11_THREADS
/* glibc's mapping of errno values to thrd_* results. */
static int thrd_result(int err)
{
	switch (err) {
	case 0:
		return thrd_success;
	case ENOMEM:
		return thrd_nomem;
	case ETIMEDOUT:
		return thrd_timedout;
	case EBUSY:
		return thrd_busy;
	default:
		return thrd_error;
	}
}

/*
 * glibc runs a C11 thread as a pthread whose start routine returns an
 * int, which thrd_join reads back from the void * result: the same
 * trampoline serves, calling the routine as what it is.
 */
RT_INTERCEPTOR int thrd_create(thrd_t *thr, thrd_start_t fn, void *arg)
{
	struct rt_thread *self = rt_self();

	if (!RT_REAL(thrd_create))
		return thrd_error;
	if (!self || !self->vt || self->finished)
		return rt_real_thrd_create(thr, fn, arg);
	return thrd_result(create_thread(thr, NULL, NULL, fn, arg));
}

RT_INTERCEPTOR int thrd_join(thrd_t thr, int *res)
{
	struct rt_thread *t;
	int r;

	if (!RT_REAL(thrd_join))
		return thrd_error;
	t = claim_for_caller(thr);
	r = rt_real_thrd_join(thr, res);
	if (t) {
		if (r == thrd_success)
			thread_joined(t);
		else
			thread_unclaim(t, thr);
	}
	return r;
}

RT_INTERCEPTOR int thrd_detach(thrd_t thr)
{
	struct rt_thread *t;
	int r;

	if (!RT_REAL(thrd_detach))
		return thrd_error;
	t = claim_for_caller(thr);
	r = rt_real_thrd_detach(thr);
	if (t) {
		if (r == thrd_success)
			detached(t);
		else
			thread_unclaim(t, thr);
	}
	return r;
}

RT_INTERCEPTOR int mtx_lock(mtx_t *m)
{
	int r;

	if (!RT_REAL(mtx_lock))
		return thrd_error;
	r = rt_real_mtx_lock(m);
	if (r == thrd_success)
		rt_acquire((uintptr_t)m);
	return r;
}

RT_INTERCEPTOR int mtx_trylock(mtx_t *m)
{
	int r;

	if (!RT_REAL(mtx_trylock))
		return thrd_error;
	r = rt_real_mtx_trylock(m);
	if (r == thrd_success)
		rt_acquire((uintptr_t)m);
	return r;
}

RT_INTERCEPTOR int mtx_timedlock(mtx_t *restrict m,
				 const struct timespec *restrict abstime)
{
	int r;

	if (!RT_REAL(mtx_timedlock))
		return thrd_error;
	r = rt_real_mtx_timedlock(m, abstime);
	if (r == thrd_success)
		rt_acquire((uintptr_t)m);
	return r;
}

RT_INTERCEPTOR int mtx_unlock(mtx_t *m)
{
	if (!RT_REAL(mtx_unlock))
		return thrd_error;
	rt_release((uintptr_t)m);
	return rt_real_mtx_unlock(m);
}

RT_INTERCEPTOR int cnd_wait(cnd_t *c, mtx_t *m)
{
	if (!RT_REAL(cnd_wait))
		return thrd_error;
	COND_WAIT(c, m, rt_real_cnd_wait(c, m));
}

RT_INTERCEPTOR int cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m,
				 const struct timespec *restrict abstime)
{
	if (!RT_REAL(cnd_timedwait))
		return thrd_error;
	COND_WAIT(c, m, rt_real_cnd_timedwait(c, m, abstime));
}

RT_INTERCEPTOR int cnd_signal(cnd_t *c)
{
	if (!RT_REAL(cnd_signal))
		return thrd_error;
	rt_release((uintptr_t)c);
	return rt_real_cnd_signal(c);
}

RT_INTERCEPTOR int cnd_broadcast(cnd_t *c)
{
	if (!RT_REAL(cnd_broadcast))
		return thrd_error;
	rt_release((uintptr_t)c);
	return rt_real_cnd_broadcast(c);
}

RT_INTERCEPTOR void call_once(once_flag *flag, void (*routine)(void))
{
	void (*saved_routine)(void) = once_routine;
	uintptr_t saved_object = once_object;

	if (!RT_REAL(call_once))
		return;
	if (!may_sync()) {
		rt_real_call_once(flag, routine);
		return;
	}
	once_routine = routine;
	once_object = (uintptr_t)flag;
	rt_real_call_once(flag, once_trampoline);
	once_routine = saved_routine;
	once_object = saved_object;
	rt_acquire((uintptr_t)flag);
}
#endif /* RT_HAVE_C11_THREADS */

/* ---- fork ---- */

/* The child of fork() has one thread, and no child is about to start. */
void rt_intercept_pthread_after_fork_child(void)
{
	atomic_store(&start_pending, 0);
}
