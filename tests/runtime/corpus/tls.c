// SPDX-License-Identifier: GPL-2.0
/*
 * Thread-local storage: two threads at a time count in their own
 * __thread variables; then a detached thread writes its TLS and exits
 * without any synchronization, and the next thread, which glibc gives
 * the same stack and TLS block, writes the same addresses.
 *
 * VALOR-EXPECT: clean
 *
 * Why: each thread's TLS is its own memory.  The reused block is the
 * hard case: nothing orders the exited thread's writes before its
 * successor's (it was never joined), so the runtime must forget a
 * thread's stack and TLS when the thread exits, or FastTrack would
 * report a race between two different variables that merely share an
 * address.  The program exits 77 if the TLS block was not reused.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "sched.h"

static __thread long counter;
static __thread char scratch[32];

static void *count(void *arg)
{
	long n = (long)arg;

	for (long i = 0; i < n; i++) {
		counter++;
		scratch[i % 32] = 1;
	}
	return (void *)(counter + scratch[5]);
}

/* A detached thread: write TLS, tell main where it is, exit unordered. */
static void *leave(void *arg)
{
	long slot = (long)arg;

	count((void *)40L);
	sched_note((int)slot + 1, (uintptr_t)&counter);
	sched_note_thread((int)slot);
	return NULL;
}

int main(void)
{
	pthread_attr_t detached;
	pthread_t t1, t2, d;
	void *v1, *v2;

	if (pthread_create(&t1, NULL, count, (void *)100L) ||
	    pthread_create(&t2, NULL, count, (void *)200L))
		return 1;
	pthread_join(t1, &v1);
	pthread_join(t2, &v2);
	if ((long)v1 != 101 || (long)v2 != 201)
		return 1;

	pthread_attr_init(&detached);
	pthread_attr_setdetachstate(&detached, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&d, &detached, leave, (void *)0L))
		return 1;
	sched_wait_thread_gone(0);
	if (pthread_create(&d, &detached, leave, (void *)2L))
		return 1;
	sched_wait_thread_gone(2);
	pthread_attr_destroy(&detached);
	if (sched_noted(1) != sched_noted(3)) {
		fprintf(stderr,
			"not set up: glibc did not reuse the TLS block\n");
		return 77;
	}
	return 0;
}
