// SPDX-License-Identifier: GPL-2.0
/*
 * ocean: the relaxation kernel of Splash-2's ocean.
 *
 * A Poisson equation on a square grid with a fixed boundary is relaxed
 * with red-black successive over-relaxation (SOR), the smoother of
 * ocean's multigrid solver.  The interior rows are cut into one
 * contiguous band per thread.  Every iteration has two colour phases:
 * red points (i + j even) are updated from their black neighbours, then
 * black points from their red neighbours, so within a phase no point is
 * read by one thread while another writes it.
 *
 * Synchronization, as in ocean: a pthread barrier between the colour
 * phases (a band's edge rows read the neighbouring bands' rows), and a
 * global residual -- the largest change of any point in the iteration --
 * that every thread folds its own maximum into under a mutex, then reads
 * back after a barrier to run ocean's convergence test.  The residual
 * is double-buffered by iteration parity, so the slot one iteration
 * reads is only cleared (by thread 0) after the next iteration's red
 * barrier has ordered those reads, with no extra barrier.  The iteration
 * count is fixed: the tolerance is 0, so the test only stops a grid that
 * no longer changes at all.
 *
 * Check: the same relaxation run serially gives the same grid and the
 * same residual history, bit for bit (red-black ordering makes every
 * update independent of the thread count, and a maximum does not depend
 * on the order it is reduced in).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "ocean"

#include "workload.h"

/* Interior points per side at size 1.0 (a 1026 x 1026 grid, one of
 * ocean's standard inputs); the points (memory) scale with -s.
 */
#define BASE_N 1024
#define ITERATIONS 150
#define OMEGA 1.5
#define TOLERANCE 0.0

static long n; /* interior points per side */
static long stride; /* n + 2: a row with its two boundary points */
static double *grid; /* (n + 2) x (n + 2), relaxed by the threads */
static double *rhs; /* right-hand side, h^2 f, read only */
static int nthreads;

static pthread_barrier_t barrier;
static pthread_mutex_t err_lock = PTHREAD_MUTEX_INITIALIZER;
static double err_multi[2]; /* the residual of iteration it is [it & 1] */
static double history[ITERATIONS]; /* written by thread 0 */
static int iterations_done; /* written by thread 0 */

/* Uniform in [lo, hi). */
static double uniform(uint64_t *state, double lo, double hi)
{
	return lo + (hi - lo) * (double)(splitmix64(state) >> 11) * 0x1.0p-53;
}

/*
 * Relax the points of one colour in rows [first, last) of u; returns
 * the largest change.  The serial check calls it too, so both runs do
 * the same floating-point operations on every point.
 */
static double relax_rows(double *u, long first, long last, int colour)
{
	double max_change = 0.0;

	for (long i = first; i < last; i++) {
		double *row = u + i * stride;
		const double *up = row - stride, *down = row + stride;
		const double *f = rhs + i * stride;

		for (long j = 1 + ((i + 1 + colour) & 1); j <= n; j += 2) {
			double gs = 0.25 * (up[j] + down[j] + row[j - 1] +
					    row[j + 1] - f[j]);
			double next = row[j] + OMEGA * (gs - row[j]);
			double change = fabs(next - row[j]);

			if (change > max_change)
				max_change = change;
			row[j] = next;
		}
	}
	return max_change;
}

static void *slave(void *arg)
{
	long tid = (long)arg;
	long first = 1 + tid * n / nthreads;
	long last = 1 + (tid + 1) * n / nthreads;

	for (int it = 0; it < ITERATIONS; it++) {
		double local_err, err;

		local_err = relax_rows(grid, first, last, 0);
		pthread_barrier_wait(&barrier);
		/* Every thread's reads of err_multi[(it - 1) & 1] are
		 * ordered before this point by the red barrier.
		 */
		if (tid == 0)
			err_multi[(it + 1) & 1] = 0.0;
		err = relax_rows(grid, first, last, 1);
		if (err > local_err)
			local_err = err;

		pthread_mutex_lock(&err_lock);
		if (local_err > err_multi[it & 1])
			err_multi[it & 1] = local_err;
		pthread_mutex_unlock(&err_lock);
		pthread_barrier_wait(&barrier);

		/* ocean's convergence test: every thread reads the global
		 * residual and all take the same decision.
		 */
		err = err_multi[it & 1];
		if (tid == 0) {
			history[it] = err;
			iterations_done = it + 1;
		}
		if (err <= TOLERANCE)
			break;
	}
	return NULL;
}

/* The reference: the same sweeps by one thread, no synchronization. */
static int serial_relax(double *u, double *hist)
{
	int it;

	for (it = 0; it < ITERATIONS; it++) {
		double err = relax_rows(u, 1, n + 1, 0);
		double black = relax_rows(u, 1, n + 1, 1);

		if (black > err)
			err = black;
		hist[it] = err;
		if (err <= TOLERANCE)
			return it + 1;
	}
	return it;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-t THREADS] [-s SIZE]\n"
		"  -t THREADS  worker threads (default 2)\n"
		"  -s SIZE     data size factor (default 1.0: a %d x %d grid)\n",
		NAME, BASE_N + 2, BASE_N + 2);
}

/* Boundary: a smooth profile with a random perturbation, interior 0;
 * right-hand side: a few random sources, scaled by h^2.
 */
static void init_grid(double *u)
{
	uint64_t seed = 0x0cea4ULL;
	double h = 1.0 / (n + 1);

	for (long i = 0; i < stride; i++) {
		for (long j = 0; j < stride; j++) {
			double *p = &u[i * stride + j];

			if (i == 0 || j == 0 || i == n + 1 || j == n + 1)
				*p = sin(3.0 * i * h) + cos(2.0 * j * h) +
				     uniform(&seed, -0.01, 0.01);
			else
				*p = 0.0;
			rhs[i * stride + j] =
				h * h * uniform(&seed, -100.0, 100.0);
		}
	}
}

int main(int argc, char **argv)
{
	double serial_history[ITERATIONS];
	double size = 1.0, sum = 0.0;
	double *ref;
	int serial_iterations;

	nthreads = 2;
	if (workload_args(argc, argv, &nthreads, &size))
		return 2;

	n = lround(BASE_N * sqrt(size));
	if (n < nthreads)
		n = nthreads;
	if (n < 2)
		n = 2;
	stride = n + 2;

	grid = xmalloc(stride * stride * sizeof(double));
	rhs = xmalloc(stride * stride * sizeof(double));
	init_grid(grid);
	ref = xmalloc(stride * stride * sizeof(double));
	memcpy(ref, grid, stride * stride * sizeof(double));

	pthread_barrier_init(&barrier, NULL, nthreads);
	run_threads(nthreads, slave, NULL, 0);
	pthread_barrier_destroy(&barrier);

	serial_iterations = serial_relax(ref, serial_history);
	if (serial_iterations != iterations_done ||
	    memcmp(serial_history, history, iterations_done * sizeof(double)) ||
	    memcmp(ref, grid, stride * stride * sizeof(double))) {
		long first_diff = 0;

		while (first_diff < stride * stride &&
		       !memcmp(&ref[first_diff], &grid[first_diff],
			       sizeof(double)))
			first_diff++;
		printf("%s threads=%d size=%g check=FAILED\n", NAME, nthreads,
		       size);
		fprintf(stderr,
			"%s: check=FAILED: %d iterations (serial %d), "
			"first differing point %ld\n",
			NAME, iterations_done, serial_iterations, first_diff);
		return 1;
	}

	for (long i = 0; i < stride * stride; i++)
		sum += grid[i];
	printf("%s threads=%d size=%g check=ok "
	       "result=grid=%ld,iterations=%d,residual=%.6e,sum=%.9e\n",
	       NAME, nthreads, size, stride, iterations_done,
	       history[iterations_done - 1], sum);

	free(ref);
	free(rhs);
	free(grid);
	return 0;
}
