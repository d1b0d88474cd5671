// SPDX-License-Identifier: GPL-2.0
/*
 * Two threads write the same field of a small heap object and the same
 * byte of a large heap buffer without a lock, T2 while T1's region is
 * still open.  The reports must describe each block exactly: the size it
 * was allocated with and where in it the conflicting bytes are (a small
 * block and a block beyond the runtime's backward scan are described by
 * different records).
 *
 * VALOR-EXPECT: conflict kind=write-write lines=34,34 analyses=valor,fastrcd,fasttrack memory=heap block=24,16
 * VALOR-EXPECT: conflict kind=write-write lines=35,35 analyses=valor,fastrcd,fasttrack memory=heap block=100000,60000
 *
 * Why all three: each write meets the other thread's write of the same
 * bytes in its ongoing region, and nothing orders the two threads.
 */
#include <pthread.h>
#include <stdlib.h>

#include "sched.h"

struct small {
	long a, b, c;
};

static struct small *small;
static char *big;

static void *writer(void *arg)
{
	long me = (long)arg;

	if (me == 2)
		sched_wait(1);
	small->c = me; /* racy: write (A) */
	big[60000] = (char)me; /* racy: write (B) */
	if (me == 1) {
		sched_done(1);
		sched_wait(2);
	} else {
		sched_done(2);
	}
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;

	small = malloc(sizeof(*small));
	big = calloc(100000, 1);
	if (!small || !big)
		return 1;
	if (pthread_create(&t1, NULL, writer, (void *)1L) ||
	    pthread_create(&t2, NULL, writer, (void *)2L))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	free(big);
	free(small);
	return 0;
}
