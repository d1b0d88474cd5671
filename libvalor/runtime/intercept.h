/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The interceptors: libc functions the runtime defines in the program.
 *
 * The runtime is linked into the executable, so its definition of, say,
 * pthread_mutex_lock is the one the program and (through the dynamic
 * list) every shared library call.  Each interceptor reports its event
 * and reaches libc's own function through a pointer, rt_real_NAME,
 * resolved by rt_intercept_init() (intercept_real.c) with
 * dlsym(RTLD_NEXT) / dlvsym.  Calls inside libc to its own functions do
 * not come here.
 *
 * Pointers are resolved at the first of rt_init() or the first call of
 * any interceptor (shared libraries' constructors run before the
 * program's, and may call memcpy or pthread_once before the runtime
 * starts): RT_REAL(name) resolves on demand.  The allocator is the
 * exception: malloc and friends call glibc's __libc_* entry points
 * directly, because dlsym itself allocates.
 *
 * What every interceptor does first: if the runtime does not run, or the
 * calling thread may not analyse (rt_enter() fails: busy, ignoring,
 * inside a report, a signal handler interrupting the engine, a finished
 * thread), it only calls the real function.
 *
 * Documentation/runtime-interceptors.md lists every function and the
 * event it becomes.
 */
#ifndef VALOR_RUNTIME_INTERCEPT_H
#define VALOR_RUNTIME_INTERCEPT_H

#include <features.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>
#include <wchar.h>

#include "rt.h"

#if __GLIBC_PREREQ(2, 28)
#include <threads.h>
#define RT_HAVE_C11_THREADS 1
#else
#define RT_HAVE_C11_THREADS 0
#endif

/* The clock* variants (pthread_mutex_clocklock, ...) came with 2.30. */
#if __GLIBC_PREREQ(2, 30)
#define RT_HAVE_CLOCK_WAITS 1
#else
#define RT_HAVE_CLOCK_WAITS 0
#endif

#if __GLIBC_PREREQ(2, 31)
#define RT_HAVE_CLOCKJOIN 1
#else
#define RT_HAVE_CLOCKJOIN 0
#endif

/*
 * x86-64 glibc keeps the condition variables of before 2.3.2 as
 * pthread_cond_*@GLIBC_2.2.5; the runtime defines both versions there
 * (intercept_pthread.c says how).  Other architectures have one version.
 */
#if defined(__x86_64__)
#define RT_HAVE_COND_COMPAT 1
#define RT_COND_VERSION "GLIBC_2.3.2"
#define RT_COND_COMPAT_VERSION "GLIBC_2.2.5"
#else
#define RT_HAVE_COND_COMPAT 0
#define RT_COND_VERSION NULL
#endif

/*
 * How an interceptor is defined: exported, and weak, as the sanitizers'
 * interceptors are, so that a program that defines the function itself
 * (its own allocator, say) links and keeps its definition, unseen by the
 * runtime, instead of failing with a duplicate definition.
 */
#define RT_INTERCEPTOR RT_EXPORT __attribute__((weak))

/*
 * The fortified entry points (-D_FORTIFY_SOURCE); no header declares
 * them without it.
 */
void *__memcpy_chk(void *dst, const void *src, size_t n, size_t dstlen);
void *__memmove_chk(void *dst, const void *src, size_t n, size_t dstlen);
void *__mempcpy_chk(void *dst, const void *src, size_t n, size_t dstlen);
void *__memset_chk(void *dst, int c, size_t n, size_t dstlen);
char *__strcpy_chk(char *dst, const char *src, size_t dstlen);
char *__stpcpy_chk(char *dst, const char *src, size_t dstlen);
char *__strncpy_chk(char *dst, const char *src, size_t n, size_t dstlen);
char *__strcat_chk(char *dst, const char *src, size_t dstlen);
char *__strncat_chk(char *dst, const char *src, size_t n, size_t dstlen);
int __printf_chk(int flag, const char *fmt, ...);
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
int __dprintf_chk(int fd, int flag, const char *fmt, ...);
int __vprintf_chk(int flag, const char *fmt, va_list ap);
int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap);

/*
 * Every real function: X(var, symbol, version, optional).  rt_real_<var>
 * points to libc's <symbol> (of <version> when not NULL, else the default
 * version).  A missing function that is not optional stops the program
 * at start-up with a message; an optional one leaves the pointer NULL
 * and its interceptor fails with ENOSYS.
 */
#define RT_REAL_PTHREAD(X)                                                    \
	X(pthread_create, pthread_create, NULL, 0)                            \
	X(pthread_join, pthread_join, NULL, 0)                                \
	X(pthread_tryjoin_np, pthread_tryjoin_np, NULL, 0)                    \
	X(pthread_timedjoin_np, pthread_timedjoin_np, NULL, 0)                \
	X(pthread_detach, pthread_detach, NULL, 0)                            \
	X(pthread_exit, pthread_exit, NULL, 0)                                \
	X(pthread_once, pthread_once, NULL, 0)                                \
	X(pthread_mutex_lock, pthread_mutex_lock, NULL, 0)                    \
	X(pthread_mutex_trylock, pthread_mutex_trylock, NULL, 0)              \
	X(pthread_mutex_timedlock, pthread_mutex_timedlock, NULL, 0)          \
	X(pthread_mutex_unlock, pthread_mutex_unlock, NULL, 0)                \
	X(pthread_rwlock_rdlock, pthread_rwlock_rdlock, NULL, 0)              \
	X(pthread_rwlock_tryrdlock, pthread_rwlock_tryrdlock, NULL, 0)        \
	X(pthread_rwlock_timedrdlock, pthread_rwlock_timedrdlock, NULL, 0)    \
	X(pthread_rwlock_wrlock, pthread_rwlock_wrlock, NULL, 0)              \
	X(pthread_rwlock_trywrlock, pthread_rwlock_trywrlock, NULL, 0)        \
	X(pthread_rwlock_timedwrlock, pthread_rwlock_timedwrlock, NULL, 0)    \
	X(pthread_rwlock_unlock, pthread_rwlock_unlock, NULL, 0)              \
	X(pthread_spin_lock, pthread_spin_lock, NULL, 0)                      \
	X(pthread_spin_trylock, pthread_spin_trylock, NULL, 0)                \
	X(pthread_spin_unlock, pthread_spin_unlock, NULL, 0)                  \
	X(pthread_cond_wait, pthread_cond_wait, RT_COND_VERSION, 0)           \
	X(pthread_cond_timedwait, pthread_cond_timedwait, RT_COND_VERSION, 0) \
	X(pthread_cond_signal, pthread_cond_signal, RT_COND_VERSION, 0)       \
	X(pthread_cond_broadcast, pthread_cond_broadcast, RT_COND_VERSION, 0) \
	X(pthread_barrier_wait, pthread_barrier_wait, NULL, 0)                \
	X(sem_wait, sem_wait, NULL, 0)                                        \
	X(sem_trywait, sem_trywait, NULL, 0)                                  \
	X(sem_timedwait, sem_timedwait, NULL, 0)                              \
	X(sem_post, sem_post, NULL, 0)

#if RT_HAVE_CLOCK_WAITS
#define RT_REAL_CLOCK(X)                                                   \
	X(pthread_mutex_clocklock, pthread_mutex_clocklock, NULL, 1)       \
	X(pthread_rwlock_clockrdlock, pthread_rwlock_clockrdlock, NULL, 1) \
	X(pthread_rwlock_clockwrlock, pthread_rwlock_clockwrlock, NULL, 1) \
	X(pthread_cond_clockwait, pthread_cond_clockwait, NULL, 1)         \
	X(sem_clockwait, sem_clockwait, NULL, 1)
#else
#define RT_REAL_CLOCK(X)
#endif

#if RT_HAVE_CLOCKJOIN
#define RT_REAL_CLOCKJOIN(X) \
	X(pthread_clockjoin_np, pthread_clockjoin_np, NULL, 1)
#else
#define RT_REAL_CLOCKJOIN(X)
#endif

#if RT_HAVE_COND_COMPAT
#define RT_REAL_COND_COMPAT(X)                                                 \
	X(pthread_cond_wait_compat, pthread_cond_wait, RT_COND_COMPAT_VERSION, \
	  1)                                                                   \
	X(pthread_cond_timedwait_compat, pthread_cond_timedwait,               \
	  RT_COND_COMPAT_VERSION, 1)                                           \
	X(pthread_cond_signal_compat, pthread_cond_signal,                     \
	  RT_COND_COMPAT_VERSION, 1)                                           \
	X(pthread_cond_broadcast_compat, pthread_cond_broadcast,               \
	  RT_COND_COMPAT_VERSION, 1)
#else
#define RT_REAL_COND_COMPAT(X)
#endif

#if RT_HAVE_C11_THREADS
#define RT_REAL_C11(X)                           \
	X(thrd_create, thrd_create, NULL, 1)     \
	X(thrd_join, thrd_join, NULL, 1)         \
	X(thrd_detach, thrd_detach, NULL, 1)     \
	X(mtx_lock, mtx_lock, NULL, 1)           \
	X(mtx_trylock, mtx_trylock, NULL, 1)     \
	X(mtx_timedlock, mtx_timedlock, NULL, 1) \
	X(mtx_unlock, mtx_unlock, NULL, 1)       \
	X(cnd_wait, cnd_wait, NULL, 1)           \
	X(cnd_timedwait, cnd_timedwait, NULL, 1) \
	X(cnd_signal, cnd_signal, NULL, 1)       \
	X(cnd_broadcast, cnd_broadcast, NULL, 1) \
	X(call_once, call_once, NULL, 1)
#else
#define RT_REAL_C11(X)
#endif

#define RT_REAL_MMAP(X)            \
	X(mmap, mmap, NULL, 0)     \
	X(mmap64, mmap64, NULL, 0) \
	X(munmap, munmap, NULL, 0) \
	X(mremap, mremap, NULL, 0)

#define RT_REAL_STRING(X)                          \
	X(memcpy, memcpy, NULL, 0)                 \
	X(memmove, memmove, NULL, 0)               \
	X(mempcpy, mempcpy, NULL, 0)               \
	X(memset, memset, NULL, 0)                 \
	X(memcmp, memcmp, NULL, 0)                 \
	X(bcmp, bcmp, NULL, 0)                     \
	X(memchr, memchr, NULL, 0)                 \
	X(memrchr, memrchr, NULL, 0)               \
	X(bzero, bzero, NULL, 0)                   \
	X(explicit_bzero, explicit_bzero, NULL, 1) \
	X(strlen, strlen, NULL, 0)                 \
	X(strnlen, strnlen, NULL, 0)               \
	X(strcpy, strcpy, NULL, 0)                 \
	X(strncpy, strncpy, NULL, 0)               \
	X(stpcpy, stpcpy, NULL, 0)                 \
	X(stpncpy, stpncpy, NULL, 0)               \
	X(strcat, strcat, NULL, 0)                 \
	X(strncat, strncat, NULL, 0)               \
	X(strcmp, strcmp, NULL, 0)                 \
	X(strncmp, strncmp, NULL, 0)               \
	X(strchr, strchr, NULL, 0)                 \
	X(strchrnul, strchrnul, NULL, 0)           \
	X(strrchr, strrchr, NULL, 0)               \
	X(strstr, strstr, NULL, 0)                 \
	X(strdup, strdup, NULL, 0)                 \
	X(strndup, strndup, NULL, 0)               \
	X(wmemcpy, wmemcpy, NULL, 0)               \
	X(wmemmove, wmemmove, NULL, 0)             \
	X(wmemset, wmemset, NULL, 0)               \
	X(wcslen, wcslen, NULL, 0)                 \
	X(__memcpy_chk, __memcpy_chk, NULL, 1)     \
	X(__memmove_chk, __memmove_chk, NULL, 1)   \
	X(__mempcpy_chk, __mempcpy_chk, NULL, 1)   \
	X(__memset_chk, __memset_chk, NULL, 1)     \
	X(__strcpy_chk, __strcpy_chk, NULL, 1)     \
	X(__stpcpy_chk, __stpcpy_chk, NULL, 1)     \
	X(__strncpy_chk, __strncpy_chk, NULL, 1)   \
	X(__strcat_chk, __strcat_chk, NULL, 1)     \
	X(__strncat_chk, __strncat_chk, NULL, 1)

#define RT_REAL_MISC(X)                        \
	X(fork, fork, NULL, 0)                 \
	X(write, write, NULL, 0)               \
	X(writev, writev, NULL, 0)             \
	X(pwrite, pwrite, NULL, 0)             \
	X(pwrite64, pwrite64, NULL, 0)         \
	X(pwritev, pwritev, NULL, 0)           \
	X(pwritev2, pwritev2, NULL, 1)         \
	X(send, send, NULL, 0)                 \
	X(sendto, sendto, NULL, 0)             \
	X(sendmsg, sendmsg, NULL, 0)           \
	X(sendmmsg, sendmmsg, NULL, 0)         \
	X(read, read, NULL, 0)                 \
	X(pread, pread, NULL, 0)               \
	X(pread64, pread64, NULL, 0)           \
	X(readv, readv, NULL, 0)               \
	X(recv, recv, NULL, 0)                 \
	X(recvfrom, recvfrom, NULL, 0)         \
	X(recvmsg, recvmsg, NULL, 0)           \
	X(recvmmsg, recvmmsg, NULL, 0)         \
	X(close, close, NULL, 0)               \
	X(dup2, dup2, NULL, 0)                 \
	X(dup3, dup3, NULL, 0)                 \
	X(close_range, close_range, NULL, 1)   \
	X(epoll_ctl, epoll_ctl, NULL, 0)       \
	X(epoll_wait, epoll_wait, NULL, 0)     \
	X(epoll_pwait, epoll_pwait, NULL, 0)   \
	X(epoll_pwait2, epoll_pwait2, NULL, 1) \
	X(sigaction, sigaction, NULL, 0)

/* stdio output; printf, fprintf and dprintf call the v* functions. */
#define RT_REAL_STDIO(X)                           \
	X(vprintf, vprintf, NULL, 0)               \
	X(vfprintf, vfprintf, NULL, 0)             \
	X(vdprintf, vdprintf, NULL, 0)             \
	X(__vprintf_chk, __vprintf_chk, NULL, 0)   \
	X(__vfprintf_chk, __vfprintf_chk, NULL, 0) \
	X(__vdprintf_chk, __vdprintf_chk, NULL, 0) \
	X(puts, puts, NULL, 0)                     \
	X(fputs, fputs, NULL, 0)                   \
	X(fputc, fputc, NULL, 0)                   \
	X(putc, putc, NULL, 0)                     \
	X(putchar, putchar, NULL, 0)               \
	X(fwrite, fwrite, NULL, 0)                 \
	X(fflush, fflush, NULL, 0)                 \
	X(fclose, fclose, NULL, 0)                 \
	X(freopen, freopen, NULL, 0)               \
	X(freopen64, freopen64, NULL, 1)           \
	X(perror, perror, NULL, 0)

#define RT_REAL_FUNCS(X)       \
	RT_REAL_PTHREAD(X)     \
	RT_REAL_CLOCK(X)       \
	RT_REAL_CLOCKJOIN(X)   \
	RT_REAL_COND_COMPAT(X) \
	RT_REAL_C11(X)         \
	RT_REAL_MMAP(X)        \
	RT_REAL_STRING(X)      \
	RT_REAL_MISC(X)        \
	RT_REAL_STDIO(X)

#define RT_REAL_DECLARE(var, sym, version, optional) \
	extern __typeof__(sym) *rt_real_##var;
RT_REAL_FUNCS(RT_REAL_DECLARE)
#undef RT_REAL_DECLARE

/*
 * libc's function behind an interceptor, resolving all of them on first
 * use.  NULL only for an optional function libc does not have.
 */
#define RT_REAL(var)                                     \
	(likely(rt_real_##var != NULL) ? rt_real_##var : \
					 (rt_intercept_init(), rt_real_##var))

/* glibc's allocator entry points, which the malloc interceptors call. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

/*
 * The PC of the call to the interceptor, minus one so that symbolization
 * lands on the call's line (as the __tsan_* entry points do).  Only valid
 * in the interceptor's own body (a macro, not a helper).
 */
#define RT_CALLER_RET() ((uintptr_t)__builtin_return_address(0))
#define RT_CALLER_PC() (RT_CALLER_RET() - 1)

/* The runtime runs (rt_init finished): cheap, no TLS access. */
static inline bool rt_running(void)
{
	return atomic_load_explicit(&rt.state, memory_order_relaxed) == 2;
}

/*
 * rt_enter() for interceptors: NULL when the runtime does not run or the
 * calling thread may not analyse now.  rt_leave() the result.
 */
static inline struct rt_thread *rt_icpt_enter(void)
{
	if (unlikely(!rt_running()))
		return NULL;
	return rt_enter();
}

/*
 * Modules compiled with -fsanitize=thread or the pass.  __tsan_init
 * (tsan_abi.c) runs in a constructor of every instrumented translation
 * unit; it calls rt_modules_register(), which registers every loaded
 * module that is instrumented and not registered yet (intercept_misc.c
 * says how it tells), and returns at once when no module was loaded
 * since its last look.  Any thread, any time (also from dlopen), no
 * allocation.
 */
void rt_modules_register(void);

/* @pc lies in the executable code of a registered (instrumented) module. */
bool rt_pc_instrumented(uintptr_t pc);

/*
 * rt_icpt_enter() for interceptors that report the caller's memory
 * accesses (string functions, I/O buffers): also NULL when the
 * ignore_uninstrumented option is on and the caller, whose return
 * address is @ret, is not in an instrumented module.
 */
static inline struct rt_thread *rt_icpt_enter_mem(uintptr_t ret)
{
	struct rt_thread *t = rt_icpt_enter();

	if (t && rt.opt.ignore_uninstrumented && !rt_pc_instrumented(ret)) {
		rt_leave(t);
		return NULL;
	}
	return t;
}

void rt_range_access(struct valor_thread *th, uintptr_t a, size_t n,
		     bool is_write, uintptr_t site);

/* Report an access of @n bytes at @p by the entered thread @t. */
static inline void rt_icpt_access(struct rt_thread *t, const void *p, size_t n,
				  bool is_write, uintptr_t pc)
{
	if (n)
		rt_range_access(t->vt, (uintptr_t)p, n, is_write, pc);
}

/*
 * What the I/O and mapping interceptors do around the real call, shared
 * with the sanitizer syscall hooks (syscall_hooks.c), which stand for
 * the same calls made without libc.  @ret is the caller's return
 * address: its buffers are reported unless ignore_uninstrumented says
 * to leave an uninstrumented caller alone.
 */
bool rt_caller_checked(uintptr_t ret);
/*
 * An output call: rt_output_begin(), buffers checked as reads if
 * *@check, rt_output_end() (a release of @fd's object, or with @fd < 0
 * a validation if asked), the real call.
 */
struct rt_thread *rt_output_begin(uintptr_t ret, bool *check);
void rt_output_end(struct rt_thread *t, int fd);
/* The synchronization object of what passes through @fd. */
uintptr_t rt_fd_sync_key(int fd);
void rt_read_iov(struct rt_thread *t, const struct iovec *iov, int n,
		 uintptr_t pc);
void rt_read_msg(struct rt_thread *t, const struct msghdr *m, uintptr_t pc);
/*
 * After an input call on @fd that returned @r: an acquire of @fd's
 * object (unless the call failed), then the bytes it stored, as writes.
 */
void rt_input_done(uintptr_t ret, int fd, const void *buf, ssize_t r);
void rt_input_iov(uintptr_t ret, int fd, const struct iovec *iov, int cnt,
		  ssize_t r);
void rt_input_msg(uintptr_t ret, int fd, const struct msghdr *msg, ssize_t r);
/* Memory's life: [@addr, +@len) unmapped (checked as a write), mapped. */
void rt_unmapping(struct rt_thread *t, const void *addr, size_t len,
		  uintptr_t pc);
void rt_mapped(struct rt_thread *t, const void *addr, size_t len);

/* After fork(), in the child: reset what intercept_*.c keep. */
void rt_intercept_pthread_after_fork_child(void);
void rt_intercept_modules_after_fork_child(void);

#endif /* VALOR_RUNTIME_INTERCEPT_H */
