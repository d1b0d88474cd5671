// SPDX-License-Identifier: GPL-2.0
/* Counting the distinct 64 KiB chunks a trace touches (open addressing). */
#include "footprint.h"

#include <stdlib.h>
#include <string.h>

void footprint_init(struct footprint *f, uint64_t limit_bytes)
{
	uint64_t chunk = 1ULL << FOOTPRINT_CHUNK_SHIFT;

	memset(f, 0, sizeof(*f));
	f->max_chunks = limit_bytes / chunk + (limit_bytes % chunk != 0);
}

void footprint_destroy(struct footprint *f)
{
	free(f->set);
	memset(f, 0, sizeof(*f));
}

static size_t slot_of(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 7) & (cap - 1);
}

static int grow(struct footprint *f)
{
	size_t cap = f->cap ? 2 * f->cap : 1024;
	uint64_t *set = calloc(cap, sizeof(*set));

	if (!set)
		return -1;
	for (size_t i = 0; i < f->cap; i++) {
		size_t j;

		if (!f->set[i])
			continue;
		for (j = slot_of(f->set[i], cap); set[j];
		     j = (j + 1) & (cap - 1))
			;
		set[j] = f->set[i];
	}
	free(f->set);
	f->set = set;
	f->cap = cap;
	return 0;
}

/* Insert chunk @c; 1 if it was new. */
static int insert(struct footprint *f, uint64_t c)
{
	uint64_t key = c + 1;
	size_t j;

	if (2 * (f->n + 1) > f->cap && grow(f) < 0)
		return -1;
	for (j = slot_of(key, f->cap); f->set[j]; j = (j + 1) & (f->cap - 1))
		if (f->set[j] == key)
			return 0;
	f->set[j] = key;
	f->n++;
	return 1;
}

int footprint_add(struct footprint *f, uint64_t addr, uint64_t size)
{
	uint64_t first, last;

	if (size == 0)
		return 0;
	first = addr >> FOOTPRINT_CHUNK_SHIFT;
	last = (addr + (size - 1)) >> FOOTPRINT_CHUNK_SHIFT;
	/* Wider than the whole budget: no need to look. */
	if (last - first >= f->max_chunks)
		return 1;
	for (uint64_t c = first; c <= last; c++) {
		int r = insert(f, c);

		if (r < 0)
			return -1;
		if (f->n > f->max_chunks)
			return 1;
	}
	return 0;
}

int footprint_add_strided(struct footprint *f, uint64_t addr, uint64_t size,
			  uint64_t stride, uint64_t count)
{
	uint64_t budget = f->max_chunks << FOOTPRINT_CHUNK_SHIFT;

	if (size && count > budget / size)
		return 1;
	for (uint64_t k = 0; k < count; k++) {
		int r = footprint_add(f, addr + k * stride, size);

		if (r)
			return r;
	}
	return 0;
}
