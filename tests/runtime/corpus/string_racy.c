// SPDX-License-Identifier: GPL-2.0
/*
 * String functions on a shared buffer: T1 strcpy's a name into it;
 * while T1's region is open, T2 takes its strlen.
 *
 * VALOR-EXPECT: conflict kind=write-read lines=23,35 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three: the copy writes and strlen reads the same bytes,
 * unordered, with T1's region open.  Both are libc calls: the runtime's
 * string interceptors must report them as ranges at the callers' lines.
 */
#include <pthread.h>
#include <string.h>

#include "sched.h"

char source[32] = "a name";
static char name[32];

static void *t1_fn(void *arg)
{
	(void)arg;
	strcpy(name, source); /* racy: write (A) */
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	long n;

	(void)arg;
	sched_wait(1);
	n = (long)strlen(name); /* racy: read (B) */
	sched_done(2);
	return (void *)n;
}

int main(void)
{
	pthread_t t1, t2;
	void *n;

	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, &n);
	return (long)n == 6 ? 0 : 1;
}
