// SPDX-License-Identifier: GPL-2.0
/*
 * A large block freed while another thread reads it: T2 reads a byte of
 * a 1 MiB block that calloc gave and nobody wrote; while T2's region is
 * open, T1 frees the block.
 *
 * VALOR-EXPECT: conflict kind=read-write lines=36,46 analyses=valor,fastrcd,fasttrack
 *
 * Why all three: the free is a write of the whole block, unordered with
 * T2's read.  Valor frees blocks this large lazily: the cells nobody
 * wrote keep their never-written state, so that their shadow is not
 * copied off the zero page, and the free goes into a ring that T2
 * checks its reads against when it validates them at its exit (engine
 * design, "Frees that leave zero words").  The report must be the one
 * the free's version bump would have given.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "sched.h"

#define SIZE (1 << 20)

static char *block;

/*
 * Through a volatile pointer, so that the compiler makes the read where
 * it is written.
 */
static void *reader(void *arg)
{
	long c;

	(void)arg;
	c = ((volatile char *)block)[SIZE / 3]; /* racy: read (A) */
	sched_done(1);
	sched_wait(2);
	return (void *)c;
}

static void *freer(void *arg)
{
	(void)arg;
	sched_wait(1);
	free(block); /* racy: free of the block (B) */
	sched_done(2);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	void *c;

	block = calloc(1, SIZE);
	if (!block)
		return 1;
	if (pthread_create(&t2, NULL, reader, NULL) ||
	    pthread_create(&t1, NULL, freer, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, &c);
	return c == 0 ? 0 : 1;
}
