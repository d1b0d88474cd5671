// SPDX-License-Identifier: GPL-2.0
/*
 * munmap, then reuse of the same addresses by another thread: T1 maps a
 * page, writes and reads it, and unmaps it; while T1's region is open,
 * T2 maps a page at the same address and writes and reads it.
 *
 * VALOR-EXPECT: clean
 *
 * Why: munmap ends the memory's lifetime and clears its history (LARD's
 * rule R3 for mappings), so T2's accesses to the new mapping conflict
 * with nothing, although nothing orders them after T1's.  The page sits
 * between two pages of a PROT_NONE reservation, so that the hole T1
 * leaves is too small for anyone else's mapping; the program exits 77
 * if the kernel refused the address anyway.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>

#include "sched.h"

#define PAGE 4096

static void *t1_fn(void *where)
{
	long *page = mmap(where, PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	long v;

	if (page == MAP_FAILED)
		return (void *)-1L;
	page[0] = 1;
	page[1] = 2;
	v = page[0] + page[1];
	munmap(page, PAGE);
	sched_done(1);
	sched_wait(2);
	return (void *)v;
}

static void *t2_fn(void *where)
{
	long *page;
	long v;

	sched_wait(1);
	page = mmap(where, PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (page != where) {
		fprintf(stderr,
			"not set up: could not map the same address again\n");
		sched_done(2);
		return (void *)77L;
	}
	page[0] = 3;
	v = page[1];
	page[1] = v + 4;
	v = page[0] + page[1];
	munmap(page, PAGE);
	sched_done(2);
	return (void *)v;
}

int main(void)
{
	char *reserved = mmap(NULL, 3 * PAGE, PROT_NONE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *where = reserved + PAGE;
	pthread_t t1, t2;
	void *v1, *v2;

	if (reserved == MAP_FAILED || pthread_create(&t1, NULL, t1_fn, where) ||
	    pthread_create(&t2, NULL, t2_fn, where))
		return 1;
	pthread_join(t1, &v1);
	pthread_join(t2, &v2);
	munmap(reserved, 3 * PAGE);
	if ((long)v2 == 77)
		return 77;
	return (long)v1 == 3 && (long)v2 == 7 ? 0 : 1;
}
