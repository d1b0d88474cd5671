// SPDX-License-Identifier: GPL-2.0
/*
 * The executable half of the toolchain tests: T1 calls counter_add()
 * (counter_lib.c, linked as an object, from an archive or from a shared
 * library); while T1's region is open, T2 reads the counter here.  Every
 * analysis reports a write-read conflict from counter_lib.c's line to
 * this file's line.
 */
#include <pthread.h>

#include "counter_lib.h"
#include "sched.h"

static void *t1_fn(void *arg)
{
	(void)arg;
	counter_add(1);
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	long v;

	(void)arg;
	sched_wait(1);
	v = shared_counter; /* racy: read */
	sched_done(2);
	return (void *)v;
}

int main(void)
{
	pthread_t t1, t2;
	void *v;

	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, &v);
	return (long)v == 1 ? 0 : 1;
}
