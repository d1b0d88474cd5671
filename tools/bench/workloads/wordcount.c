// SPDX-License-Identifier: GPL-2.0
/*
 * wordcount: the kernel of Phoenix's word_count (MapReduce).
 *
 * A text is generated from a vocabulary of a few thousand made-up words
 * drawn with Zipf-like frequencies (the k-th most common word has weight
 * 1 / k), so a handful of words dominate, as in real text.  The text is
 * split into fixed-size chunks, cut at word boundaries the way Phoenix's
 * splitter does (a chunk owns the words that start in it).
 *
 * Map: the threads take chunks from a shared task counter under a mutex
 * (Phoenix's task queue) and count words into a hash table of their own.
 * A barrier ends the map phase.  Reduce: the hash space is cut into one
 * key range per thread; each thread merges the entries of its range from
 * every map table into a reduce table of its own -- reading the other
 * threads' tables, which the barrier has published.  Merge: after the
 * join, main gathers the reduce tables and sorts by count.
 *
 * Check: the counts add up to the number of words generated, and a
 * serial count of the whole text agrees on the number of distinct words
 * and on the count of every word (the top words included).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "wordcount"

#include "workload.h"

/* Words of text at size 1.0; the text (memory) scales with -s. */
#define BASE_WORDS 8000000
#define VOCABULARY_BITS 12
#define VOCABULARY (1 << VOCABULARY_BITS)
#define MIN_WORD 2
#define MAX_WORD 10
#define CHUNK (64 * 1024) /* bytes of text per map task */
#define TOP 5 /* words shown in the result */

struct entry {
	const char *word; /* points into the text (or the vocabulary) */
	uint32_t len;
	uint32_t hash; /* 0: empty slot */
	long count;
};

struct table {
	struct entry *slot;
	size_t cap; /* power of two */
	size_t used;
};

static char *text;
static size_t text_len;
static long nchunks;
static int nthreads;

static pthread_mutex_t task_lock = PTHREAD_MUTEX_INITIALIZER;
static long next_chunk; /* the task queue, under task_lock */
static pthread_barrier_t map_done;
static struct table *map_tables; /* one per thread */
static struct table *reduce_tables; /* one per key range (thread) */

static void *xcalloc(size_t count, size_t bytes)
{
	void *p = calloc(count, bytes);

	if (!p) {
		fprintf(stderr, "%s: out of memory\n", NAME);
		exit(1);
	}
	return p;
}

static bool is_letter(char c)
{
	return c >= 'a' && c <= 'z';
}

/* FNV-1a, never 0 (0 marks an empty slot). */
static uint32_t hash_word(const char *w, uint32_t len)
{
	uint32_t h = 2166136261u;

	for (uint32_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)w[i]) * 16777619u;
	return h ? h : 1;
}

/* cap is rounded up to a power of two. */
static void table_init(struct table *t, size_t cap)
{
	size_t pow2 = 16;

	while (pow2 < cap)
		pow2 *= 2;
	cap = pow2;
	t->slot = xcalloc(cap, sizeof(*t->slot));
	t->cap = cap;
	t->used = 0;
}

static struct entry *table_find(struct table *t, const char *w, uint32_t len,
				uint32_t hash)
{
	size_t i = hash & (t->cap - 1);

	for (;; i = (i + 1) & (t->cap - 1)) {
		struct entry *e = &t->slot[i];

		if (!e->hash || (e->hash == hash && e->len == len &&
				 !memcmp(e->word, w, len)))
			return e;
	}
}

static void table_grow(struct table *t)
{
	struct table bigger;

	table_init(&bigger, 2 * t->cap);
	for (size_t i = 0; i < t->cap; i++) {
		struct entry *e = &t->slot[i];

		if (e->hash)
			*table_find(&bigger, e->word, e->len, e->hash) = *e;
	}
	bigger.used = t->used;
	free(t->slot);
	*t = bigger;
}

/* Adds count to the word's entry, creating it. */
static void table_add(struct table *t, const char *w, uint32_t len,
		      uint32_t hash, long count)
{
	struct entry *e = table_find(t, w, len, hash);

	if (!e->hash) {
		if (2 * (t->used + 1) > t->cap) {
			table_grow(t);
			e = table_find(t, w, len, hash);
		}
		e->word = w;
		e->len = len;
		e->hash = hash;
		t->used++;
	}
	e->count += count;
}

/*
 * Count the words that start in text[start, end) into t; a word that
 * crosses end belongs to this range, one that crosses start to the
 * previous one.  The serial check calls it on the whole text.
 */
static void count_words(struct table *t, size_t start, size_t end)
{
	size_t p = start;

	if (p > 0)
		while (p < text_len && is_letter(text[p - 1]) &&
		       is_letter(text[p]))
			p++;
	for (;;) {
		size_t w;

		while (p < end && !is_letter(text[p]))
			p++;
		if (p >= end)
			return;
		w = p;
		while (p < text_len && is_letter(text[p]))
			p++;
		table_add(t, text + w, p - w, hash_word(text + w, p - w), 1);
	}
}

/* The reduce key range of a hash: its position in [0, 2^32) scaled. */
static int partition(uint32_t hash)
{
	return (int)(((uint64_t)hash * nthreads) >> 32);
}

static void *worker(void *arg)
{
	long tid = (long)arg;
	struct table *mine = &map_tables[tid];
	struct table *out = &reduce_tables[tid];

	table_init(mine, 2 * VOCABULARY);
	for (;;) {
		long c;

		pthread_mutex_lock(&task_lock);
		c = next_chunk++;
		pthread_mutex_unlock(&task_lock);
		if (c >= nchunks)
			break;
		count_words(mine, (size_t)c * CHUNK,
			    (size_t)(c + 1) * CHUNK < text_len ?
				    (size_t)(c + 1) * CHUNK :
				    text_len);
	}

	/* Every map table is complete before anyone reduces. */
	pthread_barrier_wait(&map_done);

	table_init(out, 2 * VOCABULARY / nthreads);
	for (int m = 0; m < nthreads; m++) {
		const struct table *in = &map_tables[m];

		for (size_t i = 0; i < in->cap; i++) {
			const struct entry *e = &in->slot[i];

			if (e->hash && partition(e->hash) == tid)
				table_add(out, e->word, e->len, e->hash,
					  e->count);
		}
	}
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-t THREADS] [-s SIZE]\n"
		"  -t THREADS  worker threads (default 2)\n"
		"  -s SIZE     data size factor (default 1.0: %d words)\n",
		NAME, BASE_WORDS);
}

/*
 * Vose's alias method: after it, word k is drawn by picking a column c
 * uniformly and keeping c with probability prob[c], else taking
 * alias[c] -- O(1) per word, so generating the text stays cheap next to
 * counting it.
 */
static void build_alias(const double *weight, double *prob, int *alias)
{
	static int small[VOCABULARY], large[VOCABULARY];
	static double scaled[VOCABULARY];
	int ns = 0, nl = 0;
	double total = 0.0;

	for (int k = 0; k < VOCABULARY; k++)
		total += weight[k];
	for (int k = 0; k < VOCABULARY; k++) {
		scaled[k] = weight[k] * VOCABULARY / total;
		if (scaled[k] < 1.0)
			small[ns++] = k;
		else
			large[nl++] = k;
	}
	while (ns && nl) {
		int s = small[--ns], l = large[--nl];

		prob[s] = scaled[s];
		alias[s] = l;
		scaled[l] -= 1.0 - scaled[s];
		if (scaled[l] < 1.0)
			small[ns++] = l;
		else
			large[nl++] = l;
	}
	/* What is left is 1 up to rounding. */
	while (nl) {
		prob[large[--nl]] = 1.0;
		alias[large[nl]] = large[nl];
	}
	while (ns) {
		prob[small[--ns]] = 1.0;
		alias[small[ns]] = small[ns];
	}
}

/*
 * The vocabulary (distinct random lowercase words) and the text: nwords
 * words drawn with weight 1 / rank, separated by spaces, a newline after
 * every few.
 */
static void generate_text(long nwords)
{
	static char vocab[VOCABULARY][MAX_WORD];
	static uint8_t vocab_len[VOCABULARY];
	static double weight[VOCABULARY], prob[VOCABULARY];
	static int alias[VOCABULARY];
	uint64_t seed = 0x7e47ULL;
	struct table seen;
	size_t cap = (size_t)nwords * 8 + 64;

	table_init(&seen, 4 * VOCABULARY);
	for (int k = 0; k < VOCABULARY;) {
		uint32_t len = MIN_WORD +
			       splitmix64(&seed) % (MAX_WORD - MIN_WORD + 1);
		uint32_t hash;

		for (uint32_t i = 0; i < len; i++)
			vocab[k][i] = 'a' + splitmix64(&seed) % 26;
		hash = hash_word(vocab[k], len);
		if (table_find(&seen, vocab[k], len, hash)->hash)
			continue; /* drawn before: draw again */
		table_add(&seen, vocab[k], len, hash, 1);
		vocab_len[k++] = len;
	}
	free(seen.slot);

	for (int k = 0; k < VOCABULARY; k++)
		weight[k] = 1.0 / (k + 1);
	build_alias(weight, prob, alias);

	text = xmalloc(cap);
	text_len = 0;
	for (long i = 0; i < nwords; i++) {
		uint64_t r = splitmix64(&seed);
		/* The top bits pick the column, the other 52 the coin. */
		int k = (int)(r >> (64 - VOCABULARY_BITS));
		double coin = (double)(r & ((1ULL << 52) - 1)) * 0x1.0p-52;

		if (coin >= prob[k])
			k = alias[k];
		if (text_len + MAX_WORD + 1 > cap) {
			cap *= 2;
			text = realloc(text, cap);
			if (!text) {
				fprintf(stderr, "%s: out of memory\n", NAME);
				exit(1);
			}
		}
		memcpy(text + text_len, vocab[k], vocab_len[k]);
		text_len += vocab_len[k];
		text[text_len++] = i % 12 == 11 ? '\n' : ' ';
	}
}

static int by_count(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	c = memcmp(x->word, y->word, x->len < y->len ? x->len : y->len);
	if (c)
		return c;
	return (int)x->len - (int)y->len;
}

/* Returns NULL when the check passes, else the reason. */
static const char *check(const struct entry *all, size_t distinct, long nwords,
			 char *why, size_t len)
{
	struct table serial;
	long total = 0;

	for (size_t i = 0; i < distinct; i++)
		total += all[i].count;
	if (total != nwords) {
		snprintf(why, len, "%ld words counted, %ld generated", total,
			 nwords);
		return why;
	}

	table_init(&serial, 2 * VOCABULARY);
	count_words(&serial, 0, text_len);
	if (serial.used != distinct) {
		snprintf(why, len, "%zu distinct words, serial count %zu",
			 distinct, serial.used);
		free(serial.slot);
		return why;
	}
	for (size_t i = 0; i < distinct; i++) {
		const struct entry *e = table_find(&serial, all[i].word,
						   all[i].len, all[i].hash);

		if (e->count != all[i].count) {
			snprintf(why, len, "'%.*s': %ld, serial count %ld",
				 (int)all[i].len, all[i].word, all[i].count,
				 e->count);
			free(serial.slot);
			return why;
		}
	}
	free(serial.slot);
	return NULL;
}

int main(int argc, char **argv)
{
	double size = 1.0;
	struct entry *all;
	size_t distinct = 0;
	long nwords;
	char why[200];

	nthreads = 2;
	if (workload_args(argc, argv, &nthreads, &size))
		return 2;

	nwords = (long)(BASE_WORDS * size);
	if (nwords < 1)
		nwords = 1;
	generate_text(nwords);
	nchunks = (long)((text_len + CHUNK - 1) / CHUNK);

	map_tables = xcalloc(nthreads, sizeof(*map_tables));
	reduce_tables = xcalloc(nthreads, sizeof(*reduce_tables));
	pthread_barrier_init(&map_done, NULL, nthreads);
	run_threads(nthreads, worker, NULL, 0);
	pthread_barrier_destroy(&map_done);

	/* Merge: gather the reduce tables and sort by count. */
	for (int r = 0; r < nthreads; r++)
		distinct += reduce_tables[r].used;
	all = xmalloc((distinct + 1) * sizeof(*all));
	distinct = 0;
	for (int r = 0; r < nthreads; r++) {
		const struct table *t = &reduce_tables[r];

		for (size_t i = 0; i < t->cap; i++)
			if (t->slot[i].hash)
				all[distinct++] = t->slot[i];
	}
	qsort(all, distinct, sizeof(*all), by_count);

	if (check(all, distinct, nwords, why, sizeof(why))) {
		printf("%s threads=%d size=%g check=FAILED\n", NAME, nthreads,
		       size);
		fprintf(stderr, "%s: check=FAILED: %s\n", NAME, why);
		return 1;
	}

	printf("%s threads=%d size=%g check=ok result=words=%ld,distinct=%zu,"
	       "top=",
	       NAME, nthreads, size, nwords, distinct);
	for (size_t i = 0; i < TOP && i < distinct; i++)
		printf("%s%.*s:%ld", i ? "," : "", (int)all[i].len, all[i].word,
		       all[i].count);
	printf("\n");

	for (int i = 0; i < nthreads; i++) {
		free(map_tables[i].slot);
		free(reduce_tables[i].slot);
	}
	free(map_tables);
	free(reduce_tables);
	free(all);
	free(text);
	return 0;
}
