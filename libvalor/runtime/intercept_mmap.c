// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Mapping interceptors: the lifetimes of mapped memory.
 *
 * munmap ends the memory's life like free: checked as a write, then its
 * history is cleared.  A new mapping starts with fresh history (address
 * space unmapped behind the program's back, by libc or the kernel, may
 * carry some).  mmap with MAP_FIXED replaces what was there, so that is
 * an unmap first.  mremap moves the contents and their history with them
 * (valor_move); a shrunk tail is unmapped, a grown one starts fresh.
 *
 * The runtime's own mappings (shadow memory, report tables) come here
 * too and pass through: they are made while the thread is busy.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "intercept.h"

#include <stdarg.h>

/* The kernel works in whole pages. */
static size_t page_round(size_t len)
{
	static size_t page;
	size_t p = __atomic_load_n(&page, __ATOMIC_RELAXED);

	if (!p) {
		p = (size_t)sysconf(_SC_PAGESIZE);
		__atomic_store_n(&page, p, __ATOMIC_RELAXED);
	}
	if (len > SIZE_MAX - (p - 1))
		return len;
	return (len + p - 1) & ~(p - 1);
}

void rt_unmapping(struct rt_thread *t, const void *addr, size_t len,
		  uintptr_t pc)
{
	len = page_round(len);
	if (len)
		valor_free(t->vt, (uintptr_t)addr, len, pc);
}

void rt_mapped(struct rt_thread *t, const void *addr, size_t len)
{
	len = page_round(len);
	if (addr != MAP_FAILED && len)
		valor_forget(t->vt, (uintptr_t)addr, len);
}

RT_INTERCEPTOR void *mmap(void *addr, size_t len, int prot, int flags, int fd,
			  off_t off)
{
	struct rt_thread *t = rt_icpt_enter();
	void *r;

	if (!t)
		return RT_REAL(mmap)(addr, len, prot, flags, fd, off);
	if (flags & MAP_FIXED)
		rt_unmapping(t, addr, len, RT_CALLER_PC());
	r = RT_REAL(mmap)(addr, len, prot, flags, fd, off);
	rt_mapped(t, r, len);
	rt_leave(t);
	return r;
}

RT_INTERCEPTOR void *mmap64(void *addr, size_t len, int prot, int flags, int fd,
			    off64_t off)
{
	struct rt_thread *t = rt_icpt_enter();
	void *r;

	if (!t)
		return RT_REAL(mmap64)(addr, len, prot, flags, fd, off);
	if (flags & MAP_FIXED)
		rt_unmapping(t, addr, len, RT_CALLER_PC());
	r = RT_REAL(mmap64)(addr, len, prot, flags, fd, off);
	rt_mapped(t, r, len);
	rt_leave(t);
	return r;
}

RT_INTERCEPTOR int munmap(void *addr, size_t len)
{
	struct rt_thread *t = rt_icpt_enter();

	if (t) {
		rt_unmapping(t, addr, len, RT_CALLER_PC());
		rt_leave(t);
	}
	return RT_REAL(munmap)(addr, len);
}

RT_INTERCEPTOR void *mremap(void *old, size_t old_len, size_t new_len,
			    int flags, ...)
{
	struct rt_thread *t;
	void *new_addr = NULL;
	char *r, *o = old;
	size_t keep;

	if (flags & MREMAP_FIXED) {
		va_list ap;

		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	t = rt_icpt_enter();
	if (!t)
		return RT_REAL(mremap)(old, old_len, new_len, flags, new_addr);
	r = RT_REAL(mremap)(old, old_len, new_len, flags, new_addr);
	if (r == MAP_FAILED)
		goto out;
	old_len = page_round(old_len);
	new_len = page_round(new_len);
	keep = old_len < new_len ? old_len : new_len;
	/* old_len 0 duplicates a shared mapping: the old one stays. */
	if (r != o && keep)
		/* The data moved and its history with it (LARD R4). */
		valor_move(t->vt, (uintptr_t)o, (uintptr_t)r, keep);
	if (old_len > keep)
		rt_unmapping(t, o + keep, old_len - keep, RT_CALLER_PC());
	if (new_len > keep)
		rt_mapped(t, r + keep, new_len - keep);
out:
	rt_leave(t);
	return r;
}
