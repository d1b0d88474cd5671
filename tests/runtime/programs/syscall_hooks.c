// SPDX-License-Identifier: GPL-2.0
/*
 * System calls made without libc and announced through the sanitizers'
 * hooks, as libuv does under ThreadSanitizer.  The runtime defines every
 * hook, so this links; the hooks of read and write stand for what the
 * calls do to memory.  errors_test.c expects two write-read conflicts:
 *
 * - T1 reads the pipe into `in` with a raw read(2) (the kernel's store
 *   is T1's write), then T2 reads `in` while T1's region is still open;
 * - T2 fills `out`, then T1 writes `out` to the pipe with a raw
 *   write(2) (the kernel's load is T1's read) while T2's region is open.
 *
 * getpid's hooks, which the runtime leaves empty, must link too.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched.h"

#if __has_include(<sanitizer/linux_syscall_hooks.h>)
#include <sanitizer/linux_syscall_hooks.h>
#else
/* gcc ships no such header: the hooks clang's would declare. */
void __sanitizer_syscall_pre_impl_read(long fd, long buf, long count);
void __sanitizer_syscall_post_impl_read(long res, long fd, long buf,
					long count);
void __sanitizer_syscall_pre_impl_write(long fd, long buf, long count);
void __sanitizer_syscall_post_impl_write(long res, long fd, long buf,
					 long count);
void __sanitizer_syscall_pre_impl_getpid(void);
void __sanitizer_syscall_post_impl_getpid(long res);
#define __sanitizer_syscall_pre_read(fd, buf, count)               \
	__sanitizer_syscall_pre_impl_read((long)(fd), (long)(buf), \
					  (long)(count))
#define __sanitizer_syscall_post_read(res, fd, buf, count)               \
	__sanitizer_syscall_post_impl_read(res, (long)(fd), (long)(buf), \
					   (long)(count))
#define __sanitizer_syscall_pre_write(fd, buf, count)               \
	__sanitizer_syscall_pre_impl_write((long)(fd), (long)(buf), \
					   (long)(count))
#define __sanitizer_syscall_post_write(res, fd, buf, count)               \
	__sanitizer_syscall_post_impl_write(res, (long)(fd), (long)(buf), \
					    (long)(count))
#define __sanitizer_syscall_pre_getpid() __sanitizer_syscall_pre_impl_getpid()
#define __sanitizer_syscall_post_getpid(res) \
	__sanitizer_syscall_post_impl_getpid(res)
#endif

static int fds[2];
char in[64], out[64];

static void *t1_fn(void *arg)
{
	long r;

	(void)arg;
	__sanitizer_syscall_pre_read(fds[0], in, sizeof(in));
	r = syscall(SYS_read, fds[0], in, sizeof(in));
	/* racy: raw read, the store (the next line) */
	__sanitizer_syscall_post_read(r, fds[0], in, sizeof(in));
	sched_done(1);
	sched_wait(2);
	/* racy: raw write, the load (the next line) */
	__sanitizer_syscall_pre_write(fds[1], out, sizeof(out));
	r = syscall(SYS_write, fds[1], out, sizeof(out));
	__sanitizer_syscall_post_write(r, fds[1], out, sizeof(out));
	sched_done(3);
	return NULL;
}

static void *t2_fn(void *arg)
{
	char first;

	(void)arg;
	sched_wait(1);
	first = in[0]; /* racy: read of in */
	for (unsigned i = 0; i < sizeof(out); i++)
		out[i] = first; /* racy: fill of out */
	sched_done(2);
	sched_wait(3);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	long pid;

	if (pipe(fds))
		return 1;
	if (write(fds[1], "hello", 5) != 5)
		return 1;
	__sanitizer_syscall_pre_getpid();
	pid = syscall(SYS_getpid);
	__sanitizer_syscall_post_getpid(pid);
	pthread_create(&t1, NULL, t1_fn, NULL);
	pthread_create(&t2, NULL, t2_fn, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("syscall_hooks done: %c\n", out[0]);
	return 0;
}
