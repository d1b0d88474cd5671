// SPDX-License-Identifier: GPL-2.0
/*
 * A signal handler that writes the variable its thread's loop updates:
 * the main thread sends the worker SIGUSR1 200,000 times while the
 * worker increments `flag` under a mutex, and the handler increments it
 * too.  Racy by design (the handler's write is not under the mutex);
 * errors_test.c runs it under each analysis and checks that it finishes.
 * A handler that interrupted FastRCD's or FastTrack's in-place step on
 * that cell used to wait for the cell's lock forever.
 *
 * It also checks what sigaction and signal say back: the program's own
 * handler and flags, not the runtime's wrapper, and that sysv_signal's
 * handler runs once.  Exit 1 with a message if not.
 *
 * The argument names how SIGUSR1's handler is installed: sigaction (the
 * default), bsd_signal or sigset, which libc implements with its own
 * internal sigaction.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define SIGNALS 200000

/* In libc, but declared by no header of this century. */
sighandler_t bsd_signal(int sig, sighandler_t handler);

long flag;
static atomic_int stop;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void on_usr1(int sig)
{
	(void)sig;
	flag++;
}

static void on_usr2(int sig, siginfo_t *info, void *uc)
{
	(void)sig;
	(void)info;
	(void)uc;
}

static volatile sig_atomic_t once_ran;

static void on_usr2_once(int sig)
{
	(void)sig;
	once_ran++;
}

static void *worker(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		pthread_mutex_lock(&lock);
		flag++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

static int check_handlers(void)
{
	struct sigaction sa = { .sa_sigaction = on_usr2,
				.sa_flags = SA_SIGINFO },
			 old;

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR2, &sa, NULL) || sigaction(SIGUSR2, NULL, &old) ||
	    !(old.sa_flags & SA_SIGINFO) || old.sa_sigaction != on_usr2) {
		puts("sigaction does not give back the SA_SIGINFO handler");
		return 1;
	}
	if (signal(SIGUSR2, SIG_IGN) != (void (*)(int))(void *)on_usr2 ||
	    signal(SIGUSR2, on_usr1) != SIG_IGN ||
	    signal(SIGUSR2, SIG_DFL) != on_usr1) {
		puts("signal does not give back the previous handler");
		return 1;
	}
	if (sigaction(SIGUSR1, NULL, &old) || (old.sa_flags & SA_SIGINFO) ||
	    old.sa_handler != on_usr1) {
		puts("sigaction does not give back the plain handler");
		return 1;
	}
	if (sysv_signal(SIGUSR2, on_usr2_once) != SIG_DFL || raise(SIGUSR2) ||
	    once_ran != 1 || sigaction(SIGUSR2, NULL, &old) ||
	    old.sa_handler != SIG_DFL) {
		puts("sysv_signal's handler does not run once");
		return 1;
	}
	return 0;
}

static int install(const char *how)
{
	struct sigaction sa = { .sa_handler = on_usr1 };

	sigemptyset(&sa.sa_mask);
	if (!strcmp(how, "sigaction"))
		return sigaction(SIGUSR1, &sa, NULL);
	if (!strcmp(how, "bsd_signal"))
		return bsd_signal(SIGUSR1, on_usr1) == SIG_ERR;
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	if (!strcmp(how, "sigset"))
		return sigset(SIGUSR1, on_usr1) == SIG_ERR;
	printf("no such way to install a handler: %s\n", how);
	return 1;
}

int main(int argc, char **argv)
{
	pthread_t t;

	if (install(argc > 1 ? argv[1] : "sigaction") || check_handlers())
		return 1;
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	for (int i = 0; i < SIGNALS; i++)
		pthread_kill(t, SIGUSR1);
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	puts("signals delivered");
	return 0;
}
