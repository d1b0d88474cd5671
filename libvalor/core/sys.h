/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The engine's own memory and locks.  In a program analysed by the
 * in-process runtime, malloc and the pthread functions are the runtime's
 * interceptors: the engine must reach neither, or its metadata would be
 * analysed as program memory and its locks taken as program
 * synchronization (LARD's R1 and R2), and it would re-enter itself.  So it
 * allocates with glibc's own entry points and locks with a futex of its
 * own.
 */
#ifndef VALOR_CORE_SYS_H
#define VALOR_CORE_SYS_H

#include <limits.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

/*
 * [@p, @p + @n) reads as zeros from now on: the whole pages inside it go
 * back to the system (private anonymous memory refills with zeros), the
 * bytes at either end that share a page with other data are cleared.
 */
void eng_zero(void *p, size_t n);

/* glibc's allocator itself, below any interposed malloc. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);

static inline void *eng_malloc(size_t size)
{
	return __libc_malloc(size);
}

static inline void *eng_calloc(size_t n, size_t size)
{
	return __libc_calloc(n, size);
}

static inline void *eng_realloc(void *p, size_t size)
{
	return __libc_realloc(p, size);
}

static inline void eng_free(void *p)
{
	__libc_free(p);
}

/*
 * CAS of the two 8-byte words at @p (16-byte aligned) from @o0, @o1 to
 * @n0, @n1 at once; only where eng_has_cas_pair() says so.  Other threads
 * may CAS or load either word on its own meanwhile: the instruction is
 * atomic against those too.
 */
static inline bool eng_cas_pair(_Atomic uint64_t *p, uint64_t o0, uint64_t o1,
				uint64_t n0, uint64_t n1)
{
#if defined(__x86_64__)
	bool done;

	__asm__ __volatile__("lock cmpxchg16b %1"
			     : "=@ccz"(done),
			       "+m"(*(volatile unsigned __int128 *)p), "+a"(o0),
			       "+d"(o1)
			     : "b"(n0), "c"(n1)
			     : "memory");
	return done;
#else
	(void)p, (void)o0, (void)o1, (void)n0, (void)n1;
	return false;
#endif
}

static inline bool eng_has_cas_pair(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_CMPXCHG16B);
#else
	return false;
#endif
}

/* A spin-wait's pause. */
static inline void eng_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/*
 * How many of the engine's and the runtime's locks the calling thread
 * holds.  A signal handler of the program that runs while the thread
 * holds one can deadlock: the handler waits for another thread, which
 * waits for the lock (libuv's signal handler, which takes a lock of its
 * own, against a thread printing a report).  So the runtime defers such
 * signals (intercept_signal.c): it sets @eng_after_locks, and the
 * thread calls @eng_after_locks_hook once it holds no lock again.
 */
extern __thread unsigned eng_locks_held
	__attribute__((tls_model("initial-exec")));
extern __thread bool eng_after_locks __attribute__((tls_model("initial-exec")));
extern void (*eng_after_locks_hook)(void);

static inline void eng_locks_taken(void)
{
	eng_locks_held++;
}

static inline void eng_locks_dropped(void)
{
	if (!--eng_locks_held && __builtin_expect(eng_after_locks, 0) &&
	    eng_after_locks_hook)
		eng_after_locks_hook();
}

/*
 * A mutex on a futex: 0 free, 1 locked, 2 locked with waiters.  Only
 * slow paths take it (thread creation, metadata allocation, FastTrack's
 * sync-object clocks).
 */
struct eng_lock {
	atomic_int v;
};

static inline void eng_lock_init(struct eng_lock *l)
{
	atomic_init(&l->v, 0);
}

static inline void eng_lock(struct eng_lock *l)
{
	int c = 0;

	if (atomic_compare_exchange_strong(&l->v, &c, 1)) {
		eng_locks_taken();
		return;
	}
	if (c != 2)
		c = atomic_exchange(&l->v, 2);
	while (c != 0) {
		syscall(SYS_futex, &l->v, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		c = atomic_exchange(&l->v, 2);
	}
	eng_locks_taken();
}

static inline void eng_unlock(struct eng_lock *l)
{
	if (atomic_fetch_sub(&l->v, 1) != 1) {
		atomic_store(&l->v, 0);
		syscall(SYS_futex, &l->v, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	eng_locks_dropped();
}

#endif /* VALOR_CORE_SYS_H */
