// SPDX-License-Identifier: GPL-2.0
/*
 * String and memory calls of a few bytes, which compilers expand in
 * place: T1 strcpy's a literal into a shared buffer (a few stores);
 * while T1's region is open, T2 compares the buffer's first 8 bytes
 * with memcmp against zero (two loads and a compare).
 *
 * VALOR-EXPECT: conflict kind=write-read lines=25,37 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three: the copy writes and the compare reads the same bytes,
 * unordered, with T1's region open.  gcc expands both after its
 * ThreadSanitizer pass, where nothing checks them: `valor cc` makes
 * them calls (-fno-builtin-...) that the runtime's interceptors check.
 */
#include <pthread.h>
#include <string.h>

#include "sched.h"

char name[16];

static void *t1_fn(void *arg)
{
	(void)arg;
	strcpy(name, "a long name"); /* racy: write (A) */
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	long same;

	(void)arg;
	sched_wait(1);
	same = !memcmp(name, "a long n", 8); /* racy: read (B) */
	sched_done(2);
	return (void *)same;
}

int main(void)
{
	pthread_t t1, t2;
	void *same;

	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, &same);
	return (long)same ? 0 : 1;
}
