// SPDX-License-Identifier: GPL-2.0
/*
 * SlimState's a[4] by odd and even indices (STRIDE(2)): T1 writes a[0]
 * and a[2], T2 writes a[1] and a[3] -- each 8-byte word is shared by
 * both threads, each byte by one -- and each reads its own; T2 writes
 * a[2], T1's element, while T1's region is open.
 *
 * VALOR-EXPECT: conflict kind=write-write lines=27,43 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three: T2's write of a[2] is unordered with T1's and T1's
 * region is still open.  Exactly one conflict: the interleaved elements
 * share words but no bytes.
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
	a[2] = 1; /* racy: write (A) */
	sched_done(1);
	sched_wait(2);
	v = a[0];
	return (void *)v;
}

static void *t2_fn(void *arg)
{
	long v;

	(void)arg;
	a[1] = 2;
	a[3] = 2;
	sched_wait(1);
	v = a[1] + a[3];
	a[2] = 2; /* racy: write (B) */
	sched_done(2);
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
	return (long)v1 == 1 && (long)v2 == 4 ? 0 : 1;
}
