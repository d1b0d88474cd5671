// SPDX-License-Identifier: GPL-2.0
/*
 * The Valor paper's Figure 3 (release-free regions): T1 writes x and
 * then acquires a lock; while T1 holds it, T2 reads x.
 *
 * VALOR-EXPECT: conflict kind=write-read lines=24,38 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three: regions end at releases only, so T1's acquire does not
 * end the region of its write, which is still open at T2's read; and
 * nothing orders the write before the read.  (With synchronization-free
 * regions, regions=sfr, the acquire would end T1's region and Valor and
 * FastRCD would not report it.)
 */
#include <pthread.h>

#include "sched.h"

static long x;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *t1_fn(void *arg)
{
	(void)arg;
	x = 1; /* racy: write (A) */
	pthread_mutex_lock(&m);
	sched_done(1);
	sched_wait(2);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *t2_fn(void *arg)
{
	long v;

	(void)arg;
	sched_wait(1);
	v = x; /* racy: read (B) */
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
