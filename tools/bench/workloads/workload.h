/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every benchmark workload shares: its command line (-t THREADS,
 * -s SIZE, -h; tools/bench/README.md) and its deterministic random
 * numbers, xmalloc() and run_threads().  Each workload defines NAME and usage() before including it.
 */
#ifndef VALOR_BENCH_WORKLOAD_H
#define VALOR_BENCH_WORKLOAD_H

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_THREADS 1024

static void usage(FILE *f);

/*
 * Parse the command line into *@threads (default 2) and *@size (default
 * 1.0); -1 after a message on stderr for anything else.  -h exits.
 */
static int workload_args(int argc, char **argv, int *threads, double *size)
{
	char *end;
	long t;
	int c;

	*threads = 2;
	*size = 1.0;
	while ((c = getopt(argc, argv, "t:s:h")) != -1) {
		switch (c) {
		case 't':
			errno = 0;
			t = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || t < 1 ||
			    t > MAX_THREADS) {
				fprintf(stderr, "%s: bad thread count '%s'\n",
					NAME, optarg);
				return -1;
			}
			*threads = (int)t;
			break;
		case 's':
			errno = 0;
			*size = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(*size > 0) ||
			    *size > 1e6) {
				fprintf(stderr, "%s: bad size '%s'\n", NAME,
					optarg);
				return -1;
			}
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", NAME,
			argv[optind]);
		return -1;
	}
	return 0;
}

/* malloc(), or exit with a message: a workload cannot go on without it. */
static inline void *xmalloc(size_t bytes)
{
	void *p = malloc(bytes);

	if (!p) {
		fprintf(stderr, "%s: out of memory (%zu bytes)\n", NAME, bytes);
		exit(1);
	}
	return p;
}

/*
 * Run @fn on @n threads and wait for them all.  Thread i gets
 * (char *)@args + i * @size, or, with @args NULL, its index i itself.
 * A thread that cannot be created ends the run: the timing would mean
 * nothing.
 */
static inline void run_threads(int n, void *(*fn)(void *), void *args,
			       size_t size)
{
	pthread_t *tids = xmalloc((size_t)n * sizeof(*tids));

	for (long i = 0; i < n; i++) {
		void *arg = args ? (char *)args + i * size : (void *)i;
		int err = pthread_create(&tids[i], NULL, fn, arg);

		if (err) {
			fprintf(stderr, "%s: pthread_create: %s\n", NAME,
				strerror(err));
			exit(1);
		}
	}
	for (int i = 0; i < n; i++)
		pthread_join(tids[i], NULL);
	free(tids);
}

/* splitmix64's finaliser: a deterministic value for every index. */
static inline uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* splitmix64 as a stream: the next value of *@state. */
static inline uint64_t splitmix64(uint64_t *state)
{
	uint64_t x = *state;

	*state += 0x9e3779b97f4a7c15ULL;
	return mix64(x);
}

#endif /* VALOR_BENCH_WORKLOAD_H */
