// SPDX-License-Identifier: GPL-2.0
/*
 * The Valor paper's Figure 1(b): T1 reads x inside a critical section;
 * before T1 leaves it, T2 writes x without the lock.
 *
 * VALOR-EXPECT: conflict kind=read-write lines=27,38 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three: T2's write comes while T1's region (which started
 * before its read and ends at its unlock) is open, unordered with the
 * read.  FastRCD and FastTrack report it at the write; Valor reports it
 * lazily, when T1 validates its read at the unlock -- the same conflict,
 * found later.
 */
#include <pthread.h>

#include "sched.h"

static long x;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *t1_fn(void *arg)
{
	long v;

	(void)arg;
	pthread_mutex_lock(&m);
	v = x; /* racy: read (A) */
	sched_done(1);
	sched_wait(2);
	pthread_mutex_unlock(&m);
	return (void *)v;
}

static void *t2_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	x = 1; /* racy: write (B) */
	sched_done(2);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	void *v;

	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL))
		return 1;
	pthread_join(t1, &v);
	pthread_join(t2, NULL);
	return (long)v == 0 ? 0 : 1;
}
