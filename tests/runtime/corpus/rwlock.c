// SPDX-License-Identifier: GPL-2.0
/*
 * A reader-writer lock: one writer updates a table under the write
 * lock, two readers read all of it under the read lock, concurrently
 * with each other.
 *
 * VALOR-EXPECT: clean
 *
 * Why: readers only read (reads never conflict with reads), and every
 * write is ordered against every read through the lock: a reader's
 * unlock is a release the writer's lock acquires, and the writer's
 * unlock a release the readers' locks acquire.  Each unlock ends its
 * thread's region.
 */
#include <pthread.h>

#define ENTRIES 8
#define ROUNDS 20

static long table[ENTRIES];
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

static void *writer(void *arg)
{
	(void)arg;
	for (int r = 1; r <= ROUNDS; r++) {
		pthread_rwlock_wrlock(&rw);
		for (int i = 0; i < ENTRIES; i++)
			table[i] = r;
		pthread_rwlock_unlock(&rw);
	}
	return NULL;
}

static void *reader(void *arg)
{
	long bad = 0;

	(void)arg;
	for (int r = 0; r < ROUNDS; r++) {
		pthread_rwlock_rdlock(&rw);
		for (int i = 1; i < ENTRIES; i++)
			bad += table[i] != table[0];
		pthread_rwlock_unlock(&rw);
	}
	return (void *)bad;
}

int main(void)
{
	pthread_t w, r1, r2;
	void *bad1, *bad2;

	if (pthread_create(&r1, NULL, reader, NULL) ||
	    pthread_create(&w, NULL, writer, NULL) ||
	    pthread_create(&r2, NULL, reader, NULL))
		return 1;
	pthread_join(w, NULL);
	pthread_join(r1, &bad1);
	pthread_join(r2, &bad2);
	return !bad1 && !bad2 && table[0] == ROUNDS ? 0 : 1;
}
