// SPDX-License-Identifier: GPL-2.0
/*
 * One race reported once: T1 makes four stores on one line (as a loop
 * the compiler unrolled would, each its own instruction), then T2
 * copies the 32 bytes they lie in while T1's region is still open.
 * Each store is a conflict with the copy from its own place in the
 * code, but a report names lines: errors_test.c expects one report of
 * the two lines, not four.
 */
#include <pthread.h>
#include <string.h>

#include "sched.h"

char buf[32];
char copy[32];

static void *t1_fn(void *arg)
{
	(void)arg;
	buf[0] = 1, buf[8] = 2, buf[16] = 3, buf[24] = 4; /* racy: stores */
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	memcpy(copy, buf, sizeof(copy)); /* racy: copy */
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
	return copy[8] == 2 ? 0 : 1;
}
