// SPDX-License-Identifier: GPL-2.0
/*
 * Fields not aligned to their size, inside one 8-byte word: a packed
 * record keeps an int at byte 1 and a short at byte 5, with single
 * bytes around them.  T1 writes the int, T2 reads it while T1's region
 * is open; T1 reads the short, T2 then writes it, and T1's region is
 * still open.  The bytes around them are each written by one thread.
 *
 * VALOR-EXPECT: conflict kind=write-read lines=44,60 analyses=valor,fastrcd,fasttrack memory=global
 * VALOR-EXPECT: conflict kind=read-write lines=47,63 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why: the int (44) is unordered with T2's read of it (60), and T1's
 * region is still going when T2 reads: write-read.  T1 reads the short
 * (47) in the region that T2's write of it (63) meets before T1's
 * region ends: read-write, found when T1 validates.  The runtime's
 * inline check takes only 2- and 4-byte accesses aligned to their size;
 * these (clang's unaligned 2- and 4-byte calls; gcc makes them ranges)
 * go to the slow path, which must keep byte precision: the neighbouring
 * bytes, one writer each, are never reported.
 */
#include <pthread.h>
#include <stdint.h>

#include "sched.h"

/* Not static: the compiler must keep every store (see testing-runtime.md). */
struct __attribute__((packed)) record {
	char t1_byte; /* byte 0: T1 */
	int count; /* bytes 1-4 */
	short flags; /* bytes 5-6 */
	char t2_byte; /* byte 7: T2 */
};

struct record rec __attribute__((aligned(8)));

_Static_assert(sizeof(struct record) == 8, "one cell");

static void *t1_fn(void *arg)
{
	long v;

	(void)arg;
	rec.t1_byte = 1;
	rec.count = 7; /* racy: write (A) */
	sched_done(1);
	sched_wait(2);
	v = rec.flags; /* racy: read (C) */
	sched_done(3);
	sched_wait(4);
	return (void *)(v + rec.t1_byte);
}

static void *t2_fn(void *arg)
{
	long v;

	(void)arg;
	rec.t2_byte = 2;
	sched_wait(1);
	v = rec.count; /* racy: read (B) */
	sched_done(2);
	sched_wait(3);
	rec.flags = 5; /* racy: write (D) */
	sched_done(4);
	return (void *)v;
}

int main(void)
{
	pthread_t t1, t2;
	void *v1, *v2;

	rec.flags = 3;
	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL))
		return 1;
	pthread_join(t1, &v1);
	pthread_join(t2, &v2);
	return (long)v1 == 4 && (long)v2 == 7 && rec.flags == 5 ? 0 : 1;
}
