// SPDX-License-Identifier: GPL-2.0
/*
 * pipeline: the stage structure of PARSEC's dedup (and ferret).
 *
 * Three stages connected by bounded queues:
 *   producer  -- makes each item: a heap buffer of generated data (runs
 *                of repeated bytes, so that it compresses);
 *   transform -- THREADS workers: fingerprint the buffer with a rolling
 *                hash and count the content-defined chunk anchors, as
 *                dedup's chunking does, then run-length encode it into a
 *                new heap buffer and free the input buffer;
 *   consumer  -- main: puts the items back in sequence order (dedup's
 *                reorder stage), folds a checksum of each output buffer
 *                into a running one, and frees the buffer and the item.
 * So every buffer is malloc'd by one thread and freed by another.
 *
 * Synchronization: each queue is a ring of item pointers guarded by a
 * pthread mutex, with two condition variables (not empty, not full) and
 * a count of the stages still pushing into it; the last one to finish
 * closes the queue, and a pop from a closed, empty queue returns NULL.
 * THREADS sets the number of transform workers; the producer thread and
 * main (the consumer) come on top, so THREADS = 1 runs three threads.
 *
 * Check: every sequence number arrives exactly once, and the checksum,
 * the total output size and the anchor count equal those of a serial
 * run of the same three steps over the same items.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "pipeline"

#include "workload.h"

/* Items at size 1.0; the data streamed scales with -s (the data in
 * flight is bounded by the queues).
 */
#define BASE_ITEMS 8192
#define MIN_ITEM 2048 /* bytes */
#define MAX_ITEM 14336
#define QUEUE_CAPACITY 32
#define WINDOW 32 /* rolling hash window, in bytes */
#define ANCHOR_MASK 0x3ff /* an anchor every 1 KiB on average */

struct item {
	long seq;
	size_t len;
	unsigned char *data;
	long anchors;
};

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty;
	pthread_cond_t not_full;
	struct item *slot[QUEUE_CAPACITY];
	int head;
	int count;
	int pushers; /* stages that may still push; 0: closed */
};

static struct queue raw_queue; /* producer -> transform */
static struct queue done_queue; /* transform -> consumer */
static uint64_t roll_table[256]; /* written before the threads start */
static long nitems;
static int nworkers;

static void queue_init(struct queue *q, int pushers)
{
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->not_empty, NULL);
	pthread_cond_init(&q->not_full, NULL);
	q->head = 0;
	q->count = 0;
	q->pushers = pushers;
}

static void queue_destroy(struct queue *q)
{
	pthread_cond_destroy(&q->not_full);
	pthread_cond_destroy(&q->not_empty);
	pthread_mutex_destroy(&q->lock);
}

static void queue_push(struct queue *q, struct item *it)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == QUEUE_CAPACITY)
		pthread_cond_wait(&q->not_full, &q->lock);
	q->slot[(q->head + q->count) % QUEUE_CAPACITY] = it;
	q->count++;
	pthread_cond_signal(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

/* Returns NULL once the queue is closed and empty. */
static struct item *queue_pop(struct queue *q)
{
	struct item *it = NULL;

	pthread_mutex_lock(&q->lock);
	while (q->count == 0 && q->pushers > 0)
		pthread_cond_wait(&q->not_empty, &q->lock);
	if (q->count) {
		it = q->slot[q->head];
		q->head = (q->head + 1) % QUEUE_CAPACITY;
		q->count--;
		pthread_cond_signal(&q->not_full);
	}
	pthread_mutex_unlock(&q->lock);
	return it;
}

/* One pusher is done; the last one wakes every waiting popper. */
static void queue_close(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	if (--q->pushers == 0)
		pthread_cond_broadcast(&q->not_empty);
	pthread_mutex_unlock(&q->lock);
}

/* The input of item seq: runs of one byte, of random lengths. */
static struct item *make_item(long seq)
{
	struct item *it = xmalloc(sizeof(*it));
	uint64_t seed = 0x91be11eULL ^ ((uint64_t)seq << 20);
	size_t pos = 0;

	it->seq = seq;
	it->len = MIN_ITEM + splitmix64(&seed) % (MAX_ITEM - MIN_ITEM + 1);
	it->data = xmalloc(it->len);
	it->anchors = 0;
	while (pos < it->len) {
		uint64_t r = splitmix64(&seed);
		size_t run = 1 + (r & 15);

		if (run > it->len - pos)
			run = it->len - pos;
		memset(it->data + pos, (int)(r >> 8) & 0x3f, run);
		pos += run;
	}
	return it;
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/*
 * Count the anchors of a buzhash over a sliding window, then replace the
 * buffer by its run-length encoding ((count, byte) pairs): the input
 * buffer is freed, the output one allocated here.
 */
static void transform(struct item *it)
{
	const unsigned char *in = it->data;
	unsigned char *out = xmalloc(2 * it->len);
	size_t n = 0;
	uint64_t h = 0;

	for (size_t i = 0; i < it->len; i++) {
		h = rotl(h, 1) ^ roll_table[in[i]];
		if (i >= WINDOW)
			h ^= rotl(roll_table[in[i - WINDOW]], WINDOW % 64);
		if (i + 1 >= WINDOW && (h & ANCHOR_MASK) == 0)
			it->anchors++;
	}
	for (size_t i = 0; i < it->len;) {
		size_t run = 1;

		while (i + run < it->len && in[i + run] == in[i] && run < 255)
			run++;
		out[n++] = (unsigned char)run;
		out[n++] = in[i];
		i += run;
	}
	free(it->data);
	it->data = realloc(out, n);
	if (!it->data) {
		fprintf(stderr, "%s: out of memory\n", NAME);
		exit(1);
	}
	it->len = n;
}

/* FNV-1a of an output buffer, folded into the running checksum. */
static uint64_t fold(uint64_t sum, const struct item *it)
{
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < it->len; i++)
		h = (h ^ it->data[i]) * 1099511628211ULL;
	return (sum ^ h) * 0x100000001b3ULL + (uint64_t)it->seq;
}

static void *producer(void *arg)
{
	(void)arg;
	for (long seq = 0; seq < nitems; seq++)
		queue_push(&raw_queue, make_item(seq));
	queue_close(&raw_queue);
	return NULL;
}

static void *transformer(void *arg)
{
	struct item *it;

	(void)arg;
	while ((it = queue_pop(&raw_queue))) {
		transform(it);
		queue_push(&done_queue, it);
	}
	queue_close(&done_queue);
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [-t THREADS] [-s SIZE]\n"
		"  -t THREADS  transform workers (default 2), plus a producer\n"
		"              thread and main as the consumer\n"
		"  -s SIZE     data size factor (default 1.0: %d items)\n",
		NAME, BASE_ITEMS);
}

struct totals {
	uint64_t checksum;
	long items;
	long bytes;
	long anchors;
};

static void account(struct totals *t, struct item *it)
{
	t->checksum = fold(t->checksum, it);
	t->items++;
	t->bytes += (long)it->len;
	t->anchors += it->anchors;
	free(it->data);
	free(it);
}

int main(int argc, char **argv)
{
	struct totals got = { 0 }, want = { 0 };
	struct item **pending; /* the reorder buffer, by sequence number */
	pthread_t prod, *workers;
	long next = 0, duplicates = 0;
	double size = 1.0;
	uint64_t seed = 0x7ab1eULL;
	struct item *it;
	int err;

	nworkers = 2;
	if (workload_args(argc, argv, &nworkers, &size))
		return 2;
	nitems = (long)(BASE_ITEMS * size);
	if (nitems < 1)
		nitems = 1;

	for (int i = 0; i < 256; i++)
		roll_table[i] = splitmix64(&seed);
	pending = calloc(nitems, sizeof(*pending));
	if (!pending) {
		fprintf(stderr, "%s: out of memory\n", NAME);
		return 1;
	}
	queue_init(&raw_queue, 1);
	queue_init(&done_queue, nworkers);

	workers = xmalloc(nworkers * sizeof(*workers));
	err = pthread_create(&prod, NULL, producer, NULL);
	for (int i = 0; i < nworkers && !err; i++)
		err = pthread_create(&workers[i], NULL, transformer, NULL);
	if (err) {
		fprintf(stderr, "%s: pthread_create: %s\n", NAME,
			strerror(err));
		return 1;
	}

	/* The consumer: reorder, then checksum and free in sequence. */
	while ((it = queue_pop(&done_queue))) {
		if (it->seq < next || it->seq >= nitems || pending[it->seq]) {
			duplicates++;
			free(it->data);
			free(it);
			continue;
		}
		pending[it->seq] = it;
		while (next < nitems && pending[next]) {
			account(&got, pending[next]);
			pending[next++] = NULL;
		}
	}

	pthread_join(prod, NULL);
	for (int i = 0; i < nworkers; i++)
		pthread_join(workers[i], NULL);
	queue_destroy(&raw_queue);
	queue_destroy(&done_queue);

	/* The reference: the same steps, one item after the other. */
	for (long seq = 0; seq < nitems; seq++) {
		it = make_item(seq);
		transform(it);
		account(&want, it);
	}

	if (duplicates || got.items != nitems ||
	    got.checksum != want.checksum || got.bytes != want.bytes ||
	    got.anchors != want.anchors) {
		printf("%s threads=%d size=%g check=FAILED\n", NAME, nworkers,
		       size);
		fprintf(stderr,
			"%s: check=FAILED: %ld of %ld items in order, %ld "
			"duplicates; checksum %016lx bytes %ld anchors %ld, "
			"serial %016lx %ld %ld\n",
			NAME, got.items, nitems, duplicates,
			(unsigned long)got.checksum, got.bytes, got.anchors,
			(unsigned long)want.checksum, want.bytes, want.anchors);
		return 1;
	}
	printf("%s threads=%d size=%g check=ok "
	       "result=items=%ld,bytes=%ld,anchors=%ld,checksum=%016lx\n",
	       NAME, nworkers, size, nitems, got.bytes, got.anchors,
	       (unsigned long)got.checksum);

	free(pending);
	free(workers);
	return 0;
}
