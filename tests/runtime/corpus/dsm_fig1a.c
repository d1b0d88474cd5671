// SPDX-License-Identifier: GPL-2.0
/*
 * DSM race detector (Perkovic & Keleher), Figure 1(a): P1 writes x
 * unlocked, then again under L; P2 then reads x under L.
 *
 * VALOR-EXPECT: clean
 *
 * Why: both of P1's writes come before its unlock, and P2 reads only
 * after locking L behind that unlock: happens-before orders them (no
 * FastTrack race), and P1's region ended at the unlock before P2's read
 * (no region conflict).
 */
#include <pthread.h>

#include "sched.h"

static long x;
static pthread_mutex_t L = PTHREAD_MUTEX_INITIALIZER;

static void *p1(void *arg)
{
	(void)arg;
	x = 1;
	pthread_mutex_lock(&L);
	x = 2;
	pthread_mutex_unlock(&L);
	sched_done(1);
	return NULL;
}

static void *p2(void *arg)
{
	long v;

	(void)arg;
	sched_wait(1);
	pthread_mutex_lock(&L);
	v = x;
	pthread_mutex_unlock(&L);
	return (void *)v;
}

int main(void)
{
	pthread_t t1, t2;
	void *v;

	if (pthread_create(&t1, NULL, p1, NULL) ||
	    pthread_create(&t2, NULL, p2, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, &v);
	return (long)v == 2 ? 0 : 1;
}
