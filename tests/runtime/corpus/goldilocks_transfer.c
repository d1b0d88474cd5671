// SPDX-License-Identifier: GPL-2.0
/*
 * Goldilocks (Elmas, Qadeer & Tasiran), Example 2: ownership of o.data
 * moves from T1 to T3 through two locks.  T1 initialises o.data without
 * a lock and publishes o in `a` under ma; T2 moves o from `a` (under ma)
 * to `b` (under mb) without touching o.data; T3 takes o from `b` under
 * mb and writes o.data, under mb and then without any lock.
 *
 * VALOR-EXPECT: clean
 *
 * Why: T1's unlock of ma, T2's lock of ma, T2's unlock of mb and T3's
 * lock of mb order every access to o.data (no FastTrack race, although
 * lockset detectors such as Eraser report one: o.data is never
 * protected by a single lock), and each thread's region ends at its
 * unlock before the next thread starts (no region conflict).
 */
#include <pthread.h>
#include <stdlib.h>

#include "sched.h"

struct obj {
	int data;
};

static struct obj *a, *b;
static pthread_mutex_t ma = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mb = PTHREAD_MUTEX_INITIALIZER;

static void *t1_fn(void *arg)
{
	struct obj *tmp1 = malloc(sizeof(*tmp1));

	(void)arg;
	tmp1->data = 0;
	pthread_mutex_lock(&ma);
	a = tmp1;
	pthread_mutex_unlock(&ma);
	sched_done(1);
	return NULL;
}

static void *t2_fn(void *arg)
{
	struct obj *tmp2;

	(void)arg;
	sched_wait(1);
	pthread_mutex_lock(&ma);
	tmp2 = a;
	a = NULL;
	pthread_mutex_unlock(&ma);
	pthread_mutex_lock(&mb);
	b = tmp2;
	pthread_mutex_unlock(&mb);
	sched_done(2);
	return NULL;
}

static void *t3_fn(void *arg)
{
	struct obj *tmp3;

	(void)arg;
	sched_wait(2);
	pthread_mutex_lock(&mb);
	b->data = 2;
	tmp3 = b;
	b = NULL;
	pthread_mutex_unlock(&mb);
	tmp3->data = 3;
	return tmp3;
}

int main(void)
{
	pthread_t t1, t2, t3;
	struct obj *o;
	int ok;

	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL) ||
	    pthread_create(&t3, NULL, t3_fn, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	pthread_join(t3, (void **)&o);
	ok = o->data == 3;
	free(o);
	return ok ? 0 : 1;
}
