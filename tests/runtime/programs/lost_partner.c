// SPDX-License-Identifier: GPL-2.0
/*
 * Read-write conflicts whose write no write log holds any more, because
 * the writer went on through more regions than its ring keeps.
 *
 * Round 1: the reader reads `shared` (read_shared()) and the
 * writer writes it while the read's region is open; the writer's log
 * still holds the write, so the report names both lines.
 *
 * Round 2: the same read again; the writer writes, churns its ring, and
 * the reader then writes `shared` itself, so that at validation the last
 * writer is the reader and no log names the other write.  That report
 * knows only the read's line, already reported in round 1 with its
 * partner: a repeat.
 *
 * Round 3: the same as round 2 for `other`, read at another line in
 * reader(): its report is the first for that line and must say
 * that the other thread is not known, without describing a thread T0.
 */
#include <pthread.h>
#include <stdio.h>

#include "sched.h"

#define WRITES 8192 /* well past a ring's first 1024 entries */

long shared, other; /* not static: the compiler keeps every store */
long scratch[WRITES];
static pthread_mutex_t reader_own = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t writer_own = PTHREAD_MUTEX_INITIALIZER;

/* A region boundary that orders nothing with the other thread. */
static void end_region(pthread_mutex_t *m)
{
	pthread_mutex_lock(m);
	pthread_mutex_unlock(m);
}

static __attribute__((noinline)) long read_shared(void)
{
	return shared; /* racy: the read */
}

static void churn(void)
{
	for (int i = 0; i < WRITES; i++) {
		pthread_mutex_lock(&writer_own);
		scratch[i] = i;
		pthread_mutex_unlock(&writer_own);
	}
}

static void *reader(void *arg)
{
	long seen;

	(void)arg;
	end_region(&reader_own);
	seen = read_shared();
	sched_done(1);
	sched_wait(2);
	end_region(&reader_own);

	seen += read_shared();
	sched_done(3);
	sched_wait(4);
	shared = seen; /* the reader writes last */
	end_region(&reader_own);

	seen += other; /* racy: the lone read */
	sched_done(5);
	sched_wait(6);
	other = seen;
	end_region(&reader_own);
	return (void *)seen;
}

static void *writer(void *arg)
{
	(void)arg;
	sched_wait(1);
	shared = 1; /* racy: the write */
	end_region(&writer_own);
	sched_done(2);

	sched_wait(3);
	shared = 2;
	churn();
	sched_done(4);

	sched_wait(5);
	other = 3;
	churn();
	sched_done(6);
	return NULL;
}

int main(void)
{
	pthread_t r, w;

	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&w, NULL, writer, NULL);
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	printf("lost_partner done\n");
	return 0;
}
