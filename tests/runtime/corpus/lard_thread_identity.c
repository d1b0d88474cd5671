// SPDX-License-Identifier: GPL-2.0
/*
 * LARD rule R5 (program-level thread identity): thread A, detached and
 * never joined, writes x and exits.  Thread B, created after A is gone,
 * gets A's stack and pthread_t back from glibc, and writes x too.
 *
 * VALOR-EXPECT: conflict kind=write-write lines=28,37 analyses=fasttrack memory=global
 *
 * Why FastTrack only: nothing orders A's write before B's (A was never
 * joined; the main thread learns that A is gone through the invisible
 * scheduler), so the writes race -- and the report must name two
 * different threads although both had the same pthread_t.  A's region
 * ended when A exited, before B's write: no region conflict.  The
 * program exits 77 if glibc did not reuse A's pthread_t for B.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "sched.h"

/* Not static: the compiler must keep every store (see testing-runtime.md). */
long x;

static void *a_fn(void *arg)
{
	(void)arg;
	x = 1; /* racy: write by A (A) */
	sched_note(1, (uintptr_t)pthread_self());
	sched_note_thread(0);
	return NULL;
}

static void *b_fn(void *arg)
{
	(void)arg;
	x = 2; /* racy: write by B (B) */
	sched_note(3, (uintptr_t)pthread_self());
	sched_note_thread(2);
	return NULL;
}

int main(void)
{
	pthread_attr_t detached;
	pthread_t a, b;

	pthread_attr_init(&detached);
	pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&a, &detached, a_fn, NULL))
		return 1;
	sched_wait_thread_gone(0);
	if (pthread_create(&b, &detached, b_fn, NULL))
		return 1;
	sched_wait_thread_gone(2);
	pthread_attr_destroy(&detached);
	if (sched_noted(1) != sched_noted(3)) {
		fprintf(stderr,
			"not set up: glibc did not reuse the first thread's pthread_t\n");
		return 77;
	}
	return 0;
}
