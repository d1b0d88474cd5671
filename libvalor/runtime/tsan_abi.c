// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The plain-access half of the ThreadSanitizer ABI: what gcc 12 and
 * clang 14 emit with -fsanitize=thread for every load and store, struct
 * copy, vtable pointer, function entry and exit (when the hooks are
 * compiled in), and the few calls the runtime library itself exports
 * for them (__tsan_init, the ignores, the mem* helpers).
 * Documentation/runtime-abi.md lists which compiler emits what.
 *
 * The hot path of every access is: load rt_cur_vt (initial-exec TLS),
 * NULL when there is no engine thread, the thread is busy or finished;
 * test the thread's mode; Valor's inline check (valor_fast.h), or
 * FastRCD's and FastTrack's same-epoch check (hb_fast.h).  What the
 * check cannot finish goes out of line, busy.  No lock, no allocation,
 * no system call; the engine is in the same statically linked archive,
 * so its calls are direct.
 *
 * The site of an access is the call's return address minus one, so that
 * symbolization lands on the line of the access, not the next one.
 */
#include "intercept.h"
#include "pass_abi.h"
#include "tsan_access.h"

extern void *__libc_realloc(void *p, size_t size);

shadow_word *_Atomic *rt_shadow_top;
bool rt_hb;

void rt_fast_path_init(struct valor_ctx *ctx)
{
	rt_shadow_top = ctx->shadow.top;
	rt_hb = ctx->p.analysis != VALOR_ANALYSIS_VALOR;
}

extern const char __start_valor_access_text[]
	__attribute__((weak, visibility("hidden")));
extern const char __stop_valor_access_text[]
	__attribute__((weak, visibility("hidden")));

bool rt_pc_in_access_code(uintptr_t pc)
{
	return pc >= (uintptr_t)__start_valor_access_text &&
	       pc < (uintptr_t)__stop_valor_access_text;
}

/*
 * An out-of-line access path starts: the thread @t becomes busy (load
 * rt_cur_vt first, it is NULL from here on), and the site is noted for
 * a report's frame walk (stackdepot.c).  Every such path is called by
 * the inline check, which ran because rt_cur_vt was set: @t is the
 * calling thread's, not busy and not finished, so entering and leaving
 * need none of rt_busy_inc()'s and rt_busy_dec()'s tests (a signal
 * handler in between leaves the count as it found it).
 */
static inline void access_path_enter(struct rt_thread *t, uintptr_t site)
{
	t->busy = 1;
	rt_cur_vt = NULL;
	t->access_site = site;
}

/* ... and ends: @th is what rt_cur_vt was at the start. */
static inline void access_path_leave(struct rt_thread *t,
				     struct valor_thread *th)
{
	t->busy = 0;
	rt_cur_vt = th;
}

/*
 * What the inline check could not finish: with the thread busy, since
 * the engine may allocate or report.  Out of line, so that the check
 * itself needs no stack frame.
 */
void on_access_slow(uintptr_t addr, size_t size, uintptr_t site,
		    enum valor_fast_action a, cell_word *p, uint64_t w)
{
	struct rt_thread *t = rt_cur;
	struct valor_thread *th = rt_cur_vt; /* NULL once busy */

	/*
	 * A region's first write of a cell.  Writes that scatter over many
	 * streams at once (a radix sort's 1,024 buckets) come back to the
	 * next cells of each stream soon, but too many streams for the
	 * hardware's prefetcher: the next line of cell words is fetched now,
	 * so that the inline check's load of it does not stall.  Radix:
	 * 0.87 of the time; two lines ahead was slower.
	 */
	if (a == VALOR_FAST_WRITE) {
		__builtin_prefetch((const void *)addr, 1, 3);
		__builtin_prefetch((const void *)(p + 8), 1, 3);
	}
	access_path_enter(t, site);
	/* The full path starts with the check again, cells kept per byte too. */
	if (valor_o_fast_act(th, a, addr, size, p, w, site) == VALOR_FAST_MISS)
		valor_access(th, addr, size, a == VALOR_FAST_FULL_WRITE, site);
	access_path_leave(t, th);
}

/*
 * Valor's first read of bytes in a region: the most common action after
 * "nothing", so it has its own out-of-line path, which does only that
 * (the newest entry or a sweep's group entry takes the bytes, or a new
 * entry does).
 */
void on_read_first(uintptr_t addr, uint8_t m, uintptr_t site, uint64_t w)
{
	struct rt_thread *t = rt_cur;
	struct valor_thread *th = rt_cur_vt; /* NULL once busy */

	access_path_enter(t, site);
	valor_o_log_read(th, addr >> CELL_SHIFT, w, m, site);
	access_path_leave(t, th);
}

/*
 * The cells of [@a, @end), each as the inline check and its out-of-line
 * paths would take it, without a call each.  Writes: past the cells the
 * region owns already, two or more cells go to the engine at once,
 * which takes the free ones over as runs of the write set (write_run()
 * in valor.c).  Reads: a filter chunk (1 KiB) the region has read every
 * byte of already costs a look at the filter, no look at its cells, and
 * a group's cells at one word join one entry at once.
 * Returns where it stopped: @end, or the first cell left when a cell's
 * check ended the region and the thread left Valor's fast path.
 */
static inline __attribute__((always_inline)) uintptr_t
walk_cells(struct valor_thread *th, uintptr_t a, uintptr_t end, bool is_write,
	   uintptr_t site)
{
	const uintptr_t chunk = (uintptr_t)RFILTER_CHUNK_CELLS << CELL_SHIFT;
	uintptr_t held = a; /* the filter holds [a, held) */

	while (a < end && th->mode == THREAD_FAST) {
		uintptr_t next = (a | (CELL_SIZE - 1)) + 1;
		enum valor_fast_action act;
		cell_word *p = NULL;
		uint64_t w = 0;
		size_t size;

		if (!is_write && a >= held && end - a > CELL_SIZE) {
			held = (a | (chunk - 1)) + 1;
			if (held > end)
				held = end;
			if (rfilter_holds_range(th, a, held - a)) {
				a = held;
				continue;
			}
		}
		if (!is_write && !(a & (CELL_SIZE - 1)) &&
		    end - a >= 2 * CELL_SIZE) {
			uint64_t cell = a >> CELL_SHIFT;
			unsigned k = valor_o_read_run(
				th, rt_shadow_top, cell,
				rlog_group_run(cell, 1,
					       (end >> CELL_SHIFT) - cell),
				1, site);

			if (k) {
				a += (uintptr_t)k << CELL_SHIFT;
				continue;
			}
		}
		size = (next < end ? next : end) - a;
		act = valor_o_fast_check(th, rt_shadow_top, a, size, is_write,
					 false, &p, &w);
		if (act == VALOR_FAST_DONE) {
			a = next;
			continue;
		}
		if (is_write && end - a >= 2 * CELL_SIZE) {
			valor_access(th, a, end - a, true, site);
			return end;
		}
		if (valor_o_fast_act(th, act, a, size, p, w, site) ==
		    VALOR_FAST_MISS)
			valor_access(th, a, size, is_write, site);
		a = next;
	}
	return a < end ? a : end;
}

/* Reads an interceptor reports up to this long go a cell at a time. */
#define RANGE_SHORT_READ 64

/*
 * A short read an interceptor reports (a word memcmp compares, a field
 * memcpy copies), a cell at a time as the engine takes it, without its
 * entry point: bytes of the cell the log's newest entry is for join
 * that entry without a call, which the nest walk's check does not do
 * (unaligned words compared one after another, a word count's memcmp:
 * 10% slower through the walk).  Returns where it stopped: the end, or
 * where a check took the thread off Valor's fast path.
 */
static uintptr_t read_cells_one_by_one(struct valor_thread *th, uintptr_t a,
				       uintptr_t end, uintptr_t site)
{
	while (a < end && th->mode == THREAD_FAST) {
		uintptr_t next = (a | (CELL_SIZE - 1)) + 1;

		if (next > end)
			next = end;
		if (valor_o_fast(th, rt_shadow_top, a, next - a, false, site) ==
		    VALOR_FAST_MISS)
			valor_access(th, a, next - a, false, site);
		a = next;
	}
	return a;
}

/*
 * A range an interceptor reports (memcpy's source and destination,
 * memset's, an I/O buffer), by the entered thread whose engine handle
 * is @th.  On Valor's fast path it skips valor_access(), where a short
 * copy the region had read and written already cost 40 ns: short reads
 * go a cell at a time, longer ones and writes as a loop's range does
 * (walk_cells()).  The rest, if a check left the fast path, and every
 * range of a thread off it go to the engine.
 */
void rt_range_access(struct valor_thread *th, uintptr_t a, size_t n,
		     bool is_write, uintptr_t site)
{
	uintptr_t end = a + n;

	if (th->mode == THREAD_FAST && end > a)
		a = !is_write && n <= RANGE_SHORT_READ ?
			    read_cells_one_by_one(th, a, end, site) :
			    walk_cells(th, a, end, is_write, site);
	if (a < end)
		valor_access(th, a, end - a, is_write, site);
}

/*
 * The @count cells from the one at @a on, @step cells apart (@step less
 * than a group), read: the cells of a group at once where
 * valor_o_read_run() takes them, the others alone.
 */
static void walk_stride(struct valor_thread *th, uintptr_t a, unsigned step,
			size_t count, uintptr_t site)
{
	while (count) {
		uint64_t cell = a >> CELL_SHIFT;
		unsigned k = 0;

		if (th->mode == THREAD_FAST)
			k = valor_o_read_run(th, rt_shadow_top, cell,
					     rlog_group_run(cell, step, count),
					     step, site);
		if (!k) {
			if (th->mode != THREAD_FAST ||
			    walk_cells(th, a, a + CELL_SIZE, false, site) !=
				    a + CELL_SIZE)
				valor_access(th, a, CELL_SIZE, false, site);
			k = 1;
		}
		a += (uintptr_t)k * step << CELL_SHIFT;
		count -= k;
	}
}

/*
 * The blocks of a loop nest the pass checks at once (pass_access.c):
 * @extent bytes at @base plus d[i].stride times each index below
 * d[i].count, all in one call.  A cell's check may end the region and
 * take the thread off Valor's fast path: the engine's full path then
 * takes the rest.
 */
void on_nest_walk(uintptr_t base, size_t extent, const struct nest_dim *d,
		  unsigned n, bool is_write, uintptr_t site)
{
	struct rt_thread *t = rt_cur;
	struct valor_thread *th = rt_cur_vt; /* NULL once busy */
	size_t idx[VALOR_PASS_NEST_DIMS] = { 0 };

	access_path_enter(t, site);
	if (!is_write && n && extent == CELL_SIZE &&
	    !(base & (CELL_SIZE - 1)) && !(d[0].stride & (CELL_SIZE - 1)) &&
	    d[0].stride < (intptr_t)RLOG_GROUP_CELLS << CELL_SHIFT) {
		/* Every so many cells (a red-black sweep): a group at once. */
		do
			walk_stride(th, nest_block_at(base, d + 1, n - 1, idx),
				    (unsigned)(d[0].stride >> CELL_SHIFT),
				    d[0].count, site);
		while (nest_block_next(d + 1, n - 1, idx));
		access_path_leave(t, th);
		return;
	}
	if (is_write && n && extent == CELL_SIZE && !(base & (CELL_SIZE - 1)) &&
	    d[0].stride == 2 * CELL_SIZE) {
		/* Every other cell written: runs of cells two apart. */
		do
			valor_access_strided(
				th, nest_block_at(base, d + 1, n - 1, idx),
				CELL_SIZE, 2 * CELL_SIZE, d[0].count, true,
				site);
		while (nest_block_next(d + 1, n - 1, idx));
		access_path_leave(t, th);
		return;
	}
	do {
		uintptr_t a = nest_block_at(base, d, n, idx), end = a + extent;

		if (th->mode == THREAD_FAST)
			a = is_write ? walk_cells(th, a, end, true, site) :
				       walk_cells(th, a, end, false, site);
		if (a < end)
			valor_access(th, a, end - a, is_write, site);
	} while (nest_block_next(d, n, idx));
	access_path_leave(t, th);
}

/* FastRCD and FastTrack: every access is the engine's. */
void on_access_full(uintptr_t addr, size_t size, bool is_write, uintptr_t site)
{
	struct rt_thread *t = rt_cur;
	struct valor_thread *th = rt_cur_vt; /* NULL once busy */

	access_path_enter(t, site);
	valor_access(th, addr, size, is_write, site);
	access_path_leave(t, th);
}

/* FastRCD and FastTrack: what hb_try_cell() could not do. */
static __attribute__((noinline)) void
on_hb_cell_general(struct hb_cell *c, uintptr_t addr, uint8_t m, bool is_write,
		   uintptr_t site)
{
	struct rt_thread *t = rt_cur;
	struct valor_thread *th = rt_cur_vt; /* NULL once busy */

	access_path_enter(t, site);
	hb_access_cell(th, c, addr >> CELL_SHIFT, m, is_write, site);
	access_path_leave(t, th);
}

/*
 * FastRCD and FastTrack: an access of one cell the inline check found.
 * The in-place step calls nothing, so it needs no re-entry guard; the
 * rest is a tail call, so that this keeps no registers of its caller.
 * It holds the cell's lock unguarded, so it lives with the entry points:
 * a signal handler that interrupts it runs unanalysed
 * (intercept_signal.c), or an access of the same cell would wait for
 * the lock forever.
 */
__attribute__((section(VALOR_ACCESS_SECTION_NAME))) void
on_hb_cell(struct hb_cell *c, uintptr_t addr, size_t size, bool is_write,
	   uintptr_t site)
{
	uint8_t m = (uint8_t)(((1U << size) - 1) << (addr & (CELL_SIZE - 1)));

	if (hb_try_cell(rt_cur_vt, c, m, is_write, site))
		return;
	on_hb_cell_general(c, addr, m, is_write, site);
}

/* A read followed by a write of the same bytes, as one call. */
static inline __attribute__((always_inline)) void
on_access_rw(const volatile void *addr, size_t size, uintptr_t site)
{
	struct rt_thread *t = rt_cur;

	if (unlikely(!t || t->busy || !t->vt))
		return;
	rt_busy_inc(t);
	valor_access(t->vt, (uintptr_t)addr, size, false, site);
	valor_access(t->vt, (uintptr_t)addr, size, true, site);
	rt_busy_dec(t);
}

/* ---- start-up ---- */

/* Every instrumented module's constructor calls this first. */
/*
 * Every instrumented module's constructor calls this: it is how the
 * runtime learns which code is instrumented (ignore_uninstrumented).
 */
RT_EXPORT void __tsan_init(void)
{
	rt_init();
	rt_modules_register();
}

/* ---- fixed-size accesses: tsan_access.c; these variants are rare ---- */

#define DEFINE_ACCESS_PC(name, size, is_write)              \
	RT_EXPORT void name(void *addr, void *pc)           \
	{                                                   \
		on_access(addr, size, is_write,             \
			  pc ? (uintptr_t)pc - 1 : SITE()); \
	}

#define DEFINE_ACCESS_RW(name, size)              \
	RT_EXPORT void name(void *addr)           \
	{                                         \
		on_access_rw(addr, size, SITE()); \
	}

/* clang, with tsan-compound-read-before-write */
DEFINE_ACCESS_RW(__tsan_read_write1, 1)
DEFINE_ACCESS_RW(__tsan_read_write2, 2)
DEFINE_ACCESS_RW(__tsan_read_write4, 4)
DEFINE_ACCESS_RW(__tsan_read_write8, 8)
DEFINE_ACCESS_RW(__tsan_read_write16, 16)
DEFINE_ACCESS_RW(__tsan_unaligned_read_write2, 2)
DEFINE_ACCESS_RW(__tsan_unaligned_read_write4, 4)
DEFINE_ACCESS_RW(__tsan_unaligned_read_write8, 8)
DEFINE_ACCESS_RW(__tsan_unaligned_read_write16, 16)

/* libtsan exports these for hand-written instrumentation; no compiler emits them. */
DEFINE_ACCESS_PC(__tsan_read1_pc, 1, false)
DEFINE_ACCESS_PC(__tsan_read2_pc, 2, false)
DEFINE_ACCESS_PC(__tsan_read4_pc, 4, false)
DEFINE_ACCESS_PC(__tsan_read8_pc, 8, false)
DEFINE_ACCESS_PC(__tsan_read16_pc, 16, false)
DEFINE_ACCESS_PC(__tsan_write1_pc, 1, true)
DEFINE_ACCESS_PC(__tsan_write2_pc, 2, true)
DEFINE_ACCESS_PC(__tsan_write4_pc, 4, true)
DEFINE_ACCESS_PC(__tsan_write8_pc, 8, true)
DEFINE_ACCESS_PC(__tsan_write16_pc, 16, true)

/* ---- ranges (gcc: block copies, unaligned and bit-field accesses) ---- */

RT_EXPORT void __tsan_read_range(void *addr, unsigned long size)
{
	if (size)
		on_access(addr, size, false, SITE());
}

RT_EXPORT void __tsan_write_range(void *addr, unsigned long size)
{
	if (size)
		on_access(addr, size, true, SITE());
}

RT_EXPORT void __tsan_read_range_pc(void *addr, unsigned long size, void *pc)
{
	if (size)
		on_access(addr, size, false, pc ? (uintptr_t)pc - 1 : SITE());
}

RT_EXPORT void __tsan_write_range_pc(void *addr, unsigned long size, void *pc)
{
	if (size)
		on_access(addr, size, true, pc ? (uintptr_t)pc - 1 : SITE());
}

/* ---- C++ vtable pointers ---- */

/*
 * Constructors and destructors store the vtable pointer of each class in
 * the hierarchy in turn.  Like TSan, a store of the value already there
 * is no write: a destructor running in one thread while another thread
 * calls a virtual function is only a race when the pointer changes.
 */
RT_EXPORT void __tsan_vptr_update(void **vptr_p, void *new_val)
{
	if (*(void *volatile *)vptr_p != new_val)
		on_access(vptr_p, sizeof(*vptr_p), true, SITE());
}

/* clang: the load of a vtable pointer for a virtual call */
RT_EXPORT void __tsan_vptr_read(void **vptr_p)
{
	on_access(vptr_p, sizeof(*vptr_p), false, SITE());
}

/* ---- the shadow call stack (only with the entry/exit hooks) ---- */

/*
 * Entries kept free at the top of the array: a signal handler that runs
 * instrumented code while this thread is inside __libc_realloc (growing
 * the array) pushes into them instead of growing the array again.
 */
#define SSTACK_SLACK 64u
#define SSTACK_FIRST 256u

static __thread bool sstack_growing __attribute__((tls_model("initial-exec")));

/* Make room for one more entry; false if there is none. */
static __attribute__((noinline)) bool sstack_grow(struct rt_shadow_stack *s)
{
	uint32_t cap = s->cap ? s->cap * 2 : SSTACK_FIRST;
	uintptr_t *pc;

	if (sstack_growing || cap <= s->cap)
		return s->depth < s->cap;
	sstack_growing = true;
	pc = __libc_realloc(s->pc, (size_t)cap * sizeof(*pc));
	if (pc) {
		s->pc = pc;
		s->cap = cap;
	}
	sstack_growing = false;
	return s->depth < s->cap;
}

/* @pc is the instrumented function's return address: its call site. */
RT_EXPORT void __tsan_func_entry(void *pc)
{
	struct rt_thread *t = rt_cur;
	struct rt_shadow_stack *s;

	if (unlikely(!t))
		return;
	s = &t->sstack;
	if (unlikely(s->depth + SSTACK_SLACK >= s->cap) && !sstack_grow(s))
		return;
	s->pc[s->depth++] = (uintptr_t)pc;
}

RT_EXPORT void __tsan_func_exit(void)
{
	struct rt_thread *t = rt_cur;

	/* The first functions of a thread may have entered before rt_cur. */
	if (likely(t) && likely(t->sstack.depth))
		t->sstack.depth--;
}

/* ---- ignores (clang, around code it must not check) ---- */

RT_EXPORT void __tsan_ignore_thread_begin(void)
{
	struct rt_thread *t = rt_self();

	if (t)
		rt_busy_inc(t);
}

RT_EXPORT void __tsan_ignore_thread_end(void)
{
	struct rt_thread *t = rt_cur;

	/* An unmatched end must not turn the runtime's own count negative. */
	if (t && t->busy > 0)
		rt_busy_dec(t);
}

/* ---- __tsan_memcpy, __tsan_memmove, __tsan_memset ---- */

/*
 * Neither gcc 12 nor clang 14 emits these (both call memcpy, which the
 * string interceptors see), but libtsan exports them and newer clang
 * emits them.  The copy itself must not call memcpy: that is an
 * interceptor here, and gcc turns a plain loop into a memcpy call.
 */
#if defined(__x86_64__)
static void copy_forward(void *dst, const void *src, size_t n)
{
	__asm__ __volatile__("rep movsb"
			     : "+D"(dst), "+S"(src), "+c"(n)
			     :
			     : "memory");
}

static void copy_backward(void *dst, const void *src, size_t n)
{
	if (!n)
		return;
	dst = (char *)dst + n - 1;
	src = (const char *)src + n - 1;
	__asm__ __volatile__("std\n\trep movsb\n\tcld"
			     : "+D"(dst), "+S"(src), "+c"(n)
			     :
			     : "memory", "cc");
}

static void fill(void *dst, int c, size_t n)
{
	__asm__ __volatile__("rep stosb"
			     : "+D"(dst), "+c"(n)
			     : "a"(c)
			     : "memory");
}
#else
/* volatile keeps the compiler from recognizing the loops as mem* calls. */
static void copy_forward(void *dst, const void *src, size_t n)
{
	volatile char *d = dst;
	const volatile char *s = src;

	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
}

static void copy_backward(void *dst, const void *src, size_t n)
{
	volatile char *d = dst;
	const volatile char *s = src;

	while (n--)
		d[n] = s[n];
}

static void fill(void *dst, int c, size_t n)
{
	volatile char *d = dst;

	for (size_t i = 0; i < n; i++)
		d[i] = (char)c;
}
#endif

RT_EXPORT void *__tsan_memcpy(void *dst, const void *src, unsigned long n)
{
	if (n) {
		on_access(src, n, false, SITE());
		on_access(dst, n, true, SITE());
	}
	copy_forward(dst, src, n);
	return dst;
}

RT_EXPORT void *__tsan_memmove(void *dst, const void *src, unsigned long n)
{
	if (n) {
		on_access(src, n, false, SITE());
		on_access(dst, n, true, SITE());
	}
	if ((uintptr_t)dst - (uintptr_t)src >= n)
		copy_forward(dst, src, n); /* no harmful overlap */
	else
		copy_backward(dst, src, n);
	return dst;
}

RT_EXPORT void *__tsan_memset(void *dst, int c, unsigned long n)
{
	if (n)
		on_access(dst, n, true, SITE());
	fill(dst, c, n);
	return dst;
}
