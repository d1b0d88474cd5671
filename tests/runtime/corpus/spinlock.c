// SPDX-License-Identifier: GPL-2.0
/*
 * A pthread spinlock protecting a pair of counters that must stay
 * equal.
 *
 * VALOR-EXPECT: clean
 *
 * Why: pthread_spin_unlock is a release and pthread_spin_lock an
 * acquire, so the critical sections are ordered, and each unlock ends
 * the holder's region.
 */
#include <pthread.h>

#define ROUNDS 200

static long left, right;
static pthread_spinlock_t spin;

static void *worker(void *arg)
{
	long bad = 0;

	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		pthread_spin_lock(&spin);
		bad += left != right;
		left++;
		right++;
		pthread_spin_unlock(&spin);
	}
	return (void *)bad;
}

int main(void)
{
	pthread_t t1, t2;
	void *bad1, *bad2;

	pthread_spin_init(&spin, PTHREAD_PROCESS_PRIVATE);
	if (pthread_create(&t1, NULL, worker, NULL) ||
	    pthread_create(&t2, NULL, worker, NULL))
		return 1;
	pthread_join(t1, &bad1);
	pthread_join(t2, &bad2);
	pthread_spin_destroy(&spin);
	return !bad1 && !bad2 && left == 2 * ROUNDS ? 0 : 1;
}
