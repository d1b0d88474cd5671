// SPDX-License-Identifier: GPL-2.0
/*
 * Mutex kinds and lock calls: a recursive mutex taken twice per update,
 * an error-checking mutex (whose misuse is refused, not performed), and
 * a normal mutex taken with trylock and timedlock.
 *
 * VALOR-EXPECT: clean
 *
 * Why: every update of each counter happens between a successful lock
 * and the matching unlock of its mutex, so all are ordered, and each
 * final unlock ends the holder's region.  Failed trylocks, timeouts and
 * refused error-checking calls must not count as synchronization that
 * hides anything -- here they simply must not produce reports.
 */
#include <errno.h>
#include <pthread.h>
#include <time.h>

#define ROUNDS 100

static pthread_mutex_t recursive, checked;
static pthread_mutex_t normal = PTHREAD_MUTEX_INITIALIZER;
static long by_recursive, by_checked, by_trylock, by_timedlock;

static void add_recursively(void)
{
	pthread_mutex_lock(&recursive);
	pthread_mutex_lock(&recursive);
	by_recursive++;
	pthread_mutex_unlock(&recursive);
	by_recursive++;
	pthread_mutex_unlock(&recursive);
}

static long add_checked(void)
{
	long misuse = 0;

	misuse += pthread_mutex_unlock(&checked) != EPERM;
	pthread_mutex_lock(&checked);
	misuse += pthread_mutex_lock(&checked) != EDEADLK;
	by_checked++;
	pthread_mutex_unlock(&checked);
	return misuse;
}

static void add_trylock(void)
{
	while (pthread_mutex_trylock(&normal) == EBUSY)
		;
	by_trylock++;
	pthread_mutex_unlock(&normal);
}

static void add_timedlock(void)
{
	struct timespec deadline;

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 10;
	while (pthread_mutex_timedlock(&normal, &deadline) == ETIMEDOUT)
		;
	by_timedlock++;
	pthread_mutex_unlock(&normal);
}

static void *worker(void *arg)
{
	long misuse = 0;

	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		add_recursively();
		misuse += add_checked();
		add_trylock();
		add_timedlock();
	}
	return (void *)misuse;
}

int main(void)
{
	pthread_mutexattr_t attr;
	pthread_t t1, t2;
	void *m1, *m2;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&recursive, &attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&checked, &attr);
	pthread_mutexattr_destroy(&attr);
	if (pthread_create(&t1, NULL, worker, NULL) ||
	    pthread_create(&t2, NULL, worker, NULL))
		return 1;
	pthread_join(t1, &m1);
	pthread_join(t2, &m2);
	return !m1 && !m2 && by_recursive == 4 * ROUNDS &&
			       by_checked == 2 * ROUNDS &&
			       by_trylock == 2 * ROUNDS &&
			       by_timedlock == 2 * ROUNDS ?
		       0 :
		       1;
}
