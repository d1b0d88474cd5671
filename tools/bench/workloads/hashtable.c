// SPDX-License-Identifier: GPL-2.0
/*
 * hashtable: a lock-heavy shared hash table, as in the lock-striped
 * tables of memcached, Java's ConcurrentHashMap or the kernel's
 * rhashtable users.
 *
 * A chained hash table with one node per key (malloc'd on insert, freed
 * on delete) is shared by all threads.  Lock striping: the buckets are
 * split into STRIPES groups, bucket b belongs to group b % STRIPES, and
 * each group has a pthread mutex that guards its buckets' chains and
 * its own element count.  Every operation takes exactly one stripe lock.
 *
 * Each thread runs a deterministic mix of operations: inserts (or value
 * updates) and deletes on the keys it owns (key % threads == tid), and
 * lookups on any key -- so every chain is read by all threads while
 * nodes are linked, relinked and freed by their owners.  Each thread
 * logs what its own keys should end up as (present or not, and the last
 * value stored).  A lookup checks that a value it finds was stored for
 * that key.
 *
 * Check, after the join: every node sits in the bucket its key hashes
 * to, no key appears twice, the table holds exactly the keys the logs
 * say are present with the logged values, the stripe counts add up to
 * the number of nodes, no lookup saw a foreign value, and a checksum of
 * the table equals the one of the logs.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "hashtable"

#include "workload.h"

/* Keys at size 1.0; the table (memory) scales with -s. */
#define BASE_KEYS 250000
#define OPS_PER_KEY 16 /* operations, all threads together, per key */
#define INSERT_PERCENT 20
#define DELETE_PERCENT 10 /* the rest are lookups */
#define STRIPES 64
#define VERSION_BITS 24 /* a value is key << VERSION_BITS | version */

struct node {
	uint64_t key;
	uint64_t value;
	struct node *next;
};

struct stripe {
	pthread_mutex_t lock;
	long count; /* nodes in this stripe's buckets */
} __attribute__((aligned(64))); /* no false sharing between stripes */

/* A thread's log of its own keys: key = tid + k * nthreads. */
struct thread_log {
	uint8_t *present;
	uint64_t *value;
	long nkeys;
	long bad_lookups; /* found a value not stored for that key */
	long hits;
};

static struct node **bucket;
static uint64_t bucket_mask;
static struct stripe stripe[STRIPES];
static struct thread_log *logs;
static long nkeys;
static long ops_per_thread;
static int nthreads;

static uint64_t hash_key(uint64_t key)
{
	uint64_t state = key;

	return splitmix64(&state);
}

static struct stripe *stripe_of(uint64_t b)
{
	return &stripe[b % STRIPES];
}

/* Insert the key or replace its value. */
static void ht_insert(uint64_t key, uint64_t value)
{
	uint64_t b = hash_key(key) & bucket_mask;
	struct stripe *s = stripe_of(b);
	struct node *n;

	pthread_mutex_lock(&s->lock);
	for (n = bucket[b]; n; n = n->next) {
		if (n->key == key) {
			n->value = value;
			pthread_mutex_unlock(&s->lock);
			return;
		}
	}
	n = xmalloc(sizeof(*n));
	n->key = key;
	n->value = value;
	n->next = bucket[b];
	bucket[b] = n;
	s->count++;
	pthread_mutex_unlock(&s->lock);
}

/* Returns whether the key was there. */
static int ht_delete(uint64_t key)
{
	uint64_t b = hash_key(key) & bucket_mask;
	struct stripe *s = stripe_of(b);
	struct node **link, *n;

	pthread_mutex_lock(&s->lock);
	for (link = &bucket[b]; (n = *link); link = &n->next) {
		if (n->key == key) {
			*link = n->next;
			s->count--;
			pthread_mutex_unlock(&s->lock);
			free(n);
			return 1;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* Returns whether the key was found, its value in *value. */
static int ht_lookup(uint64_t key, uint64_t *value)
{
	uint64_t b = hash_key(key) & bucket_mask;
	struct stripe *s = stripe_of(b);
	int found = 0;

	pthread_mutex_lock(&s->lock);
	for (struct node *n = bucket[b]; n; n = n->next) {
		if (n->key == key) {
			*value = n->value;
			found = 1;
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	return found;
}

static void *worker(void *arg)
{
	long tid = (long)arg;
	struct thread_log *log = &logs[tid];
	uint64_t seed = 0x4a5bULL + (uint64_t)tid * 0x100000001ULL;

	for (long op = 0; op < ops_per_thread; op++) {
		uint64_t r = splitmix64(&seed);
		unsigned int kind = r % 100;
		long own = (long)((r >> 8) % (uint64_t)log->nkeys);
		uint64_t key = (uint64_t)tid + (uint64_t)own * nthreads;
		uint64_t value;

		if (kind < INSERT_PERCENT) {
			value = key << VERSION_BITS |
				(op & ((1 << VERSION_BITS) - 1));
			ht_insert(key, value);
			log->present[own] = 1;
			log->value[own] = value;
		} else if (kind < INSERT_PERCENT + DELETE_PERCENT) {
			if (ht_delete(key) != log->present[own])
				log->bad_lookups++;
			log->present[own] = 0;
		} else {
			key = (r >> 8) % (uint64_t)nkeys;
			if (ht_lookup(key, &value)) {
				log->hits++;
				if (value >> VERSION_BITS != key)
					log->bad_lookups++;
			}
		}
	}
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-t THREADS] [-s SIZE]\n"
		"  -t THREADS  worker threads (default 2)\n"
		"  -s SIZE     data size factor (default 1.0: %d keys)\n",
		NAME, BASE_KEYS);
}

static uint64_t mix(uint64_t key, uint64_t value)
{
	return hash_key(key ^ hash_key(value));
}

/*
 * Walk the table against the logs.  Returns NULL when the check passes,
 * else the reason; *checksum gets the table's checksum.
 */
static const char *check(uint64_t *checksum, long *size, char *why, size_t len)
{
	uint64_t sum = 0, log_sum = 0;
	long nodes = 0, counted = 0, logged = 0, bad = 0;
	uint8_t *seen = calloc(nkeys, 1);

	if (!seen) {
		fprintf(stderr, "%s: out of memory\n", NAME);
		exit(1);
	}
	for (int t = 0; t < nthreads; t++)
		bad += logs[t].bad_lookups;
	if (bad) {
		snprintf(why, len, "%ld lookups or deletes saw a wrong value",
			 bad);
		goto out;
	}
	for (uint64_t b = 0; b <= bucket_mask; b++) {
		for (struct node *n = bucket[b]; n; n = n->next) {
			struct thread_log *log = &logs[n->key % nthreads];
			long own = (long)(n->key / nthreads);

			if (n->key >= (uint64_t)nkeys ||
			    (hash_key(n->key) & bucket_mask) != b) {
				snprintf(why, len, "key %lu in bucket %lu",
					 (unsigned long)n->key,
					 (unsigned long)b);
				goto out;
			}
			if (seen[n->key]++) {
				snprintf(why, len, "key %lu twice",
					 (unsigned long)n->key);
				goto out;
			}
			if (!log->present[own] || log->value[own] != n->value) {
				snprintf(
					why, len,
					"key %lu: value %#lx, log says %s %#lx",
					(unsigned long)n->key,
					(unsigned long)n->value,
					log->present[own] ? "present" :
							    "absent",
					(unsigned long)log->value[own]);
				goto out;
			}
			sum += mix(n->key, n->value);
			nodes++;
		}
	}
	for (int s = 0; s < STRIPES; s++)
		counted += stripe[s].count;
	for (int t = 0; t < nthreads; t++) {
		for (long k = 0; k < logs[t].nkeys; k++) {
			if (!logs[t].present[k])
				continue;
			logged++;
			log_sum += mix((uint64_t)t + (uint64_t)k * nthreads,
				       logs[t].value[k]);
		}
	}
	if (nodes != counted || nodes != logged || sum != log_sum) {
		snprintf(why, len,
			 "%ld nodes, stripe counts %ld, logs %ld; checksum "
			 "%#lx, logs %#lx",
			 nodes, counted, logged, (unsigned long)sum,
			 (unsigned long)log_sum);
		goto out;
	}
	*checksum = sum;
	*size = nodes;
	why = NULL;
out:
	free(seen);
	return why;
}

int main(int argc, char **argv)
{
	double size = 1.0;
	uint64_t checksum = 0;
	long final_size = 0;
	uint64_t nbuckets = 1;
	char why[200];

	nthreads = 2;
	if (workload_args(argc, argv, &nthreads, &size))
		return 2;

	nkeys = (long)(BASE_KEYS * size);
	if (nkeys < nthreads)
		nkeys = nthreads;
	/* Two thirds of the keys are present in the steady state: about
	 * one and a half nodes per bucket.
	 */
	while (nbuckets < (uint64_t)nkeys / 2)
		nbuckets *= 2;
	bucket = calloc(nbuckets, sizeof(*bucket));
	if (!bucket) {
		fprintf(stderr, "%s: out of memory\n", NAME);
		return 1;
	}
	bucket_mask = nbuckets - 1;
	for (int s = 0; s < STRIPES; s++)
		pthread_mutex_init(&stripe[s].lock, NULL);
	ops_per_thread = OPS_PER_KEY * nkeys / nthreads;

	logs = calloc(nthreads, sizeof(*logs));
	if (!logs) {
		fprintf(stderr, "%s: out of memory\n", NAME);
		return 1;
	}
	for (int t = 0; t < nthreads; t++) {
		logs[t].nkeys = (nkeys - t + nthreads - 1) / nthreads;
		logs[t].present = calloc(logs[t].nkeys, 1);
		logs[t].value = calloc(logs[t].nkeys, sizeof(uint64_t));
		if (!logs[t].present || !logs[t].value) {
			fprintf(stderr, "%s: out of memory\n", NAME);
			return 1;
		}
	}

	run_threads(nthreads, worker, NULL, 0);

	if (check(&checksum, &final_size, why, sizeof(why))) {
		printf("%s threads=%d size=%g check=FAILED\n", NAME, nthreads,
		       size);
		fprintf(stderr, "%s: check=FAILED: %s\n", NAME, why);
		return 1;
	}
	printf("%s threads=%d size=%g check=ok "
	       "result=keys=%ld,ops=%ld,size=%ld,checksum=%016lx\n",
	       NAME, nthreads, size, nkeys, ops_per_thread * nthreads,
	       final_size, (unsigned long)checksum);

	for (uint64_t b = 0; b < nbuckets; b++) {
		struct node *n = bucket[b];

		while (n) {
			struct node *next = n->next;

			free(n);
			n = next;
		}
	}
	for (int t = 0; t < nthreads; t++) {
		free(logs[t].present);
		free(logs[t].value);
	}
	for (int s = 0; s < STRIPES; s++)
		pthread_mutex_destroy(&stripe[s].lock);
	free(logs);
	free(bucket);
	return 0;
}
