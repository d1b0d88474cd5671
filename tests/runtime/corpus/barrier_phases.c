// SPDX-License-Identifier: GPL-2.0
/*
 * Barrier phases: two threads each fill their own row, meet at a
 * barrier, read the other thread's row, meet again, and overwrite the
 * other thread's row.
 *
 * VALOR-EXPECT: clean
 *
 * Why: pthread_barrier_wait is a release and an acquire for every
 * participant, so each phase is ordered after the previous one and
 * every region ends at the barrier.
 */
#include <pthread.h>

#define WIDTH 8

/* Not static: the compiler must keep every store (see testing-runtime.md). */
int rows[2][WIDTH];
static pthread_barrier_t barrier;

static void *phases(void *arg)
{
	long me = (long)arg, other = 1 - me, sum = 0;

	for (int i = 0; i < WIDTH; i++)
		rows[me][i] = (int)me + 1;
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < WIDTH; i++)
		sum += rows[other][i];
	pthread_barrier_wait(&barrier);
	for (int i = 0; i < WIDTH; i++)
		rows[other][i] = 0;
	return (void *)sum;
}

int main(void)
{
	pthread_t t[2];
	void *sum0, *sum1;

	pthread_barrier_init(&barrier, NULL, 2);
	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, phases, (void *)i))
			return 1;
	pthread_join(t[0], &sum0);
	pthread_join(t[1], &sum1);
	pthread_barrier_destroy(&barrier);
	for (int i = 0; i < WIDTH; i++)
		if (rows[0][i] || rows[1][i])
			return 1;
	return (long)sum0 == 2 * WIDTH && (long)sum1 == WIDTH ? 0 : 1;
}
