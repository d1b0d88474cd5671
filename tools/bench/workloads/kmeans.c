// SPDX-License-Identifier: GPL-2.0
/*
 * kmeans: the kernel of Phoenix k-means: integer points in a 3-D grid
 * (Phoenix's defaults: dimension 3, grid 1000, 100 clusters), clustered
 * by Lloyd's iterations.  The points are split into contiguous chunks,
 * one per thread.  Each iteration:
 *
 *   1. every thread assigns each of its points to the nearest centroid
 *      (the centroids are read by all threads) and accumulates, in its
 *      own buffers, the per-cluster coordinate sums and counts and the
 *      number of points that changed cluster;
 *   2. it merges them into the global sums under a mutex (the order of
 *      the merges varies from run to run; the sums are integers, so the
 *      result does not);
 *   3. after a barrier, the one thread pthread_barrier_wait() elects
 *      computes the new centroids (integer means, as Phoenix) and decides
 *      whether to stop; a second barrier publishes them.
 *
 * It stops when no point changes cluster or after MAX_ITERATIONS.  Check:
 * a serial run of the same algorithm gives the same centroids and the
 * same number of iterations.  The serial run costs about as much CPU as
 * the parallel one.
 *
 * SIZE: 2^17 points for -s 1, linear in SIZE.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "kmeans"

#include "workload.h"

#define DEFAULT_POINTS (1L << 17)
#define MAX_POINTS (1L << 31)
#define DIM 3
#define CLUSTERS 100
#define GRID 1000
#define MAX_ITERATIONS 16

_Static_assert(DIM == 3, "the failure message prints three coordinates");

struct kmeans {
	int nthreads;
	long npoints;
	int (*points)[DIM];
	int *cluster; /* of each point; -1 before the first iteration */
	int centroid[CLUSTERS][DIM];

	/* Protected by lock: the merged partial results of an iteration. */
	pthread_mutex_t lock;
	int64_t sum[CLUSTERS][DIM];
	long count[CLUSTERS];
	long changed;

	/* Written by the elected thread between the two barriers. */
	int iterations;
	int done;
	pthread_barrier_t barrier;
};

struct worker {
	struct kmeans *km;
	int id;
	/* This thread's partial results, merged under km->lock. */
	int64_t sum[CLUSTERS][DIM];
	long count[CLUSTERS];
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-t THREADS] [-s SIZE]\n"
		"  Phoenix k-means kernel: %d clusters of %d-D integer points.\n"
		"  -t THREADS  worker threads (default 2)\n"
		"  -s SIZE     data size factor (default 1.0: %ld points)\n",
		NAME, CLUSTERS, DIM, DEFAULT_POINTS);
}

static void generate_points(struct kmeans *km)
{
	for (long i = 0; i < km->npoints; i++)
		for (int d = 0; d < DIM; d++)
			km->points[i][d] =
				(int)(mix64((uint64_t)(i * DIM + d)) % GRID);
}

/* Phoenix starts from arbitrary points; these are the first ones. */
static void initial_centroids(const struct kmeans *km, int c[CLUSTERS][DIM])
{
	for (int k = 0; k < CLUSTERS; k++)
		for (int d = 0; d < DIM; d++)
			c[k][d] = km->points[k % km->npoints][d];
}

/* The nearest centroid; ties go to the lowest index. */
static int nearest(const int c[CLUSTERS][DIM], const int *p)
{
	int64_t best_dist = INT64_MAX;
	int best = 0;

	for (int k = 0; k < CLUSTERS; k++) {
		int64_t dist = 0;

		for (int d = 0; d < DIM; d++) {
			int64_t diff = p[d] - c[k][d];

			dist += diff * diff;
		}
		if (dist < best_dist) {
			best_dist = dist;
			best = k;
		}
	}
	return best;
}

/*
 * Assign points [first, last) and accumulate their sums and counts;
 * returns how many changed cluster.  Shared by the parallel and the
 * serial run.
 */
static long assign(const int c[CLUSTERS][DIM], const int (*points)[DIM],
		   int *cluster, long first, long last,
		   int64_t sum[CLUSTERS][DIM], long count[CLUSTERS])
{
	long changed = 0;

	memset(sum, 0, sizeof(int64_t[CLUSTERS][DIM]));
	memset(count, 0, sizeof(long[CLUSTERS]));
	for (long i = first; i < last; i++) {
		int k = nearest(c, points[i]);

		if (cluster[i] != k) {
			cluster[i] = k;
			changed++;
		}
		for (int d = 0; d < DIM; d++)
			sum[k][d] += points[i][d];
		count[k]++;
	}
	return changed;
}

/* The integer mean of each cluster; an empty cluster keeps its centroid. */
static void update_centroids(int c[CLUSTERS][DIM],
			     const int64_t sum[CLUSTERS][DIM],
			     const long count[CLUSTERS])
{
	for (int k = 0; k < CLUSTERS; k++)
		if (count[k])
			for (int d = 0; d < DIM; d++)
				c[k][d] = (int)(sum[k][d] / count[k]);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct kmeans *km = w->km;
	long first = (long)((int64_t)km->npoints * w->id / km->nthreads);
	long last = (long)((int64_t)km->npoints * (w->id + 1) / km->nthreads);

	for (;;) {
		long changed = assign(km->centroid, km->points, km->cluster,
				      first, last, w->sum, w->count);

		pthread_mutex_lock(&km->lock);
		for (int k = 0; k < CLUSTERS; k++) {
			for (int d = 0; d < DIM; d++)
				km->sum[k][d] += w->sum[k][d];
			km->count[k] += w->count[k];
		}
		km->changed += changed;
		pthread_mutex_unlock(&km->lock);

		if (pthread_barrier_wait(&km->barrier) ==
		    PTHREAD_BARRIER_SERIAL_THREAD) {
			/* Every merge is in; nobody reads the centroids now. */
			update_centroids(km->centroid, km->sum, km->count);
			km->iterations++;
			km->done = km->changed == 0 ||
				   km->iterations == MAX_ITERATIONS;
			memset(km->sum, 0, sizeof(km->sum));
			memset(km->count, 0, sizeof(km->count));
			km->changed = 0;
		}
		pthread_barrier_wait(&km->barrier);
		if (km->done)
			return NULL;
	}
}

/* The same iterations on one thread, for the check. */
static int serial_kmeans(const struct kmeans *km, int c[CLUSTERS][DIM])
{
	int *cluster = xmalloc(km->npoints * sizeof(*cluster));
	static int64_t sum[CLUSTERS][DIM];
	static long count[CLUSTERS];
	int iterations = 0;
	long changed;

	for (long i = 0; i < km->npoints; i++)
		cluster[i] = -1;
	initial_centroids(km, c);
	do {
		changed = assign((const int(*)[DIM])c, km->points, cluster, 0,
				 km->npoints, sum, count);
		update_centroids(c, sum, count);
		iterations++;
	} while (changed && iterations < MAX_ITERATIONS);
	free(cluster);
	return iterations;
}

int main(int argc, char **argv)
{
	static struct kmeans km;
	static int expect[CLUSTERS][DIM];
	struct worker *workers;
	uint64_t checksum = 0;
	int threads, iterations;
	double size;

	if (workload_args(argc, argv, &threads, &size))
		return 2;
	if (size * DEFAULT_POINTS > (double)MAX_POINTS) {
		fprintf(stderr, "%s: size %g is too large\n", NAME, size);
		return 2;
	}
	km.npoints = lround(size * DEFAULT_POINTS);
	if (km.npoints < 1)
		km.npoints = 1;
	km.nthreads = threads;
	km.points = xmalloc(km.npoints * sizeof(*km.points));
	km.cluster = xmalloc(km.npoints * sizeof(*km.cluster));
	generate_points(&km);
	for (long i = 0; i < km.npoints; i++)
		km.cluster[i] = -1;
	initial_centroids(&km, km.centroid);
	pthread_mutex_init(&km.lock, NULL);
	pthread_barrier_init(&km.barrier, NULL, threads);

	/* Large (the partial sums), and each thread writes its own: heap. */
	workers = xmalloc(threads * sizeof(*workers));
	for (int i = 0; i < threads; i++) {
		workers[i].km = &km;
		workers[i].id = i;
	}
	run_threads(threads, worker_main, workers, sizeof(*workers));

	iterations = serial_kmeans(&km, expect);
	if (iterations != km.iterations ||
	    memcmp(expect, km.centroid, sizeof(expect))) {
		for (int k = 0; k < CLUSTERS; k++)
			if (memcmp(expect[k], km.centroid[k],
				   sizeof(expect[k])))
				fprintf(stderr,
					"%s: check=FAILED: centroid %d is (%d,%d,%d), serial (%d,%d,%d)\n",
					NAME, k, km.centroid[k][0],
					km.centroid[k][1], km.centroid[k][2],
					expect[k][0], expect[k][1],
					expect[k][2]);
		fprintf(stderr,
			"%s: check=FAILED: %d iterations, serial run %d\n",
			NAME, km.iterations, iterations);
		return 1;
	}
	for (int k = 0; k < CLUSTERS; k++)
		for (int d = 0; d < DIM; d++)
			checksum = checksum * 1000003 +
				   (uint64_t)km.centroid[k][d];
	printf("%s threads=%d size=%g check=ok result=n=%ld,iterations=%d,centroids=%016llx\n",
	       NAME, threads, size, km.npoints, km.iterations,
	       (unsigned long long)checksum);

	pthread_mutex_destroy(&km.lock);
	pthread_barrier_destroy(&km.barrier);
	free(workers);
	free(km.points);
	free(km.cluster);
	return 0;
}
