// SPDX-License-Identifier: GPL-2.0
/*
 * matmul: the kernel of Phoenix matrix_multiply, C = A B for dense n x n
 * matrices of doubles (Phoenix uses ints).  The main thread builds A and
 * B before it creates the threads; each thread then computes a
 * contiguous band of rows of C, and every thread reads all of B.  As in
 * Phoenix, each entry is a dot product of a row of A and a column of B
 * (the inner loop strides down B), accumulated in a register and stored
 * once, so the workload is read-heavy: 2 n reads per write.  The only
 * synchronization is thread creation and join.  Check: a pseudo-random
 * sample of entries recomputed serially, in the same order, must match
 * (to 1e-12 n: a compiler may contract a * b + c differently).
 *
 * SIZE: n = 1000 for -s 1 (three 8 MB matrices); n grows as sqrt(SIZE)
 * so that the memory is linear in SIZE, but the work grows as SIZE^1.5.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "matmul"

#include "workload.h"

#define DEFAULT_N 1000
#define MAX_N 65536
#define NR_SAMPLES 4096

struct matmul {
	int nthreads;
	long n;
	double *a, *b, *c; /* row-major n x n */
};

struct worker {
	struct matmul *mm;
	int id;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-t THREADS] [-s SIZE]\n"
		"  Phoenix matrix_multiply kernel: C = A B, doubles, rows split.\n"
		"  -t THREADS  worker threads (default 2)\n"
		"  -s SIZE     data size factor (default 1.0: n = %d);\n"
		"              n grows as sqrt(SIZE), work as SIZE^1.5\n",
		NAME, DEFAULT_N);
}

/* A uniform double in [-1, 1) from 53 random bits. */
static double unit(uint64_t bits)
{
	return (double)(bits >> 11) * 0x1p-52 - 1.0;
}

/* C(i, j), exactly as Phoenix computes it. */
static double dot(const struct matmul *mm, long i, long j)
{
	const double *a = &mm->a[i * mm->n], *b = &mm->b[j];
	double sum = 0;

	for (long k = 0; k < mm->n; k++, b += mm->n)
		sum += a[k] * *b;
	return sum;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct matmul *mm = w->mm;
	long first = (long)((int64_t)mm->n * w->id / mm->nthreads);
	long last = (long)((int64_t)mm->n * (w->id + 1) / mm->nthreads);

	for (long i = first; i < last; i++)
		for (long j = 0; j < mm->n; j++)
			mm->c[i * mm->n + j] = dot(mm, i, j);
	return NULL;
}

int main(int argc, char **argv)
{
	struct matmul mm = { 0 };
	struct worker *workers;
	double size, trace = 0;
	int threads;
	long n, nn;

	if (workload_args(argc, argv, &threads, &size))
		return 2;
	if (DEFAULT_N * sqrt(size) > MAX_N) {
		fprintf(stderr, "%s: size %g is too large\n", NAME, size);
		return 2;
	}
	n = lround(DEFAULT_N * sqrt(size));
	if (n < 1)
		n = 1;
	nn = n * n;
	mm.n = n;
	mm.nthreads = threads;
	mm.a = xmalloc(nn * sizeof(*mm.a));
	mm.b = xmalloc(nn * sizeof(*mm.b));
	mm.c = xmalloc(nn * sizeof(*mm.c));
	/* The input, as Phoenix reads it from files before the threads. */
	for (long i = 0; i < nn; i++) {
		mm.a[i] = unit(mix64((uint64_t)i));
		mm.b[i] = unit(mix64((uint64_t)(nn + i)));
	}

	workers = xmalloc(threads * sizeof(*workers));
	for (int i = 0; i < threads; i++) {
		workers[i].mm = &mm;
		workers[i].id = i;
	}
	run_threads(threads, worker_main, workers, sizeof(*workers));

	for (int s = 0; s < NR_SAMPLES; s++) {
		uint64_t r = mix64(~(uint64_t)s);
		long i = (long)((r & 0xffffffff) % (uint64_t)n);
		long j = (long)((r >> 32) % (uint64_t)n);
		double want = dot(&mm, i, j);

		/* Same order of summation; the slack is for fp-contract. */
		if (!(fabs(mm.c[i * n + j] - want) <= 1e-12 * (double)n)) {
			fprintf(stderr,
				"%s: check=FAILED: C(%ld,%ld) = %.17g, serial %.17g\n",
				NAME, i, j, mm.c[i * n + j], want);
			return 1;
		}
	}
	for (long i = 0; i < n; i++)
		trace += mm.c[i * n + i];
	printf("%s threads=%d size=%g check=ok result=n=%ld,trace=%.12g\n",
	       NAME, threads, size, n, trace);

	free(workers);
	free(mm.a);
	free(mm.b);
	free(mm.c);
	return 0;
}
