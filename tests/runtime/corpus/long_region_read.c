// SPDX-License-Identifier: GPL-2.0
/*
 * A region that reads a large int array: T1 sums 65,536 ints (more
 * cells than Valor's read filter covers in one chunk, read four bytes at
 * a time) without any synchronization, then T2 writes one element near
 * the end while T1's region is still open; T1's region ends at exit.
 *
 * VALOR-EXPECT: conflict kind=read-write lines=31,42 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three: T1 read the element in its open region and T2's write
 * is unordered with that read.  Valor keeps the array's reads as a few
 * entries per 512 bytes (halves of cells from one site) and finds the
 * write when it validates them; the report names the line of the read.
 */
#include <pthread.h>

#include "sched.h"

#define N 65536

/* Not static: the compiler must keep every load (see testing-runtime.md). */
int a[N];
long sum;

static void *t1_fn(void *arg)
{
	long s = 0;

	(void)arg;
	for (int i = 0; i < N; i++)
		s += a[i]; /* racy: read (A) */
	sched_done(1);
	sched_wait(2);
	sum = s;
	return NULL;
}

static void *t2_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	a[N - 5] = 7; /* racy: write (B) */
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
