// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Signal handlers: sigaction and the functions built on it (signal,
 * bsd_signal, sysv_signal, sigset) install a wrapper in front of the
 * program's handler.  libc's own versions of those call its internal
 * sigaction, which nothing here sees, so each is defined here too.
 *
 * A handler runs on the thread it interrupts, with that thread's state.
 * Interrupting the runtime's busy work, it passes through unanalysed
 * (the busy count).  But the access code runs without the busy guard
 * (tsan_access.h): FastRCD's and FastTrack's in-place step holds a
 * cell's lock there, and Valor's check adds a byte to the read log's
 * newest entry.  A handler that accessed the same cell would wait for
 * that lock forever, and one that appended to the log could move the
 * entry under the interrupted store.  So the wrapper looks at the
 * interrupted pc and, inside that code, runs the handler busy: as if it
 * had interrupted the runtime anywhere else.
 *
 * The program sees its own handlers: sigaction's old action names the
 * program's handler and flags, never the wrapper.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "intercept.h"
#include "sys.h"

#include <errno.h>
#include <signal.h>
#include <ucontext.h>

/*
 * The program's handler of each signal, and its flags (for the old
 * action only).  The handler is called with three arguments whether or
 * not it asked for SA_SIGINFO: on x86-64 and arm64 the extra arguments
 * are registers a one-argument handler never reads, and so a flag and a
 * handler changed by two racing sigaction calls cannot be read torn.
 */
static _Atomic(uintptr_t) program_handler[_NSIG];
static _Atomic(int) program_flags[_NSIG];

static uintptr_t interrupted_pc(const void *uc)
{
#if defined(__x86_64__)
	return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)((const ucontext_t *)uc)->uc_mcontext.pc;
#else
	(void)uc;
	return 0;
#endif
}

static void run_handler(int sig, siginfo_t *info, void *uc)
{
	void (*fn)(int, siginfo_t *, void *) = (void (*)(
		int, siginfo_t *, void *))atomic_load(&program_handler[sig]);
	struct rt_thread *t = rt_cur;
	bool guard = t && uc && rt_pc_in_access_code(interrupted_pc(uc));

	if (guard)
		rt_busy_inc(t);
	if (fn)
		fn(sig, info, uc);
	if (guard)
		rt_busy_dec(t);
}

/*
 * Signals that arrive while the thread holds one of the runtime's or
 * the engine's locks (sys.h) wait until it holds none.  The program's
 * handler may wait for another thread, and that thread for the lock:
 * libuv's test suite hung so, a thread printing a report interrupted by
 * a handler that waited for libuv's own signal lock, whose holder was
 * waiting to print a report of its own.  A fault (a synchronous signal
 * the kernel raised) cannot wait: returning would fault again.
 *
 * A few of them, each with its siginfo and a copy of its context, as
 * the kernel queues them: one of each standard signal, real-time ones
 * each.  Past DEFERRED_MAX the handler runs at once, as it always did.
 */
#define DEFERRED_MAX 4

struct deferred_signal {
	int sig;
	siginfo_t info;
	ucontext_t uc;
};

static __thread struct {
	unsigned n;
	struct deferred_signal e[DEFERRED_MAX];
} deferred __attribute__((tls_model("initial-exec")));

static bool is_fault(int sig, const siginfo_t *info)
{
	switch (sig) {
	case SIGSEGV:
	case SIGBUS:
	case SIGILL:
	case SIGFPE:
	case SIGTRAP:
	case SIGSYS:
		/* si_code > 0: the kernel's own; kill() and sigqueue() <= 0. */
		return !info || info->si_code > 0;
	default:
		return false;
	}
}

static bool defer(int sig, const siginfo_t *info, const void *uc)
{
	struct deferred_signal *d;
	unsigned i;

	for (i = 0; i < deferred.n; i++)
		if (deferred.e[i].sig == sig && sig < SIGRTMIN)
			return true; /* pending already: one is kept */
	if (deferred.n == DEFERRED_MAX)
		return false;
	/* Reserved before it is filled: another signal may come in between. */
	d = &deferred.e[deferred.n++];
	d->sig = sig;
	if (info)
		d->info = *info;
	else
		memset(&d->info, 0, sizeof(d->info));
	if (uc) {
		memcpy(&d->uc, uc, sizeof(d->uc));
#if defined(__x86_64__)
		/* The copy's floating-point state, not the gone frame's. */
		if (d->uc.uc_mcontext.fpregs)
			d->uc.uc_mcontext.fpregs = &d->uc.__fpregs_mem;
#endif
	} else {
		memset(&d->uc, 0, sizeof(d->uc));
	}
	eng_after_locks = true;
	return true;
}

static void signal_wrapper(int sig, siginfo_t *info, void *uc);

/*
 * The thread holds no lock any more: the waiting signals run, oldest
 * first, with the mask their handler asked for.  One the program gave
 * another disposition in the meantime is raised again under it.
 */
static void run_deferred(void)
{
	int saved_errno = errno;

	eng_after_locks = false;
	while (deferred.n) {
		struct deferred_signal d = deferred.e[0];
		struct sigaction now;
		sigset_t mask, old;

		memmove(&deferred.e[0], &deferred.e[1],
			(deferred.n - 1) * sizeof(deferred.e[0]));
		deferred.n--;
		if (RT_REAL(sigaction)(d.sig, NULL, &now))
			continue;
		if (!(now.sa_flags & SA_SIGINFO) ||
		    now.sa_sigaction != signal_wrapper) {
			if (now.sa_handler != SIG_IGN)
				raise(d.sig);
			continue;
		}
		mask = now.sa_mask;
		if (!(now.sa_flags & SA_NODEFER))
			sigaddset(&mask, d.sig);
		pthread_sigmask(SIG_BLOCK, &mask, &old);
		run_handler(d.sig, &d.info, &d.uc);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	errno = saved_errno;
}

static void signal_wrapper(int sig, siginfo_t *info, void *uc)
{
	if (eng_locks_held && !is_fault(sig, info) && defer(sig, info, uc))
		return;
	run_handler(sig, info, uc);
}

static bool is_handler(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) ?
		       sa->sa_sigaction != NULL :
		       sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN;
}

static uintptr_t handler_of(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) ? (uintptr_t)sa->sa_sigaction :
					     (uintptr_t)sa->sa_handler;
}

/* The wrapper in @old becomes what the program installed. */
static void show_program_handler(int sig, struct sigaction *old)
{
	int flags;

	if (!old || !(old->sa_flags & SA_SIGINFO) ||
	    old->sa_sigaction != signal_wrapper)
		return;
	flags = atomic_load(&program_flags[sig]);
	old->sa_flags = (old->sa_flags & ~SA_SIGINFO) | (flags & SA_SIGINFO);
	if (flags & SA_SIGINFO)
		old->sa_sigaction =
			(void (*)(int, siginfo_t *, void *))atomic_load(
				&program_handler[sig]);
	else
		old->sa_handler =
			(void (*)(int))atomic_load(&program_handler[sig]);
}

RT_INTERCEPTOR int sigaction(int sig, const struct sigaction *act,
			     struct sigaction *old)
{
	struct sigaction wrapped;
	int r;

	if (sig <= 0 || sig >= _NSIG || !act || !is_handler(act)) {
		r = RT_REAL(sigaction)(sig, act, old);
		if (!r && sig > 0 && sig < _NSIG)
			show_program_handler(sig, old);
		return r;
	}
	/* Published first: a signal the new action delivers finds it. */
	eng_after_locks_hook = run_deferred;
	atomic_store(&program_flags[sig], act->sa_flags);
	atomic_store(&program_handler[sig], handler_of(act));
	wrapped = *act;
	wrapped.sa_flags |= SA_SIGINFO;
	wrapped.sa_sigaction = signal_wrapper;
	r = RT_REAL(sigaction)(sig, &wrapped, old);
	if (!r)
		show_program_handler(sig, old);
	return r;
}

/*
 * signal() and its variants, through the sigaction above: @flags, and
 * the signal blocked while its handler runs unless SA_NODEFER.
 */
static sighandler_t install_handler(int sig, sighandler_t handler, int flags)
{
	struct sigaction act = { 0 }, old;

	if (sig <= 0 || sig >= _NSIG || handler == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	act.sa_handler = handler;
	sigemptyset(&act.sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&act.sa_mask, sig);
	act.sa_flags = flags;
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	/* sa_handler and sa_sigaction share their storage. */
	return old.sa_handler;
}

/* glibc's signal(): BSD semantics. */
RT_INTERCEPTOR sighandler_t signal(int sig, sighandler_t handler)
{
	return install_handler(sig, handler, SA_RESTART);
}

/* glibc's signal() under its BSD name. */
RT_INTERCEPTOR sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return signal(sig, handler);
}

/*
 * System V's signal(): the handler runs once, with its signal not
 * blocked, and interrupted calls fail with EINTR.  Strict ISO C
 * programs (-std=c11 without _DEFAULT_SOURCE) call it for signal().
 */
RT_INTERCEPTOR sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	return install_handler(sig, handler, SA_RESETHAND | SA_NODEFER);
}

RT_INTERCEPTOR sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
	return install_handler(sig, handler, SA_RESETHAND | SA_NODEFER);
}

/*
 * The old System V sigset(): SIG_HOLD blocks the signal; any other
 * disposition is installed and unblocks it.  Either way the answer is
 * SIG_HOLD if the signal was blocked, else the handler before.
 */
RT_INTERCEPTOR sighandler_t sigset(int sig, sighandler_t disp)
{
	struct sigaction act = { 0 }, old;
	sigset_t one, was;

	if (sig <= 0 || sig >= _NSIG || disp == SIG_ERR) {
		errno = EINVAL;
		return SIG_ERR;
	}
	sigemptyset(&one);
	sigaddset(&one, sig);
	if (disp == SIG_HOLD) {
		if (sigaction(sig, NULL, &old) < 0 ||
		    sigprocmask(SIG_BLOCK, &one, &was) < 0)
			return SIG_ERR;
	} else {
		act.sa_handler = disp;
		sigemptyset(&act.sa_mask);
		if (sigaction(sig, &act, &old) < 0 ||
		    sigprocmask(SIG_UNBLOCK, &one, &was) < 0)
			return SIG_ERR;
	}
	return sigismember(&was, sig) ? SIG_HOLD : old.sa_handler;
}
