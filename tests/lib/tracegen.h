/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Random multi-threaded event traces for the differential test.
 *
 * A trace is a valid interleaving as the replay driver accepts it: root
 * thread 0 (and, rarely, a second root) creates threads, which create
 * more, exit and are joined by any live thread; thread ids are reused
 * after a join.  Threads take mutexes (never one that another thread
 * holds), release and acquire "atomic" sync objects unpaired, read and
 * write a 48-byte shared area and their own private bytes with sizes 1..16
 * at any offset (misaligned, crossing 8-byte cells), free subranges, and
 * end regions or validate explicitly.  The shared area has a wide twin,
 * 32 times its size and laid out alike (each byte of the one guarded as
 * its 32 bytes of the other): the sweep area, which threads also read
 * and write as sweeps of whole cells, every cell or every other one, so
 * that the analyses' paths for many cells read or written at once (a
 * read log's group entries, write runs) meet the oracle too.
 *
 * About half the traces are disciplined from start to end: every shared
 * access is made under the mutex that guards its bytes (the guarded parts
 * meet inside cells, so byte precision matters), the read-only tail of the
 * area is written only before the first thread is created, and a reused
 * thread id is created only by the thread that joined its previous owner.
 * Such traces have no region conflict and no happens-before race.  The
 * other traces turn sloppy from a random point on and from then break one
 * of those rules now and then, so first conflicts fall anywhere.
 */
#ifndef VALOR_TESTS_TRACEGEN_H
#define VALOR_TESTS_TRACEGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/valor.h>

#define TRACEGEN_MAX_EVENTS 200

#define TRACEGEN_SHARED_BASE 0x10000ULL
#define TRACEGEN_SHARED_SIZE 48
#define TRACEGEN_PRIVATE_BASE 0x20000ULL /* + tid * TRACEGEN_PRIVATE_STRIDE */
#define TRACEGEN_PRIVATE_STRIDE 0x40
#define TRACEGEN_PRIVATE_SIZE 24
#define TRACEGEN_MUTEX_BASE 0x30000ULL /* + i * 0x40 */
#define TRACEGEN_ATOMIC_BASE 0x31000ULL /* + i * 8 */
#define TRACEGEN_SWEEP_SCALE 32
#define TRACEGEN_SWEEP_BASE 0x40000ULL /* read-log groups are 512 bytes */
#define TRACEGEN_SWEEP_SIZE (TRACEGEN_SHARED_SIZE * TRACEGEN_SWEEP_SCALE)

/* splitmix64: a small, well-mixed PRNG (the test never uses rand()). */
struct tracegen_rng {
	uint64_t state;
};

uint64_t tracegen_next(struct tracegen_rng *r);
/* Uniform in [0, n); n > 0. */
uint32_t tracegen_below(struct tracegen_rng *r, uint32_t n);
/* True with probability num/den. */
int tracegen_chance(struct tracegen_rng *r, uint32_t num, uint32_t den);

/* The seed of trace @index of a run whose base seed is @base. */
uint64_t tracegen_seed(uint64_t base, uint64_t index);

/**
 * struct tracegen_info - how a trace was made
 * @sloppy:      whether the trace breaks the discipline at all
 * @sloppy_from: index of the first event that may break it (the trace
 *               length for disciplined traces): no conflict and no race
 *               can occur before it
 */
struct tracegen_info {
	bool sloppy;
	size_t sloppy_from;
};

/*
 * Fill @ev with one random trace of 20..TRACEGEN_MAX_EVENTS events made
 * from @seed alone; returns its length.  @ev holds TRACEGEN_MAX_EVENTS.
 * @info, if not NULL, receives how the trace was made.
 */
size_t tracegen_make(uint64_t seed, struct valor_event *ev,
		     struct tracegen_info *info);

/*
 * Print @ev[0..n) as TAP comments, one event per line, in the form of the
 * tests/lib/trace.h constructors so a failing trace can be pasted into a
 * test as is.  The line of event @mark (if < n) is flagged.
 */
void tracegen_print(const struct valor_event *ev, size_t n, size_t mark);

#endif /* VALOR_TESTS_TRACEGEN_H */
