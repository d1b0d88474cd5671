// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Annotations programs write by hand: TSan's (__tsan_acquire/release,
 * the __tsan_mutex_* family, the external-object API) and the project's
 * own <valor/valor.h>.
 *
 * "Ignore" is the thread's busy count (rt.h): while it is non-zero the
 * thread's accesses, interceptors and atomics pass through unanalysed,
 * which is what TSan's ignore regions and the bodies of annotated mutex
 * operations mean.
 */
#include "rt.h"

#include <valor/valor.h>

#if defined(__has_include)
#if __has_include(<sanitizer/tsan_interface.h>)
/* Only to have the compiler check our definitions against TSan's. */
#include <sanitizer/tsan_interface.h>
#endif
#endif

/* __tsan_mutex_* flags (tsan_interface.h; part of the ABI). */
enum {
	MUTEX_READ_LOCK = 1u << 3,
	MUTEX_TRY_LOCK_FAILED = 1u << 5,
};

/* ---- ignores ---- */

static void ignore_begin(void)
{
	struct rt_thread *t = rt_self();

	if (t)
		rt_busy_inc(t);
}

static void ignore_end(void)
{
	struct rt_thread *t = rt_cur;

	/* An unmatched end must not undo the runtime's own count. */
	if (t && t->busy > 0)
		rt_busy_dec(t);
}

/* ---- TSan: happens-before annotations ---- */

RT_EXPORT void __tsan_acquire(void *addr)
{
	rt_acquire((uintptr_t)addr);
}

RT_EXPORT void __tsan_release(void *addr)
{
	rt_release((uintptr_t)addr);
}

/* ---- TSan: custom mutexes ---- */

/*
 * Readers must not synchronize with each other through a read-write
 * lock, only with writers: read-unlocks release a second object, which
 * only write-locks acquire.  (The engine's sync objects are keys, not
 * memory, so the key just has to differ from every real address.)
 */
static inline uintptr_t read_side(void *m)
{
	return (uintptr_t)m ^ (1ull << 63);
}

/*
 * Creation and destruction carry no synchronization; TSan checks the
 * destruction as a write to catch use-after-destroy, but we do not know
 * the mutex's size.
 */
RT_EXPORT void __tsan_mutex_create(void *addr, unsigned flags)
{
	(void)addr;
	(void)flags;
}

RT_EXPORT void __tsan_mutex_destroy(void *addr, unsigned flags)
{
	(void)addr;
	(void)flags;
}

/* The lock's own accesses, between pre and post, are not the program's. */
RT_EXPORT void __tsan_mutex_pre_lock(void *addr, unsigned flags)
{
	(void)addr;
	(void)flags;
	ignore_begin();
}

RT_EXPORT void __tsan_mutex_post_lock(void *addr, unsigned flags, int recursion)
{
	struct rt_thread *t;

	(void)recursion;
	ignore_end();
	if (flags & MUTEX_TRY_LOCK_FAILED)
		return;
	t = rt_enter();
	if (!t)
		return;
	valor_acquire(t->vt, (uintptr_t)addr);
	if (!(flags & MUTEX_READ_LOCK))
		valor_acquire(t->vt, read_side(addr));
	rt_leave(t);
}

/*
 * Returns the recursion levels released, for a later post_lock with
 * __tsan_mutex_recursive_lock; we do not count them and post_lock does
 * not need them.
 */
RT_EXPORT int __tsan_mutex_pre_unlock(void *addr, unsigned flags)
{
	if (flags & MUTEX_READ_LOCK)
		rt_release(read_side(addr));
	else
		rt_release((uintptr_t)addr);
	ignore_begin();
	return 0;
}

RT_EXPORT void __tsan_mutex_post_unlock(void *addr, unsigned flags)
{
	(void)addr;
	(void)flags;
	ignore_end();
}

/* A condition variable's signal: ignore its internals, nothing more. */
RT_EXPORT void __tsan_mutex_pre_signal(void *addr, unsigned flags)
{
	(void)addr;
	(void)flags;
	ignore_begin();
}

RT_EXPORT void __tsan_mutex_post_signal(void *addr, unsigned flags)
{
	(void)addr;
	(void)flags;
	ignore_end();
}

/* Inside pre/post: code unrelated to the mutex runs, analysed again. */
RT_EXPORT void __tsan_mutex_pre_divert(void *addr, unsigned flags)
{
	(void)addr;
	(void)flags;
	ignore_end();
}

RT_EXPORT void __tsan_mutex_post_divert(void *addr, unsigned flags)
{
	(void)addr;
	(void)flags;
	ignore_begin();
}

/* ---- TSan: external objects (libraries checking their callers) ---- */

/*
 * A library marks logical reads and writes of its objects; like TSan, an
 * access of the object's first byte at the library user's PC.  Tags only
 * name the object type in TSan's reports: ours do not show them.
 */
RT_EXPORT void *__tsan_external_register_tag(const char *object_type)
{
	static atomic_uintptr_t last_tag;

	(void)object_type;
	return (void *)(atomic_fetch_add(&last_tag, 1) + 1);
}

RT_EXPORT void __tsan_external_register_header(void *tag, const char *header)
{
	(void)tag;
	(void)header;
}

RT_EXPORT void __tsan_external_assign_tag(void *addr, void *tag)
{
	(void)addr;
	(void)tag;
}

static void external_access(void *addr, void *caller_pc, bool is_write,
			    uintptr_t own_site)
{
	struct rt_thread *t = rt_enter();

	if (!t)
		return;
	valor_access(t->vt, (uintptr_t)addr, 1, is_write,
		     caller_pc ? (uintptr_t)caller_pc - 1 : own_site);
	rt_leave(t);
}

RT_EXPORT void __tsan_external_read(void *addr, void *caller_pc, void *tag)
{
	(void)tag;
	external_access(addr, caller_pc, false,
			(uintptr_t)__builtin_return_address(0) - 1);
}

RT_EXPORT void __tsan_external_write(void *addr, void *caller_pc, void *tag)
{
	(void)tag;
	external_access(addr, caller_pc, true,
			(uintptr_t)__builtin_return_address(0) - 1);
}

/* Nothing to release: the shadow is reused, not cached. */
RT_EXPORT void __tsan_flush_memory(void)
{
}

/* ---- <valor/valor.h> ---- */

RT_EXPORT void valor_annotate_acquire(const volatile void *addr)
{
	rt_acquire((uintptr_t)addr);
}

RT_EXPORT void valor_annotate_release(const volatile void *addr)
{
	rt_release((uintptr_t)addr);
}

RT_EXPORT void valor_ignore_begin(void)
{
	ignore_begin();
}

RT_EXPORT void valor_ignore_end(void)
{
	ignore_end();
}

/* report.c calls this (when set) for every conflict it reports. */
void (*rt_user_conflict_handler)(const struct valor_conflict *c);

static _Atomic(valor_conflict_handler) user_handler;

static void call_user_handler(const struct valor_conflict *c)
{
	valor_conflict_handler fn = atomic_load(&user_handler);
	struct valor_conflict_info info = {
		.kind = (int)c->kind,
		.kind_name = valor_conflict_kind_name(c->kind),
		.analysis = valor_analysis_name(c->analysis),
		.addr = (const void *)(uintptr_t)c->addr,
		.size = c->size,
		.lazy = c->lazy,
		.detected_by = c->detected_by,
		.first = {
			.thread = c->first.tid,
			.pc = (const void *)(uintptr_t)c->first.site,
			.is_write = c->first.is_write,
			.region = c->first.region,
		},
		.second = {
			.thread = c->second.tid,
			.pc = (const void *)(uintptr_t)c->second.site,
			.is_write = c->second.is_write,
			.region = c->second.region,
		},
	};

	if (fn)
		fn(&info);
}

RT_EXPORT valor_conflict_handler
valor_set_conflict_handler(valor_conflict_handler fn)
{
	valor_conflict_handler old = atomic_exchange(&user_handler, fn);

	/* Always the adapter, which checks: no window where the two disagree. */
	rt_user_conflict_handler = call_user_handler;
	return old;
}

RT_EXPORT unsigned long long valor_conflict_count(void)
{
	return atomic_load(&rt.conflicts);
}

RT_EXPORT int valor_validate_reads(void)
{
	struct rt_thread *t = rt_enter();
	int n;

	if (!t)
		return 0;
	n = valor_validate(t->vt);
	rt_leave(t);
	return n;
}

RT_EXPORT unsigned long long valor_current_thread(void)
{
	struct rt_thread *t = rt_self();

	return t && t->vt ? t->id : 0;
}
