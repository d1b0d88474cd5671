// SPDX-License-Identifier: GPL-2.0
/*
 * A signal that arrives while the runtime prints a report, and whose
 * handler waits for another thread that has a report of its own to
 * print: libuv's test suite hung so (its handler takes a lock of
 * libuv's whose holder was printing a report).  The handler must run
 * once the report is out, not in the middle of it, or the two threads
 * wait for each other for ever.
 *
 * stderr is a pipe that main fills before the races, so that T1 stops
 * in write(2) while it prints its report, holding the report lock.
 * Main sees it there (/proc/self/task/TID/syscall), signals T1 and only
 * then drains the pipe to the real stderr.  T1's handler lets T2 go and
 * waits for it; T2 then races and prints a report of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched.h"

long a, c;
static int real_stderr, pipe_fds[2];
static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	sched_done(2); /* T2 may report now */
	sched_wait(3);
	handled = 1;
}

static void *t1_fn(void *arg)
{
	(void)arg;
	sched_note_thread(0);
	c = 1; /* racy: T1's write of c */
	sched_wait(1);
	return (void *)a; /* racy: T1's read of a, reported into the full pipe */
}

static void *t2_fn(void *arg)
{
	(void)arg;
	a = 1; /* racy: T2's write of a */
	sched_done(1);
	sched_wait(2);
	a = c; /* racy: T2's read of c, a report of its own */
	sched_done(3);
	return NULL;
}

/* T1 blocked in write(2) on fd 2: the report it prints is stuck. */
static int writing_to_stderr(long tid)
{
	char path[64], buf[128];
	long nr = -1, fd = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	sscanf(buf, "%ld 0x%lx", &nr, &fd);
	return nr == SYS_write && fd == 2;
}

/* The pipe's contents to the real stderr, without the filler (NULs). */
static void *drain(void *arg)
{
	char buf[4096];
	ssize_t n;

	(void)arg;
	while ((n = read(pipe_fds[0], buf, sizeof(buf))) > 0 ||
	       (n < 0 && errno == EINTR)) {
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] && write(real_stderr, &buf[i], 1) < 0)
				return NULL;
	}
	return NULL;
}

int main(void)
{
	struct sigaction act;
	pthread_t t1, t2, drainer;
	char fill[4096];
	long tid;

	memset(&act, 0, sizeof(act));
	act.sa_handler = on_usr1;
	act.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &act, NULL);

	/* stderr becomes a full pipe. */
	real_stderr = dup(2);
	if (real_stderr < 0 || pipe(pipe_fds) || dup2(pipe_fds[1], 2) < 0)
		return 1;
	fcntl(2, F_SETFL, O_NONBLOCK);
	memset(fill, 0, sizeof(fill));
	while (write(2, fill, sizeof(fill)) > 0)
		;
	fcntl(2, F_SETFL, 0);

	pthread_create(&t1, NULL, t1_fn, NULL);
	pthread_create(&t2, NULL, t2_fn, NULL);
	tid = (long)sched_noted(0);
	while (!writing_to_stderr(tid))
		usleep(1000);
	pthread_kill(t1, SIGUSR1);
	pthread_create(&drainer, NULL, drain, NULL);

	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	/* The summary at exit goes to the real stderr; the drain ends. */
	dup2(real_stderr, 2);
	close(pipe_fds[1]);
	pthread_join(drainer, NULL);
	dprintf(real_stderr, "\nsignal_in_report done, handled %d\n",
		(int)handled);
	return 0;
}
