// SPDX-License-Identifier: GPL-2.0
/*
 * pthread_once: three threads call pthread_once on the same control;
 * the one that runs the initializer allocates and fills the shared
 * configuration, and every thread then reads it.
 *
 * VALOR-EXPECT: clean
 *
 * Why: the initializer's writes happen before every pthread_once call
 * returns (its completion is a release the other callers acquire), and
 * its region ends there.
 */
#include <pthread.h>
#include <stdlib.h>

struct settings {
	int verbose;
	long limit;
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct settings *settings;

static void init_settings(void)
{
	settings = malloc(sizeof(*settings));
	settings->verbose = 1;
	settings->limit = 1000;
}

static void *user(void *arg)
{
	(void)arg;
	pthread_once(&once, init_settings);
	return (void *)(settings->limit + settings->verbose);
}

int main(void)
{
	pthread_t t[3];
	long total = 0;

	for (int i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, user, NULL))
			return 1;
	for (int i = 0; i < 3; i++) {
		void *v;

		pthread_join(t[i], &v);
		total += (long)v;
	}
	free(settings);
	return total == 3 * 1001 ? 0 : 1;
}
