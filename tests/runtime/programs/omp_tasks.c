// SPDX-License-Identifier: GPL-2.0
/*
 * OpenMP tasks without a race (gcc's libgomp through its GOMP_task entry
 * points, clang's libomp through OMPT): what orders a task's work with
 * the code around it, each used so that an analysis that missed it
 * would report a conflict.
 *
 *   - tasks write what their creator wrote before creating them, and
 *     the creator reads their results after a taskwait;
 *   - a chain of tasks through depend(inout) updates one variable;
 *   - tasks left running when their region ends (the barrier at its
 *     end waits for them) write what the code after the region reads;
 *   - tasks inside a taskgroup, and the tasks they create, read after it;
 *   - a taskloop's iterations, read after it.
 *
 * Exits 0 when every result is what the serial code gives.
 */
#include <stdio.h>

#define TASKS 64
#define ROUNDS 20

static long in[TASKS], out[TASKS], chain, after[TASKS], grouped[TASKS],
	nested[TASKS], looped[TASKS * 4];

int main(void)
{
	long want_chain = 0, bad = 0;

	for (int r = 0; r < ROUNDS; r++) {
#pragma omp parallel num_threads(2)
#pragma omp single
		{
			long sum = 0;

			for (int i = 0; i < TASKS; i++) {
				in[i] = i + r;
#pragma omp task firstprivate(i)
				out[i] = in[i] * 2;
			}
#pragma omp taskwait
			for (int i = 0; i < TASKS; i++)
				sum += out[i];
			bad |= sum !=
			       2L * (TASKS * (TASKS - 1) / 2 + TASKS * r);
			for (int i = 0; i < TASKS; i++) {
#pragma omp task depend(inout : chain)
				chain += i;
			}
#pragma omp taskgroup
			{
				for (int i = 0; i < TASKS; i++) {
#pragma omp task firstprivate(i)
					{
						grouped[i] = i * r;
#pragma omp task firstprivate(i)
						nested[i] = i + 2 * r;
					}
				}
			}
			for (int i = 0; i < TASKS; i++)
				bad |= grouped[i] != i * r ||
				       nested[i] != i + 2 * r;
#pragma omp taskloop grainsize(8)
			for (int i = 0; i < TASKS * 4; i++)
				looped[i] = in[i % TASKS] + i;
			for (int i = 0; i < TASKS * 4; i++)
				bad |= looped[i] != i % TASKS + r + i;
			for (int i = 0; i < TASKS; i++) {
#pragma omp task firstprivate(i)
				after[i] = i - r;
			}
		}
		for (int i = 0; i < TASKS; i++) {
			bad |= after[i] != i - r;
			want_chain += i;
		}
		bad |= chain != want_chain;
	}
	printf("%s\n", bad ? "wrong results" : "ok");
	return (int)bad;
}
