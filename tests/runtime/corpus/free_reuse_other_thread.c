// SPDX-License-Identifier: GPL-2.0
/*
 * Free, then reuse by another thread: two worker threads share one
 * malloc arena (M_ARENA_MAX = 1).  T1 builds a message in a heap block,
 * frees it and waits with its region open; T2 allocates an int array of
 * the same size, gets the same block, clears it with memset and uses it.
 *
 * VALOR-EXPECT: clean
 *
 * Why: the free clears the block's history, so T2's memset and stores
 * into the reused block conflict with nothing, although nothing orders
 * them after T1's writes (a detector without LARD's rule R3 would report
 * write-write conflicts there).  The program exits 77 if the allocator
 * did not hand the same block to T2.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

#define BLOCK 4000

struct message {
	int length;
	char text[BLOCK - sizeof(int)];
};

/*
 * The blocks are accessed through volatile pointers: the compiler must
 * make every access as written, although the block is freed right after
 * (its last stores would be dead otherwise).
 */
static void *t1_fn(void *arg)
{
	volatile struct message *m;

	(void)arg;
	sched_wait(3); /* T2's malloc cache is set up */
	m = malloc(sizeof(*m));
	m->length = 5;
	for (int i = 0; i < m->length; i++)
		m->text[i] = 'a' + i;
	sched_note(0, (uintptr_t)m);
	free((void *)m);
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	volatile int *values;
	long sum = 0;

	(void)arg;
	/*
	 * A thread's first allocation sets up its malloc cache, carved from
	 * the arena: do that before T1 allocates, so that it can take
	 * neither T1's block nor the space after it.
	 */
	free(malloc(16));
	sched_done(3);
	sched_wait(1);
	values = malloc(BLOCK);
	if ((uintptr_t)values != sched_noted(0)) {
		fprintf(stderr,
			"not set up: the allocator did not reuse the block\n");
		exit(77);
	}
	memset((void *)values, 0, BLOCK);
	for (int i = 0; i < 4; i++)
		values[i] = i;
	for (int i = 0; i < 4; i++)
		sum += values[i];
	free((void *)values);
	sched_done(2);
	return (void *)sum;
}

int main(void)
{
	pthread_t t1, t2;
	void *sum;

	mallopt(M_ARENA_MAX, 1);
	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL))
		return 1;
	pthread_join(t1, NULL);
	pthread_join(t2, &sum);
	return (long)sum == 6 ? 0 : 1;
}
