// SPDX-License-Identifier: GPL-2.0
/*
 * SlimState's a[4], read by three threads with overlapping ranges after
 * the main thread initialised it.
 *
 * VALOR-EXPECT: clean
 *
 * Why: reads never conflict with reads, and the only writes (main's
 * initialisation) happen before pthread_create.
 */
#include <pthread.h>

static int a[4];

static void *reader(void *arg)
{
	long first = (long)arg;
	long sum = 0;

	for (int round = 0; round < 10; round++)
		for (long i = first; i < 4; i++)
			sum += a[i];
	return (void *)sum;
}

int main(void)
{
	pthread_t t[3];
	long total = 0;

	for (int i = 0; i < 4; i++)
		a[i] = i + 1;
	for (long i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, reader, (void *)i))
			return 1;
	for (int i = 0; i < 3; i++) {
		void *sum;

		pthread_join(t[i], &sum);
		total += (long)sum;
	}
	return total == 10 * (10 + 9 + 7) ? 0 : 1;
}
