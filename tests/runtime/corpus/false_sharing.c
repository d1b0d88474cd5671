// SPDX-License-Identifier: GPL-2.0
/*
 * False sharing next to a true race (DSM pitfall (c)): two threads write
 * and read disjoint fields of one cache line -- two of them inside one
 * 8-byte word -- which is never a conflict; on the next word T1 writes
 * and T2 reads the same field while T1's region is open.
 *
 * VALOR-EXPECT: conflict kind=write-read lines=38,55 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why all three: only `shared` is accessed by both threads; T1's write
 * is unordered with T2's read and T1's region is still open at the read.
 * The neighbours (same word, same line) must not be reported: the
 * analyses keep byte precision.
 */
#include <pthread.h>

#include "sched.h"

/* Not static: the compiler must keep every store (see testing-runtime.md). */
struct {
	int t1_int; /* T1; same 8-byte word as t2_int */
	int t2_int; /* T2 */
	long shared; /* T1 writes, T2 reads */
	short t1_short; /* T1; same word as t2_short */
	short t2_short; /* T2 */
	char t1_char; /* T1; same word as t2_char */
	char t2_char; /* T2 */
} line __attribute__((aligned(64)));

static void *t1_fn(void *arg)
{
	long v;

	(void)arg;
	line.t1_int = 1;
	line.t1_short = 1;
	line.t1_char = 1;
	line.shared = 42; /* racy: write (A) */
	sched_done(1);
	sched_wait(2);
	v = line.t1_int + line.t1_short + line.t1_char;
	return (void *)v;
}

static void *t2_fn(void *arg)
{
	long v;

	(void)arg;
	line.t2_int = 2;
	line.t2_short = 2;
	line.t2_char = 2;
	v = line.t2_int + line.t2_short + line.t2_char;
	sched_wait(1);
	v += line.shared; /* racy: read (B) */
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
	return (long)v1 == 3 && (long)v2 == 48 ? 0 : 1;
}
