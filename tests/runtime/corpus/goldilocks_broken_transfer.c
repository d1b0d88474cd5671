// SPDX-License-Identifier: GPL-2.0
/*
 * Goldilocks Example 2 with the hand-off chain broken: T2 reads `a`
 * without taking ma, so nothing orders T1's accesses before T2's and
 * T3's.
 *
 * VALOR-EXPECT: conflict kind=write-read lines=36,48 analyses=fasttrack memory=global
 * VALOR-EXPECT: conflict kind=write-write lines=34,64 analyses=fasttrack memory=heap
 *
 * Why FastTrack only: T2's unlocked read of `a` races with T1's write of
 * `a`, and T3's write of o.data (ordered after T2 through mb, but not
 * after T1) races with T1's initialisation.  T1's region ended at its
 * unlock of ma, before T2 and T3 start: no ongoing region, no region
 * conflict.
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
	tmp1->data = 0; /* racy: write (A) */
	pthread_mutex_lock(&ma);
	a = tmp1; /* racy: write (B) */
	pthread_mutex_unlock(&ma);
	sched_done(1);
	return NULL;
}

static void *t2_fn(void *arg)
{
	struct obj *tmp2;

	(void)arg;
	sched_wait(1);
	tmp2 = a; /* racy: read without ma (C) */
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
	tmp3 = b;
	tmp3->data = 2; /* racy: write (D) */
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
