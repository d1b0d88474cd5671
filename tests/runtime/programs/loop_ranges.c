// SPDX-License-Identifier: GPL-2.0
/*
 * Loops whose accesses the pass checks once, as ranges, before the
 * loop, writes too, for pass_test.c.  T1 fills the
 * first half of an array, T2 the second half while T1's region is still
 * open: a range one byte too long on either side would be a conflict
 * here, and there must be none.  Then T2 sums the last quarter of T1's
 * half, still within T1's region: exactly one write-read conflict, at
 * the two lines marked racy.
 */
#include <pthread.h>
#include <stdio.h>

#include "sched.h"

#define N 1024

int a[N];
long sum;
volatile int first;

__attribute__((noinline)) static void fill(int *p, int n, int v)
{
	for (int i = 0; i < n; i++)
		p[i] = v + i; /* racy: write */
}

__attribute__((noinline)) static long add_up(const int *p, int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += p[i]; /* racy: read */
	return s;
}

static void *t1_fn(void *arg)
{
	(void)arg;
	/*
	 * A read first, so that the array's shadow exists when the write
	 * range looks for cells the region owns (a fast look that wrongly
	 * skipped them would otherwise never run).
	 */
	first = a[0];
	fill(a, N / 2, 1);
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	fill(a + N / 2, N / 2, 2);
	sum = add_up(a + N / 4, N / 4);
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
	printf("sum %ld\n", sum);
	return 0;
}
