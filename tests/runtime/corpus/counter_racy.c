// SPDX-License-Identifier: GPL-2.0
/*
 * Unprotected counter: two threads increment a shared counter without a
 * lock.  The invisible scheduler runs T2's increment entirely after
 * T1's, while T1 holds no lock and has released nothing since its own
 * increment: T1's region is still open.
 *
 * VALOR-EXPECT: conflict kind=write-read lines=34,34 analyses=valor,fastrcd,fasttrack memory=global compilers=gcc
 * VALOR-EXPECT: conflict kind=write-write lines=34,34 analyses=valor,fastrcd,fasttrack memory=global compilers=clang
 *
 * Why all three: T2's increment meets T1's write of the same bytes in
 * T1's ongoing region (a region conflict, found eagerly by Valor and
 * FastRCD), and nothing orders the two increments (a happens-before race
 * for FastTrack).  With gcc the first conflicting access is the
 * increment's read (write-read); clang instruments only the write of a
 * read-modify-write statement (its ThreadSanitizer pass drops a read
 * that a write to the same address follows in the same basic block), so
 * there the first conflict is write-write.  Later halves of the
 * statement may be reported too, on this line only.
 */
#include <pthread.h>
#include <stdio.h>

#include "sched.h"

static long counter;

static void *increment(void *arg)
{
	long me = (long)arg;

	if (me == 2)
		sched_wait(1);
	counter++; /* racy: read and write (A) */
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

	if (pthread_create(&t1, NULL, increment, (void *)1L) ||
	    pthread_create(&t2, NULL, increment, (void *)2L))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("counter = %ld\n", counter);
	return counter == 2 ? 0 : 1;
}
