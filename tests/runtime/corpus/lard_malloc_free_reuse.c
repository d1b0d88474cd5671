// SPDX-License-Identifier: GPL-2.0
/*
 * LARD rule R3 (clear history when memory is freed): T1 writes and reads
 * a heap block and frees it; while T1's region is still open, the main
 * thread allocates a block of the same size, gets the same address back
 * from the allocator, and writes and reads it.
 *
 * VALOR-EXPECT: clean
 *
 * Why: the free ends the block's lifetime and clears its history (and
 * drops T1's own pending reads of it), so main's accesses to the new
 * block conflict with nothing, although nothing orders them after T1's
 * and T1's region is open.  A detector that kept the old history would
 * report a write-write and a write-read conflict (a false race).  The
 * block is larger than glibc's per-thread caches, so T1's free returns
 * it to the main arena, where main's next allocation finds it; the
 * program exits 77 if the address was not reused.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sched.h"

#define BLOCK 2048

/*
 * The blocks are accessed through volatile pointers: the compiler must
 * make every access as written, although the block is freed right after
 * (its last stores would be dead otherwise).
 */
static void *t1_fn(void *arg)
{
	volatile long *p = arg;
	long sum;

	p[0] = 1;
	p[1] = 2;
	sum = p[0] + p[1];
	sched_note(0, (uintptr_t)p);
	free((void *)p);
	sched_done(1);
	sched_wait(2);
	return (void *)sum;
}

int main(void)
{
	long *block = malloc(BLOCK);
	volatile long *q;
	pthread_t t1;
	void *sum;
	long v;

	if (!block || pthread_create(&t1, NULL, t1_fn, block))
		return 1;
	sched_wait(1);
	q = malloc(BLOCK);
	if ((uintptr_t)q != sched_noted(0)) {
		fprintf(stderr,
			"not set up: the allocator did not reuse the block\n");
		return 77;
	}
	q[0] = 3;
	v = q[1];
	q[1] = v + 1;
	sched_done(2);
	pthread_join(t1, &sum);
	free((void *)q);
	return (long)sum == 3 ? 0 : 1;
}
