// SPDX-License-Identifier: GPL-2.0
/*
 * Loops that read or write every other double, which the pass checks
 * once, as a nest of one element every 16 bytes, before the loop, for
 * pass_test.c.  T1 writes every element in between (a strided write
 * loop), and one element of the walk, while its region is still open;
 * then T2 sums the walk's elements and reads one element T1's loop
 * wrote.  Checking the gaps too would make every one of T1's writes a
 * conflict, and a write loop whose nest took no cell none: there must
 * be exactly two write-read conflicts, at the lines marked racy and
 * those marked strided.
 */
#include <pthread.h>
#include <stdio.h>

#include "sched.h"

#define N 1024

double d[2 * N];
double sum, probe;

__attribute__((noinline)) static void fill_odd(double *p, int n)
{
	for (int i = 0; i < n; i++)
		p[2 * i + 1] = i; /* strided: write */
}

__attribute__((noinline)) static double add_even(const double *p, int n)
{
	double s = 0;

	for (int i = 0; i < n; i++)
		s += p[2 * i]; /* racy: read */
	return s;
}

static void *t1_fn(void *arg)
{
	(void)arg;
	fill_odd(d, N);
	d[2 * 300] = 1; /* racy: write */
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	sum = add_even(d, N);
	probe = d[2 * 700 + 1]; /* strided: read */
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
	printf("sum %g %g\n", sum, probe);
	return 0;
}
