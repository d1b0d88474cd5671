// SPDX-License-Identifier: GPL-2.0
/*
 * A program's single-threaded phases: the main thread fills a table
 * alone, starts a worker, reads a value the worker then overwrites,
 * joins it and -- alone again, in the same region (under the default
 * regions=rfr a join ends none) -- rewrites the value and the table.
 * Then a second worker writes a table entry that the main thread writes
 * too while that worker's region is still going.
 *
 * VALOR-EXPECT: conflict kind=read-write lines=59,37 analyses=valor,fastrcd,fasttrack memory=global
 * VALOR-EXPECT: conflict kind=write-write lines=44,69 analyses=valor,fastrcd,fasttrack memory=global
 *
 * Why: the runtime skips what a thread does while every other thread
 * has exited (Documentation/semantics.md, "Threads that run alone"),
 * and that must lose nothing.  The main thread's read of `seen` (59) is
 * in the region the worker's write (37) meets; the main thread's later
 * rewrite of `seen`, alone, must not hide it: its pending read is still
 * validated when that region ends.  Creating the second worker ends the
 * main thread's lone stretch, so its write of table[3] (69) meets the
 * worker's (44).  The table's other writes are made alone or ordered:
 * nothing else may be reported.
 */
#include <pthread.h>
#include <stdio.h>

#include "sched.h"

#define ENTRIES 4096

static int table[ENTRIES];
static long seen;

static void *overwrite(void *arg)
{
	(void)arg;
	sched_wait(1);
	seen = 2; /* racy: write (37) */
	return NULL;
}

static void *write_entry(void *arg)
{
	(void)arg;
	table[3] = -1; /* racy: write (44) */
	sched_done(2);
	sched_wait(3);
	return NULL;
}

int main(void)
{
	pthread_t t;
	long s;

	for (int i = 0; i < ENTRIES; i++)
		table[i] = i;
	if (pthread_create(&t, NULL, overwrite, NULL))
		return 1;
	s = seen; /* racy: read (59) */
	sched_done(1);
	pthread_join(t, NULL);
	seen = s + 1;
	for (int i = 0; i < ENTRIES; i++)
		table[i] += i;

	if (pthread_create(&t, NULL, write_entry, NULL))
		return 1;
	sched_wait(2);
	table[3] = 0; /* racy: write (69) */
	sched_done(3);
	pthread_join(t, NULL);
	printf("seen %ld, table[5] %d\n", seen, table[5]);
	return 0;
}
