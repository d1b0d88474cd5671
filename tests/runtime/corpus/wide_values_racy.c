// SPDX-License-Identifier: GPL-2.0
/*
 * 16-byte values: a pair of longs and a complex double, each two cells,
 * which gcc reads and writes with one 16-byte access (clang with two
 * 8-byte ones).  A thread writes the pair while main reads it; main
 * reads the complex value, then the thread overwrites it before main's
 * region ends.
 *
 * VALOR-EXPECT: conflict kind=write-read lines=41,52 analyses=valor,fastrcd,fasttrack memory=global
 * VALOR-EXPECT: conflict kind=read-write lines=53,44 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why: the thread's write of the pair (41) is in a region still going
 * when main reads it (52): write-read, whichever cell of the pair is
 * looked at first.  Main's read of the complex value (53) is in the
 * region the thread's write (44) meets: read-write, found by Valor when
 * main validates.  The runtime looks at an aligned 16-byte access as two
 * 8-byte ones: both halves must still be seen, with the access's line.
 */
#include <complex.h>
#include <pthread.h>
#include <stdio.h>

#include "sched.h"

struct pair {
	long first, second;
};

static struct pair shared_pair;
static double complex shared_z = 1.0;

static struct pair make_pair(long v)
{
	return (struct pair){ v, v + 1 };
}

static void *writer(void *arg)
{
	long v = (long)arg;

	shared_pair = make_pair(v); /* racy: write (41) */
	sched_done(1);
	sched_wait(2);
	shared_z = v * I; /* racy: write (44) */
	sched_done(3);
	sched_wait(4);
	return NULL;
}

static __attribute__((noinline)) void reader(struct pair *p, double complex *z)
{
	*p = shared_pair; /* racy: read (52) */
	*z = shared_z; /* racy: read (53) */
}

int main(void)
{
	pthread_t t;
	struct pair p;
	double complex z;

	if (pthread_create(&t, NULL, writer, (void *)7L))
		return 1;
	sched_wait(1);
	reader(&p, &z);
	sched_done(2);
	sched_wait(3);
	sched_done(4);
	pthread_join(t, NULL);
	printf("pair %ld %ld, z %g%+gi\n", p.first, p.second, creal(z),
	       cimag(z));
	return 0;
}
