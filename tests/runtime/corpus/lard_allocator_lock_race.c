// SPDX-License-Identifier: GPL-2.0
/*
 * LARD rule R2 (the runtime's and the allocator's own synchronization is
 * not the program's): T1 writes x and then allocates and frees, taking
 * and releasing the allocator's arena lock; T2 allocates and frees
 * (the same arena, M_ARENA_MAX = 1) and then reads x.
 *
 * VALOR-EXPECT: conflict kind=write-read lines=28,45 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three: the program itself orders nothing between T1's write
 * and T2's read, and T1 has released nothing of its own (its region is
 * open).  A runtime that fed the allocator's internal lock to the
 * analyses would end T1's region and order the accesses, hiding the race.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>

#include "sched.h"

static long x;

static void *t1_fn(void *arg)
{
	void *p;

	(void)arg;
	x = 1; /* racy: write (A) */
	p = malloc(48);
	free(p);
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	void *p;
	long v;

	(void)arg;
	sched_wait(1);
	p = malloc(48);
	free(p);
	v = x; /* racy: read (B) */
	sched_done(2);
	return (void *)v;
}

int main(void)
{
	pthread_t t1, t2;
	void *v;

	mallopt(M_ARENA_MAX, 1);
	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, &v);
	return (long)v == 1 ? 0 : 1;
}
