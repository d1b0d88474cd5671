// SPDX-License-Identifier: GPL-2.0
/*
 * A race on an __int128, which gcc and clang read with one 16-byte call:
 * T1 writes it, then T2 reads it in read_value(), called by t2_fn, while
 * T1's region is still open.  errors_test.c checks that
 * the read's report names t2_fn as the caller of read_value(): the
 * access entry points keep no frame, and a 16-byte access's first half
 * returns into one before the second half is looked at.
 */
#include <pthread.h>

#include "sched.h"

__int128 value;

__attribute__((noinline)) static __int128 read_value(void)
{
	return value; /* the racy read */
}

static void *t1_fn(void *arg)
{
	(void)arg;
	value = 3; /* the racy write */
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	double v;

	(void)arg;
	sched_wait(1);
	v = (double)read_value();
	sched_done(2);
	return (void *)(long)v;
}

int main(void)
{
	pthread_t t1, t2;

	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return 0;
}
