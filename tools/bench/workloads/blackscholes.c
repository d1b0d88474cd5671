// SPDX-License-Identifier: GPL-2.0
/*
 * blackscholes: the kernel of PARSEC's blackscholes.
 *
 * An array of European options is priced with the closed-form
 * Black-Scholes formula, the cumulative normal distribution taken from
 * the same fifth-order polynomial approximation (CNDF) that PARSEC uses.
 * As in PARSEC, the options are generated as an array of structs (the
 * "input file"), copied into one array per field (struct of arrays),
 * and the index range is cut into one contiguous slice per thread.
 * Each thread prices its slice NUM_RUNS times, writing prices[i] each
 * time.
 *
 * Synchronization: only pthread_create and pthread_join.  Threads read
 * the shared input arrays, which main wrote before creating them, and
 * write disjoint slices of prices[], which main reads after joining
 * them.
 *
 * Check: a sample of the options is priced again serially and must
 * match bit for bit (same code, same inputs), and for each sampled
 * option the call and the put satisfy put-call parity,
 * C - P = S - K exp(-rT), within 1e-9.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "blackscholes"

#include "workload.h"

/* Options at size 1.0; the data (memory) scales with -s. */
#define BASE_OPTIONS 400000
/* Repetitions of the whole pricing loop, PARSEC's NUM_RUNS. */
#define NUM_RUNS 50
/* Options priced again serially by the check. */
#define CHECK_SAMPLES 4096

#define INV_SQRT_2PI 0.39894228040143270286

/* One record of PARSEC's input file. */
struct option_data {
	double s; /* spot price */
	double strike;
	double r; /* risk-free rate */
	double divq; /* dividend rate, unused by the kernel (as in PARSEC) */
	double v; /* volatility */
	double t; /* time to maturity, in years */
	char otype; /* 'C' call or 'P' put */
};

/* The struct-of-arrays buffers the pricing threads read. */
static double *sptprice;
static double *strike;
static double *rate;
static double *volatility;
static double *otime;
static int *otype;
static double *prices;

static long num_options;
static int nthreads;

/* Uniform in [lo, hi). */
static double uniform(uint64_t *state, double lo, double hi)
{
	return lo + (hi - lo) * (double)(splitmix64(state) >> 11) * 0x1.0p-53;
}

/* PARSEC's CNDF, operation for operation. */
static double cndf(double x)
{
	double xk2, xk2_2, xk2_3, xk2_4, xk2_5;
	double xlocal, xlocal_1, xlocal_2, xlocal_3;
	double xnprime, out;
	int sign = 0;

	if (x < 0.0) {
		x = -x;
		sign = 1;
	}

	xnprime = exp(-0.5 * x * x) * INV_SQRT_2PI;

	xk2 = 1.0 / (1.0 + 0.2316419 * x);
	xk2_2 = xk2 * xk2;
	xk2_3 = xk2_2 * xk2;
	xk2_4 = xk2_3 * xk2;
	xk2_5 = xk2_4 * xk2;

	xlocal_1 = xk2 * 0.319381530;
	xlocal_2 = xk2_2 * (-0.356563782);
	xlocal_3 = xk2_3 * 1.781477937;
	xlocal_2 = xlocal_2 + xlocal_3;
	xlocal_3 = xk2_4 * (-1.821255978);
	xlocal_2 = xlocal_2 + xlocal_3;
	xlocal_3 = xk2_5 * 1.330274429;
	xlocal_2 = xlocal_2 + xlocal_3;

	xlocal_1 = xlocal_2 + xlocal_1;
	xlocal = 1.0 - xlocal_1 * xnprime;

	out = xlocal;
	if (sign)
		out = 1.0 - out;
	return out;
}

/* PARSEC's BlkSchlsEqEuroNoDiv: otype 0 is a call, 1 a put. */
static double blk_schls_eq_euro_no_div(double s, double k, double r, double v,
				       double t, int type)
{
	double sqrt_t = sqrt(t);
	double log_term = log(s / k);
	double power_term = v * v * 0.5;
	double den = v * sqrt_t;
	double d1 = ((r + power_term) * t + log_term) / den;
	double d2 = d1 - den;
	double n_d1 = cndf(d1);
	double n_d2 = cndf(d2);
	double future_value = k * exp(-r * t);

	if (type == 0)
		return s * n_d1 - future_value * n_d2;
	return future_value * (1.0 - n_d2) - s * (1.0 - n_d1);
}

static void *bs_thread(void *arg)
{
	long tid = (long)arg;
	long start = tid * num_options / nthreads;
	long end = (tid + 1) * num_options / nthreads;

	for (int run = 0; run < NUM_RUNS; run++) {
		for (long i = start; i < end; i++)
			prices[i] = blk_schls_eq_euro_no_div(
				sptprice[i], strike[i], rate[i], volatility[i],
				otime[i], otype[i]);
	}
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-t THREADS] [-s SIZE]\n"
		"  -t THREADS  worker threads (default 2)\n"
		"  -s SIZE     data size factor (default 1.0: %d options)\n",
		NAME, BASE_OPTIONS);
}

/* The "input file": deterministic, PARSEC-like ranges. */
static struct option_data *generate_options(long n)
{
	struct option_data *data = xmalloc(n * sizeof(*data));
	uint64_t seed = 0x5eed0b5ULL;

	for (long i = 0; i < n; i++) {
		data[i].s = uniform(&seed, 10.0, 200.0);
		data[i].strike = data[i].s * uniform(&seed, 0.5, 1.5);
		data[i].r = uniform(&seed, 0.01, 0.1);
		data[i].divq = 0.0;
		data[i].v = uniform(&seed, 0.05, 0.65);
		data[i].t = uniform(&seed, 0.05, 2.0);
		data[i].otype = (splitmix64(&seed) & 1) ? 'P' : 'C';
	}
	return data;
}

/* Returns NULL when the check passes, else the reason. */
static const char *check(char *why, size_t len)
{
	long stride = num_options / CHECK_SAMPLES;

	if (stride < 1)
		stride = 1;
	for (long i = 0; i < num_options; i += stride) {
		double want = blk_schls_eq_euro_no_div(sptprice[i], strike[i],
						       rate[i], volatility[i],
						       otime[i], otype[i]);
		double call = blk_schls_eq_euro_no_div(sptprice[i], strike[i],
						       rate[i], volatility[i],
						       otime[i], 0);
		double put = blk_schls_eq_euro_no_div(sptprice[i], strike[i],
						      rate[i], volatility[i],
						      otime[i], 1);
		double parity =
			sptprice[i] - strike[i] * exp(-rate[i] * otime[i]);

		if (memcmp(&want, &prices[i], sizeof(want))) {
			snprintf(why, len,
				 "option %ld: price %.17g, serial %.17g", i,
				 prices[i], want);
			return why;
		}
		if (fabs((call - put) - parity) > 1e-9) {
			snprintf(why, len,
				 "option %ld: call %.17g - put %.17g != %.17g",
				 i, call, put, parity);
			return why;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct option_data *data;
	double size = 1.0, sum = 0.0;
	char why[160];

	nthreads = 2;
	if (workload_args(argc, argv, &nthreads, &size))
		return 2;

	num_options = (long)(BASE_OPTIONS * size);
	if (num_options < nthreads)
		num_options = nthreads;

	data = generate_options(num_options);

	/* PARSEC copies the records into one array per field. */
	sptprice = xmalloc(num_options * sizeof(double));
	strike = xmalloc(num_options * sizeof(double));
	rate = xmalloc(num_options * sizeof(double));
	volatility = xmalloc(num_options * sizeof(double));
	otime = xmalloc(num_options * sizeof(double));
	otype = xmalloc(num_options * sizeof(int));
	prices = xmalloc(num_options * sizeof(double));
	for (long i = 0; i < num_options; i++) {
		sptprice[i] = data[i].s;
		strike[i] = data[i].strike;
		rate[i] = data[i].r;
		volatility[i] = data[i].v;
		otime[i] = data[i].t;
		otype[i] = data[i].otype == 'P';
	}
	free(data);

	run_threads(nthreads, bs_thread, NULL, 0);

	if (check(why, sizeof(why))) {
		printf("%s threads=%d size=%g check=FAILED\n", NAME, nthreads,
		       size);
		fprintf(stderr, "%s: check=FAILED: %s\n", NAME, why);
		return 1;
	}

	for (long i = 0; i < num_options; i++)
		sum += prices[i];
	printf("%s threads=%d size=%g check=ok result=options=%ld,sum=%.6f\n",
	       NAME, nthreads, size, num_options, sum);

	free(sptprice);
	free(strike);
	free(rate);
	free(volatility);
	free(otime);
	free(otype);
	free(prices);
	return 0;
}
