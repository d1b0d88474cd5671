// SPDX-License-Identifier: GPL-2.0
/*
 * mremap moves history with the data (LARD's rule R4): T1 writes a word
 * of a page, then moves the page with mremap and publishes the new
 * address through the uninstrumented helper; T2 reads the word at its
 * new address while T1's region is still open.
 *
 * VALOR-EXPECT: conflict kind=write-read lines=34,52 analyses=valor,fastrcd,fasttrack
 *
 * Why all three: nothing orders T2's read after T1's write (the helper
 * is invisible), and T1 has not released since it wrote.  Had the move
 * cleared the history instead of moving it, nobody would report it.  The
 * target lies in a PROT_NONE reservation, so the kernel must move the
 * page; the program exits 77 if it did not.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#include "sched.h"

#define PAGE 4096

static void *t1_fn(void *arg)
{
	char *hole = arg;
	long *page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long *moved;

	if (page == MAP_FAILED)
		return (void *)-1L;
	page[10] = 42; /* racy: write (A) */
	moved = mremap(page, PAGE, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
		       hole + PAGE);
	sched_note(0,
		   moved == MAP_FAILED || moved == page ? 0 : (uintptr_t)moved);
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	long *moved;

	(void)arg;
	sched_wait(1);
	moved = (long *)sched_noted(0);
	if (moved)
		sched_note(1, (uintptr_t)moved[10]); /* racy: read (B) */
	sched_done(2);
	return NULL;
}

int main(void)
{
	char *hole = mmap(NULL, 3 * PAGE, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t t1, t2;

	if (hole == MAP_FAILED)
		return 77;
	pthread_create(&t1, NULL, t1_fn, hole);
	pthread_create(&t2, NULL, t2_fn, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return sched_noted(0) && sched_noted(1) == 42 ? 0 : 77;
}
