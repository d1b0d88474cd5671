// SPDX-License-Identifier: GPL-2.0
/*
 * radix: the kernel of Splash-2 RADIX, an LSD radix sort of integer keys.
 * The keys are split into contiguous chunks, one per thread.  For each
 * digit (radix 1024, three digits of 30-bit keys), in phases separated by
 * pthread barriers:
 *
 *   1. every thread counts the digits of its own chunk into its own row
 *      of a shared threads x 1024 histogram;
 *   2. the global prefix sum, in parallel: thread t takes a band of
 *      digits and, for each digit and each thread in order, replaces the
 *      count by the running total over its band -- so it reads and
 *      writes every thread's row -- and publishes its band's total;
 *   3. each thread adds the totals of the lower bands to its band;
 *   4. every thread moves its keys to their ranks in the other buffer,
 *      ranks it reads from its own row, now the start of its slot in
 *      each digit's bucket; the slots of the threads interleave.
 *
 * Then the two buffers swap.  Splash-2 does step 2 with a tree of
 * partial sums; the band-and-barrier version here has the same sharing
 * (every thread's histogram read and written by another thread across a
 * barrier).  The sort is stable, so it is deterministic for any thread
 * count.  Check: the output is sorted, and its sum and xor equal those of
 * the input (recomputed from the generator).
 *
 * SIZE: 2^25 keys (two 128 MiB buffers) for -s 1, linear in SIZE.
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "radix"

#include "workload.h"

#define DEFAULT_KEYS (1L << 25)
#define MIN_KEYS 1024L
#define MAX_KEYS (1L << 32)
#define KEY_BITS 30
#define RADIX_BITS 10
#define RADIX (1 << RADIX_BITS)
#define NR_DIGITS ((KEY_BITS + RADIX_BITS - 1) / RADIX_BITS)

struct sort {
	int nthreads;
	long n;
	uint32_t *keys[2]; /* ping-pong buffers; the input starts in [0] */
	long *rank; /* nthreads rows of RADIX: counts, then ranks */
	long *band_total; /* per thread: keys in its band of digits */
	pthread_barrier_t barrier;
};

struct worker {
	struct sort *sort;
	int id;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-t THREADS] [-s SIZE]\n"
		"  Splash-2 RADIX kernel: parallel LSD radix sort of %d-bit keys.\n"
		"  -t THREADS  worker threads (default 2)\n"
		"  -s SIZE     data size factor (default 1.0: %ld keys)\n",
		NAME, KEY_BITS, DEFAULT_KEYS);
}

static uint32_t input_key(long i)
{
	return (uint32_t)(mix64((uint64_t)i) >> (64 - KEY_BITS));
}

/* An even split of [0, total) into nparts; part id starts here. */
static long part_first(long total, int nparts, int id)
{
	return (long)((int64_t)total * id / nparts);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct sort *s = w->sort;
	int id = w->id, nthreads = s->nthreads;
	long first = part_first(s->n, nthreads, id);
	long last = part_first(s->n, nthreads, id + 1);
	int dfirst = (int)part_first(RADIX, nthreads, id);
	int dlast = (int)part_first(RADIX, nthreads, id + 1);
	long *my_rank = &s->rank[(long)id * RADIX];

	/* Each thread generates its own chunk of the input. */
	for (long i = first; i < last; i++)
		s->keys[0][i] = input_key(i);
	pthread_barrier_wait(&s->barrier);

	for (int digit = 0; digit < NR_DIGITS; digit++) {
		const uint32_t *from = s->keys[digit & 1];
		uint32_t *to = s->keys[!(digit & 1)];
		int shift = digit * RADIX_BITS;
		long running = 0, base = 0;

		/* 1: local histogram. */
		memset(my_rank, 0, RADIX * sizeof(*my_rank));
		for (long i = first; i < last; i++)
			my_rank[(from[i] >> shift) & (RADIX - 1)]++;
		pthread_barrier_wait(&s->barrier);

		/*
		 * 2: exclusive prefix sum over (digit, thread) within this
		 * thread's band of digits, across every thread's row.
		 */
		for (int d = dfirst; d < dlast; d++) {
			for (int t = 0; t < nthreads; t++) {
				long *cell = &s->rank[(long)t * RADIX + d];
				long count = *cell;

				*cell = running;
				running += count;
			}
		}
		s->band_total[id] = running;
		pthread_barrier_wait(&s->barrier);

		/* 3: offset the band by the keys in the bands below it. */
		for (int t = 0; t < id; t++)
			base += s->band_total[t];
		for (int d = dfirst; d < dlast; d++)
			for (int t = 0; t < nthreads; t++)
				s->rank[(long)t * RADIX + d] += base;
		pthread_barrier_wait(&s->barrier);

		/* 4: permutation; keys stay in order within a digit. */
		for (long i = first; i < last; i++) {
			uint32_t key = from[i];

			to[my_rank[(key >> shift) & (RADIX - 1)]++] = key;
		}
		/* The next digit reads every thread's writes. */
		pthread_barrier_wait(&s->barrier);
	}
	return NULL;
}

static int check(const struct sort *s, uint64_t *sum_out)
{
	const uint32_t *out = s->keys[NR_DIGITS & 1];
	uint64_t sum_in = 0, xor_in = 0, sum = 0, xor = 0;

	for (long i = 0; i < s->n; i++) {
		uint32_t k = input_key(i);

		sum_in += k;
		xor_in ^= k;
	}
	for (long i = 0; i < s->n; i++) {
		if (i > 0 && out[i - 1] > out[i]) {
			fprintf(stderr,
				"%s: check=FAILED: key[%ld] = %u > key[%ld] = %u\n",
				NAME, i - 1, out[i - 1], i, out[i]);
			return -1;
		}
		sum += out[i];
		xor ^= out[i];
	}
	if (sum != sum_in || xor != xor_in) {
		fprintf(stderr,
			"%s: check=FAILED: output sum/xor %llx/%llx, input %llx/%llx\n",
			NAME, (unsigned long long)sum, (unsigned long long)xor,
			(unsigned long long)sum_in, (unsigned long long)xor_in);
		return -1;
	}
	*sum_out = sum;
	return 0;
}

int main(int argc, char **argv)
{
	struct sort s = { 0 };
	struct worker *workers;
	uint64_t sum;
	double size;
	int threads;

	if (workload_args(argc, argv, &threads, &size))
		return 2;
	if (size * DEFAULT_KEYS > (double)MAX_KEYS) {
		fprintf(stderr, "%s: size %g is too large\n", NAME, size);
		return 2;
	}
	s.n = lround(size * DEFAULT_KEYS);
	if (s.n < MIN_KEYS)
		s.n = MIN_KEYS;
	s.nthreads = threads;
	s.keys[0] = xmalloc(s.n * sizeof(*s.keys[0]));
	s.keys[1] = xmalloc(s.n * sizeof(*s.keys[1]));
	s.rank = xmalloc((size_t)threads * RADIX * sizeof(*s.rank));
	s.band_total = xmalloc(threads * sizeof(*s.band_total));

	pthread_barrier_init(&s.barrier, NULL, threads);
	workers = xmalloc(threads * sizeof(*workers));
	for (int i = 0; i < threads; i++) {
		workers[i].sort = &s;
		workers[i].id = i;
	}
	run_threads(threads, worker_main, workers, sizeof(*workers));

	if (check(&s, &sum))
		return 1;
	printf("%s threads=%d size=%g check=ok result=n=%ld,min=%u,median=%u,max=%u,sum=%llx\n",
	       NAME, threads, size, s.n, s.keys[NR_DIGITS & 1][0],
	       s.keys[NR_DIGITS & 1][s.n / 2], s.keys[NR_DIGITS & 1][s.n - 1],
	       (unsigned long long)sum);

	pthread_barrier_destroy(&s.barrier);
	free(workers);
	free(s.keys[0]);
	free(s.keys[1]);
	free(s.rank);
	free(s.band_total);
	return 0;
}
