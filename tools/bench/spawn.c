// SPDX-License-Identifier: GPL-2.0
/*
 * bench-spawn: run one benchmark program and report its wall time and
 * peak RSS, for tools/bench/bench.py.
 *
 *   bench-spawn TIMEOUT_S PROG [ARG]...
 *
 * Starts PROG with the environment, standard input and outputs it is
 * given, waits for it with wait4(), and writes one line to file
 * descriptor 3 (which PROG does not inherit):
 *
 *   status=<wait status> wall_ns=<ns> maxrss_kb=<KB> timed_out=<0|1>
 *
 * wall_ns is CLOCK_MONOTONIC (time.monotonic()'s clock) around fork(),
 * exec and wait4(); maxrss_kb is wait4's ru_maxrss.  After TIMEOUT_S
 * seconds PROG is killed (SIGKILL) and timed_out is 1.  If the harness
 * dies, so does this helper, and then PROG (parent-death signals): no
 * benchmark keeps running orphaned.
 *
 * Why not in Python: Linux carries a process's peak RSS across exec --
 * ru_maxrss starts at the high-water mark of the memory image the
 * process had before exec, which for a child of Python is the
 * interpreter's 15-20 MB.  That would hide the peak of any program
 * smaller than that and pull every memory ratio towards 1.  This
 * helper is linked statically and is a few hundred KB, so what a child
 * of it inherits is far below any workload's own footprint.
 *
 * Exit status: 0 when PROG ran (whatever its status: that is in the
 * report; 127 if it could not be executed), 2 for bad usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPORT_FD 3

static volatile sig_atomic_t timed_out;
static volatile pid_t child;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
	if (child > 0)
		kill(child, SIGKILL);
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct rusage ru;
	long long t0, t1;
	char *end;
	long timeout;
	pid_t pid;
	int status;

	if (argc < 3) {
		fprintf(stderr, "usage: bench-spawn TIMEOUT_S PROG [ARG]...\n");
		return 2;
	}
	timeout = strtol(argv[1], &end, 10);
	if (*end || timeout < 1) {
		fprintf(stderr, "bench-spawn: bad timeout '%s'\n", argv[1]);
		return 2;
	}
	if (fcntl(REPORT_FD, F_SETFD, FD_CLOEXEC)) {
		fprintf(stderr, "bench-spawn: no report descriptor %d: %s\n",
			REPORT_FD, strerror(errno));
		return 2;
	}
	sigaction(SIGALRM, &sa, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 2; /* the harness is already gone */

	/*
	 * fork, not vfork or posix_spawn: the child sets its parent-death
	 * signal before exec.  It starts as a copy of this small process, so
	 * its peak RSS starts there too.
	 */
	t0 = now_ns();
	pid = fork();
	if (pid < 0) {
		perror("bench-spawn: fork");
		return 2;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(argv[2], argv + 2);
		fprintf(stderr, "bench-spawn: cannot run %s: %s\n", argv[2],
			strerror(errno));
		_exit(127);
	}
	child = pid;
	alarm((unsigned int)timeout);
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("bench-spawn: wait4");
			return 2;
		}
	}
	t1 = now_ns();
	alarm(0);

	dprintf(REPORT_FD,
		"status=%d wall_ns=%lld maxrss_kb=%ld timed_out=%d\n", status,
		t1 - t0, ru.ru_maxrss, (int)timed_out);
	return 0;
}
