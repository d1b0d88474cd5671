// SPDX-License-Identifier: GPL-2.0
/*
 * Double-checked locking done right: the fast path loads the instance
 * pointer with acquire, the slow path publishes it with a release store
 * under the lock.
 *
 * VALOR-EXPECT: clean
 *
 * Why: a thread that finds the pointer set has acquired it from the
 * creator's release store, which comes after the object's
 * initialisation: ordered (no FastTrack race), and the release store
 * ended the creator's region (no region conflict).  The pointer itself
 * is only accessed atomically, and atomics are synchronization, not
 * data.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

struct config {
	int value;
};

static _Atomic(struct config *) instance;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct config *get_config(void)
{
	struct config *c;

	c = atomic_load_explicit(&instance, memory_order_acquire);
	if (c)
		return c;
	pthread_mutex_lock(&lock);
	c = atomic_load_explicit(&instance, memory_order_relaxed);
	if (!c) {
		c = malloc(sizeof(*c));
		c->value = 42;
		atomic_store_explicit(&instance, c, memory_order_release);
	}
	pthread_mutex_unlock(&lock);
	return c;
}

static void *user(void *arg)
{
	long v = 0;

	(void)arg;
	for (int i = 0; i < 50; i++)
		v += get_config()->value;
	return (void *)v;
}

int main(void)
{
	pthread_t t[3];
	long total = 0;

	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, user, NULL))
			return 1;
	for (int i = 0; i < 3; i++) {
		void *v;

		pthread_join(t[i], &v);
		total += (long)v;
	}
	free(atomic_load(&instance));
	return total == 3 * 50 * 42 ? 0 : 1;
}
