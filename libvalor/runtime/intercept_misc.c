// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The rest of what the interceptors need: which modules are
 * instrumented, fork, the I/O calls (validation of pending reads before
 * output, the buffers they read and write) and stdio's output functions
 * (validation only).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "intercept.h"

#include <elf.h>
#include <errno.h>
#include <link.h>

/* ---- instrumented modules ---- */

/*
 * Executable ranges of the modules that called __tsan_init.  Appended
 * under modules_lock, read without a lock (each slot is written before
 * the count that publishes it).  Ranges of a module that is unloaded
 * stay: a module later loaded at the same address counts as
 * instrumented (documented gap).
 */
#define MODULE_RANGES 512
#define RANGES_PER_MODULE 16

struct code_range {
	uintptr_t lo, hi;
};

static struct code_range ranges[MODULE_RANGES];
static atomic_uint nranges;
/* No room left: every PC counts as instrumented (analyse rather than miss). */
static atomic_bool ranges_full;
static atomic_int modules_lock;

bool rt_pc_instrumented(uintptr_t pc)
{
	unsigned n = atomic_load_explicit(&nranges, memory_order_acquire);

	if (unlikely(atomic_load_explicit(&ranges_full, memory_order_relaxed)))
		return true;
	for (unsigned i = 0; i < n; i++)
		if (pc - ranges[i].lo < ranges[i].hi - ranges[i].lo)
			return true;
	return false;
}

struct module_search {
	uintptr_t pc;
	bool found;
	unsigned n;
	struct code_range code[RANGES_PER_MODULE];
};

/* dl_iterate_phdr callback: the executable segments of @pc's module. */
static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct module_search *s = arg;
	bool contains = false;

	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && s->pc - lo < ph->p_memsz)
			contains = true;
	}
	if (!contains)
		return 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		if (s->n == RANGES_PER_MODULE)
			break;
		s->code[s->n].lo = lo;
		s->code[s->n].hi = lo + ph->p_memsz;
		s->n++;
	}
	s->found = true;
	return 1;
}

void rt_module_register(uintptr_t pc_in_module)
{
	struct module_search s;

	if (rt_pc_instrumented(pc_in_module))
		return;
	/* Not "= { 0 }": a zeroed struct can become a call to memset. */
	s.pc = pc_in_module;
	s.found = false;
	s.n = 0;
	rt_lock(&modules_lock);
	if (!rt_pc_instrumented(pc_in_module)) {
		unsigned n =
			atomic_load_explicit(&nranges, memory_order_relaxed);

		dl_iterate_phdr(find_module, &s);
		if (s.found && n + s.n > MODULE_RANGES) {
			atomic_store(&ranges_full, true);
		} else if (s.found) {
			for (unsigned i = 0; i < s.n; i++)
				ranges[n + i] = s.code[i];
			atomic_store_explicit(&nranges, n + s.n,
					      memory_order_release);
		}
	}
	rt_unlock(&modules_lock);
}

void rt_intercept_modules_after_fork_child(void)
{
	atomic_store(&modules_lock, 0);
}

/* ---- fork ---- */

/*
 * The child continues with fresh analysis state (rt_after_fork_child).
 * The thread list lock is held across the real fork so that no other
 * thread is in the middle of changing the list the child copies; the
 * forking thread is busy meanwhile, so what runs inside (the program's
 * pthread_atfork handlers, the child's set-up) passes unanalysed.
 */
RT_INTERCEPTOR pid_t fork(void)
{
	struct rt_thread *t;
	pid_t pid;

	if (!rt_running())
		return RT_REAL(fork)();
	t = rt_cur;
	if (t)
		rt_busy_inc(t);
	rt_lock(&rt.threads_lock);
	pid = RT_REAL(fork)();
	if (pid == 0) {
		/* Other threads' locks are gone with them. */
		rt_intercept_pthread_after_fork_child();
		rt_intercept_modules_after_fork_child();
		rt_after_fork_child(); /* also releases rt.threads_lock */
		return 0;
	}
	rt_unlock(&rt.threads_lock);
	if (t)
		rt_busy_dec(t);
	return pid;
}

/* ---- I/O ---- */

/*
 * Output calls: with validate_before_syscalls, the caller's pending
 * reads are validated first (Valor's rule that a conflicting region's
 * effects must not leave the process).  Output and input buffers are
 * reported as reads and writes of the program when the caller is
 * instrumented.  The thread is never busy during the real call, which
 * may block.
 */
static bool caller_checked(uintptr_t ret)
{
	return !rt.opt.ignore_uninstrumented || rt_pc_instrumented(ret);
}

static void read_iov(struct rt_thread *t, const struct iovec *iov, int n,
		     uintptr_t pc)
{
	if (n <= 0)
		return;
	rt_icpt_access(t, iov, (size_t)n * sizeof(*iov), false, pc);
	for (int i = 0; i < n; i++)
		rt_icpt_access(t, iov[i].iov_base, iov[i].iov_len, false, pc);
}

static void read_msg(struct rt_thread *t, const struct msghdr *m, uintptr_t pc)
{
	rt_icpt_access(t, m, sizeof(*m), false, pc);
	if (m->msg_name)
		rt_icpt_access(t, m->msg_name, m->msg_namelen, false, pc);
	if (m->msg_control)
		rt_icpt_access(t, m->msg_control, m->msg_controllen, false, pc);
	read_iov(t, m->msg_iov, (int)m->msg_iovlen, pc);
}

/*
 * Before an output call: the calling thread if it may analyse (NULL
 * otherwise), and in *@check whether the buffers are to be reported.
 * output_end() then validates, if asked, and leaves.
 */
static struct rt_thread *output_begin(uintptr_t ret, bool *check)
{
	struct rt_thread *t = rt_icpt_enter();

	*check = t && caller_checked(ret);
	return t;
}

static void output_end(struct rt_thread *t)
{
	if (!t)
		return;
	if (rt.opt.validate_before_syscalls)
		valor_validate(t->vt);
	rt_leave(t);
}

RT_INTERCEPTOR ssize_t write(int fd, const void *buf, size_t n)
{
	bool check;
	struct rt_thread *t = output_begin(RT_CALLER_RET(), &check);

	if (check)
		rt_icpt_access(t, buf, n, false, RT_CALLER_PC());
	output_end(t);
	return RT_REAL(write)(fd, buf, n);
}

RT_INTERCEPTOR ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	bool check;
	struct rt_thread *t = output_begin(RT_CALLER_RET(), &check);

	if (check)
		read_iov(t, iov, cnt, RT_CALLER_PC());
	output_end(t);
	return RT_REAL(writev)(fd, iov, cnt);
}

RT_INTERCEPTOR ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	bool check;
	struct rt_thread *t = output_begin(RT_CALLER_RET(), &check);

	if (check)
		rt_icpt_access(t, buf, n, false, RT_CALLER_PC());
	output_end(t);
	return RT_REAL(pwrite)(fd, buf, n, off);
}

RT_INTERCEPTOR ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	bool check;
	struct rt_thread *t = output_begin(RT_CALLER_RET(), &check);

	if (check)
		rt_icpt_access(t, buf, n, false, RT_CALLER_PC());
	output_end(t);
	return RT_REAL(pwrite64)(fd, buf, n, off);
}

RT_INTERCEPTOR ssize_t pwritev(int fd, const struct iovec *iov, int cnt,
			       off_t off)
{
	bool check;
	struct rt_thread *t = output_begin(RT_CALLER_RET(), &check);

	if (check)
		read_iov(t, iov, cnt, RT_CALLER_PC());
	output_end(t);
	return RT_REAL(pwritev)(fd, iov, cnt, off);
}

RT_INTERCEPTOR ssize_t pwritev2(int fd, const struct iovec *iov, int cnt,
				off_t off, int flags)
{
	bool check;
	struct rt_thread *t;

	if (!RT_REAL(pwritev2)) {
		errno = ENOSYS;
		return -1;
	}
	t = output_begin(RT_CALLER_RET(), &check);
	if (check)
		read_iov(t, iov, cnt, RT_CALLER_PC());
	output_end(t);
	return rt_real_pwritev2(fd, iov, cnt, off, flags);
}

RT_INTERCEPTOR ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	bool check;
	struct rt_thread *t = output_begin(RT_CALLER_RET(), &check);

	if (check)
		rt_icpt_access(t, buf, n, false, RT_CALLER_PC());
	output_end(t);
	return RT_REAL(send)(fd, buf, n, flags);
}

RT_INTERCEPTOR ssize_t sendto(int fd, const void *buf, size_t n, int flags,
			      const struct sockaddr *addr, socklen_t addrlen)
{
	bool check;
	struct rt_thread *t = output_begin(RT_CALLER_RET(), &check);

	if (check) {
		rt_icpt_access(t, buf, n, false, RT_CALLER_PC());
		if (addr)
			rt_icpt_access(t, addr, addrlen, false, RT_CALLER_PC());
	}
	output_end(t);
	return RT_REAL(sendto)(fd, buf, n, flags, addr, addrlen);
}

RT_INTERCEPTOR ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	bool check;
	struct rt_thread *t = output_begin(RT_CALLER_RET(), &check);

	if (check)
		read_msg(t, msg, RT_CALLER_PC());
	output_end(t);
	return RT_REAL(sendmsg)(fd, msg, flags);
}

RT_INTERCEPTOR int sendmmsg(int fd, struct mmsghdr *vec, unsigned int n,
			    int flags)
{
	bool check;
	struct rt_thread *t = output_begin(RT_CALLER_RET(), &check);

	for (unsigned i = 0; check && i < n; i++)
		read_msg(t, &vec[i].msg_hdr, RT_CALLER_PC());
	output_end(t);
	return RT_REAL(sendmmsg)(fd, vec, n, flags);
}

/* After an input call that returned @r: the bytes it stored. */
static void input_done(uintptr_t ret, const void *buf, ssize_t r)
{
	struct rt_thread *t;

	if (r <= 0 || !(t = rt_icpt_enter()))
		return;
	if (caller_checked(ret))
		rt_icpt_access(t, buf, (size_t)r, true, ret - 1);
	rt_leave(t);
}

RT_INTERCEPTOR ssize_t read(int fd, void *buf, size_t n)
{
	ssize_t r = RT_REAL(read)(fd, buf, n);

	input_done(RT_CALLER_RET(), buf, r);
	return r;
}

RT_INTERCEPTOR ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	ssize_t r = RT_REAL(pread)(fd, buf, n, off);

	input_done(RT_CALLER_RET(), buf, r);
	return r;
}

RT_INTERCEPTOR ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	ssize_t r = RT_REAL(pread64)(fd, buf, n, off);

	input_done(RT_CALLER_RET(), buf, r);
	return r;
}

RT_INTERCEPTOR ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	ssize_t r = RT_REAL(recv)(fd, buf, n, flags);

	input_done(RT_CALLER_RET(), buf, r);
	return r;
}

RT_INTERCEPTOR ssize_t recvfrom(int fd, void *restrict buf, size_t n, int flags,
				struct sockaddr *restrict addr,
				socklen_t *restrict addrlen)
{
	ssize_t r = RT_REAL(recvfrom)(fd, buf, n, flags, addr, addrlen);

	input_done(RT_CALLER_RET(), buf, r);
	return r;
}

/* The iovec array is read, then its buffers written in order. */
RT_INTERCEPTOR ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	uintptr_t ret = RT_CALLER_RET();
	ssize_t r = RT_REAL(readv)(fd, iov, cnt);
	struct rt_thread *t;

	if (r < 0 || cnt <= 0 || !(t = rt_icpt_enter()))
		return r;
	if (caller_checked(ret)) {
		size_t left = (size_t)r;

		rt_icpt_access(t, iov, (size_t)cnt * sizeof(*iov), false,
			       ret - 1);
		for (int i = 0; i < cnt && left; i++) {
			size_t n = iov[i].iov_len < left ? iov[i].iov_len :
							   left;

			rt_icpt_access(t, iov[i].iov_base, n, true, ret - 1);
			left -= n;
		}
	}
	rt_leave(t);
	return r;
}

/* ---- stdio output ---- */

/*
 * stdio writes with libc's internal write, which the write interceptor
 * never sees.  So, with validate_before_syscalls, the output functions
 * validate the caller's pending reads before the real call: before the
 * data is buffered, earlier than it leaves the process, which is safe
 * (a region's output never leaves before its reads are validated).
 * fflush and fclose validate too, for output buffered earlier in the
 * region.  Whatever the caller, as write does; the buffers are not
 * reported.  Without the option each is the real function behind one
 * test of it.
 */
static __attribute__((noinline)) void validate_caller(void)
{
	output_end(rt_icpt_enter());
}

static inline void before_output(void)
{
	if (unlikely(rt.opt.validate_before_syscalls))
		validate_caller();
}

/*
 * name(params): before_output(), then the real name(args).  @params and
 * @args are parenthesized lists.
 */
#define OUTPUT_INTERCEPTOR(type, name, params, args) \
	RT_INTERCEPTOR type name params              \
	{                                            \
		before_output();                     \
		return RT_REAL(name) args;           \
	}

/*
 * The variadic printf family: before_output(), then the real v* function
 * @vname on @args, in which ap holds the arguments after fmt (the last
 * named parameter of every one of them).
 */
#define PRINTF_INTERCEPTOR(name, vname, params, args) \
	RT_INTERCEPTOR int name params                \
	{                                             \
		va_list ap;                           \
		int r;                                \
                                                      \
		before_output();                      \
		va_start(ap, fmt);                    \
		r = RT_REAL(vname) args;              \
		va_end(ap);                           \
		return r;                             \
	}

PRINTF_INTERCEPTOR(printf, vprintf, (const char *fmt, ...), (fmt, ap))
PRINTF_INTERCEPTOR(fprintf, vfprintf, (FILE *restrict f, const char *fmt, ...),
		   (f, fmt, ap))
PRINTF_INTERCEPTOR(dprintf, vdprintf, (int fd, const char *fmt, ...),
		   (fd, fmt, ap))
OUTPUT_INTERCEPTOR(int, vprintf, (const char *fmt, va_list ap), (fmt, ap))
OUTPUT_INTERCEPTOR(int, vfprintf,
		   (FILE *restrict f, const char *fmt, va_list ap),
		   (f, fmt, ap))
OUTPUT_INTERCEPTOR(int, vdprintf, (int fd, const char *fmt, va_list ap),
		   (fd, fmt, ap))

/* -D_FORTIFY_SOURCE's printf family. */
PRINTF_INTERCEPTOR(__printf_chk, __vprintf_chk,
		   (int flag, const char *fmt, ...), (flag, fmt, ap))
PRINTF_INTERCEPTOR(__fprintf_chk, __vfprintf_chk,
		   (FILE *restrict f, int flag, const char *fmt, ...),
		   (f, flag, fmt, ap))
PRINTF_INTERCEPTOR(__dprintf_chk, __vdprintf_chk,
		   (int fd, int flag, const char *fmt, ...),
		   (fd, flag, fmt, ap))
OUTPUT_INTERCEPTOR(int, __vprintf_chk, (int flag, const char *fmt, va_list ap),
		   (flag, fmt, ap))
OUTPUT_INTERCEPTOR(int, __vfprintf_chk,
		   (FILE *restrict f, int flag, const char *fmt, va_list ap),
		   (f, flag, fmt, ap))
OUTPUT_INTERCEPTOR(int, __vdprintf_chk,
		   (int fd, int flag, const char *fmt, va_list ap),
		   (fd, flag, fmt, ap))

OUTPUT_INTERCEPTOR(int, puts, (const char *s), (s))
OUTPUT_INTERCEPTOR(int, fputs, (const char *s, FILE *f), (s, f))
OUTPUT_INTERCEPTOR(int, fputc, (int c, FILE *f), (c, f))
OUTPUT_INTERCEPTOR(int, putc, (int c, FILE *f), (c, f))
OUTPUT_INTERCEPTOR(int, putchar, (int c), (c))
OUTPUT_INTERCEPTOR(size_t, fwrite,
		   (const void *p, size_t size, size_t n, FILE *f),
		   (p, size, n, f))
OUTPUT_INTERCEPTOR(int, fflush, (FILE *restrict f), (f))
OUTPUT_INTERCEPTOR(int, fclose, (FILE *restrict f), (f))

RT_INTERCEPTOR void perror(const char *s)
{
	before_output();
	RT_REAL(perror)(s);
}
