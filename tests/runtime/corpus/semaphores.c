// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded buffer with two counting semaphores: the producer waits for
 * a free slot, writes it and posts `items`; the consumer waits for an
 * item, reads the slot and posts `slots`.
 *
 * VALOR-EXPECT: clean
 *
 * Why: sem_post is a release and a successful sem_wait an acquire of
 * the semaphore: each slot's write is ordered before its read and each
 * read before the slot is written again, and every post ends the
 * poster's region.
 */
#include <pthread.h>
#include <semaphore.h>

#define SLOTS 4
#define ITEMS 32

static long buffer[SLOTS];
static sem_t slots, items;

static void *producer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ITEMS; i++) {
		sem_wait(&slots);
		buffer[i % SLOTS] = i * 7;
		sem_post(&items);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long bad = 0;

	(void)arg;
	for (int i = 0; i < ITEMS; i++) {
		sem_wait(&items);
		bad += buffer[i % SLOTS] != i * 7;
		sem_post(&slots);
	}
	return (void *)bad;
}

int main(void)
{
	pthread_t p, c;
	void *bad;

	sem_init(&slots, 0, SLOTS);
	sem_init(&items, 0, 0);
	if (pthread_create(&c, NULL, consumer, NULL) ||
	    pthread_create(&p, NULL, producer, NULL))
		return 1;
	pthread_join(p, NULL);
	pthread_join(c, &bad);
	sem_destroy(&slots);
	sem_destroy(&items);
	return bad ? 1 : 0;
}
