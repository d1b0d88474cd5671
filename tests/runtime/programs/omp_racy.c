// SPDX-License-Identifier: GPL-2.0
/*
 * A race in an OpenMP parallel region (GCC's libgomp): both threads of
 * the team write `shared` with nothing between them; sched.c (invisible
 * to the analyses) makes thread 0 write first and wait until thread 1
 * has written, so that their regions overlap.  Synchronization the
 * runtime takes from libgomp must not hide it.
 */
#include <omp.h>
#include <stdio.h>

#include "sched.h"

static long shared;

int main(void)
{
#pragma omp parallel num_threads(2)
	{
		if (omp_get_num_threads() == 2) {
			if (omp_get_thread_num() == 0) {
				shared = 1; /* the first write */
				sched_done(1);
				sched_wait(2);
			} else {
				sched_wait(1);
				shared = 2; /* the second write */
				sched_done(2);
			}
		}
	}
	printf("%ld\n", shared);
	return 0;
}
