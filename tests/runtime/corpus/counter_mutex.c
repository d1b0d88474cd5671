// SPDX-License-Identifier: GPL-2.0
/*
 * The same counter, every increment under one mutex.
 *
 * VALOR-EXPECT: clean
 *
 * Why: each increment is ordered after the previous holder's unlock
 * (a happens-before edge for FastTrack), and each unlock is a release
 * that ends the holder's region before the next thread can touch the
 * counter (no ongoing region to conflict with for Valor and FastRCD).
 */
#include <pthread.h>
#include <stdio.h>

#define ROUNDS 500

static long counter;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *increment(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;

	if (pthread_create(&t1, NULL, increment, NULL) ||
	    pthread_create(&t2, NULL, increment, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("counter = %ld\n", counter);
	return counter == 2 * ROUNDS ? 0 : 1;
}
