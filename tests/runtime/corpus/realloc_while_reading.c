// SPDX-License-Identifier: GPL-2.0
/*
 * realloc while another thread reads: T2 reads from a heap buffer;
 * while T2's region is open, T1 grows the buffer with realloc, which
 * moves it and frees the old block.
 *
 * VALOR-EXPECT: conflict kind=read-write lines=33,45 analyses=valor,fastrcd,fasttrack
 *
 * Why all three: the realloc ends the old block's lifetime, which
 * counts as a write of all of it, unordered with T2's read, and T2's
 * region is still open: FastRCD and FastTrack report it at the realloc,
 * Valor when T2 validates its reads as it exits.  The program exits 77
 * if realloc did not move the block.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"

#define SMALL 64
#define LARGE (1 << 20)

static char *buffer;

static void *reader(void *arg)
{
	long c;

	(void)arg;
	c = buffer[10]; /* racy: read (A) */
	sched_done(1);
	sched_wait(2);
	return (void *)c;
}

static void *grower(void *arg)
{
	char *old = buffer, *grown;

	(void)arg;
	sched_wait(1);
	grown = realloc(old, LARGE); /* racy: free of the old block (B) */
	sched_done(2);
	if (grown == old) {
		fprintf(stderr, "not set up: realloc did not move the block\n");
		exit(77);
	}
	return grown;
}

int main(void)
{
	pthread_t t1, t2;
	void *c, *grown;
	int ok;

	buffer = malloc(SMALL);
	if (!buffer)
		return 1;
	memset(buffer, 'x', SMALL);
	if (pthread_create(&t2, NULL, reader, NULL) ||
	    pthread_create(&t1, NULL, grower, NULL))
		return 1;
	pthread_join(t1, &grown);
	pthread_join(t2, &c);
	ok = (long)c == 'x' && ((char *)grown)[10] == 'x';
	free(grown);
	return ok ? 0 : 1;
}
