// SPDX-License-Identifier: GPL-2.0
/*
 * nbody: the force and integration step of Splash-2's water-nsquared.
 *
 * n molecules in a periodic box interact pairwise within a cut-off
 * radius (a smooth, bounded short-range force).  As in water-nsquared,
 * every molecule i is paired with the molecules that follow it
 * cyclically, i + 1 ... i + w (mod n), so that each unordered pair is
 * computed once; with w = (n - 1) / 2 -- and for even n one partner more
 * for the first half of the molecules -- that is every pair, the O(n^2)
 * algorithm.  Up to size 1.0 it is every pair; above, w stays at its
 * size-1.0 value, so that the work per molecule stays the same as the
 * data grows.
 *
 * Synchronization, as in water-nsquared: each thread owns a contiguous
 * range of molecules, computes the forces of its pairs into a private
 * force array (both partners of a pair get their share), then adds that
 * array into the shared molecule records, one block of molecules at a
 * time under that block's mutex -- threads start at different blocks to
 * spread the contention.  The pair energy is added to a global sum
 * under another mutex.  After a barrier every thread integrates its own
 * molecules (velocity, then position, wrapped into the box) and clears
 * their shared forces; a second barrier ends the step.
 *
 * Check: the same steps run serially (one force array, no locks) give
 * the same positions, velocities and energies within 1e-9 relative; they
 * are not bit-for-bit equal because the merge adds the per-thread
 * contributions in whatever order the locks are taken.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "nbody"

#include "workload.h"

/* Molecules at size 1.0; the data (memory) scales with -s. */
#define BASE_MOLECULES 4096
/* Partners per molecule beyond size 1.0: those of size 1.0. */
#define MAX_WINDOW ((BASE_MOLECULES - 1) / 2)
#define STEPS 10
#define SPACING 1.0 /* mean distance between molecules */
#define CUTOFF 2.5
#define SOFTENING 0.1
#define DT 0.005
#define BLOCK 32 /* molecules per lock */
#define TOLERANCE 1e-9

struct molecule {
	double pos[3];
	double vel[3];
	double force[3]; /* the shared sum, merged under block_lock */
};

static struct molecule *mol;
static pthread_mutex_t *block_lock; /* one per BLOCK molecules */
static long nblocks;
static long n; /* molecules */
static long window; /* partners of each molecule */
/* Molecules [0, extra_half) also pair with i + n / 2 (even n, all pairs). */
static long extra_half;
static double box; /* side of the periodic box */
static double cutoff2;
static int nthreads;

static pthread_barrier_t barrier;
static pthread_mutex_t energy_lock = PTHREAD_MUTEX_INITIALIZER;
static double energy[STEPS]; /* pair energy of each step */

/* Uniform in [lo, hi). */
static double uniform(uint64_t *state, double lo, double hi)
{
	return lo + (hi - lo) * (double)(splitmix64(state) >> 11) * 0x1.0p-53;
}

/* The nearest periodic image of a coordinate difference, |d| < box. */
static double minimum_image(double d)
{
	if (d > 0.5 * box)
		return d - box;
	if (d < -0.5 * box)
		return d + box;
	return d;
}

/*
 * Forces of the pairs (i, i + 1 .. i + window) for i in [first, last),
 * added into f[]; returns their energy.  The serial check calls it too.
 */
static double pair_forces(const struct molecule *m, double (*f)[3], long first,
			  long last)
{
	double e = 0.0;

	for (long i = first; i < last; i++) {
		double fi[3] = { 0.0, 0.0, 0.0 };
		long w = i < extra_half ? window + 1 : window;

		for (long d = 1; d <= w; d++) {
			long j = i + d < n ? i + d : i + d - n;
			double dx = minimum_image(m[i].pos[0] - m[j].pos[0]);
			double dy = minimum_image(m[i].pos[1] - m[j].pos[1]);
			double dz = minimum_image(m[i].pos[2] - m[j].pos[2]);
			double r2 = dx * dx + dy * dy + dz * dz;
			double s, mag;

			if (r2 >= cutoff2)
				continue;
			s = 1.0 - r2 / cutoff2;
			mag = s * s / (r2 + SOFTENING);
			e += s * s * s;
			fi[0] += mag * dx;
			fi[1] += mag * dy;
			fi[2] += mag * dz;
			f[j][0] -= mag * dx;
			f[j][1] -= mag * dy;
			f[j][2] -= mag * dz;
		}
		f[i][0] += fi[0];
		f[i][1] += fi[1];
		f[i][2] += fi[2];
	}
	return e;
}

/* Advance molecules [first, last) by one step and clear their forces. */
static void integrate(struct molecule *m, long first, long last)
{
	for (long i = first; i < last; i++) {
		for (int k = 0; k < 3; k++) {
			double p;

			m[i].vel[k] += DT * m[i].force[k];
			p = m[i].pos[k] + DT * m[i].vel[k];
			if (p >= box)
				p -= box;
			else if (p < 0.0)
				p += box;
			m[i].pos[k] = p;
			m[i].force[k] = 0.0;
		}
	}
}

static void *worker(void *arg)
{
	long tid = (long)arg;
	long first = tid * n / nthreads;
	long last = (tid + 1) * n / nthreads;
	double(*pf)[3] = malloc(n * sizeof(*pf));

	if (!pf) {
		fprintf(stderr, "%s: out of memory\n", NAME);
		exit(1);
	}
	for (int step = 0; step < STEPS; step++) {
		double e;

		memset(pf, 0, n * sizeof(*pf));
		e = pair_forces(mol, pf, first, last);

		/* Start at this thread's own block: the threads begin on
		 * different locks instead of queueing on block 0.
		 */
		for (long k = 0; k < nblocks; k++) {
			long b = (first / BLOCK + k) % nblocks;
			long end = (b + 1) * BLOCK < n ? (b + 1) * BLOCK : n;

			pthread_mutex_lock(&block_lock[b]);
			for (long i = b * BLOCK; i < end; i++) {
				mol[i].force[0] += pf[i][0];
				mol[i].force[1] += pf[i][1];
				mol[i].force[2] += pf[i][2];
			}
			pthread_mutex_unlock(&block_lock[b]);
		}
		pthread_mutex_lock(&energy_lock);
		energy[step] += e;
		pthread_mutex_unlock(&energy_lock);

		/* All forces are in before anyone moves a molecule. */
		pthread_barrier_wait(&barrier);
		integrate(mol, first, last);
		/* All molecules have moved before anyone reads positions. */
		pthread_barrier_wait(&barrier);
	}
	free(pf);
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-t THREADS] [-s SIZE]\n"
		"  -t THREADS  worker threads (default 2)\n"
		"  -s SIZE     data size factor (default 1.0: %d molecules)\n",
		NAME, BASE_MOLECULES);
}

/* A jittered cubic lattice with small random velocities. */
static void init_molecules(struct molecule *m)
{
	long side = (long)ceil(cbrt((double)n));
	double cell = box / side;
	uint64_t seed = 0xa7e5ULL;

	for (long i = 0; i < n; i++) {
		long c[3] = { i % side, i / side % side, i / side / side };

		for (int k = 0; k < 3; k++) {
			m[i].pos[k] =
				(c[k] + uniform(&seed, 0.25, 0.75)) * cell;
			m[i].vel[k] = uniform(&seed, -0.5, 0.5);
			m[i].force[k] = 0.0;
		}
	}
}

/* |a - b| within TOLERANCE of the larger magnitude (or of 1 near 0). */
static int close_enough(double a, double b)
{
	double scale = fmax(fmax(fabs(a), fabs(b)), 1.0);

	return fabs(a - b) <= TOLERANCE * scale;
}

/* Returns NULL when the check passes, else the reason. */
static const char *check(char *why, size_t len)
{
	struct molecule *ref = xmalloc(n * sizeof(*ref));
	double(*f)[3] = xmalloc(n * sizeof(*f));
	const char *bad = NULL;

	init_molecules(ref);
	for (int step = 0; step < STEPS && !bad; step++) {
		double e;

		memset(f, 0, n * sizeof(*f));
		e = pair_forces(ref, f, 0, n);
		for (long i = 0; i < n; i++)
			memcpy(ref[i].force, f[i], sizeof(f[i]));
		integrate(ref, 0, n);
		if (!close_enough(e, energy[step])) {
			snprintf(why, len,
				 "step %d: energy %.17g, serial %.17g", step,
				 energy[step], e);
			bad = why;
		}
	}
	for (long i = 0; i < n && !bad; i++) {
		for (int k = 0; k < 3; k++) {
			if (!close_enough(mol[i].pos[k], ref[i].pos[k]) ||
			    !close_enough(mol[i].vel[k], ref[i].vel[k])) {
				snprintf(why, len,
					 "molecule %ld: pos %.17g vel %.17g, "
					 "serial pos %.17g vel %.17g",
					 i, mol[i].pos[k], mol[i].vel[k],
					 ref[i].pos[k], ref[i].vel[k]);
				bad = why;
				break;
			}
		}
	}
	free(f);
	free(ref);
	return bad;
}

int main(int argc, char **argv)
{
	double size = 1.0, kinetic = 0.0;
	char why[200];

	nthreads = 2;
	if (workload_args(argc, argv, &nthreads, &size))
		return 2;

	n = lround(BASE_MOLECULES * size);
	if (n < 2 * nthreads)
		n = 2 * nthreads;
	if (n < 3)
		n = 3;
	window = (n - 1) / 2 < MAX_WINDOW ? (n - 1) / 2 : MAX_WINDOW;
	/* With even n, the pairs at distance n / 2 are left: as in
	 * water-nsquared, the first half of the molecules take them.
	 */
	extra_half = n % 2 == 0 && window == (n - 1) / 2 ? n / 2 : 0;
	box = SPACING * cbrt((double)n);
	/* The minimum image convention needs the cut-off below box / 2. */
	cutoff2 = fmin(CUTOFF, 0.49 * box);
	cutoff2 *= cutoff2;

	mol = xmalloc(n * sizeof(*mol));
	init_molecules(mol);
	nblocks = (n + BLOCK - 1) / BLOCK;
	block_lock = xmalloc(nblocks * sizeof(*block_lock));
	for (long b = 0; b < nblocks; b++)
		pthread_mutex_init(&block_lock[b], NULL);

	pthread_barrier_init(&barrier, NULL, nthreads);
	run_threads(nthreads, worker, NULL, 0);
	pthread_barrier_destroy(&barrier);

	if (check(why, sizeof(why))) {
		printf("%s threads=%d size=%g check=FAILED\n", NAME, nthreads,
		       size);
		fprintf(stderr, "%s: check=FAILED: %s\n", NAME, why);
		return 1;
	}

	for (long i = 0; i < n; i++)
		for (int k = 0; k < 3; k++)
			kinetic += 0.5 * mol[i].vel[k] * mol[i].vel[k];
	printf("%s threads=%d size=%g check=ok "
	       "result=molecules=%ld,steps=%d,energy=%.6e,kinetic=%.6e\n",
	       NAME, nthreads, size, n, STEPS, energy[STEPS - 1], kinetic);

	for (long b = 0; b < nblocks; b++)
		pthread_mutex_destroy(&block_lock[b]);
	free(block_lock);
	free(mol);
	return 0;
}
