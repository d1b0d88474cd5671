// SPDX-License-Identifier: GPL-2.0
/*
 * A lock-free single-producer single-consumer ring buffer with C11
 * atomics: the producer writes a slot (plain) and publishes it with a
 * release store of the tail; the consumer sees it with an acquire load
 * of the tail, reads the slot (plain) and hands it back with a release
 * store of the head, which the producer acquires before reusing it.
 *
 * VALOR-EXPECT: clean
 *
 * Why: every slot's write is ordered before its read through the tail,
 * and every read before the slot's next write through the head; each
 * release store ends its thread's region before the other thread can
 * see the index move.  The indices are only accessed atomically.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define SLOTS 8
#define ITEMS 64

static long ring[SLOTS];
static atomic_uint head, tail;

static void *producer(void *arg)
{
	(void)arg;
	for (unsigned int i = 0; i < ITEMS; i++) {
		unsigned int t =
			atomic_load_explicit(&tail, memory_order_relaxed);

		while (t - atomic_load_explicit(&head, memory_order_acquire) ==
		       SLOTS)
			sched_yield();
		ring[t % SLOTS] = 3 * i;
		atomic_store_explicit(&tail, t + 1, memory_order_release);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	long bad = 0;

	(void)arg;
	for (unsigned int i = 0; i < ITEMS; i++) {
		unsigned int h =
			atomic_load_explicit(&head, memory_order_relaxed);

		while (atomic_load_explicit(&tail, memory_order_acquire) == h)
			sched_yield();
		bad += ring[h % SLOTS] != 3 * i;
		atomic_store_explicit(&head, h + 1, memory_order_release);
	}
	return (void *)bad;
}

int main(void)
{
	pthread_t p, c;
	void *bad;

	if (pthread_create(&c, NULL, consumer, NULL) ||
	    pthread_create(&p, NULL, producer, NULL))
		return 1;
	pthread_join(p, NULL);
	pthread_join(c, &bad);
	return bad ? 1 : 0;
}
