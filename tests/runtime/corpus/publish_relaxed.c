// SPDX-License-Identifier: GPL-2.0
/*
 * Publication through a relaxed atomic flag: T1 writes plain data and
 * sets the flag with a relaxed store; T2 sees the flag with a relaxed
 * load and reads the data.
 *
 * VALOR-EXPECT: conflict kind=write-read lines=25,40 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three, on the data only: relaxed operations synchronize
 * nothing, so T1's write of the data is unordered with T2's read, and
 * a relaxed store is not a release, so T1's region is still open when
 * T2 reads.  The flag itself is accessed only atomically: never a race.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "sched.h"

static long data;
static atomic_int ready;

static void *producer(void *arg)
{
	(void)arg;
	data = 42; /* racy: write (A) */
	atomic_store_explicit(&ready, 1, memory_order_relaxed);
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *consumer(void *arg)
{
	long v;

	(void)arg;
	sched_wait(1);
	if (atomic_load_explicit(&ready, memory_order_relaxed) != 1)
		return (void *)-1L;
	v = data; /* racy: read (B) */
	sched_done(2);
	return (void *)v;
}

int main(void)
{
	pthread_t t1, t2;
	void *v;

	if (pthread_create(&t1, NULL, producer, NULL) ||
	    pthread_create(&t2, NULL, consumer, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, &v);
	return (long)v == 42 ? 0 : 1;
}
