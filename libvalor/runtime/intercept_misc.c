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

#include <sys/stat.h>

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

/*
 * Which modules are instrumented.  The address __tsan_init returns to
 * does not say: at -O2 gcc's constructor jumps to it (a sibling call),
 * so it returns into whatever ran the constructor, libc's or the dynamic
 * linker's code, and the program's own calls to memcpy or strlen were
 * then all taken for a library's.  A module is instrumented when its
 * dynamic symbols name __tsan_init: it calls it, or defines it (the
 * runtime linked into the program).  The runtime's own shared object
 * defines it too and is not; a program without a dynamic section
 * (-static) is one module, the runtime's, and is.
 */
static const char tsan_init_name[] = "__tsan_init";

/* What a dynamic entry points at: the loader relocated it, or not. */
static uintptr_t dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) p)
{
	return p < info->dlpi_addr ? info->dlpi_addr + p : p;
}

/* How many dynamic symbols there are: ELF gives no count but the hashes'. */
static size_t dynsym_count(const ElfW(Word) * hash, const uint32_t *gnu)
{
	uint32_t nbuckets, symoffset, last = 0;
	const uint32_t *buckets, *chain;

	if (hash)
		return hash[1]; /* nchain: one per symbol */
	if (!gnu)
		return 0;
	nbuckets = gnu[0];
	symoffset = gnu[1];
	buckets = gnu + 4 + gnu[2] * (sizeof(ElfW(Addr)) / sizeof(uint32_t));
	chain = buckets + nbuckets;
	for (uint32_t i = 0; i < nbuckets; i++)
		if (buckets[i] > last)
			last = buckets[i];
	if (last < symoffset)
		return symoffset;
	/* The last chain ends with its low bit set. */
	while (!(chain[last - symoffset] & 1))
		last++;
	return (size_t)last + 1;
}

/* Whether the module's dynamic symbols name __tsan_init, defined or not. */
static bool names_tsan_init(const struct dl_phdr_info *info)
{
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *sym = NULL;
	const ElfW(Word) *hash = NULL;
	const uint32_t *gnu = NULL;
	const char *str = NULL;
	size_t strsz = 0, n;

	for (unsigned i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr +
						  info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return false;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			sym = (const ElfW(Sym) *)dyn_addr(info,
							  dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			str = (const char *)dyn_addr(info, dyn->d_un.d_ptr);
			break;
		case DT_STRSZ:
			strsz = dyn->d_un.d_val;
			break;
		case DT_HASH:
			hash = (const ElfW(Word) *)dyn_addr(info,
							    dyn->d_un.d_ptr);
			break;
		case DT_GNU_HASH:
			gnu = (const uint32_t *)dyn_addr(info, dyn->d_un.d_ptr);
			break;
		}
	}
	if (!sym || !str || strsz < sizeof(tsan_init_name))
		return false;
	n = dynsym_count(hash, gnu);
	for (size_t i = 1; i < n; i++) {
		const char *name = str + sym[i].st_name;
		size_t k = 0;

		if (sym[i].st_name > strsz - sizeof(tsan_init_name))
			continue;
		while (k < sizeof(tsan_init_name) &&
		       name[k] == tsan_init_name[k])
			k++;
		if (k == sizeof(tsan_init_name))
			return true;
	}
	return false;
}

/* dl_iterate_phdr callback: register the module if it is instrumented. */
static int register_if_instrumented(struct dl_phdr_info *info, size_t size,
				    void *arg)
{
	uintptr_t self = (uintptr_t)arg;
	bool holds_runtime = false;
	struct code_range code[RANGES_PER_MODULE];
	unsigned n = 0, have;

	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (self - lo < ph->p_memsz)
			holds_runtime = true;
		if ((ph->p_flags & PF_X) && n < RANGES_PER_MODULE) {
			code[n].lo = lo;
			code[n].hi = lo + ph->p_memsz;
			n++;
		}
	}
	/* The program (its name is "") may hold the runtime; a library not. */
	if (holds_runtime ? info->dlpi_name && info->dlpi_name[0] :
			    !names_tsan_init(info))
		return 0;
	if (!n || rt_pc_instrumented(code[0].lo))
		return 0;
	have = atomic_load_explicit(&nranges, memory_order_relaxed);
	if (have + n > MODULE_RANGES) {
		atomic_store(&ranges_full, true);
		return 1;
	}
	for (unsigned i = 0; i < n; i++)
		ranges[have + i] = code[i];
	atomic_store_explicit(&nranges, have + n, memory_order_release);
	return 0;
}

/* dl_iterate_phdr callback: how many modules were ever loaded. */
static int count_loads(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *adds = arg;

	*adds = size >= offsetof(struct dl_phdr_info, dlpi_subs) ?
			info->dlpi_adds :
			0;
	return 1;
}

void rt_modules_register(void)
{
	/* Nothing was loaded since the last look: the same modules. */
	static unsigned long long seen_adds;
	unsigned long long adds = 0;

	rt_lock(&modules_lock);
	dl_iterate_phdr(count_loads, &adds);
	if (!adds || adds != seen_adds) {
		dl_iterate_phdr(register_if_instrumented,
				(void *)(uintptr_t)rt_modules_register);
		seen_adds = adds;
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
bool rt_caller_checked(uintptr_t ret)
{
	return !rt.opt.ignore_uninstrumented || rt_pc_instrumented(ret);
}

void rt_read_iov(struct rt_thread *t, const struct iovec *iov, int n,
		 uintptr_t pc)
{
	if (n <= 0)
		return;
	rt_icpt_access(t, iov, (size_t)n * sizeof(*iov), false, pc);
	for (int i = 0; i < n; i++)
		rt_icpt_access(t, iov[i].iov_base, iov[i].iov_len, false, pc);
}

void rt_read_msg(struct rt_thread *t, const struct msghdr *m, uintptr_t pc)
{
	rt_icpt_access(t, m, sizeof(*m), false, pc);
	if (m->msg_name)
		rt_icpt_access(t, m->msg_name, m->msg_namelen, false, pc);
	if (m->msg_control)
		rt_icpt_access(t, m->msg_control, m->msg_controllen, false, pc);
	rt_read_iov(t, m->msg_iov, (int)m->msg_iovlen, pc);
}

/*
 * Before an output call: the calling thread if it may analyse (NULL
 * otherwise), and in *@check whether the buffers are to be reported.
 * rt_output_end() then validates, if asked, leaves, and releases.
 */
struct rt_thread *rt_output_begin(uintptr_t ret, bool *check)
{
	struct rt_thread *t = rt_icpt_enter();

	*check = t && rt_caller_checked(ret);
	return t;
}

/*
 * What passes through a file descriptor orders its writer before its
 * reader, as ThreadSanitizer has it: a write is a release, a read an
 * acquire.  Threads that hand work over a pipe or an eventfd (libuv's
 * loop wake-ups, its pipe that locks its signal handlers, the self-pipe
 * trick) are synchronized by it, and without the edge their accesses on
 * either side were reported as conflicts.  Valor and FastRCD only need
 * the region boundary, so any key does; FastTrack keys by the file, by
 * device and inode (both ends of a pipe share them), above every
 * address so that no freed memory takes the object with it.  The two
 * ends of a connection are two sockets, two inodes: every socket shares
 * one object, which can hide a race between unrelated connections but
 * never reports a handed-over message.
 */
uintptr_t rt_fd_sync_key(int fd)
{
	struct stat st;
	uint64_t k = 0;

	if ((enum valor_analysis)rt.opt.analysis == VALOR_ANALYSIS_FASTTRACK &&
	    !fstat(fd, &st) && !S_ISSOCK(st.st_mode))
		k = ((uint64_t)st.st_dev * 0x9E3779B97F4A7C15ULL) ^
		    (uint64_t)st.st_ino;
	return (uintptr_t)(1ULL << 63 | k >> 1);
}

/*
 * The release ends the region, which validates it: validate_before_syscalls
 * adds a validation only where nothing is released (stdio's internal
 * writes).  A thread that may not analyse releases nothing either.
 */
void rt_output_end(struct rt_thread *t, int fd)
{
	if (!t)
		return;
	if (fd >= 0)
		valor_release(t->vt, rt_fd_sync_key(fd));
	else if (rt.opt.validate_before_syscalls)
		valor_validate(t->vt);
	rt_leave(t);
}

RT_INTERCEPTOR ssize_t write(int fd, const void *buf, size_t n)
{
	bool check;
	struct rt_thread *t = rt_output_begin(RT_CALLER_RET(), &check);

	if (check)
		rt_icpt_access(t, buf, n, false, RT_CALLER_PC());
	rt_output_end(t, fd);
	return RT_REAL(write)(fd, buf, n);
}

RT_INTERCEPTOR ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
	bool check;
	struct rt_thread *t = rt_output_begin(RT_CALLER_RET(), &check);

	if (check)
		rt_read_iov(t, iov, cnt, RT_CALLER_PC());
	rt_output_end(t, fd);
	return RT_REAL(writev)(fd, iov, cnt);
}

RT_INTERCEPTOR ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	bool check;
	struct rt_thread *t = rt_output_begin(RT_CALLER_RET(), &check);

	if (check)
		rt_icpt_access(t, buf, n, false, RT_CALLER_PC());
	rt_output_end(t, fd);
	return RT_REAL(pwrite)(fd, buf, n, off);
}

RT_INTERCEPTOR ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	bool check;
	struct rt_thread *t = rt_output_begin(RT_CALLER_RET(), &check);

	if (check)
		rt_icpt_access(t, buf, n, false, RT_CALLER_PC());
	rt_output_end(t, fd);
	return RT_REAL(pwrite64)(fd, buf, n, off);
}

RT_INTERCEPTOR ssize_t pwritev(int fd, const struct iovec *iov, int cnt,
			       off_t off)
{
	bool check;
	struct rt_thread *t = rt_output_begin(RT_CALLER_RET(), &check);

	if (check)
		rt_read_iov(t, iov, cnt, RT_CALLER_PC());
	rt_output_end(t, fd);
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
	t = rt_output_begin(RT_CALLER_RET(), &check);
	if (check)
		rt_read_iov(t, iov, cnt, RT_CALLER_PC());
	rt_output_end(t, fd);
	return rt_real_pwritev2(fd, iov, cnt, off, flags);
}

RT_INTERCEPTOR ssize_t send(int fd, const void *buf, size_t n, int flags)
{
	bool check;
	struct rt_thread *t = rt_output_begin(RT_CALLER_RET(), &check);

	if (check)
		rt_icpt_access(t, buf, n, false, RT_CALLER_PC());
	rt_output_end(t, fd);
	return RT_REAL(send)(fd, buf, n, flags);
}

RT_INTERCEPTOR ssize_t sendto(int fd, const void *buf, size_t n, int flags,
			      const struct sockaddr *addr, socklen_t addrlen)
{
	bool check;
	struct rt_thread *t = rt_output_begin(RT_CALLER_RET(), &check);

	if (check) {
		rt_icpt_access(t, buf, n, false, RT_CALLER_PC());
		if (addr)
			rt_icpt_access(t, addr, addrlen, false, RT_CALLER_PC());
	}
	rt_output_end(t, fd);
	return RT_REAL(sendto)(fd, buf, n, flags, addr, addrlen);
}

RT_INTERCEPTOR ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	bool check;
	struct rt_thread *t = rt_output_begin(RT_CALLER_RET(), &check);

	if (check)
		rt_read_msg(t, msg, RT_CALLER_PC());
	rt_output_end(t, fd);
	return RT_REAL(sendmsg)(fd, msg, flags);
}

RT_INTERCEPTOR int sendmmsg(int fd, struct mmsghdr *vec, unsigned int n,
			    int flags)
{
	bool check;
	struct rt_thread *t = rt_output_begin(RT_CALLER_RET(), &check);

	for (unsigned i = 0; check && i < n; i++)
		rt_read_msg(t, &vec[i].msg_hdr, RT_CALLER_PC());
	rt_output_end(t, fd);
	return RT_REAL(sendmmsg)(fd, vec, n, flags);
}

/*
 * After an input call on @fd that returned @r: the calling thread if it
 * may analyse, entered, having acquired what passes through @fd unless
 * the call failed.  rt_leave() it.
 */
static struct rt_thread *input_begin(int fd, ssize_t r)
{
	struct rt_thread *t = rt_icpt_enter();

	if (t && r >= 0 && fd >= 0)
		valor_acquire(t->vt, rt_fd_sync_key(fd));
	return t;
}

void rt_input_done(uintptr_t ret, int fd, const void *buf, ssize_t r)
{
	struct rt_thread *t = input_begin(fd, r);

	if (!t)
		return;
	if (r > 0 && rt_caller_checked(ret))
		rt_icpt_access(t, buf, (size_t)r, true, ret - 1);
	rt_leave(t);
}

RT_INTERCEPTOR ssize_t read(int fd, void *buf, size_t n)
{
	ssize_t r = RT_REAL(read)(fd, buf, n);

	rt_input_done(RT_CALLER_RET(), fd, buf, r);
	return r;
}

RT_INTERCEPTOR ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	ssize_t r = RT_REAL(pread)(fd, buf, n, off);

	rt_input_done(RT_CALLER_RET(), fd, buf, r);
	return r;
}

RT_INTERCEPTOR ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	ssize_t r = RT_REAL(pread64)(fd, buf, n, off);

	rt_input_done(RT_CALLER_RET(), fd, buf, r);
	return r;
}

RT_INTERCEPTOR ssize_t recv(int fd, void *buf, size_t n, int flags)
{
	ssize_t r = RT_REAL(recv)(fd, buf, n, flags);

	rt_input_done(RT_CALLER_RET(), fd, buf, r);
	return r;
}

RT_INTERCEPTOR ssize_t recvfrom(int fd, void *restrict buf, size_t n, int flags,
				struct sockaddr *restrict addr,
				socklen_t *restrict addrlen)
{
	ssize_t r = RT_REAL(recvfrom)(fd, buf, n, flags, addr, addrlen);

	rt_input_done(RT_CALLER_RET(), fd, buf, r);
	return r;
}

/* The iovec array is read, then its buffers written in order: @r bytes. */
static void stored_iov(struct rt_thread *t, const struct iovec *iov, int cnt,
		       ssize_t r, uintptr_t pc)
{
	size_t left = (size_t)r;

	if (cnt <= 0)
		return;
	rt_icpt_access(t, iov, (size_t)cnt * sizeof(*iov), false, pc);
	for (int i = 0; i < cnt && left; i++) {
		size_t n = iov[i].iov_len < left ? iov[i].iov_len : left;

		rt_icpt_access(t, iov[i].iov_base, n, true, pc);
		left -= n;
	}
}

void rt_input_iov(uintptr_t ret, int fd, const struct iovec *iov, int cnt,
		  ssize_t r)
{
	struct rt_thread *t = input_begin(fd, r);

	if (!t)
		return;
	if (r >= 0 && rt_caller_checked(ret))
		stored_iov(t, iov, cnt, r, ret - 1);
	rt_leave(t);
}

RT_INTERCEPTOR ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
	ssize_t r = RT_REAL(readv)(fd, iov, cnt);

	rt_input_iov(RT_CALLER_RET(), fd, iov, cnt, r);
	return r;
}

/*
 * A received message: its buffers, as readv's, and the sender's address
 * and control data the call filled in (their lengths as it left them).
 */
void rt_input_msg(uintptr_t ret, int fd, const struct msghdr *msg, ssize_t r)
{
	struct rt_thread *t = input_begin(fd, r);

	if (!t)
		return;
	if (r >= 0 && rt_caller_checked(ret)) {
		stored_iov(t, msg->msg_iov, (int)msg->msg_iovlen, r, ret - 1);
		if (msg->msg_name)
			rt_icpt_access(t, msg->msg_name, msg->msg_namelen, true,
				       ret - 1);
		if (msg->msg_control)
			rt_icpt_access(t, msg->msg_control, msg->msg_controllen,
				       true, ret - 1);
	}
	rt_leave(t);
}

RT_INTERCEPTOR ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	ssize_t r = RT_REAL(recvmsg)(fd, msg, flags);

	rt_input_msg(RT_CALLER_RET(), fd, msg, r);
	return r;
}

/* Each message received, with the length the call stored for it. */
RT_INTERCEPTOR int recvmmsg(int fd, struct mmsghdr *vec, unsigned int n,
			    int flags, struct timespec *timeout)
{
	int r = RT_REAL(recvmmsg)(fd, vec, n, flags, timeout);

	for (int i = 0; i < r; i++)
		rt_input_msg(RT_CALLER_RET(), fd, &vec[i].msg_hdr,
			     (ssize_t)vec[i].msg_len);
	return r;
}

/* ---- descriptors the report log may be on (report_log.c) ---- */

RT_INTERCEPTOR int close(int fd)
{
	rt_log_fd_closing(fd);
	return RT_REAL(close)(fd);
}

RT_INTERCEPTOR int dup2(int old, int fd)
{
	int r = RT_REAL(dup2)(old, fd);

	if (r >= 0)
		rt_log_fd_replaced(fd);
	return r;
}

RT_INTERCEPTOR int dup3(int old, int fd, int flags)
{
	int r = RT_REAL(dup3)(old, fd, flags);

	if (r >= 0)
		rt_log_fd_replaced(fd);
	return r;
}

RT_INTERCEPTOR int close_range(unsigned int first, unsigned int last, int flags)
{
	if (!RT_REAL(close_range)) {
		errno = ENOSYS;
		return -1;
	}
	if (!(flags & CLOSE_RANGE_CLOEXEC))
		for (int fd = 1; fd <= 2; fd++)
			if ((unsigned int)fd >= first &&
			    (unsigned int)fd <= last)
				rt_log_fd_closing(fd);
	return rt_real_close_range(first, last, flags);
}

/* ---- epoll ---- */

/*
 * An event's user data (often a pointer to a connection's state) passes
 * from the thread that adds or changes the event to the thread whose
 * wait returns it, as ThreadSanitizer has it: epoll_ctl(2) with
 * EPOLL_CTL_ADD or EPOLL_CTL_MOD releases the epoll instance's object
 * just before the real call, and a wait that returns events acquires it
 * just after.  Without the edge a server that hands work over through
 * the data had each handed-over object reported as a conflict.  The key
 * is the epoll descriptor's (rt_fd_sync_key()); for FastTrack every
 * epoll instance shares one anonymous inode, so every instance shares
 * one object, which can hide a race, never report a handover.
 */
RT_INTERCEPTOR int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	bool check;
	struct rt_thread *t;

	if (op != EPOLL_CTL_ADD && op != EPOLL_CTL_MOD)
		return RT_REAL(epoll_ctl)(epfd, op, fd, ev);
	t = rt_output_begin(RT_CALLER_RET(), &check);
	if (check && ev)
		rt_icpt_access(t, ev, sizeof(*ev), false, RT_CALLER_PC());
	rt_output_end(t, epfd);
	return RT_REAL(epoll_ctl)(epfd, op, fd, ev);
}

/* After a wait on @epfd that returned @r: acquire, and the events stored. */
static void epoll_done(uintptr_t ret, int epfd, struct epoll_event *events,
		       int r)
{
	struct rt_thread *t;

	if (r <= 0)
		return;
	t = input_begin(epfd, r);
	if (!t)
		return;
	if (rt_caller_checked(ret))
		rt_icpt_access(t, events, (size_t)r * sizeof(*events), true,
			       ret - 1);
	rt_leave(t);
}

RT_INTERCEPTOR int epoll_wait(int epfd, struct epoll_event *events,
			      int maxevents, int timeout)
{
	int r = RT_REAL(epoll_wait)(epfd, events, maxevents, timeout);

	epoll_done(RT_CALLER_RET(), epfd, events, r);
	return r;
}

RT_INTERCEPTOR int epoll_pwait(int epfd, struct epoll_event *events,
			       int maxevents, int timeout,
			       const sigset_t *sigmask)
{
	int r = RT_REAL(epoll_pwait)(epfd, events, maxevents, timeout, sigmask);

	epoll_done(RT_CALLER_RET(), epfd, events, r);
	return r;
}

RT_INTERCEPTOR int epoll_pwait2(int epfd, struct epoll_event *events,
				int maxevents, const struct timespec *timeout,
				const sigset_t *sigmask)
{
	int r;

	if (!RT_REAL(epoll_pwait2)) {
		errno = ENOSYS;
		return -1;
	}
	r = rt_real_epoll_pwait2(epfd, events, maxevents, timeout, sigmask);
	epoll_done(RT_CALLER_RET(), epfd, events, r);
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
	rt_output_end(rt_icpt_enter(), -1);
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
/* Closing the stream of the report log's descriptor moves the log. */
RT_INTERCEPTOR int fclose(FILE *f)
{
	before_output();
	if (f)
		rt_log_fd_closing(fileno(f));
	return RT_REAL(fclose)(f);
}

/*
 * freopen(3) of standard error closes and opens its descriptor inside
 * libc, where close(2) is not intercepted: the log follows the stream,
 * as it follows a dup2(2) (report_log.c).
 */
RT_INTERCEPTOR FILE *freopen(const char *path, const char *mode, FILE *f)
{
	FILE *r;

	before_output();
	r = RT_REAL(freopen)(path, mode, f);
	if (r)
		rt_log_fd_replaced(fileno(r));
	return r;
}

RT_INTERCEPTOR FILE *freopen64(const char *path, const char *mode, FILE *f)
{
	FILE *r;

	if (!RT_REAL(freopen64)) {
		errno = ENOSYS;
		return NULL;
	}
	before_output();
	r = RT_REAL(freopen64)(path, mode, f);
	if (r)
		rt_log_fd_replaced(fileno(r));
	return r;
}

RT_INTERCEPTOR void perror(const char *s)
{
	before_output();
	RT_REAL(perror)(s);
}
