// SPDX-License-Identifier: GPL-2.0
/*
 * A thread pool: the main thread prepares task inputs, two workers take
 * task indices from a shared cursor under a mutex, write each result
 * into the task's own slot, and count completions under the mutex; the
 * main thread waits for all completions on a condition variable and
 * reads the results before joining the workers.
 *
 * VALOR-EXPECT: clean
 *
 * Why: inputs are written before pthread_create; each result is written
 * by one worker before its unlock and read by main after the lock that
 * observed the final count: every pair of conflicting accesses is
 * ordered, and no region is open across them.
 */
#include <pthread.h>

#define TASKS 32
#define WORKERS 2

struct task {
	long input;
	long result;
};

static struct task tasks[TASKS];
static int next_task, completed;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t all_done = PTHREAD_COND_INITIALIZER;

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		int i;

		pthread_mutex_lock(&lock);
		i = next_task++;
		pthread_mutex_unlock(&lock);
		if (i >= TASKS)
			return NULL;
		tasks[i].result = tasks[i].input * tasks[i].input;
		pthread_mutex_lock(&lock);
		if (++completed == TASKS)
			pthread_cond_signal(&all_done);
		pthread_mutex_unlock(&lock);
	}
}

int main(void)
{
	pthread_t pool[WORKERS];
	long sum = 0, want = 0;

	for (int i = 0; i < TASKS; i++) {
		tasks[i].input = i;
		want += (long)i * i;
	}
	for (int i = 0; i < WORKERS; i++)
		if (pthread_create(&pool[i], NULL, worker, NULL))
			return 1;
	pthread_mutex_lock(&lock);
	while (completed < TASKS)
		pthread_cond_wait(&all_done, &lock);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < TASKS; i++)
		sum += tasks[i].result;
	for (int i = 0; i < WORKERS; i++)
		pthread_join(pool[i], NULL);
	return sum == want ? 0 : 1;
}
