// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The allocator interceptors: glibc's allocator does the work (through
 * its __libc_* entry points, which need no dlsym and never come back
 * here), the runtime follows the blocks' lifetimes.
 *
 * An allocation starts the block's history afresh (valor_forget, no
 * check) and records the block for reports.  Frees of the program's own
 * blocks already cleared their history, but memory libc frees internally
 * (closedir, freeaddrinfo, a finished thread's key destructors ...) never
 * comes here and may have been read by the program: without the fresh
 * start, the next owner of such memory could conflict with a reader that
 * is long done with it.
 *
 * A free is checked as a write of the whole usable block (a free racing
 * with another thread's access is a race) and then clears its history,
 * before the real free: afterwards another thread may already own the
 * memory.  The usable size, not the requested one, because the program
 * may use all of it (malloc_usable_size says so), and every byte that
 * keeps history would carry it to the block's next owner.
 *
 * calloc's zeroing and realloc's copy are the allocator's work, not the
 * program's accesses: they are not reported.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "intercept.h"

#include <errno.h>
#include <malloc.h>

/* A new block @p of @size requested bytes, allocated by the call at @pc. */
static void block_new(struct rt_thread *t, void *p, size_t size, uintptr_t pc)
{
	valor_forget(t->vt, (uintptr_t)p, size);
	valor_hint_dense(t->vt, (uintptr_t)p, size);
	rt_heap_record((uintptr_t)p, size, rt_stack_capture(pc, 0), t->id);
}

/*
 * Block @p ends (free, or realloc's old block): checked as a write, then
 * forgotten.  Returns the size it was allocated with (0 if unknown).
 * The heap record goes after the check, so that a conflict found by it
 * still describes the block (nobody can allocate it before the real
 * free).
 */
static size_t block_end(struct rt_thread *t, void *p, uintptr_t pc)
{
	valor_free(t->vt, (uintptr_t)p, malloc_usable_size(p), pc);
	return rt_heap_forget((uintptr_t)p);
}

/* Record @p if the caller may analyse; @p may be NULL. */
static inline void *allocated(void *p, size_t size, uintptr_t pc)
{
	struct rt_thread *t;

	if (p && (t = rt_icpt_enter())) {
		block_new(t, p, size, pc);
		rt_leave(t);
	}
	return p;
}

RT_INTERCEPTOR void *malloc(size_t size)
{
	return allocated(__libc_malloc(size), size, RT_CALLER_PC());
}

RT_INTERCEPTOR void *calloc(size_t n, size_t size)
{
	/* A non-NULL result means n * size did not overflow. */
	return allocated(__libc_calloc(n, size), n * size, RT_CALLER_PC());
}

RT_INTERCEPTOR void free(void *p)
{
	struct rt_thread *t;

	if (!p)
		return;
	if ((t = rt_icpt_enter())) {
		block_end(t, p, RT_CALLER_PC());
		rt_leave(t);
	}
	__libc_free(p);
}

/*
 * realloc = a free of the old block (checked: "realloc while another
 * thread reads" is a race) + a new block, whether or not glibc moved it.
 */
static void *realloc_at(void *p, size_t size, uintptr_t pc)
{
	struct rt_thread *t;
	size_t old_size = 0;
	void *q;

	if (!p)
		return allocated(__libc_malloc(size), size, pc);
	t = rt_icpt_enter();
	if (t)
		old_size = block_end(t, p, pc);
	q = __libc_realloc(p, size);
	if (t) {
		if (q)
			block_new(t, q, size, pc);
		else if (size)
			/* Failed: the old block lives on, with fresh history. */
			rt_heap_record((uintptr_t)p, old_size,
				       rt_stack_capture(pc, 0), t->id);
		rt_leave(t);
	}
	return q;
}

RT_INTERCEPTOR void *realloc(void *p, size_t size)
{
	return realloc_at(p, size, RT_CALLER_PC());
}

RT_INTERCEPTOR void *reallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc_at(p, n * size, RT_CALLER_PC());
}

/* glibc's own test (malloc.c, __posix_memalign). */
static bool posix_alignment(size_t align)
{
	size_t words = align / sizeof(void *);

	return align && align % sizeof(void *) == 0 && !(words & (words - 1));
}

RT_INTERCEPTOR int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (!posix_alignment(align))
		return EINVAL;
	p = __libc_memalign(align, size);
	if (!p)
		return ENOMEM;
	*out = allocated(p, size, RT_CALLER_PC());
	return 0;
}

/* glibc 2.36's aligned_alloc is memalign (same entry point). */
RT_INTERCEPTOR void *aligned_alloc(size_t align, size_t size)
{
	return allocated(__libc_memalign(align, size), size, RT_CALLER_PC());
}

RT_INTERCEPTOR void *memalign(size_t align, size_t size)
{
	return allocated(__libc_memalign(align, size), size, RT_CALLER_PC());
}

RT_INTERCEPTOR void *valloc(size_t size)
{
	return allocated(__libc_valloc(size), size, RT_CALLER_PC());
}

RT_INTERCEPTOR void *pvalloc(size_t size)
{
	return allocated(__libc_pvalloc(size), size, RT_CALLER_PC());
}
