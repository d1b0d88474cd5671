// SPDX-License-Identifier: GPL-2.0
/*
 * A stack variable handed to another thread with proper sync: T1 fills
 * its local `box` and publishes its address under a mutex with a
 * condition variable; T2 waits for it, updates box, and reports back the
 * same way; T1 reads box only after that and returns (box stays alive
 * until T2 is done with it).
 *
 * VALOR-EXPECT: clean
 *
 * Why: each hand-off is an unlock followed by the other thread's lock,
 * so every access to box is ordered, and each unlock ends its thread's
 * region.
 */
#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int *box_address;
static int updated;

static void *t1_fn(void *arg)
{
	int box[4] = { 1, 2, 3, 4 };

	(void)arg;
	pthread_mutex_lock(&lock);
	box_address = box;
	pthread_cond_broadcast(&changed);
	while (!updated)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
	return (void *)(long)(box[0] + box[3]);
}

static void *t2_fn(void *arg)
{
	int *p;

	(void)arg;
	pthread_mutex_lock(&lock);
	while (!box_address)
		pthread_cond_wait(&changed, &lock);
	p = box_address;
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < 4; i++)
		p[i] *= 10;
	pthread_mutex_lock(&lock);
	updated = 1;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;
	void *v;

	if (pthread_create(&t1, NULL, t1_fn, NULL) ||
	    pthread_create(&t2, NULL, t2_fn, NULL))
		return 1;
	pthread_join(t1, &v);
	pthread_join(t2, NULL);
	return (long)v == 50 ? 0 : 1;
}
