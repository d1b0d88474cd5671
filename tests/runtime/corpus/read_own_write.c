// SPDX-License-Identifier: GPL-2.0
/*
 * A read of what the region wrote itself: T1 writes x and then reads
 * it back, in one region under L.  While that region is open, T2 writes
 * x unlocked.
 *
 * VALOR-EXPECT: conflict kind=write-write lines=37,49 analyses=valor,fastrcd,fasttrack memory=global
 * VALOR-EXPECT: conflict kind=read-write lines=28,49 analyses=fastrcd,fasttrack memory=global
 *
 * Why: T2's write conflicts with T1's open region, which wrote x and
 * read it.  All three analyses report the write against T1's write, at
 * T2's write.  Valor logs no read of a cell its region owns whole
 * (valor_fast.h, vw_read_of_own_write()): T2 cannot write the cell
 * without taking it from T1's region, which is this very conflict, so
 * the read adds no verdict and Valor reports nothing at T1's unlock.
 * FastRCD and FastTrack keep the read as well, and report it too.
 */
#include <pthread.h>

#include "sched.h"

static long x;
static pthread_mutex_t L = PTHREAD_MUTEX_INITIALIZER;

/* Out of line, so that no compiler folds the read into the write. */
static __attribute__((noinline)) long load(const long *p)
{
	return *p; /* racy: read (B) */
}

static void *t1_fn(void *arg)
{
	long v;

	(void)arg;
	pthread_mutex_lock(&L);
	x = 1; /* racy: write (A) */
	v = load(&x);
	sched_done(1);
	sched_wait(2);
	pthread_mutex_unlock(&L);
	return (void *)v;
}

static void *t2_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	x = 2; /* racy: write (C) */
	sched_done(2);
	return NULL;
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
	return 0;
}
