/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A context's allocator for out-of-line metadata (Valor's refined cells,
 * FastRCD/FastTrack cells): bump allocation from large chunks, with
 * free lists per size class so that freed metadata is reused.  Nothing
 * goes back to the system before the context is freed (a large block's
 * pages do, its mapping does not), so a racing reader of a recycled
 * object reads stale metadata or zeros, never unmapped memory.  Only
 * metadata slow paths allocate; a mutex is enough.
 */
#ifndef VALOR_CORE_ARENA_H
#define VALOR_CORE_ARENA_H

#include "sys.h"
#include <stddef.h>
#include <stdint.h>

#define ARENA_CHUNK (1UL << 20)
#define ARENA_CLASSES 8 /* size classes of 64 << k bytes... see arena.c */

struct arena_chunk;
struct arena_large;

struct arena {
	struct eng_lock lock;
	struct arena_chunk *chunks;
	struct arena_large *large; /* blocks over the largest class */
	char *cur, *end;
	void *free_list[ARENA_CLASSES];
	uint64_t bytes;
};

void arena_init(struct arena *a);
void arena_fini(struct arena *a);
/*
 * Zeroed, 64-byte aligned, NULL if out of memory.  Blocks above the
 * largest size class get a mapping of their own.
 */
void *arena_alloc(struct arena *a, size_t size);
void arena_free(struct arena *a, void *p, size_t size);

#endif /* VALOR_CORE_ARENA_H */
