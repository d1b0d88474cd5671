// SPDX-License-Identifier: GPL-2.0
/*
 * A program that takes the report log's descriptor from under it, then
 * races: it closes stderr (and, with a second argument "all", every
 * descriptor from 3 to 1023, where a log file would be; with "raw", it
 * closes stderr by a system call that no interceptor sees), opens the
 * file @argv[1] -- which takes number 2 -- and writes its own line
 * there.  With "freopen", it reopens stderr on @argv[1] by freopen(3)
 * instead, which libc does by a close and an open of its own: that file
 * is the program's stderr, and the report must follow it there.
 * Then T1 updates a counter and T2 updates it while T1's region is still
 * open: one conflict, whose report must not land in the program's file.
 * errors_test.c checks the file and where the report went.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched.h"

static long hits;

static void *t1_fn(void *arg)
{
	(void)arg;
	hits++;
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	hits++;
	sched_done(2);
	return NULL;
}

int main(int argc, char **argv)
{
	static const char line[] = "the program's own line\n";
	pthread_t t1, t2;
	int fd;

	if (argc < 2)
		return 1;
	if (argc > 2 && !strcmp(argv[2], "freopen")) {
		if (!freopen(argv[1], "w", stderr) || fileno(stderr) != 2 ||
		    fputs(line, stderr) < 0 || fflush(stderr))
			return 1;
		goto race;
	}
	if (argc > 2 && !strcmp(argv[2], "raw"))
		syscall(SYS_close, 2);
	else
		close(2);
	if (argc > 2 && !strcmp(argv[2], "all"))
		for (int i = 3; i < 1024; i++)
			close(i);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd != 2 || write(fd, line, sizeof(line) - 1) != sizeof(line) - 1)
		return 1;
race:
	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return hits == 2 ? 0 : 1;
}
