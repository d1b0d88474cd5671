// SPDX-License-Identifier: GPL-2.0
/*
 * SlimState's a[4] under a lock, then unlocked (COARSE, then SPLIT):
 * T1 writes a[0..3] under L; T2 writes a[0..3] under L; T1 writes
 * a[0..1] under L, then reads a[0..3] without the lock; while T1's
 * region is open, T2 writes a[2] without the lock.
 *
 * VALOR-EXPECT: conflict kind=read-write lines=39,55 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three: the locked phases are ordered through L.  T1's unlocked
 * read of a[2] and T2's unlocked write of it are not, and T1's region
 * (since its last unlock) is still open at the write: FastRCD and
 * FastTrack report it at the write, Valor when T1 validates its reads
 * as it exits.  Only a[2] conflicts; a[0], a[1] and a[3] do not.
 */
#include <pthread.h>

#include "sched.h"

/* Not static: the compiler must keep every store (see testing-runtime.md). */
int a[4];
static pthread_mutex_t L = PTHREAD_MUTEX_INITIALIZER;

static void *t1_fn(void *arg)
{
	long sum;

	(void)arg;
	pthread_mutex_lock(&L);
	for (int i = 0; i < 4; i++)
		a[i] = 1;
	pthread_mutex_unlock(&L);
	sched_done(1);
	sched_wait(2);
	pthread_mutex_lock(&L);
	a[0] = 3;
	a[1] = 3;
	pthread_mutex_unlock(&L);
	sum = a[0] + a[1] + a[2] + a[3]; /* racy: read of a[2] (A) */
	sched_done(3);
	sched_wait(4);
	return (void *)sum;
}

static void *t2_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	pthread_mutex_lock(&L);
	for (int i = 0; i < 4; i++)
		a[i] = 2;
	pthread_mutex_unlock(&L);
	sched_done(2);
	sched_wait(3);
	a[2] = 9; /* racy: write (B) */
	sched_done(4);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	void *sum;

	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL))
		return 1;
	pthread_join(t1, &sum);
	pthread_join(t2, NULL);
	return (long)sum == 10 ? 0 : 1;
}
