// SPDX-License-Identifier: GPL-2.0
/*
 * Publication through an atomic flag with release/acquire: T1 fills
 * plain data and sets the flag with a release store; T2 sees the flag
 * with an acquire load, then reads and updates the data.
 *
 * VALOR-EXPECT: clean
 *
 * Why: the release store / acquire load pair orders T1's writes before
 * T2's accesses (no FastTrack race), and the release store ends T1's
 * region (no region conflict).  The flag is only accessed atomically.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "sched.h"

static long data[4];
static atomic_int ready;

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++)
		data[i] = 10 * (i + 1);
	atomic_store_explicit(&ready, 1, memory_order_release);
	sched_done(1);
	return NULL;
}

static void *consumer(void *arg)
{
	long sum = 0;

	(void)arg;
	sched_wait(1);
	if (atomic_load_explicit(&ready, memory_order_acquire) != 1)
		return (void *)-1L;
	for (int i = 0; i < 4; i++) {
		sum += data[i];
		data[i] = 0;
	}
	return (void *)sum;
}

int main(void)
{
	pthread_t t1, t2;
	void *sum;

	if (pthread_create(&t1, NULL, producer, NULL) ||
	    pthread_create(&t2, NULL, consumer, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, &sum);
	return (long)sum == 100 ? 0 : 1;
}
