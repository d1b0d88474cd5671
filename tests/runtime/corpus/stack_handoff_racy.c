// SPDX-License-Identifier: GPL-2.0
/*
 * A stack variable handed to another thread without proper sync: T1
 * publishes the address of its local `box` (release store, so the
 * address and box's first value are properly published), then writes
 * box again; T2, which picked up the address, reads box after that
 * second write with nothing ordering the two.
 *
 * VALOR-EXPECT: conflict kind=write-read lines=31,46 analyses=valor,fastrcd,fasttrack memory=stack
 *
 * Why all three: the write after the release store starts a new region
 * of T1 that is still open at T2's read, and no synchronization follows
 * it.  The report must say the memory is on T1's stack.  T1 then exits
 * while T2's region, which read T1's stack, is still open: the end of
 * the stack's lifetime is not an access of the program and must not be
 * reported.
 */
#include <pthread.h>
#include <stdatomic.h>

#include "sched.h"

static _Atomic(int *) box_address;

static void *t1_fn(void *arg)
{
	int box = 1;

	(void)arg;
	atomic_store_explicit(&box_address, &box, memory_order_release);
	box = 7; /* racy: write (A) */
	sched_done(1);
	sched_wait(2);
	sched_note_thread(0);
	return (void *)(long)box;
}

static void *t2_fn(void *arg)
{
	int *p;
	long v;

	(void)arg;
	sched_wait(1);
	p = atomic_load_explicit(&box_address, memory_order_acquire);
	v = *p; /* racy: read (B) */
	sched_done(2);
	/*
	 * Keep this region open until T1 is gone: T1's exit ends its
	 * stack's lifetime, which must not be reported as a second conflict
	 * when this region's reads are validated.
	 */
	sched_wait_thread_gone(0);
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
	return (long)v1 == 7 && (long)v2 == 7 ? 0 : 1;
}
