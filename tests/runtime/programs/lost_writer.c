// SPDX-License-Identifier: GPL-2.0
/*
 * A write whose log entry is gone by the time it is reported: T1 reads
 * `shared` and keeps its region open; T2 writes `shared`, then goes on
 * through WRITES short regions of writes of its own.  A slot's write
 * ring keeps a bounded number of entries, so when T1's region ends and
 * validation finds the read-write conflict, T2's ring no longer says
 * where it wrote `shared`.  errors_test.c checks that the report says so
 * and still names T2, instead of an "(unknown)" stack.
 */
#include <pthread.h>
#include <stdio.h>

#include "sched.h"

#define WRITES 8192 /* well past a ring's first 1024 entries */

long shared; /* not static: the compiler keeps every store */
long scratch[WRITES];
static pthread_mutex_t own = PTHREAD_MUTEX_INITIALIZER;

static void *reader(void *arg)
{
	long seen = shared; /* racy: read of shared */

	(void)arg;
	sched_done(1);
	sched_wait(2);
	return (void *)seen;
}

static void *writer(void *arg)
{
	(void)arg;
	sched_wait(1);
	shared = 1; /* racy: write of shared, soon gone from the log */
	for (int i = 0; i < WRITES; i++) {
		pthread_mutex_lock(&own);
		scratch[i] = i;
		pthread_mutex_unlock(&own);
	}
	sched_done(2);
	return NULL;
}

int main(void)
{
	pthread_t r, w;

	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&w, NULL, writer, NULL);
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	printf("lost_writer done\n");
	return 0;
}
