// SPDX-License-Identifier: GPL-2.0
/*
 * Loop nests whose accesses the pass checks once, as a nest, before the
 * middle loop, for pass_test.c.  T1 fills the top and bottom quarters
 * of a matrix and writes one element of the middle half, its region
 * still open; T2 then sums the columns of the middle half (a column walk
 * in the inner loop, a block of rows for the two loops together).  A
 * nest one row too big at either end would be a conflict with T1's
 * fill: exactly one write-read conflict, at the lines marked racy.
 *
 * Then the runtime's nest entry point itself, on bytes that are no
 * block: every other element of two rows of g.  T1's writes to the
 * elements in between and to a third row are no conflict; its write to
 * an element of the nest is one, at the lines marked nest.
 *
 * Then a tile of a transpose (a nest with gaps: a stretch of each of
 * its rows, checked before both loops).  T1 writes the rest of each
 * source row the tile reads and one element in it, and reads the rest
 * of each destination row the tile writes: only the write in the tile
 * is a conflict, at the lines marked tile.
 *
 * Then a stage of an FFT's butterflies, out of place, whose loop over i
 * steps by a value (two nests before it, each the halves of every len
 * elements of the input).  T2 has read the first 28 elements already,
 * so the runtime finds the a halves' blocks all read from one look at
 * the filter, but not the b halves', whose last block it walks.  T1
 * writes the elements just past the stage's and one in that last
 * block: only that one is a conflict, at the lines marked stage; a
 * count one too many would take in T1's others, and a look at the
 * filter that ended a block short would miss it.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sched.h"

#define ROWS 64
#define COLS 48

double m[ROWS * COLS], sums[COLS];
double g[3 * 16];

#define TILE_N 48
struct pair {
	double re, im;
} src[TILE_N * TILE_N], dst[TILE_N * TILE_N];
double gap_sum;

#define STAGE_N 32 /* elements of one butterfly stage; the input has more */
struct pair stage_in[STAGE_N + 16], stage_out[STAGE_N];
double stage_sum;

void __valor_pass_read_nest(void *base, size_t size, intptr_t stride1,
			    size_t count1, intptr_t stride2, size_t count2,
			    intptr_t stride3, size_t count3);

__attribute__((noinline)) static void fill(double *p, long n, double v)
{
	for (long i = 0; i < n; i++)
		p[i] = v;
}

/* Not static: the sizes stay values, not constants that unroll it. */
void column_sums(double *out, const double *p, long rows, long cols);

__attribute__((noinline)) void column_sums(double *out, const double *p,
					   long rows, long cols)
{
	for (long j = 0; j < cols; j++) {
		double s = 0;

		for (long k = 0; k < rows; k++)
			s += p[k * cols + j]; /* racy: read */
		out[j] = s;
	}
}

/* dst rows [r0, r1), columns [c0, c1) <- src's columns and rows. */
void transpose_tile(struct pair *to, const struct pair *from, long n, long r0,
		    long r1, long c0, long c1);

__attribute__((noinline)) void transpose_tile(struct pair *to,
					      const struct pair *from, long n,
					      long r0, long r1, long c0,
					      long c1)
{
	/*
	 * Unrolled, the inner loop would start after an odd first column
	 * (a value the loop around cannot describe): no nest to test.
	 */
	for (long r = r0; r < r1; r++)
#pragma clang loop unroll(disable)
		for (long c = c0; c < c1; c++)
			to[r * n + c] = from[c * n + r]; /* tile: read */
}

/* Butterflies of length @len over in[0, n) into out. */
void butterfly_stage(struct pair *out, const struct pair *in, long n, long len);

__attribute__((noinline)) void
butterfly_stage(struct pair *out, const struct pair *in, long n, long len)
{
	long half = len / 2;

	/*
	 * Vectorized, the inner loop would run after overlap tests of in
	 * and out that change with i: no nest to test.
	 */
	for (long i = 0; i < n; i += len)
#pragma clang loop vectorize(disable) unroll(disable)
		for (long j = 0; j < half; j++) {
			struct pair a = in[i + j],
				    b = in[i + j + half]; /* stage: read */

			out[i + j].re = a.re + b.re;
			out[i + j].im = a.im + b.im;
			out[i + j + half].re = a.re - b.re;
			out[i + j + half].im = a.im - b.im;
		}
}

__attribute__((noinline)) static double sum_pairs(const struct pair *p, long n)
{
	double s = 0;

	for (long i = 0; i < n; i++)
		s += p[i].re + p[i].im;
	return s;
}

/* The tile is dst rows [8, 24), columns [16, 32): src's the other way. */
static void tile_gaps(void)
{
	for (long i = 16; i < 32; i++)
		for (long j = 0; j < TILE_N; j++)
			if (j < 8 || j >= 24)
				src[i * TILE_N + j].re = 1;
	for (long i = 8; i < 24; i++)
		for (long j = 0; j < TILE_N; j++)
			if (j < 16 || j >= 32)
				gap_sum += dst[i * TILE_N + j].im;
}

static void *t1_fn(void *arg)
{
	(void)arg;
	tile_gaps();
	src[20 * TILE_N + 10].im = 3; /* tile: write */
	for (long i = STAGE_N; i < STAGE_N + 16; i++)
		stage_in[i].re = 1;
	stage_in[29].im = 5; /* stage: write */
	fill(m, ROWS / 4 * COLS, 1);
	fill(m + 3 * ROWS / 4 * COLS, ROWS / 4 * COLS, 1);
	m[(ROWS / 4 + 3) * COLS + 5] = 2; /* racy: write */
	/* Stores one by one: merged, a neighbour's would cover g[20]. */
	g[1] = 1;
	__asm__ volatile("" ::: "memory");
	g[8] = 1;
	__asm__ volatile("" ::: "memory");
	g[16 + 3] = 1;
	__asm__ volatile("" ::: "memory");
	g[32 + 2] = 1;
	__asm__ volatile("" ::: "memory");
	g[16 + 4] = 1; /* nest: write */
	sched_done(1);
	sched_wait(2);
	return NULL;
}

static void *t2_fn(void *arg)
{
	(void)arg;
	sched_wait(1);
	column_sums(sums, m + ROWS / 4 * COLS, ROWS / 2, COLS);
	/*
	 * Too few rows for the unrolled loop the nest stands for: none of
	 * it runs, and no nest is checked (the next row is T1's).
	 */
	column_sums(sums, m + (3 * ROWS / 4 - 2) * COLS, 2, COLS);
	/* No rows at all: nothing is read, and no nest is checked. */
	column_sums(sums, m + 3 * ROWS / 4 * COLS, -1, COLS);
	/* g[0, 2, 4, 6] and g[16, 18, 20, 22]. */
	/* nest: read */ __valor_pass_read_nest(g, sizeof(g[0]), 16, 4, 128, 2,
						0, 1);
	transpose_tile(dst, src, TILE_N, 8, 24, 16, 32);
	stage_sum = sum_pairs(stage_in, STAGE_N - 4);
	butterfly_stage(stage_out, stage_in, STAGE_N, 8);
	sched_done(2);
	return NULL;
}

int main(void)
{
	pthread_t t1, t2;

	pthread_create(&t1, NULL, t1_fn, NULL);
	pthread_create(&t2, NULL, t2_fn, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	printf("sum %g\n", sums[5]);
	return 0;
}
