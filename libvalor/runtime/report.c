// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Conflict reports: the engine's on_conflict callback, repeats, the
 * suppressions check, halt_on_conflict, the program's conflict handler
 * and the exit summary.
 *
 * The engine calls rt_on_conflict on the thread that found the conflict,
 * with no engine lock held and the thread busy, so nothing the report
 * does (libdw's mallocs, the string functions it calls) is analysed.
 * One report at a time: report_lock (an rt_lock) serializes building and
 * printing; inside it we take the symbolizer's lock, a heap shard's lock
 * or rt.threads_lock, each briefly, and nothing takes report_lock inside
 * those.  The program's handler (<valor/valor.h>) runs after the lock is
 * released, since it may exit; it sees each reported pair once, like the
 * log, and never a suppressed one.
 *
 * Stacks: the access that found the conflict is unwound now, with frame
 * pointers, from the engine up through the runtime to the program; the
 * frame whose pc is the access's site is where the program's stack
 * begins.  The other thread's access is only known by its site.
 */
#include "report.h"
#include "sys.h"
#include "stackdepot.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static atomic_int report_lock;

/* ---- repeats: site pairs already reported (or suppressed) ---- */

#define SEEN_SLOTS 16384
#define SEEN_PROBES 64

/*
 * Keys of pairs reported or suppressed; 0 is an empty slot.  Slots are
 * written under report_lock only and read without it, so that a pair
 * the program repeats millions of times costs a few loads, not a lock.
 */
static _Atomic uint64_t seen[SEEN_SLOTS];
static atomic_ullong repeated;

/*
 * The last round of every key below: @h mixed with @tag (the conflict's
 * kind, and high bits that keep one set of keys apart from another).
 * Never 0, the empty slot.
 */
static uint64_t key_finish(uint64_t h, uint64_t tag)
{
	h = (h ^ (h >> 32) ^ tag) * 0x94D049BB133111EBULL;
	h ^= h >> 31;
	return h ? h : 1;
}

static uint64_t pair_key(const struct valor_conflict *c)
{
	uint64_t h = c->first.site * 0x9E3779B97F4A7C15ULL;

	h = (h ^ (h >> 29) ^ c->second.site) * 0xBF58476D1CE4E5B9ULL;
	return key_finish(h, c->kind);
}

/*
 * One side of a pair: @site in a conflict of @kind.  A conflict whose
 * other access is not known (the other thread's write log no longer
 * holds that write) is a repeat once its known site has been reported
 * in a conflict of that kind with a named partner: it says no more
 * than that report did, without the other line.
 */
static uint64_t side_key(uint64_t site, uint32_t kind)
{
	return key_finish((site ^ 0x3ULL << 60) * 0x9E3779B97F4A7C15ULL, kind);
}

/* The known site of a pair whose other site is not known, or 0. */
static uint64_t lone_site(const struct valor_conflict *c)
{
	if (!c->first.site == !c->second.site)
		return 0;
	return c->first.site ? c->first.site : c->second.site;
}

/* A string's hash, for line_key(). */
static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xCBF29CE484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001B3ULL;
	return h;
}

/*
 * The pair again by its lines, once both sites are symbolized: a loop
 * the compiler unrolled stores from several places of one line, and
 * each would make a report of the same two lines.  0 if a line is
 * unknown (the sites are then the pair).
 */
static uint64_t line_key(const struct rt_report *r)
{
	const struct rt_frame *a = r->first_top, *b = r->second_top;
	uint64_t h;

	if (!a || !b || !a->file || !b->file || !a->line || !b->line)
		return 0;
	h = (str_hash(a->file) ^ a->line) * 0x9E3779B97F4A7C15ULL;
	h = (h ^ (h >> 29) ^ str_hash(b->file) ^ b->line) *
	    0xBF58476D1CE4E5B9ULL;
	/* The high bits keep line keys apart from pair_key()'s. */
	return key_finish(h, r->c->kind ^ 0x5ULL << 56);
}

/*
 * One side of a pair by its line: frame @f (NULL, or no line: 0) in a
 * conflict of @kind.  The same read checked by two instructions (the
 * pass's two slow paths) has two sites but one line.
 */
static uint64_t side_line_key(const struct rt_frame *f, uint32_t kind)
{
	if (!f || !f->file || !f->line)
		return 0;
	return key_finish((str_hash(f->file) ^ f->line ^ 0x9ULL << 56) *
				  0x9E3779B97F4A7C15ULL,
			  kind);
}

/*
 * The line of the known side of a report whose other side has no
 * stack, or 0.
 */
static uint64_t lone_line_key(const struct rt_report *r)
{
	if (!r->first_top == !r->second_top)
		return 0;
	return side_line_key(r->first_top ? r->first_top : r->second_top,
			     r->c->kind);
}

/*
 * Whether @key is in the set; if not and @add, put it in (the caller
 * holds report_lock).  A full neighbourhood stops remembering: those
 * pairs are then reported every time.
 */
static bool seen_check(uint64_t key, bool add)
{
	for (unsigned i = 0; i < SEEN_PROBES; i++) {
		_Atomic uint64_t *s = &seen[(key + i) & (SEEN_SLOTS - 1)];
		uint64_t v = atomic_load_explicit(s, memory_order_acquire);

		if (v == key)
			return true;
		if (!v) {
			if (add)
				atomic_store_explicit(s, key,
						      memory_order_release);
			return false;
		}
	}
	return false;
}

/* ---- threads that were freed, for "created at" ---- */

#define GONE_SLOTS 1024

struct gone_thread {
	uint64_t id, parent;
	uint32_t create_stack;
	pid_t os_tid;
};

static atomic_int gone_lock;
static struct gone_thread gone[GONE_SLOTS];
static unsigned gone_next;

void rt_report_thread_freed(const struct rt_thread *t)
{
	if (!t->id)
		return;
	rt_lock(&gone_lock);
	gone[gone_next++ % GONE_SLOTS] = (struct gone_thread){
		.id = t->id,
		.parent = t->parent_id,
		.create_stack = t->create_stack,
		.os_tid = t->os_tid,
	};
	rt_unlock(&gone_lock);
}

/* ---- building a report ---- */

static struct rt_frame frame_pool[RT_REPORT_FRAMES];
static unsigned frames_used;

static struct rt_stack_view symbolize_pcs(const uintptr_t *pc, unsigned n)
{
	struct rt_stack_view v = { .frame = &frame_pool[frames_used] };

	for (unsigned i = 0; i < n && frames_used < RT_REPORT_FRAMES; i++) {
		unsigned k = rt_symbolize_pc(pc[i], &frame_pool[frames_used],
					     RT_REPORT_FRAMES - frames_used);

		frames_used += k;
		v.n += k;
	}
	return v;
}

/* An entry point of the runtime the program calls (an interceptor). */
static bool is_entry_point(const struct rt_frame *f)
{
	return f->exported && f->function && strncmp(f->function, "rt_", 3) &&
	       strncmp(f->function, "__tsan_", 7);
}

/*
 * The program's part of a stack unwound inside the runtime: the
 * runtime's frames on top are dropped but for the interceptor the
 * program called (pthread_mutex_unlock, malloc), and the stack ends
 * where the program's frames give way to the runtime's again (the
 * thread start trampoline) or at main.  An all-runtime stack keeps its
 * last frame (validation at exit).
 */
static struct rt_stack_view program_frames(struct rt_stack_view v)
{
	unsigned i = 0, end;

	while (i < v.n && v.frame[i].runtime)
		i++;
	if (i == v.n) {
		i = v.n ? v.n - 1 : 0;
	} else if (i && is_entry_point(&v.frame[i - 1])) {
		i--;
	}
	for (end = i; end < v.n; end++) {
		const struct rt_frame *f = &v.frame[end];

		if (end > i && f->runtime)
			break;
		/* What runs main (__libc_start_call_main) is noise. */
		if (f->function && !f->inlined &&
		    !strcmp(f->function, "main")) {
			end++;
			break;
		}
	}
	v.frame += i;
	v.n = end - i;
	return v;
}

static unsigned stack_depth(void)
{
	long d = rt.opt.stack_depth;

	return d < 1 ? 32 : d > RT_STACK_MAX ? RT_STACK_MAX : (unsigned)d;
}

static struct rt_stack_view depot_stack(uint32_t id)
{
	unsigned n;
	const uintptr_t *pc = rt_stack_get(id, &n);
	struct rt_stack_view none = { .frame = NULL };

	if (!pc)
		return none;
	return program_frames(symbolize_pcs(pc, n));
}

/* Frees and unmaps reach the engine as writes; name them. */
static const char *lifetime_op(uintptr_t interceptor_pc)
{
	static const char *const ops[] = {
		"free", "cfree", "realloc", "reallocarray", "munmap", "mremap",
	};
	struct rt_frame f[8];
	unsigned n = rt_symbolize_pc(interceptor_pc, f, 8);
	const char *fn = n ? f[n - 1].function : NULL;

	if (!fn || !f[n - 1].runtime)
		return NULL;
	for (unsigned i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(fn, ops[i]))
			return ops[i];
	return NULL;
}

/*
 * The stack of the access this thread is making now, whose site is
 * @site: the frames above the runtime's, found by their pc.  Without
 * frame pointers there, the shadow call stack if the func entry/exit
 * hooks keep one, else the site alone.
 */
static void current_stack(struct rt_report_access *a, struct rt_thread *self)
{
	uintptr_t raw[RT_STACK_MAX + 64], pc[RT_STACK_MAX];
	unsigned depth = stack_depth(), n, m = 0, i;

	a->op = a->is_write ? "write" : "read";
	if (!a->site)
		return;
	pc[m++] = a->site;
	n = rt_stack_walk(raw, depth + 64);
	for (i = 0; i < n; i++)
		if (raw[i] == a->site || raw[i] + 1 == a->site)
			break;
	if (i < n) {
		if (i > 0 && a->is_write) {
			const char *op = lifetime_op(raw[i - 1]);

			if (op)
				a->op = op;
		}
		for (i++; i < n && m < depth; i++)
			pc[m++] = raw[i];
	} else if (self && self->sstack.depth) {
		for (uint32_t k = self->sstack.depth; k-- > 0 && m < depth;)
			pc[m++] = self->sstack.pc[k] - 1;
	}
	a->stack = program_frames(symbolize_pcs(pc, m));
}

static void site_stack(struct rt_report_access *a)
{
	a->op = a->is_write ? "write" : "read";
	a->site_only = true;
	if (a->site)
		a->stack = symbolize_pcs(&a->site, 1);
}

static void set_access(struct rt_report_access *a,
		       const struct valor_access_info *info)
{
	a->tid = info->tid;
	a->is_write = info->is_write;
	a->site = (uintptr_t)info->site;
}

/*
 * The size of the static TLS area, which x86-64 puts right below each
 * thread's pointer (pthread_self()); 0 if ld.so does not say.
 */
static size_t static_tls_size(void)
{
	static size_t size;
	static bool asked;

	if (!asked) {
		void (*info)(size_t *, size_t *);
		size_t align;

		*(void **)&info =
			dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
		if (info)
			info(&size, &align);
		asked = true;
	}
	return size;
}

static bool in_tls_of(const struct rt_thread *t, uintptr_t addr,
		      size_t tls_size)
{
	if (t->tls_hi > t->tls_lo)
		return addr >= t->tls_lo && addr < t->tls_hi;
#if defined(__x86_64__)
	uintptr_t self = (uintptr_t)t->self;

	/*
	 * ld.so's static size counts the thread descriptor too, which lies
	 * above the thread pointer, at the top of a thread's stack block:
	 * the part below it starts where the thread's stack ends.  Counted
	 * whole, it took the first 2 KiB of every thread's stack for TLS.
	 */
	if (self && t->stack_hi > self && t->stack_hi - self < tls_size)
		tls_size -= t->stack_hi - self;
	if (self && tls_size && addr < self && self - addr <= tls_size)
		return true;
#endif
	return false;
}

static void describe_memory(struct rt_report_mem *m, uintptr_t addr)
{
	struct rt_heap_block b;
	struct rt_data_symbol ds;
	struct rt_thread *t;
	size_t tls_size = static_tls_size();

	if (rt_heap_find(addr, &b)) {
		m->type = RT_MEM_HEAP;
		m->start = b.start;
		m->size = b.size;
		m->tid = b.tid;
		m->alloc_stack = depot_stack(b.stack);
		return;
	}
	/* TLS first: a thread's static TLS sits at the top of its stack. */
	rt_lock(&rt.threads_lock);
	for (t = rt.threads; t; t = t->next) {
		if (in_tls_of(t, addr, tls_size)) {
			m->type = RT_MEM_TLS;
			m->tid = t->id;
			break;
		}
	}
	for (t = rt.threads; t && m->type == RT_MEM_UNKNOWN; t = t->next) {
		if (t->stack_hi > t->stack_lo && addr >= t->stack_lo &&
		    addr < t->stack_hi) {
			m->type = RT_MEM_STACK;
			m->tid = t->id;
		}
	}
	rt_unlock(&rt.threads_lock);
	if (m->type != RT_MEM_UNKNOWN)
		return;
	if (rt_symbolize_data(addr, &ds)) {
		m->type = RT_MEM_GLOBAL;
		m->name = ds.name;
		m->start = ds.start;
		m->size = ds.size;
		m->module = ds.module;
		m->module_base = ds.module_base;
	}
}

/* What is known of thread @tid: from rt.threads, or freed since. */
static bool find_thread(uint64_t tid, struct gone_thread *out, bool *finished)
{
	struct rt_thread *t;
	bool found = false;

	if (!tid)
		return false;
	rt_lock(&rt.threads_lock);
	for (t = rt.threads; t; t = t->next) {
		if (t->id == tid) {
			*out = (struct gone_thread){
				.id = t->id,
				.parent = t->parent_id,
				.create_stack = t->create_stack,
				.os_tid = t->os_tid,
			};
			*finished = t->finished;
			found = true;
			break;
		}
	}
	rt_unlock(&rt.threads_lock);
	if (found)
		return true;
	rt_lock(&gone_lock);
	for (unsigned i = 0; i < GONE_SLOTS && !found; i++) {
		if (gone[i].id == tid) {
			*out = gone[i];
			*finished = true;
			found = true;
		}
	}
	rt_unlock(&gone_lock);
	return found;
}

static bool is_main_thread(uint64_t tid)
{
	struct gone_thread g;
	bool finished;

	return find_thread(tid, &g, &finished) && !g.parent;
}

static void describe_thread(struct rt_report_thread *out, uint64_t tid)
{
	struct gone_thread g;

	out->tid = tid;
	out->known = find_thread(tid, &g, &out->finished);
	if (!out->known)
		return;
	out->parent = g.parent;
	out->os_tid = g.os_tid;
	out->is_main = !g.parent;
	if (!out->is_main) {
		out->parent_is_main = is_main_thread(g.parent);
		out->created_at = depot_stack(g.create_stack);
	}
}

/*
 * Validation at a thread's or the program's end shows no frame of the
 * program worth printing; rt_core.c's exit paths say which it was.
 */
static const char *exit_point(struct rt_stack_view all)
{
	for (unsigned i = 0; i < all.n && all.frame[i].runtime; i++) {
		const char *fn = all.frame[i].function;

		if (fn && !strcmp(fn, "rt_thread_finish"))
			return "thread";
		if (fn && !strcmp(fn, "rt_atexit"))
			return "program";
	}
	return NULL;
}

static void build(struct rt_report *r, const struct valor_conflict *c,
		  struct rt_thread *self)
{
	memset(r, 0, sizeof(*r));
	frames_used = 0;
	r->c = c;
	rt_symbolize_begin();
	/*
	 * Eager: the later access is this thread's.  Lazy (read-write
	 * found by validation): the read is this thread's, the write came
	 * from another thread while the reading region was going.
	 */
	set_access(&r->current, c->lazy ? &c->first : &c->second);
	set_access(&r->earlier, c->lazy ? &c->second : &c->first);
	if (c->lazy) {
		uintptr_t raw[RT_STACK_MAX + 64];
		unsigned n = rt_stack_walk(raw, stack_depth() + 64);

		struct rt_stack_view all;

		site_stack(&r->current);
		r->current.site_only = false;
		all = symbolize_pcs(raw, n);
		r->validated_at_exit = exit_point(all);
		r->validated_at = program_frames(all);
		if (r->validated_at.n > stack_depth())
			r->validated_at.n = stack_depth();
	} else {
		current_stack(&r->current, self);
	}
	site_stack(&r->earlier);

	r->first_top = c->lazy ? r->current.stack.frame :
				 r->earlier.stack.frame;
	r->second_top = c->lazy ? r->earlier.stack.frame :
				  r->current.stack.frame;
	if (c->lazy ? !r->current.stack.n : !r->earlier.stack.n)
		r->first_top = NULL;
	if (c->lazy ? !r->earlier.stack.n : !r->current.stack.n)
		r->second_top = NULL;

	describe_memory(&r->mem, (uintptr_t)c->addr);
	r->mem.tid_is_main = is_main_thread(r->mem.tid);
	describe_thread(&r->thread[r->nthreads++], r->current.tid);
	/* 0: the other thread is not known (its write log wrapped). */
	if (r->earlier.tid && r->earlier.tid != r->current.tid)
		describe_thread(&r->thread[r->nthreads++], r->earlier.tid);
}

/* ---- the callback ---- */

static void call_handler(const struct valor_conflict *c)
{
	void (*fn)(const struct valor_conflict *) = rt_user_conflict_handler;

	if (fn)
		fn(c);
}

void rt_on_conflict(void *arg, const struct valor_conflict *c)
{
	static struct rt_report r;
	struct rt_thread *self = rt_cur;
	uint64_t key = pair_key(c), conflicts;
	const char *supp;

	(void)arg;
	if (seen_check(key, false) ||
	    (lone_site(c) &&
	     seen_check(side_key(lone_site(c), c->kind), false))) {
		atomic_fetch_add_explicit(&repeated, 1, memory_order_relaxed);
		return;
	}
	/* Normally busy already; a report must never be analysed. */
	if (self)
		rt_busy_inc(self);
	rt_lock(&report_lock);
	/* Another thread may have reported the pair while we waited. */
	if (seen_check(key, true)) {
		atomic_fetch_add_explicit(&repeated, 1, memory_order_relaxed);
		goto out_unlock;
	}
	if (c->first.site && c->second.site) {
		seen_check(side_key(c->first.site, c->kind), true);
		seen_check(side_key(c->second.site, c->kind), true);
	}
	build(&r, c, self);
	key = line_key(&r);
	if (key && seen_check(key, true)) {
		atomic_fetch_add_explicit(&repeated, 1, memory_order_relaxed);
		goto out_unlock;
	}
	key = lone_line_key(&r);
	if (key && seen_check(key, false)) {
		atomic_fetch_add_explicit(&repeated, 1, memory_order_relaxed);
		goto out_unlock;
	}
	if (r.first_top && r.second_top) {
		key = side_line_key(r.first_top, c->kind);
		if (key)
			seen_check(key, true);
		key = side_line_key(r.second_top, c->kind);
		if (key)
			seen_check(key, true);
	}
	supp = rt_suppress_match(&r);
	if (supp) {
		atomic_fetch_add(&rt.suppressed, 1);
		goto out_unlock;
	}
	conflicts = atomic_fetch_add(&rt.conflicts, 1) + 1;
	rt_format_report(&r);
	rt_unlock(&report_lock);

	/* Printed and counted first: the handler may exit. */
	call_handler(c);
	if (rt.opt.halt_on_conflict) {
		rt_lock(&report_lock);
		rt_format_summary(conflicts, atomic_load(&rt.suppressed),
				  atomic_load(&repeated), true);
		abort();
	}
	if (self)
		rt_busy_dec(self);
	return;

out_unlock:
	rt_unlock(&report_lock);
	if (self)
		rt_busy_dec(self);
}

/* ---- the end ---- */

int rt_report_finish(void)
{
	static atomic_int done;
	uint64_t n = atomic_load(&rt.conflicts);
	uint64_t m = atomic_load(&rt.suppressed);
	bool locked = false;
	int expected;

	if (atomic_exchange(&done, 1))
		return n ? (int)rt.opt.exitcode : 0;
	/*
	 * Wait for a report being printed, but not forever: exit() may run
	 * in a signal handler that interrupted a report on this thread.
	 */
	for (int i = 0; i < 1000 && !locked; i++) {
		expected = 0;
		locked = atomic_compare_exchange_strong(&report_lock, &expected,
							1);
		if (!locked)
			sched_yield();
	}
	if (locked)
		eng_locks_taken(); /* rt_unlock() below counts it out */
	n = atomic_load(&rt.conflicts);
	m = atomic_load(&rt.suppressed);
	if (n || rt.opt.verbosity || (rt.opt.print_suppressions && m))
		rt_format_summary(n, m, atomic_load(&repeated), false);
	if (locked)
		rt_unlock(&report_lock);
	return n ? (int)rt.opt.exitcode : 0;
}

void rt_report_after_fork_child(void)
{
	atomic_store(&report_lock, 0);
	atomic_store(&gone_lock, 0);
	for (unsigned i = 0; i < SEEN_SLOTS; i++)
		atomic_store(&seen[i], 0);
	atomic_store(&repeated, 0);
	rt_symbolize_after_fork_child();
	rt_heap_after_fork_child();
}
