// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The sanitizers' system call hooks (<sanitizer/linux_syscall_hooks.h>,
 * clang's header).  Code that makes a system call without libc, under
 * ThreadSanitizer, calls __sanitizer_syscall_pre_impl_NAME before it and
 * __sanitizer_syscall_post_impl_NAME after it (libuv closes its file
 * descriptors so), so that the runtime sees what the call does to the
 * program's memory.  A runtime without the hooks leaves such a program
 * unlinkable: the runtime defines every hook the header declares.
 *
 * The ones here do what the interceptors of the same libc calls do: the
 * buffers an output call reads are checked as reads before it, and the
 * call releases what passes through its descriptor; an input call
 * acquires it, and the bytes it stored are checked as writes after it;
 * a mapping starts or ends memory's life.  Every other hook does nothing; those are
 * generated at build time from the installed header
 * (tools/gen-syscall-hooks.py), so that a newer header's hooks link too.
 *
 * Arguments arrive as longs, as the header declares them; a call that
 * failed returns a negative errno in @res.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "intercept.h"

#define HOOK RT_EXPORT

/* ---- output: what the call will read */

/*
 * An output call on @fd by the caller whose return address is @ret: @n
 * bytes at @buf, @cnt buffers at @iov, or the message @msg, checked as
 * reads; then a release of what passes through @fd.
 */
static void output(uintptr_t ret, long fd, const void *buf, size_t n,
		   const struct iovec *iov, int cnt, const struct msghdr *msg)
{
	bool check;
	struct rt_thread *t = rt_output_begin(ret, &check);

	if (check) {
		rt_icpt_access(t, buf, n, false, ret - 1);
		if (iov)
			rt_read_iov(t, iov, cnt, ret - 1);
		if (msg)
			rt_read_msg(t, msg, ret - 1);
	}
	rt_output_end(t, (int)fd);
}

HOOK void __sanitizer_syscall_pre_impl_write(long fd, long buf, long count)
{
	output(RT_CALLER_RET(), fd, (const void *)buf, (size_t)count, NULL, 0,
	       NULL);
}

HOOK void __sanitizer_syscall_pre_impl_pwrite64(long fd, long buf, long count,
						long pos)
{
	(void)pos;
	output(RT_CALLER_RET(), fd, (const void *)buf, (size_t)count, NULL, 0,
	       NULL);
}

HOOK void __sanitizer_syscall_pre_impl_writev(long fd, long vec, long vlen)
{
	output(RT_CALLER_RET(), fd, NULL, 0, (const struct iovec *)vec,
	       (int)vlen, NULL);
}

HOOK void __sanitizer_syscall_pre_impl_pwritev(long fd, long vec, long vlen,
					       long pos_l, long pos_h)
{
	(void)pos_l;
	(void)pos_h;
	output(RT_CALLER_RET(), fd, NULL, 0, (const struct iovec *)vec,
	       (int)vlen, NULL);
}

HOOK void __sanitizer_syscall_pre_impl_sendto(long fd, long buf, long len,
					      long flags, long addr,
					      long addr_len)
{
	uintptr_t ret = RT_CALLER_RET();
	bool check;
	struct rt_thread *t = rt_output_begin(ret, &check);

	(void)flags;
	if (check) {
		rt_icpt_access(t, (const void *)buf, (size_t)len, false,
			       ret - 1);
		if (addr)
			rt_icpt_access(t, (const void *)addr, (size_t)addr_len,
				       false, ret - 1);
	}
	rt_output_end(t, (int)fd);
}

HOOK void __sanitizer_syscall_pre_impl_sendmsg(long fd, long msg, long flags)
{
	(void)flags;
	output(RT_CALLER_RET(), fd, NULL, 0, NULL, 0,
	       (const struct msghdr *)msg);
}

/* ---- input: what the call stored */

HOOK void __sanitizer_syscall_post_impl_read(long res, long fd, long buf,
					     long count)
{
	(void)count;
	rt_input_done(RT_CALLER_RET(), (int)fd, (const void *)buf, res);
}

HOOK void __sanitizer_syscall_post_impl_pread64(long res, long fd, long buf,
						long count, long pos)
{
	(void)count;
	(void)pos;
	rt_input_done(RT_CALLER_RET(), (int)fd, (const void *)buf, res);
}

HOOK void __sanitizer_syscall_post_impl_readv(long res, long fd, long vec,
					      long vlen)
{
	rt_input_iov(RT_CALLER_RET(), (int)fd, (const struct iovec *)vec,
		     (int)vlen, res);
}

HOOK void __sanitizer_syscall_post_impl_preadv(long res, long fd, long vec,
					       long vlen, long pos_l,
					       long pos_h)
{
	(void)pos_l;
	(void)pos_h;
	rt_input_iov(RT_CALLER_RET(), (int)fd, (const struct iovec *)vec,
		     (int)vlen, res);
}

HOOK void __sanitizer_syscall_post_impl_recvfrom(long res, long fd, long buf,
						 long len, long flags,
						 long addr, long addr_len)
{
	(void)len;
	(void)flags;
	(void)addr;
	(void)addr_len;
	rt_input_done(RT_CALLER_RET(), (int)fd, (const void *)buf, res);
}

HOOK void __sanitizer_syscall_post_impl_recvmsg(long res, long fd, long msg,
						long flags)
{
	(void)flags;
	rt_input_msg(RT_CALLER_RET(), (int)fd, (const struct msghdr *)msg, res);
}

/* ---- mappings: memory's life */

/* A raw system call's result: a negative errno is a failure. */
static bool failed(long res)
{
	return (unsigned long)res >= -4095UL;
}

HOOK void __sanitizer_syscall_pre_impl_munmap(long addr, long len)
{
	struct rt_thread *t = rt_icpt_enter();

	if (!t)
		return;
	rt_unmapping(t, (const void *)addr, (size_t)len, RT_CALLER_PC());
	rt_leave(t);
}

/* MAP_FIXED replaces what was mapped there: that memory's life ends. */
HOOK void __sanitizer_syscall_pre_impl_mmap_pgoff(long addr, long len,
						  long prot, long flags,
						  long fd, long pgoff)
{
	struct rt_thread *t;

	(void)prot;
	(void)fd;
	(void)pgoff;
	if (!(flags & MAP_FIXED) || !(t = rt_icpt_enter()))
		return;
	rt_unmapping(t, (const void *)addr, (size_t)len, RT_CALLER_PC());
	rt_leave(t);
}

HOOK void __sanitizer_syscall_post_impl_mmap_pgoff(long res, long addr,
						   long len, long prot,
						   long flags, long fd,
						   long pgoff)
{
	struct rt_thread *t;

	(void)addr;
	(void)prot;
	(void)flags;
	(void)fd;
	(void)pgoff;
	if (failed(res) || !(t = rt_icpt_enter()))
		return;
	rt_mapped(t, (const void *)res, (size_t)len);
	rt_leave(t);
}
