// SPDX-License-Identifier: GPL-2.0
/*
 * Initialisation before pthread_create and hand-off through join: the
 * main thread fills the inputs, the workers read them and write their
 * own output slots, and the main thread reads the outputs after joining
 * and reuses the inputs.
 *
 * VALOR-EXPECT: clean
 *
 * Why: pthread_create orders the parent's earlier accesses before the
 * child (and ends the parent's region), and pthread_join orders the
 * child's accesses before the parent's later ones (the child's region
 * ended when it exited).
 */
#include <pthread.h>

#define WORKERS 3

/* Not static: the compiler must keep every store (see testing-runtime.md). */
struct {
	long scale;
	long inputs[WORKERS];
} config;
long outputs[WORKERS];

static void *worker(void *arg)
{
	long i = (long)arg;

	outputs[i] = config.inputs[i] * config.scale;
	return NULL;
}

int main(void)
{
	pthread_t t[WORKERS];
	long sum = 0;

	config.scale = 10;
	for (int i = 0; i < WORKERS; i++)
		config.inputs[i] = i + 1;
	for (long i = 0; i < WORKERS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < WORKERS; i++) {
		sum += outputs[i];
		config.inputs[i] = 0;
	}
	config.scale = 0;
	return sum == 60 ? 0 : 1;
}
