// SPDX-License-Identifier: GPL-2.0
/*
 * Double-checked locking, the broken way: the fast path reads the
 * instance pointer without the lock and without an atomic.  T1 creates
 * the instance under the lock; T2 then finds the pointer set and uses
 * the object without ever taking the lock.
 *
 * VALOR-EXPECT: conflict kind=write-read lines=40,31 analyses=fasttrack memory=global
 * VALOR-EXPECT: conflict kind=write-read lines=39,60 analyses=fasttrack memory=heap
 *
 * Why FastTrack only: T2's unlocked reads of the pointer and of the
 * object's field are not ordered after T1's writes (T2 never acquires
 * the lock), so both race.  T1's region ended at its unlock before T2
 * ran, so they are not region conflicts: Valor and FastRCD cannot see
 * this bug unless the interleaving overlaps T1's critical section.
 */
#include <pthread.h>
#include <stdlib.h>

#include "sched.h"

struct config {
	int value;
};

static struct config *instance;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static struct config *get_config(void)
{
	struct config *c = instance; /* racy: unlocked read (C) */

	if (c)
		return c;
	pthread_mutex_lock(&lock);
	c = instance;
	if (!c) {
		c = malloc(sizeof(*c));
		c->value = 42; /* racy: write (A) */
		instance = c; /* racy: write (B) */
	}
	pthread_mutex_unlock(&lock);
	return c;
}

static void *t1_fn(void *arg)
{
	(void)arg;
	get_config();
	sched_done(1);
	return NULL;
}

static void *t2_fn(void *arg)
{
	long v;

	(void)arg;
	sched_wait(1);
	v = get_config()->value; /* racy: read (D) */
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
	free(instance);
	return (long)v == 42 ? 0 : 1;
}
