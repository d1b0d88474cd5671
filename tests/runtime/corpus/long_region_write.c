// SPDX-License-Identifier: GPL-2.0
/*
 * A region that writes more cells than Valor's write set holds: T1
 * fills 65,536 ints (32,768 cells, twice the write set) without any
 * synchronization, then T2 writes the fourth one while T1's region is
 * still open.
 *
 * VALOR-EXPECT: conflict kind=write-write lines=30,40 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three: nothing orders T2's write after T1's (FastTrack), and
 * T1 still owns the cell (Valor, FastRCD).  Valor's write set spills
 * the cells of the array's start to make room, and still owns them,
 * and the report still names the line of T1's write.
 */
#include <pthread.h>

#include "sched.h"

#define N 65536

/* Not static: the compiler must keep every store (see testing-runtime.md). */
int a[N];

static void *t1_fn(void *arg)
{
	long v = 0;

	(void)arg;
	for (int i = 0; i < N; i++)
		a[i] = i; /* racy: write (A) */
	sched_done(1);
	sched_wait(2);
	return (void *)v;
}

static void *t2_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	a[3] = -1; /* racy: write (B) */
	sched_done(2);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;

	pthread_create(&t1, NULL, t1_fn, NULL);
	pthread_create(&t2, NULL, t2_fn, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return 0;
}
