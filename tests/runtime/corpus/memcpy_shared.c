// SPDX-License-Identifier: GPL-2.0
/*
 * memcpy into a shared buffer: T1 copies its message into the buffer;
 * while T1's region is open, T2 copies its own message over it.
 *
 * VALOR-EXPECT: conflict kind=write-write lines=26,36 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three: the two copies write the same bytes, nothing orders
 * them, and T1 has released nothing since its copy.  The length is not
 * a compile-time constant, so the compiler calls memcpy: the runtime's
 * memcpy interceptor must report the range with the caller's line.
 */
#include <pthread.h>
#include <string.h>

#include "sched.h"

size_t copy_length = 32;
static char shared[64];
static char from_t1[64] = "message from T1";
static char from_t2[64] = "message from T2";

static void *t1_fn(void *arg)
{
	(void)arg;
	memcpy(shared, from_t1, copy_length); /* racy: write (A) */
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	memcpy(shared, from_t2, copy_length); /* racy: write (B) */
	sched_done(2);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;

	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return strcmp(shared, "message from T2") ? 1 : 0;
}
