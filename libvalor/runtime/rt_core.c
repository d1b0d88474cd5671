// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The runtime's core: start-up (options, the report log, the engine
 * context, the main thread), thread states, the sync and free helpers
 * the interceptors call, fork, and the end of the program.
 *
 * Start-up happens at the first of: an instrumented module's constructor
 * calling __tsan_init, an interceptor, or main.  Options are parsed then,
 * before main runs, so a bad VALOR_OPTIONS stops the program before it
 * does anything.
 */
#include "report.h"
#include "rt.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

extern void *__libc_calloc(size_t n, size_t size);
extern void __libc_free(void *p);

struct rt_global rt;
__thread struct rt_thread *rt_cur __attribute__((tls_model("initial-exec")));
__thread struct valor_thread *rt_cur_vt
	__attribute__((tls_model("initial-exec")));
/* Set on the thread running rt_init, so that what init calls passes. */
static __thread bool rt_starting __attribute__((tls_model("initial-exec")));

/* ---- small internal lock (futex; never a pthread mutex) ---- */

void rt_lock(atomic_int *l)
{
	int c = 0;

	if (atomic_compare_exchange_strong(l, &c, 1)) {
		eng_locks_taken();
		return;
	}
	if (c != 2)
		c = atomic_exchange(l, 2);
	while (c != 0) {
		syscall(SYS_futex, l, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
		c = atomic_exchange(l, 2);
	}
	eng_locks_taken();
}

/* Counted with the engine's (sys.h): a signal waits until both are out. */
void rt_unlock(atomic_int *l)
{
	if (atomic_fetch_sub(l, 1) != 1) {
		atomic_store(l, 0);
		syscall(SYS_futex, l, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
	eng_locks_dropped();
}

/* Before the log exists, and for errors about the log itself. */
void rt_die(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0) {
		ssize_t ignored = write(
			2, buf,
			(size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
		(void)ignored;
	}
	_exit(2);
}

/* ---- options ---- */

enum { K_BOOL, K_INT, K_STR, K_ENUM };

struct opt_desc {
	const char *name;
	int kind;
	const char *def; /* default, as text */
	const char *values; /* K_ENUM: "a|b|c" */
	long min, max; /* K_INT */
	const char *help;
	size_t offset;
};

#define STR_(x) #x
#define STR(x) STR_(x)
static const struct opt_desc opt_table[] = {
#define RT_OPT_BOOL(n, d, h) \
	{ #n, K_BOOL, STR(d), NULL, 0, 1, h, offsetof(struct rt_options, n) },
#define RT_OPT_INT(n, d, lo, hi, h) \
	{ #n, K_INT, STR(d), NULL, lo, hi, h, offsetof(struct rt_options, n) },
#define RT_OPT_STR(n, d, h) \
	{ #n, K_STR, d, NULL, 0, 0, h, offsetof(struct rt_options, n) },
#define RT_OPT_ENUM(n, d, v, h) \
	{ #n, K_ENUM, d, v, 0, 0, h, offsetof(struct rt_options, n) },
#include "options.def"
#undef RT_OPT_BOOL
#undef RT_OPT_INT
#undef RT_OPT_STR
#undef RT_OPT_ENUM
};
#define NOPTS (sizeof(opt_table) / sizeof(opt_table[0]))

/* Index of @val (len bytes) in "a|b|c", or -1. */
static int enum_index(const char *values, const char *val, size_t len)
{
	int i = 0;

	for (const char *p = values;; i++) {
		const char *bar = strchr(p, '|');
		size_t n = bar ? (size_t)(bar - p) : strlen(p);

		if (n == len && !strncmp(p, val, len))
			return i;
		if (!bar)
			return -1;
		p = bar + 1;
	}
}

/* Set option @d from @val; returns an error text or NULL. */
static const char *opt_set(struct rt_options *o, const struct opt_desc *d,
			   const char *val, size_t len)
{
	char *field = (char *)o + d->offset;
	static char strings[4096]; /* values of string options live here */
	static size_t used;
	char num[32];
	char *end;
	long v;

	switch (d->kind) {
	case K_BOOL:
		if ((len == 1 && (*val == '1' || *val == '0')) ||
		    (len == 4 && !strncmp(val, "true", 4)) ||
		    (len == 5 && !strncmp(val, "false", 5))) {
			*(bool *)field = *val == '1' || *val == 't';
			return NULL;
		}
		return "expects 0, 1, true or false";
	case K_INT:
		if (!len || len >= sizeof(num))
			return "expects a number";
		memcpy(num, val, len);
		num[len] = 0;
		errno = 0;
		v = strtol(num, &end, 0);
		if (errno || *end)
			return "expects a number";
		if (v < d->min || v > d->max)
			return "is out of range";
		*(long *)field = v;
		return NULL;
	case K_ENUM:
		v = enum_index(d->values, val, len);
		if (v < 0)
			return "has no such value";
		*(int *)field = (int)v;
		return NULL;
	default:
		if (used + len + 1 > sizeof(strings))
			return "is too long";
		memcpy(strings + used, val, len);
		strings[used + len] = 0;
		*(const char **)field = strings + used;
		used += len + 1;
		return NULL;
	}
}

static void opt_defaults(struct rt_options *o)
{
	for (size_t i = 0; i < NOPTS; i++) {
		const char *e = opt_set(o, &opt_table[i], opt_table[i].def,
					strlen(opt_table[i].def));

		if (e)
			rt_die("valor: internal: default of option '%s' %s\n",
			       opt_table[i].name, e);
	}
}

/* Parse "k=v k=v" or "k=v:k=v"; exits with a clear message on an error. */
static void opt_parse(struct rt_options *o, const char *s)
{
	while (s && *s) {
		const char *key, *eq, *val;
		size_t klen, vlen;
		const struct opt_desc *d = NULL;
		const char *err;

		while (*s == ' ' || *s == ':' || *s == '\t' || *s == '\n')
			s++;
		if (!*s)
			break;
		key = s;
		while (*s && *s != ' ' && *s != ':' && *s != '\t' && *s != '\n')
			s++;
		eq = memchr(key, '=', (size_t)(s - key));
		if (!eq)
			rt_die("valor: VALOR_OPTIONS: '%.*s' is not key=value "
			       "(run `valor run --help` for the options)\n",
			       (int)(s - key), key);
		klen = (size_t)(eq - key);
		val = eq + 1;
		vlen = (size_t)(s - val);
		for (size_t i = 0; i < NOPTS; i++)
			if (strlen(opt_table[i].name) == klen &&
			    !strncmp(opt_table[i].name, key, klen))
				d = &opt_table[i];
		if (!d)
			rt_die("valor: VALOR_OPTIONS: unknown option '%.*s' "
			       "(run `valor run --help` for the options)\n",
			       (int)klen, key);
		err = opt_set(o, d, val, vlen);
		if (err)
			rt_die("valor: VALOR_OPTIONS: option '%s' %s: '%.*s'%s%s\n",
			       d->name, err, (int)vlen, val,
			       d->values ? "; one of " : "",
			       d->values ? d->values : "");
	}
}

/* ---- threads ---- */

static void link_thread(struct rt_thread *t)
{
	rt_lock(&rt.threads_lock);
	t->next = rt.threads;
	if (rt.threads)
		rt.threads->prev = t;
	rt.threads = t;
	rt_unlock(&rt.threads_lock);
}

struct rt_thread *rt_thread_new(struct rt_thread *parent)
{
	struct rt_thread *t = __libc_calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	if (parent)
		rt_busy_inc(parent);
	t->vt = valor_thread_create(rt.ctx, parent ? parent->vt : NULL);
	if (t->vt) {
		t->id = valor_thread_id(t->vt);
		t->parent_id = parent ? parent->id : 0;
		t->create_stack = rt_stack_capture(
			(uintptr_t)__builtin_return_address(0), 1);
	}
	if (parent)
		rt_busy_dec(parent);
	if (!t->vt) {
		/* Out of thread slots: the thread runs unanalysed. */
		if (rt.opt.verbosity)
			rt_log_printf("valor: thread not analysed: %s\n",
				      strerror(errno));
	}
	link_thread(t);
	return t;
}

void rt_thread_start(struct rt_thread *t)
{
	pthread_attr_t attr;

	rt_cur = t;
	rt_busy_inc(t);
	t->os_tid = (pid_t)syscall(SYS_gettid);
	t->self = pthread_self();
	if (!pthread_getattr_np(t->self, &attr)) {
		void *lo;
		size_t size;

		if (!pthread_attr_getstack(&attr, &lo, &size)) {
			t->stack_lo = (uintptr_t)lo;
			t->stack_hi = (uintptr_t)lo + size;
		}
		pthread_attr_destroy(&attr);
	}
	rt_busy_dec(t);
}

void rt_thread_finish(struct rt_thread *t)
{
	if (t->finished)
		return;
	rt_busy_inc(t);
	if (t->vt) {
		/*
		 * glibc hands this stack (and the static TLS at its top) to
		 * the next thread: its history ends with this thread.
		 */
		if (t->stack_hi > t->stack_lo)
			valor_forget(t->vt, t->stack_lo,
				     t->stack_hi - t->stack_lo);
		valor_thread_exit(t->vt);
	}
	t->finished = true;
	/* Whatever the thread still runs (TLS destructors) is not analysed. */
}

void rt_thread_free(struct rt_thread *t)
{
	/* Reports may still name it: keep where it was created. */
	rt_report_thread_freed(t);
	rt_lock(&rt.threads_lock);
	if (t->prev)
		t->prev->next = t->next;
	else
		rt.threads = t->next;
	if (t->next)
		t->next->prev = t->prev;
	rt_unlock(&rt.threads_lock);
	__libc_free(t->sstack.pc);
	__libc_free(t);
}

struct rt_thread *rt_thread_by_pthread(pthread_t p)
{
	struct rt_thread *t;

	rt_lock(&rt.threads_lock);
	for (t = rt.threads; t; t = t->next)
		if (t->self == p && !t->finished)
			break;
	if (!t)
		for (t = rt.threads; t; t = t->next)
			if (t->self == p)
				break;
	rt_unlock(&rt.threads_lock);
	return t;
}

/* ---- events the interceptors report ---- */

void rt_acquire(uintptr_t obj)
{
	struct rt_thread *t = rt_enter();

	if (!t)
		return;
	valor_acquire(t->vt, obj);
	rt_leave(t);
}

void rt_release(uintptr_t obj)
{
	struct rt_thread *t = rt_enter();

	if (!t)
		return;
	valor_release(t->vt, obj);
	rt_leave(t);
}

void rt_free_range(uintptr_t addr, size_t size, uintptr_t pc)
{
	struct rt_thread *t = rt_enter();

	if (!t)
		return;
	valor_free(t->vt, addr, size, pc);
	rt_leave(t);
}

/* ---- start and end ---- */

static struct valor_ctx *new_context(void)
{
	struct valor_params p = {
		.analysis = (uint32_t)rt.opt.analysis,
		.regions = (uint32_t)rt.opt.regions,
		.read_log_entries = (uint32_t)rt.opt.read_log_entries,
		.max_threads = (uint32_t)rt.opt.max_threads,
		.on_conflict = rt_on_conflict,
		/* Threads the runtime did not create are not analysed. */
		.flags = VALOR_ONE_ROOT,
	};
	struct valor_ctx *ctx = valor_ctx_new(&p);

	if (!ctx)
		rt_die("valor: cannot create the analysis context: %s\n",
		       strerror(errno));
	return ctx;
}

static void rt_atexit(void)
{
	struct rt_thread *t = rt_cur;
	int status;

	/* The exiting thread's last region ends: validate its reads. */
	if (t && t->vt && !t->busy)
		valor_region_end(t->vt);
	if (t)
		rt_busy_inc(t);
	status = rt_report_finish();
	if (status) {
		/*
		 * The status must be ours, whatever exit() was given; the
		 * program's buffered output must still get out.
		 */
		fflush(NULL);
		_exit(status);
	}
}

void rt_init(void)
{
	int s = atomic_load_explicit(&rt.state, memory_order_acquire);
	struct rt_thread *main_thread;

	if (likely(s == 2) || rt_starting)
		return;
	s = 0;
	if (!atomic_compare_exchange_strong(&rt.state, &s, 1)) {
		/* Another thread is starting the runtime: wait for it. */
		while (atomic_load(&rt.state) != 2)
			sched_yield();
		return;
	}
	rt_starting = true;
	rt.pid = getpid();
	rt_intercept_init();
	opt_defaults(&rt.opt);
	opt_parse(&rt.opt, getenv("VALOR_OPTIONS"));
	rt_log_open();
	/* A bad suppressions file stops the program before main, too. */
	rt_suppress_init();
	rt.ctx = new_context();
	rt_fast_path_init(rt.ctx);

	main_thread = rt_thread_new(NULL);
	if (!main_thread)
		rt_die("valor: out of memory at start-up\n");
	rt_thread_start(main_thread);
	atexit(rt_atexit);
	rt_starting = false;
	atomic_store_explicit(&rt.state, 2, memory_order_release);
}

/*
 * The child of fork() has one thread and a copy of a context whose other
 * threads do not exist in it: start over, with this thread as main.
 * The old context's memory is left as it is (its locks may be held by
 * threads that are gone).
 */
void rt_after_fork_child(void)
{
	struct rt_thread *t;

	rt.pid = getpid();
	atomic_store(&rt.threads_lock, 0);
	/* The locks this thread held (fork's own included) start over free. */
	eng_locks_held = 0;
	rt.threads = NULL;
	atomic_store(&rt.conflicts, 0);
	atomic_store(&rt.suppressed, 0);
	rt_report_after_fork_child();
	rt.ctx = new_context();
	rt_fast_path_init(rt.ctx);
	t = rt_thread_new(NULL);
	if (!t)
		rt_die("valor: out of memory after fork\n");
	rt_thread_start(t);
}

/* Runs before main even in a program with no instrumented constructor. */
__attribute__((constructor(101))) static void rt_constructor(void)
{
	rt_init();
}
