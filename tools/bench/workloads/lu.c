// SPDX-License-Identifier: GPL-2.0
/*
 * lu: the kernel of Splash-2 LU (the contiguous-blocks version), a
 * blocked LU factorisation without pivoting of a dense, diagonally
 * dominant n x n matrix.  The matrix is stored as nb x nb blocks of
 * 16 x 16 doubles, each block contiguous in memory, and the blocks are
 * owned by the threads in a 2-D scatter: the threads form a prows x
 * pcols grid and block (I, J) belongs to thread (I % prows) * pcols +
 * (J % pcols).  A thread only ever writes the blocks it owns.  For each
 * diagonal step K, in phases separated by pthread barriers:
 *
 *   1. the owner of block (K, K) factors it in place (L and U);
 *   2. the owners of the perimeter blocks update them with it: row K
 *      blocks become U (solve with L(K, K)), column K blocks become L
 *      (solve with U(K, K));
 *   3. every owner of an interior block (I, J), I, J > K, subtracts
 *      L(I, K) * U(K, J) -- blocks owned by other threads, read shared.
 *
 * Every block's updates happen in the same order whatever the thread
 * count, so the factors are bitwise the same for any -t.  Check:
 * max |A - L U| / max |A| < 1e-8 over every diagonal entry and 8n
 * pseudo-random entries (A regenerated from its generator; a full check
 * would cost as much as the factorisation).
 *
 * SIZE: n = 1536 for -s 1 (18 MiB); n grows as sqrt(SIZE) so that the
 * memory is linear in SIZE, but the work grows as SIZE^1.5 (it is O(n^3)).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "lu"

#include "workload.h"

#define DEFAULT_N 1536
#define MAX_N 65536
#define B 16 /* block edge, Splash-2's default */

struct lu {
	int nthreads, prows, pcols;
	long n, nb; /* order of the matrix, blocks per row */
	double *a; /* nb * nb blocks of B * B, row-major blocks */
	pthread_barrier_t barrier;
};

struct worker {
	struct lu *lu;
	int id;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-t THREADS] [-s SIZE]\n"
		"  Splash-2 LU kernel: blocked LU factorisation, %dx%d blocks.\n"
		"  -t THREADS  worker threads (default 2)\n"
		"  -s SIZE     data size factor (default 1.0: n = %d);\n"
		"              n grows as sqrt(SIZE), work as SIZE^1.5\n",
		NAME, B, B, DEFAULT_N);
}

/* Entries in [0, 1), plus n on the diagonal: no pivoting needed. */
static double input_entry(long n, long i, long j)
{
	double v = (double)(mix64((uint64_t)(i * n + j)) >> 11) * 0x1p-53;

	return i == j ? v + (double)n : v;
}

static double *block(const struct lu *lu, long bi, long bj)
{
	return &lu->a[(bi * lu->nb + bj) * B * B];
}

static double *entry(const struct lu *lu, long i, long j)
{
	return &block(lu, i / B, j / B)[(i % B) * B + j % B];
}

static int owner(const struct lu *lu, long bi, long bj)
{
	return (int)((bi % lu->prows) * lu->pcols + bj % lu->pcols);
}

/* Factor a diagonal block in place: unit-lower L below, U on and above. */
static void lu0(double *d)
{
	for (int k = 0; k < B; k++) {
		for (int i = k + 1; i < B; i++) {
			double l = d[i * B + k] /= d[k * B + k];

			for (int j = k + 1; j < B; j++)
				d[i * B + j] -= l * d[k * B + j];
		}
	}
}

/* Column perimeter block: a <- a U^-1, with U from the diagonal block. */
static void bdiv(double *a, const double *d)
{
	for (int i = 0; i < B; i++) {
		for (int k = 0; k < B; k++) {
			double l = a[i * B + k] /= d[k * B + k];

			for (int j = k + 1; j < B; j++)
				a[i * B + j] -= l * d[k * B + j];
		}
	}
}

/* Row perimeter block: a <- L^-1 a, with unit-lower L from the diagonal. */
static void bmodd(double *a, const double *d)
{
	for (int k = 0; k < B; k++)
		for (int i = k + 1; i < B; i++)
			for (int j = 0; j < B; j++)
				a[i * B + j] -= d[i * B + k] * a[k * B + j];
}

/* Interior block: c <- c - l u. */
static void bmod(double *c, const double *l, const double *u)
{
	for (int i = 0; i < B; i++) {
		for (int k = 0; k < B; k++) {
			double lik = l[i * B + k];

			for (int j = 0; j < B; j++)
				c[i * B + j] -= lik * u[k * B + j];
		}
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct lu *lu = w->lu;
	long nb = lu->nb;
	int id = w->id;

	/* Owners initialise their blocks (first touch). */
	for (long bi = 0; bi < nb; bi++) {
		for (long bj = 0; bj < nb; bj++) {
			double *blk = block(lu, bi, bj);

			if (owner(lu, bi, bj) != id)
				continue;
			for (int i = 0; i < B; i++)
				for (int j = 0; j < B; j++)
					blk[i * B + j] = input_entry(
						lu->n, bi * B + i, bj * B + j);
		}
	}
	pthread_barrier_wait(&lu->barrier);

	for (long k = 0; k < nb; k++) {
		const double *diag = block(lu, k, k);

		if (owner(lu, k, k) == id)
			lu0(block(lu, k, k));
		pthread_barrier_wait(&lu->barrier);

		for (long j = k + 1; j < nb; j++)
			if (owner(lu, k, j) == id)
				bmodd(block(lu, k, j), diag);
		for (long i = k + 1; i < nb; i++)
			if (owner(lu, i, k) == id)
				bdiv(block(lu, i, k), diag);
		pthread_barrier_wait(&lu->barrier);

		for (long i = k + 1; i < nb; i++)
			for (long j = k + 1; j < nb; j++)
				if (owner(lu, i, j) == id)
					bmod(block(lu, i, j), block(lu, i, k),
					     block(lu, k, j));
		/* The next step's diagonal block is an interior block now. */
		pthread_barrier_wait(&lu->barrier);
	}
	return NULL;
}

/* (L U)(i, j) from the factors stored in place. */
static double lu_product(const struct lu *lu, long i, long j)
{
	long kmax = i < j ? i : j;
	double sum = 0;

	for (long k = 0; k < kmax; k++)
		sum += *entry(lu, i, k) * *entry(lu, k, j);
	/* k = kmax: L(i, i) = 1 is not stored; U(j, j) is. */
	if (i <= j)
		return sum + *entry(lu, i, j);
	return sum + *entry(lu, i, j) * *entry(lu, j, j);
}

static int check_entry(const struct lu *lu, long i, long j, double *maxerr)
{
	double want = input_entry(lu->n, i, j), got = lu_product(lu, i, j);
	/* max |A| is the largest diagonal entry, at most n + 1. */
	double err = fabs(got - want) / ((double)lu->n + 1);

	if (!(err < 1e-8)) {
		fprintf(stderr,
			"%s: check=FAILED: (LU)(%ld,%ld) = %.17g, A(%ld,%ld) = %.17g\n",
			NAME, i, j, got, i, j, want);
		return -1;
	}
	*maxerr = err > *maxerr ? err : *maxerr;
	return 0;
}

static int check(const struct lu *lu, double *maxerr)
{
	long n = lu->n;

	*maxerr = 0;
	for (long i = 0; i < n; i++)
		if (check_entry(lu, i, i, maxerr))
			return -1;
	for (long s = 0; s < 8 * n; s++) {
		uint64_t r = mix64(~(uint64_t)s);
		long i = (long)((r & 0xffffffff) % (uint64_t)n);
		long j = (long)((r >> 32) % (uint64_t)n);

		if (check_entry(lu, i, j, maxerr))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct lu lu = { 0 };
	struct worker *workers;
	double size, maxerr, logdet = 0;
	int threads;

	if (workload_args(argc, argv, &threads, &size))
		return 2;
	if (DEFAULT_N * sqrt(size) > MAX_N) {
		fprintf(stderr, "%s: size %g is too large\n", NAME, size);
		return 2;
	}
	/* n is a multiple of the block size, at least two blocks. */
	lu.n = lround(DEFAULT_N * sqrt(size) / B) * B;
	if (lu.n < 2 * B)
		lu.n = 2 * B;
	lu.nb = lu.n / B;
	lu.nthreads = threads;
	/* The squarest grid of threads, as Splash-2 picks it. */
	lu.prows = (int)sqrt((double)threads);
	while (threads % lu.prows)
		lu.prows--;
	lu.pcols = threads / lu.prows;
	lu.a = xmalloc((size_t)lu.n * lu.n * sizeof(*lu.a));

	pthread_barrier_init(&lu.barrier, NULL, threads);
	workers = xmalloc(threads * sizeof(*workers));
	for (int i = 0; i < threads; i++) {
		workers[i].lu = &lu;
		workers[i].id = i;
	}
	run_threads(threads, worker_main, workers, sizeof(*workers));

	if (check(&lu, &maxerr))
		return 1;
	for (long i = 0; i < lu.n; i++)
		logdet += log(*entry(&lu, i, i));
	printf("%s threads=%d size=%g check=ok result=n=%ld,logdet=%.12g,maxerr=%.1e\n",
	       NAME, threads, size, lu.n, logdet, maxerr);

	pthread_barrier_destroy(&lu.barrier);
	free(workers);
	free(lu.a);
	return 0;
}
