// SPDX-License-Identifier: GPL-2.0
/*
 * A race between two OpenMP tasks: sibling tasks write `shared` with no
 * dependence and no wait between them; sched.c (invisible to the
 * analyses) makes the first task write and wait until the second has
 * written, so that they overlap on the team's two threads.  The
 * ordering the runtime takes from task creation and completion must not
 * hide it.
 */
#include <omp.h>
#include <stdio.h>

#include "sched.h"

static long shared;

int main(void)
{
#pragma omp parallel num_threads(2)
#pragma omp single
	if (omp_get_num_threads() == 2) {
#pragma omp task
		{
			shared = 1; /* the first write */
			sched_done(1);
			sched_wait(2);
		}
#pragma omp task
		{
			sched_wait(1);
			shared = 2; /* the second write */
			sched_done(2);
		}
	}
	printf("%ld\n", shared);
	return 0;
}
