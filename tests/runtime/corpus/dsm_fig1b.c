// SPDX-License-Identifier: GPL-2.0
/*
 * DSM race detector (Perkovic & Keleher), Figure 1(b): P2 reads x under
 * L first; then P1 writes x without the lock, and again under L.
 *
 * VALOR-EXPECT: conflict kind=read-write lines=27,37 analyses=fasttrack memory=global
 *
 * Why FastTrack only: nothing orders P2's read before P1's unlocked
 * write (P1 has not acquired L yet), so they race.  But P2's region
 * ended at its unlock, before the write: there is no ongoing region to
 * conflict with, so Valor and FastRCD rightly stay silent.  P1's second
 * write, under L, is ordered after P2's read: no race.
 */
#include <pthread.h>

#include "sched.h"

static long x;
static pthread_mutex_t L = PTHREAD_MUTEX_INITIALIZER;

static void *p2(void *arg)
{
	long v;

	(void)arg;
	pthread_mutex_lock(&L);
	v = x; /* racy: read (A) */
	pthread_mutex_unlock(&L);
	sched_done(1);
	return (void *)v;
}

static void *p1(void *arg)
{
	(void)arg;
	sched_wait(1);
	x = 1; /* racy: write (B) */
	pthread_mutex_lock(&L);
	x = 2;
	pthread_mutex_unlock(&L);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	void *v;

	if (pthread_create(&t2, NULL, p2, NULL) ||
	    pthread_create(&t1, NULL, p1, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, &v);
	return (long)v == 0 && x == 2 ? 0 : 1;
}
