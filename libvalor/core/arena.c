// SPDX-License-Identifier: LGPL-2.1-or-later
/* Chunked allocator for engine metadata (see arena.h). */
#include "arena.h"

#include <string.h>
#include <sys/mman.h>

struct arena_chunk {
	struct arena_chunk *next;
	size_t bytes;
};

/* Header of a large block; the block starts 64 bytes in. */
struct arena_large {
	struct arena_large *next, *prev;
	size_t bytes;
};

#define LARGE_HEADER 64

/* Size classes: 64, 128, ..., 8192 bytes. */
static int size_class(size_t size)
{
	size_t c = 64;
	int k = 0;

	while (c < size && k < ARENA_CLASSES - 1) {
		c <<= 1;
		k++;
	}
	return c >= size ? k : -1;
}

static size_t class_bytes(int k)
{
	return (size_t)64 << k;
}

void arena_init(struct arena *a)
{
	memset(a, 0, sizeof(*a));
	eng_lock_init(&a->lock);
}

void arena_fini(struct arena *a)
{
	struct arena_chunk *c = a->chunks;

	while (c) {
		struct arena_chunk *next = c->next;

		munmap(c, c->bytes);
		c = next;
	}
	while (a->large) {
		struct arena_large *l = a->large;

		a->large = l->next;
		munmap(l, l->bytes);
	}
	memset(a, 0, sizeof(*a));
}

static int grow(struct arena *a)
{
	struct arena_chunk *c = mmap(NULL, ARENA_CHUNK, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (c == MAP_FAILED)
		return -1;
	c->bytes = ARENA_CHUNK;
	c->next = a->chunks;
	a->chunks = c;
	a->cur = (char *)c + 64;
	a->end = (char *)c + ARENA_CHUNK;
	a->bytes += ARENA_CHUNK;
	return 0;
}

static void *alloc_large(struct arena *a, size_t size)
{
	size_t bytes = size + LARGE_HEADER;
	struct arena_large *l = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (l == MAP_FAILED)
		return NULL;
	l->bytes = bytes;
	l->prev = NULL;
	eng_lock(&a->lock);
	l->next = a->large;
	if (a->large)
		a->large->prev = l;
	a->large = l;
	a->bytes += bytes;
	eng_unlock(&a->lock);
	return (char *)l + LARGE_HEADER;
}

/*
 * A large block's pages go back to the system, its mapping does not:
 * a racing reader (FastRCD/FastTrack's unlocked read-set check) may
 * still look at it and must read zeros, not fault.  The address space is
 * released with the context.
 */
static void free_large(struct arena *a, void *p)
{
	struct arena_large *l = (void *)((char *)p - LARGE_HEADER);

	eng_zero(p, l->bytes - LARGE_HEADER);
	eng_lock(&a->lock);
	a->bytes -= l->bytes;
	eng_unlock(&a->lock);
}

void *arena_alloc(struct arena *a, size_t size)
{
	int k = size_class(size);
	void *p = NULL;
	size_t n;

	if (k < 0)
		return alloc_large(a, size);
	n = class_bytes(k);
	eng_lock(&a->lock);
	if (a->free_list[k]) {
		p = a->free_list[k];
		a->free_list[k] = *(void **)p;
		eng_unlock(&a->lock);
		memset(p, 0, n);
		return p;
	}
	if ((size_t)(a->end - a->cur) < n && grow(a)) {
		eng_unlock(&a->lock);
		return NULL;
	}
	p = a->cur;
	a->cur += n;
	eng_unlock(&a->lock);
	/* Fresh chunk memory is already zero. */
	return p;
}

void arena_free(struct arena *a, void *p, size_t size)
{
	int k = size_class(size);

	if (!p)
		return;
	if (k < 0) {
		free_large(a, p);
		return;
	}
	eng_lock(&a->lock);
	*(void **)p = a->free_list[k];
	a->free_list[k] = p;
	eng_unlock(&a->lock);
}
