// SPDX-License-Identifier: GPL-2.0
/*
 * memcpy out of a buffer part of which the region read already: T2
 * reads the buffer's first word, then copies 24 bytes of it out, all in
 * one region under L.  While that region is open, T1 writes a byte the
 * copy read and the earlier read did not.
 *
 * VALOR-EXPECT: conflict kind=read-write lines=45,31 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three: the copy's read of byte 20 and T1's write are
 * unordered, and T2's region is still open at the write (Valor reports
 * it when T2 validates at its unlock).  The runtime checks the copy's
 * source cell by cell, skipping the cell the region has read already:
 * the cells after it must still be logged, with the copy's line.
 */
#include <pthread.h>
#include <string.h>

#include "sched.h"

size_t copy_length = 24;
static char shared[32]
	__attribute__((aligned(8))) = "0123456789abcdefghijklmnopq";
static long first_word;
static pthread_mutex_t L = PTHREAD_MUTEX_INITIALIZER;

static void *t1_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	shared[20] = 'X'; /* racy: write (B) */
	sched_done(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	char copy[32];

	(void)arg;
	pthread_mutex_lock(&L);
	memcpy(&first_word, shared, sizeof(first_word));
	if (first_word == 0)
		copy[0] = 0;
	memcpy(copy, shared, copy_length); /* racy: read (A) */
	sched_done(1);
	sched_wait(2);
	pthread_mutex_unlock(&L);
	return (void *)(long)copy[0];
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
	return (long)v == '0' ? 0 : 1;
}
