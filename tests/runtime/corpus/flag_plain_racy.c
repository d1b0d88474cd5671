// SPDX-License-Identifier: GPL-2.0
/*
 * Hand-off through a plain (volatile, non-atomic) flag -- the "spin
 * barrier with plain loads and stores" of LARD and the invisible
 * synchronization of the DSM paper: T1 writes data, then sets the flag;
 * T2 spins on the flag, then reads the data.
 *
 * VALOR-EXPECT: conflict kind=write-read lines=27,39 analyses=valor,fastrcd,fasttrack memory=global
 * VALOR-EXPECT: conflict kind=write-read lines=26,41 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three, twice: volatile is not synchronization, so the flag's
 * write and read race, and so do the data's; T1 releases nothing, so its
 * region is open through both of T2's reads.  (T2 reaches the loop only
 * after T1 set the flag, so it reads the flag once.)
 */
#include <pthread.h>

#include "sched.h"

static long data;
static volatile int flag;

static void *t1_fn(void *arg)
{
	(void)arg;
	data = 42; /* racy: write (A) */
	flag = 1; /* racy: write (B) */
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	long v;

	(void)arg;
	sched_wait(1);
	while (!flag) /* racy: read (C) */
		;
	v = data; /* racy: read (D) */
	sched_done(2);
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
	return (long)v == 42 ? 0 : 1;
}
