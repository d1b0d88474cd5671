// SPDX-License-Identifier: GPL-2.0
/*
 * fft: the kernel of Splash-2 FFT, a radix-sqrt(n) "six-step" 1-D complex
 * FFT of n = 2^m points (m even).  The points are seen as a rootn x rootn
 * matrix whose rows are split into contiguous bands, one per thread; each
 * thread owns its band of the data array, of the scratch array and of the
 * twiddle-factor matrix.  The six steps are
 *
 *   transpose, rootn FFTs of length rootn on the rows and a twiddle
 *   multiplication, transpose, rootn FFTs on the rows, transpose,
 *
 * and, as in Splash-2, a pthread barrier separates every step.  The
 * transposes are the all-to-all communication: a thread writes its own
 * band of the destination from a column band of the source that lies in
 * every other thread's rows (visited in a staggered order, as Splash-2
 * does, so that the threads do not all read the same band at once).
 *
 * The program runs the forward transform, then the inverse transform on
 * its output, and checks that the round trip gives back the input within
 * 1e-9 relative, and that a few outputs of the forward transform match a
 * direct O(n) evaluation of their DFT sum.
 *
 * SIZE: n = 2^22 points for -s 1; n must be a power of four, so the size
 * factor is rounded to the nearest power of four (-s 4 doubles rootn).
 */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "fft"

#include "workload.h"

#define DEFAULT_LOG2_POINTS 22
#define MIN_LOG2_POINTS 4
#define MAX_LOG2_POINTS 30
#define TILE 16 /* transpose tile edge, in points */
#define NR_SPOTS 3 /* forward outputs checked against a direct DFT */

struct cplx {
	double re, im;
};

struct fft {
	int nthreads;
	int log2n, log2rootn;
	long n, rootn;
	struct cplx *x; /* the data, in place */
	struct cplx *scratch; /* transpose destination */
	struct cplx *orig; /* a copy of the input, for the round trip */
	struct cplx *twiddle; /* rootn x rootn: exp(-2 pi i r c / n) */
	struct cplx *roots; /* rootn / 2: exp(-2 pi i k / rootn) */
	long *bitrev; /* bit reversal of log2rootn-bit row indices */
	long spot_index[NR_SPOTS];
	struct cplx spot_value[NR_SPOTS]; /* written by thread 0 */
	pthread_barrier_t barrier;
};

struct worker {
	struct fft *fft;
	int id;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-t THREADS] [-s SIZE]\n"
		"  Splash-2 FFT kernel: six-step complex FFT, forward and inverse.\n"
		"  -t THREADS  worker threads (default 2)\n"
		"  -s SIZE     data size factor (default 1.0: 2^%d points),\n"
		"              rounded to a power of four\n",
		NAME, DEFAULT_LOG2_POINTS);
}

/* A uniform double in [-1, 1) from 53 random bits. */
static double unit(uint64_t bits)
{
	return (double)(bits >> 11) * 0x1p-52 - 1.0;
}

static struct cplx input_point(long i)
{
	struct cplx c = { unit(mix64(2 * (uint64_t)i)),
			  unit(mix64(2 * (uint64_t)i + 1)) };
	return c;
}

static struct cplx root_of_unity(long num, long den)
{
	double a = -2.0 * M_PI * (double)num / (double)den;
	struct cplx c = { cos(a), sin(a) };

	return c;
}

/* Rows [first, last) of the rootn x rootn matrix belong to thread id. */
static long band_first(const struct fft *f, int id)
{
	return (long)((int64_t)f->rootn * id / f->nthreads);
}

/*
 * dst rows [first, last) <- src columns [first, last): the rows this
 * thread owns in dst, gathered from every thread's rows of src, one peer
 * band at a time starting with the next thread's, tile by tile.
 */
static void transpose(const struct fft *f, int id, const struct cplx *src,
		      struct cplx *dst)
{
	long rootn = f->rootn;
	long first = band_first(f, id), last = band_first(f, id + 1);

	for (int k = 1; k <= f->nthreads; k++) {
		int peer = (id + k) % f->nthreads;
		long pfirst = band_first(f, peer),
		     plast = band_first(f, peer + 1);

		for (long r0 = first; r0 < last; r0 += TILE) {
			long r1 = r0 + TILE < last ? r0 + TILE : last;

			for (long c0 = pfirst; c0 < plast; c0 += TILE) {
				long c1 = c0 + TILE < plast ? c0 + TILE : plast;

				for (long r = r0; r < r1; r++)
					for (long c = c0; c < c1; c++)
						dst[r * rootn + c] =
							src[c * rootn + r];
			}
		}
	}
}

/*
 * In-place radix-2 FFT of one row of rootn points (Splash-2's
 * FFT1DOnce): bit-reversal permutation, then log2(rootn) butterfly
 * passes.  dir is +1 for the forward transform, -1 for the inverse
 * (conjugate roots, no scaling).
 */
static void fft_row(const struct fft *f, struct cplx *row, int dir)
{
	long rootn = f->rootn;

	for (long i = 0; i < rootn; i++) {
		long j = f->bitrev[i];

		if (i < j) {
			struct cplx t = row[i];

			row[i] = row[j];
			row[j] = t;
		}
	}
	for (long len = 2; len <= rootn; len <<= 1) {
		long half = len / 2, stride = rootn / len;

		for (long i = 0; i < rootn; i += len) {
			for (long j = 0; j < half; j++) {
				struct cplx w = f->roots[j * stride];
				struct cplx *a = &row[i + j],
					    *b = &row[i + j + half];
				double wi = dir * w.im;
				double vr = b->re * w.re - b->im * wi;
				double vi = b->re * wi + b->im * w.re;

				b->re = a->re - vr;
				b->im = a->im - vi;
				a->re += vr;
				a->im += vi;
			}
		}
	}
}

/* Row r, element c, is multiplied by exp(-+2 pi i r c / n). */
static void twiddle_row(const struct fft *f, struct cplx *row, long r, int dir)
{
	const struct cplx *w = &f->twiddle[r * f->rootn];

	for (long c = 0; c < f->rootn; c++) {
		double wi = dir * w[c].im;
		double re = row[c].re * w[c].re - row[c].im * wi;

		row[c].im = row[c].re * wi + row[c].im * w[c].re;
		row[c].re = re;
	}
}

/*
 * The six steps on data a with scratch b; the result lands in b.  Every
 * step touches only this thread's band except the transposes, which read
 * every band: the barriers order each transpose after the writes to the
 * rows it reads and before the next writes to the rows it read.
 */
static void six_step(struct fft *f, int id, struct cplx *a, struct cplx *b,
		     int dir)
{
	long first = band_first(f, id), last = band_first(f, id + 1);

	transpose(f, id, a, b);
	pthread_barrier_wait(&f->barrier);
	for (long r = first; r < last; r++) {
		fft_row(f, &b[r * f->rootn], dir);
		twiddle_row(f, &b[r * f->rootn], r, dir);
	}
	pthread_barrier_wait(&f->barrier);
	transpose(f, id, b, a);
	pthread_barrier_wait(&f->barrier);
	for (long r = first; r < last; r++)
		fft_row(f, &a[r * f->rootn], dir);
	pthread_barrier_wait(&f->barrier);
	transpose(f, id, a, b);
	pthread_barrier_wait(&f->barrier);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct fft *f = w->fft;
	long rootn = f->rootn;
	long first = band_first(f, w->id), last = band_first(f, w->id + 1);
	double scale = 1.0 / (double)f->n;

	/*
	 * Each thread fills its own band, so its pages are first touched
	 * where they are used (Splash-2 touches its band before starting).
	 */
	for (long r = first; r < last; r++) {
		for (long c = 0; c < rootn; c++) {
			long i = r * rootn + c;

			f->twiddle[i] = root_of_unity(r * c, f->n);
			f->x[i] = input_point(i);
			f->orig[i] = f->x[i];
		}
	}
	pthread_barrier_wait(&f->barrier);

	six_step(f, w->id, f->x, f->scratch, 1);
	/*
	 * The inverse transform only reads scratch until its next barrier,
	 * so thread 0 can sample the forward output meanwhile.
	 */
	if (w->id == 0)
		for (int s = 0; s < NR_SPOTS; s++)
			f->spot_value[s] = f->scratch[f->spot_index[s]];
	six_step(f, w->id, f->scratch, f->x, -1);

	for (long i = first * rootn; i < last * rootn; i++) {
		f->x[i].re *= scale;
		f->x[i].im *= scale;
	}
	return NULL;
}

/*
 * Direct evaluation of X[k] = sum_j x[j] exp(-2 pi i j k / n), with the
 * root for (j k mod n) = a rootn + b taken as a product of two tabled
 * roots, so that it costs O(n) multiplications and no trigonometry.
 */
static struct cplx direct_dft(const struct fft *f, long k)
{
	long rootn = f->rootn, n = f->n, m = 0;
	struct cplx *coarse = xmalloc(rootn * sizeof(*coarse));
	struct cplx *fine = xmalloc(rootn * sizeof(*fine));
	struct cplx sum = { 0, 0 };

	for (long a = 0; a < rootn; a++) {
		coarse[a] = root_of_unity(a, rootn);
		fine[a] = root_of_unity(a, n);
	}
	for (long j = 0; j < n; j++) {
		struct cplx c = coarse[m / rootn], d = fine[m % rootn];
		double wr = c.re * d.re - c.im * d.im;
		double wi = c.re * d.im + c.im * d.re;

		sum.re += f->orig[j].re * wr - f->orig[j].im * wi;
		sum.im += f->orig[j].re * wi + f->orig[j].im * wr;
		m += k;
		if (m >= n)
			m -= n;
	}
	free(coarse);
	free(fine);
	return sum;
}

static int check(const struct fft *f, double *roundtrip_err)
{
	double maxdiff2 = 0, maxabs2 = 0, norm2 = 0;

	/* Squared magnitudes: hypot() would cost more than the FFT. */
	for (long i = 0; i < f->n; i++) {
		double dr = f->x[i].re - f->orig[i].re;
		double di = f->x[i].im - f->orig[i].im;
		double d2 = dr * dr + di * di;
		double a2 = f->orig[i].re * f->orig[i].re +
			    f->orig[i].im * f->orig[i].im;

		maxdiff2 = d2 > maxdiff2 ? d2 : maxdiff2;
		maxabs2 = a2 > maxabs2 ? a2 : maxabs2;
		norm2 += a2;
	}
	*roundtrip_err = sqrt(maxdiff2 / maxabs2);
	if (!(*roundtrip_err < 1e-9)) {
		fprintf(stderr,
			"%s: check=FAILED: inverse(forward(x)) differs from x by %g relative\n",
			NAME, *roundtrip_err);
		return -1;
	}
	/* Parseval: |X[k]| is of the order of ||x||_2. */
	norm2 = sqrt(norm2);
	for (int s = 0; s < NR_SPOTS; s++) {
		struct cplx want = direct_dft(f, f->spot_index[s]);
		struct cplx got = f->spot_value[s];
		double err = hypot(got.re - want.re, got.im - want.im) / norm2;

		if (!(err < 1e-9)) {
			fprintf(stderr,
				"%s: check=FAILED: X[%ld] = %.17g%+.17gi, direct DFT %.17g%+.17gi\n",
				NAME, f->spot_index[s], got.re, got.im, want.re,
				want.im);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct fft f = { 0 };
	struct worker *workers;
	double size, err;
	int threads;

	if (workload_args(argc, argv, &threads, &size))
		return 2;

	/* The nearest power of four to size * 2^DEFAULT_LOG2_POINTS. */
	f.log2n = DEFAULT_LOG2_POINTS + 2 * (int)lround(log2(size) / 2);
	if (f.log2n < MIN_LOG2_POINTS)
		f.log2n = MIN_LOG2_POINTS;
	if (f.log2n > MAX_LOG2_POINTS) {
		fprintf(stderr, "%s: size %g is too large\n", NAME, size);
		return 2;
	}
	f.log2rootn = f.log2n / 2;
	f.n = 1L << f.log2n;
	f.rootn = 1L << f.log2rootn;
	f.nthreads = threads;

	f.x = xmalloc(f.n * sizeof(*f.x));
	f.scratch = xmalloc(f.n * sizeof(*f.scratch));
	f.orig = xmalloc(f.n * sizeof(*f.orig));
	f.twiddle = xmalloc(f.n * sizeof(*f.twiddle));
	f.roots = xmalloc(f.rootn / 2 * sizeof(*f.roots));
	f.bitrev = xmalloc(f.rootn * sizeof(*f.bitrev));
	/* The small shared tables are built before the threads exist. */
	for (long k = 0; k < f.rootn / 2; k++)
		f.roots[k] = root_of_unity(k, f.rootn);
	for (long i = 0; i < f.rootn; i++) {
		long r = 0;

		for (int b = 0; b < f.log2rootn; b++)
			r |= ((i >> b) & 1) << (f.log2rootn - 1 - b);
		f.bitrev[i] = r;
	}
	f.spot_index[0] = 1;
	f.spot_index[1] = f.n - 1;
	f.spot_index[2] = (long)(mix64(42) % (uint64_t)f.n);

	pthread_barrier_init(&f.barrier, NULL, threads);
	workers = xmalloc(threads * sizeof(*workers));
	for (int i = 0; i < threads; i++) {
		workers[i].fft = &f;
		workers[i].id = i;
	}
	run_threads(threads, worker_main, workers, sizeof(*workers));

	if (check(&f, &err))
		return 1;
	printf("%s threads=%d size=%g check=ok result=n=%ld,X1=%.6e%+.6ei,roundtrip_err=%.1e\n",
	       NAME, threads, size, f.n, f.spot_value[0].re, f.spot_value[0].im,
	       err);

	pthread_barrier_destroy(&f.barrier);
	free(workers);
	free(f.x);
	free(f.scratch);
	free(f.orig);
	free(f.twiddle);
	free(f.roots);
	free(f.bitrev);
	return 0;
}
