/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The in-process runtime: what its files share.
 *
 * A program compiled with -fsanitize=thread and linked with libvalor-rt.a
 * (statically, by `valor cc`) calls the __tsan_* entry points on every
 * access; the runtime turns them, and the synchronization its
 * interceptors see, into engine events on the calling thread.
 *
 * Re-entry and signals: every path into the engine increments the
 * thread's @busy count first.  An access or an interceptor that finds
 * @busy non-zero passes straight through, unanalysed.  That keeps the
 * runtime's own work invisible (LARD R1/R2: symbolizer allocations, the
 * report path), makes __tsan_ignore_thread_begin cheap (it is the same
 * count), and a signal handler that interrupts the engine on its own
 * thread cannot re-enter it.
 *
 * Files (one concern each):
 *   rt_core.c      init, options, the context, thread states, exit
 *   options.def    every VALOR_OPTIONS key, once
 *   tsan_access.c  __tsan_{read,write}N: the inline check (tsan_access.h)
 *   tsan_abi.c     the checks' out-of-line paths, the other __tsan_read*
 *                  and __tsan_write*, ranges, vptr, func entry/exit,
 *                  __tsan_mem*, ignores
 *   tsan_atomic.c  __tsan_atomic*: the real atomic effect, and sync
 *   annotate.c     __tsan_acquire/release, __tsan_mutex_*, <valor/valor.h>
 *   intercept_*.c  pthread, malloc, mmap, string functions, fork, syscalls,
 *                  signal handlers
 *   report*.c      symbolization, stacks, heap blocks, report formats,
 *                  suppressions, the exit summary
 */
#ifndef VALOR_RUNTIME_RT_H
#define VALOR_RUNTIME_RT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <valor/engine.h>

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Visible to the program's dynamic linker (interceptors, __tsan_*). */
#define RT_EXPORT __attribute__((visibility("default")))
#define RT_HIDDEN __attribute__((visibility("hidden")))

/* ---- options (rt_core.c; declared once in options.def) ---- */

enum rt_opt_type { RT_OPT_BOOL, RT_OPT_INT, RT_OPT_STRING, RT_OPT_ENUM };

/*
 * options.def lists every option once:
 *   RT_OPT_BOOL(name, default, help)
 *   RT_OPT_INT(name, default, min, max, help)
 *   RT_OPT_STR(name, default, help)
 *   RT_OPT_ENUM(name, default, "a|b|c", help)   (the field is the index)
 */
struct rt_options {
#define RT_OPT_BOOL(name, def, help) bool name;
#define RT_OPT_INT(name, def, min, max, help) long name;
#define RT_OPT_STR(name, def, help) const char *name;
#define RT_OPT_ENUM(name, def, values, help) int name;
#include "options.def"
#undef RT_OPT_BOOL
#undef RT_OPT_INT
#undef RT_OPT_STR
#undef RT_OPT_ENUM
};

/* ---- per-thread state ---- */

/* A shadow call stack, kept only when func entry/exit hooks are compiled in. */
struct rt_shadow_stack {
	uintptr_t *pc;
	uint32_t depth, cap;
};

struct rt_thread {
	struct valor_thread *vt; /* engine handle; NULL once finished */
	int busy; /* > 0: in the runtime, or ignoring */
	pid_t os_tid;
	uint64_t id; /* = valor_thread_id(vt), kept after exit */
	uint32_t create_stack; /* stack depot id where it was created */
	uint64_t parent_id; /* logical id of the creator, 0 for main */
	uintptr_t stack_lo, stack_hi; /* its stack, for "stack of thread N" */
	uintptr_t tls_lo, tls_hi; /* its static TLS block */
	bool detached;
	bool finished;
	pthread_t self;
	struct rt_shadow_stack sstack;
	/*
	 * The site of the access an out-of-line access path is on: the
	 * frame a walk from there skips (tsan_access.h).
	 */
	uintptr_t access_site;
	struct rt_thread *next, *prev; /* rt.threads, under rt.threads_lock */
};

/* ---- the runtime's global state (rt_core.c) ---- */

struct rt_global {
	atomic_int state; /* 0 not started, 1 starting, 2 running */
	struct valor_ctx *ctx;
	struct rt_options opt;
	struct rt_thread *threads; /* every rt_thread not yet freed */
	atomic_int threads_lock; /* rt_lock()/rt_unlock(), never pthread */
	atomic_ullong conflicts; /* reported (after suppression and dedup) */
	atomic_ullong suppressed;
	pid_t pid;
};

extern struct rt_global rt;
/* Point the inline fast path at a new rt.ctx (tsan_abi.c). */
void rt_fast_path_init(struct valor_ctx *ctx);
/*
 * Whether @pc is in the access code that runs without the busy guard:
 * the entry points and FastRCD's and FastTrack's in-place step
 * (tsan_access.h).
 */
bool rt_pc_in_access_code(uintptr_t pc);

/*
 * The calling thread's state.  initial-exec TLS: one %fs-relative load
 * in the statically linked program.
 */
extern __thread struct rt_thread *rt_cur
	__attribute__((tls_model("initial-exec")));
/*
 * rt_cur->vt while the thread runs and is not busy (NULL before it
 * starts, while busy, and once it finishes): the access fast path loads
 * the engine thread from here and needs no other test for those.
 */
extern __thread struct valor_thread *rt_cur_vt
	__attribute__((tls_model("initial-exec")));

/* Start the runtime if needed (idempotent, any thread, any time). */
void rt_init(void);

/* The calling thread's state, or NULL if the runtime is not running. */
static inline struct rt_thread *rt_self(void)
{
	struct rt_thread *t = rt_cur;

	if (unlikely(!t)) {
		rt_init();
		t = rt_cur;
	}
	return t;
}

/*
 * The calling thread @t becomes busy, or one level less so.  The access
 * fast path reads "busy" folded into rt_cur_vt, which is NULL while the
 * count is not zero: every change of the count goes through these.
 */
static inline void rt_busy_inc(struct rt_thread *t)
{
	t->busy++;
	if (t == rt_cur)
		rt_cur_vt = NULL;
}

static inline void rt_busy_dec(struct rt_thread *t)
{
	if (!--t->busy && !t->finished && t == rt_cur)
		rt_cur_vt = t->vt;
}

/* The caller may analyse: a thread state, running, not busy, not finished. */
static inline struct rt_thread *rt_enter(void)
{
	struct rt_thread *t = rt_cur;

	if (unlikely(!t || t->busy || !t->vt))
		return NULL;
	rt_busy_inc(t);
	return t;
}

static inline void rt_leave(struct rt_thread *t)
{
	rt_busy_dec(t);
}

/* Thread lifecycle (rt_core.c), used by the pthread interceptors. */
struct rt_thread *rt_thread_new(struct rt_thread *parent);
void rt_thread_start(struct rt_thread *t); /* on the new thread */
void rt_thread_finish(struct rt_thread *t); /* on the thread, at exit */
void rt_thread_free(struct rt_thread *t); /* after join or detach+exit */
struct rt_thread *rt_thread_by_pthread(pthread_t p);

/* fork(): the child starts over with fresh analysis state (rt_core.c). */
void rt_after_fork_child(void);

/* Sync events on behalf of the caller (no-ops when busy). */
void rt_acquire(uintptr_t obj);
void rt_release(uintptr_t obj);

/*
 * Memory whose lifetime ends (free, munmap, realloc's old block): checked
 * as a write, then its history is cleared (rt_core.c).
 */
void rt_free_range(uintptr_t addr, size_t size, uintptr_t pc);

/* A small lock for runtime-internal lists: never a pthread mutex. */
void rt_lock(atomic_int *l);
void rt_unlock(atomic_int *l);

/*
 * A start-up error (options, the log, the suppressions file): the
 * message to stderr, then _exit(2).  No malloc, no log.
 */
__attribute__((format(printf, 1, 2), noreturn)) void rt_die(const char *fmt,
							    ...);

/*
 * The report log (the log_path option; report_log.c): opened at start-up
 * (rt_die() if it cannot be), then written, no malloc, no stdio.
 */
void rt_log_open(void);
void rt_log_write(const char *buf, size_t len);
/* The program is about to close @fd, or made @fd a copy of another. */
void rt_log_fd_closing(int fd);
void rt_log_fd_replaced(int fd);
__attribute__((format(printf, 1, 2))) void rt_log_printf(const char *fmt, ...);

/*
 * The real libc functions behind the interceptors live in intercept.h
 * (intercept_real.c resolves them); rt_init() calls rt_intercept_init()
 * before anything else.
 */
void rt_intercept_init(void);

/* ---- reports (report*.c) ---- */

/* The engine's on_conflict callback. */
void rt_on_conflict(void *arg, const struct valor_conflict *c);
/* Print the summary at exit and return the exit status to use (0 or exitcode). */
int rt_report_finish(void);
/* Program-installed handler from <valor/valor.h> (annotate.c sets it). */
extern void (*rt_user_conflict_handler)(const struct valor_conflict *c);

/* Stacks: capture the caller's stack (frame pointers) into the depot. */
uint32_t rt_stack_capture(uintptr_t pc, unsigned skip);

/* Heap blocks for reports: record on allocation, drop on free. */
void rt_heap_record(uintptr_t addr, size_t size, uint32_t stack, uint64_t tid);
size_t
rt_heap_forget(uintptr_t addr); /* returns the block's size, 0 if unknown */

#endif /* VALOR_RUNTIME_RT_H */
