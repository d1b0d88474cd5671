// SPDX-License-Identifier: GPL-2.0
/*
 * SlimState's a[4] in blocks (BLOCK(2)): T1 owns a[0..1], T2 owns
 * a[2..3]; each writes its block and reads an element of it; then T1
 * writes a[2], T2's element, while T2's region is open.
 *
 * VALOR-EXPECT: conflict kind=write-write lines=38,28 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three: T1's write of a[2] is unordered with T2's and T2's
 * region is still open.  Exactly one conflict: the blocks are disjoint.
 */
#include <pthread.h>

#include "sched.h"

/* Not static: the compiler must keep every store (see testing-runtime.md). */
int a[4];

static void *t1_fn(void *arg)
{
	long v;

	(void)arg;
	a[0] = 1;
	a[1] = 1;
	sched_wait(1);
	v = a[1];
	a[2] = 1; /* racy: write (B) */
	sched_done(2);
	return (void *)v;
}

static void *t2_fn(void *arg)
{
	long v;

	(void)arg;
	a[2] = 2; /* racy: write (A) */
	a[3] = 2;
	sched_done(1);
	sched_wait(2);
	v = a[3];
	return (void *)v;
}

int main(void)
{
	pthread_t t1, t2;
	void *v1, *v2;

	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL))
		return 1;
	pthread_join(t1, &v1);
	pthread_join(t2, &v2);
	return (long)v1 == 1 && (long)v2 == 2 ? 0 : 1;
}
