// SPDX-License-Identifier: GPL-2.0
/*
 * DSM pitfall (d): a write that stores the value already there is still
 * a write.  T1 sets x = 1 under L; T2 reads x under L and, while T2
 * still holds L (its region open), T1 stores 1 into x again unlocked.
 *
 * VALOR-EXPECT: conflict kind=read-write lines=41,29 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three: T2's read is in a region that is still open when T1's
 * unlocked write comes (FastRCD and FastTrack see it at the write,
 * Valor when T2 validates its reads at the unlock).  Detectors that diff
 * memory contents would miss it.
 */
#include <pthread.h>

#include "sched.h"

static long x;
static pthread_mutex_t L = PTHREAD_MUTEX_INITIALIZER;

static void *t1_fn(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&L);
	x = 1;
	pthread_mutex_unlock(&L);
	sched_done(1);
	sched_wait(2);
	x = 1; /* racy: same-value write (B) */
	sched_done(3);
	return NULL;
}

static void *t2_fn(void *arg)
{
	long v;

	(void)arg;
	sched_wait(1);
	pthread_mutex_lock(&L);
	v = x; /* racy: read (A) */
	sched_done(2);
	sched_wait(3);
	pthread_mutex_unlock(&L);
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
	return (long)v == 1 ? 0 : 1;
}
