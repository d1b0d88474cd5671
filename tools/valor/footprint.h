/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How much memory a trace's accesses touch, in 64 KiB chunks, counted
 * up to a limit.  The analyses keep metadata per byte touched (up to 16
 * bytes per byte for FastRCD and FastTrack), so a few hostile events
 * ("write 4 GiB") would otherwise make a replay run for minutes and
 * exhaust memory; the limit turns that into a clear error.
 */
#ifndef VALOR_TOOL_FOOTPRINT_H
#define VALOR_TOOL_FOOTPRINT_H

#include <stdint.h>
#include <stddef.h>

#define FOOTPRINT_CHUNK_SHIFT 16

struct footprint {
	uint64_t *set; /* chunk index + 1; 0 = empty slot */
	size_t cap;
	size_t n;
	uint64_t max_chunks;
};

/* @limit_bytes: how much may be touched (rounded up to whole chunks). */
void footprint_init(struct footprint *f, uint64_t limit_bytes);
void footprint_destroy(struct footprint *f);

/*
 * footprint_add() - count the bytes [@addr, @addr + @size)
 *
 * Return: 0, 1 when the limit is now exceeded, -1 on ENOMEM.
 */
int footprint_add(struct footprint *f, uint64_t addr, uint64_t size);

/*
 * footprint_add_strided() - count @count elements of @size bytes, the
 * k-th at @addr + k * @stride
 *
 * The analyses also work per element, so more elements than the limit
 * has bytes for (a stride of 0 repeated 4 billion times) exceed it too.
 * Return: as footprint_add().
 */
int footprint_add_strided(struct footprint *f, uint64_t addr, uint64_t size,
			  uint64_t stride, uint64_t count);

#endif /* VALOR_TOOL_FOOTPRINT_H */
