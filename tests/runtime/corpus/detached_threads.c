// SPDX-License-Identifier: GPL-2.0
/*
 * Detached threads: the main thread starts workers detached (two with a
 * detached attribute, two that detach themselves), each writes its own
 * result slot and posts a semaphore; the main thread waits for all the
 * posts, reads the results, and starts a second wave the same way
 * (which may reuse the first wave's stacks).
 *
 * VALOR-EXPECT: clean
 *
 * Why: each result is written before its sem_post and read after the
 * matching sem_wait: ordered, and sem_post ends the worker's region.
 * Nothing is joined, yet the runtime must neither report nor hang.
 */
#include <pthread.h>
#include <semaphore.h>

#define WORKERS 4

static long results[2 * WORKERS];
static sem_t finished;

static void *worker(void *arg)
{
	long i = (long)arg;
	long local[4];

	if (i % 2)
		pthread_detach(pthread_self());
	for (int j = 0; j < 4; j++)
		local[j] = i + j;
	results[i] = local[0] + local[3];
	sem_post(&finished);
	return NULL;
}

static int wave(pthread_attr_t *detached, long first)
{
	for (long i = first; i < first + WORKERS; i++) {
		pthread_t t;

		if (pthread_create(&t, i % 2 ? NULL : detached, worker,
				   (void *)i))
			return -1;
	}
	for (int i = 0; i < WORKERS; i++)
		sem_wait(&finished);
	return 0;
}

int main(void)
{
	pthread_attr_t detached;
	long sum = 0;

	sem_init(&finished, 0, 0);
	pthread_attr_init(&detached);
	pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
	if (wave(&detached, 0) || wave(&detached, WORKERS))
		return 1;
	for (int i = 0; i < 2 * WORKERS; i++)
		sum += results[i];
	pthread_attr_destroy(&detached);
	return sum == 80 ? 0 : 1; /* the sum of 2 * i + 3 for i < 8 */
}
