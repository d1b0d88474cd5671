// SPDX-License-Identifier: GPL-2.0
/*
 * Two races in two functions, one after the other: T1 updates both
 * counters; then T2 updates `hits` (the first conflict), says so on
 * stderr, and updates `misses` (the second).  T1's region stays open
 * throughout, so every analysis reports both, each a conflict within one
 * function's line: write-read, or write-write where Valor's pass checks
 * `x++` as its write.  errors_test.c uses it for
 * halt_on_conflict, exitcode and suppressions (by function and by file),
 * and checks that its buffered output survives the runtime's exit.
 */
#include <pthread.h>
#include <stdio.h>

#include "sched.h"

static long hits, misses;

__attribute__((noinline)) static void update_hits(void)
{
	hits++; /* the first race */
}

__attribute__((noinline)) static void update_misses(void)
{
	misses++; /* the second race */
}

static void *t1_fn(void *arg)
{
	(void)arg;
	update_hits();
	update_misses();
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	update_hits();
	fputs("after the first conflict\n", stderr);
	update_misses();
	sched_done(2);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;

	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	/* Buffered: must still appear when the runtime sets the exit status. */
	printf("hits %ld, misses %ld\n", hits, misses);
	fputs("main finished\n", stderr);
	return 0;
}
