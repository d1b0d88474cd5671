/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The differential oracle: a deliberately naive reference implementation
 * of Documentation/semantics.md over an array of struct valor_event.
 *
 * It keeps, for every byte, the list of every access made to it since it
 * was last freed, and decides each new access by scanning that list:
 *  - region conflicts (Valor, FastRCD): an entry of another logical
 *    thread whose region is still the one that made it, one side a write;
 *  - happens-before races (FastTrack): an entry (U, c) of another logical
 *    thread with c > VC_T[U], one side a write, with full vector clocks.
 * It is slow on purpose; it shares no code or idea of representation with
 * the engine, so that the two can only agree by both being right.
 *
 * The oracle stops after the first event at which any conflict occurs:
 * past that point the analyses are allowed to merge or miss conflicts
 * (see "What is exact" in semantics.md).
 *
 * Threads follow the replay driver (valor/replay.h): a thread id seen for
 * the first time without THREAD_CREATE is a root thread, THREAD_CREATE of
 * an id whose previous owner exited starts a fresh logical thread, and
 * THREAD_JOIN only takes an exited thread.
 */
#ifndef VALOR_TESTS_ORACLE_H
#define VALOR_TESTS_ORACLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/valor.h>
#include <valor/engine.h>

/* oracle_key.tag of keys that name a later event (all but region RW). */
#define ORACLE_TAG_EVENT UINT64_MAX

/**
 * enum oracle_key_kind - what a key says about its byte
 * @ORACLE_KEY_WW: region write-write (Valor, FastRCD)
 * @ORACLE_KEY_WR: region write-read
 * @ORACLE_KEY_RW: region read-write
 * @ORACLE_KEY_WRITE_RACES: FastTrack: the later access, a write or a free,
 *                          races with some earlier access (WW or RW)
 * @ORACLE_KEY_READ_RACES:  FastTrack: the later access, a read, races with
 *                          some earlier write (WR)
 *
 * FastTrack forgets reads that happen before a later write, so at a racing
 * write it may name only the write; its keys therefore say only that the
 * byte races (semantics.md, "What is exact").
 */
enum oracle_key_kind {
	ORACLE_KEY_WW = VALOR_CONFLICT_WW,
	ORACLE_KEY_WR = VALOR_CONFLICT_WR,
	ORACLE_KEY_RW = VALOR_CONFLICT_RW,
	ORACLE_KEY_WRITE_RACES,
	ORACLE_KEY_READ_RACES,
	ORACLE_KEY_KINDS
};

/**
 * struct oracle_key - one conflict, as the differential test compares them
 * @kind:  enum oracle_key_kind
 * @who:   the later access's event index, or for region RW the reading
 *         thread's trace id
 * @tag:   ORACLE_TAG_EVENT, or for region RW the reading thread's region
 *         as the oracle numbers them (see oracle_region_of())
 * @addr:  the byte
 * @optional: Valor may leave the key out: a region read-write key of a
 *         read of a cell the reading region had written whole before
 *         the read.  Valor logs no such read (engine.md, "A read of the
 *         region's own write is not logged"): the write that conflicts
 *         with it also conflicts with the region's write, a write-write
 *         key of its own.  Not compared by oracle_key_cmp(); keys that
 *         differ only in it merge into a key that is not optional.
 */
struct oracle_key {
	uint32_t kind;
	uint64_t who;
	uint64_t tag;
	uint64_t addr;
	bool optional;
};

/**
 * struct oracle_witness - an earlier access that conflicts at the first
 * conflicting event
 * @kind:    enum valor_conflict_kind of the pair
 * @earlier: event index of the earlier access
 * @addr:    the byte on which the two conflict
 */
struct oracle_witness {
	uint32_t kind;
	size_t earlier;
	uint64_t addr;
};

/**
 * struct oracle_result - what the oracle found
 * @first:      index of the first event at which a conflict occurs, or the
 *              trace length if there is none (also if the trace is invalid)
 * @keys:       the conflicts of event @first, sorted, without duplicates
 * @nkeys:      number of @keys
 * @witnesses:  every (kind, earlier access, byte) that conflicts with event
 *              @first, sorted, without duplicates
 * @nwitnesses: number of @witnesses
 * @region:     for every event up to @first (inclusive), the region its
 *              thread was in when the event happened (region numbers are
 *              unique over the whole trace, never reused)
 * @nregion:    entries of @region
 * @err:        0, or -EINVAL/-EEXIST when the trace is invalid
 * @err_event:  index of the event that made the trace invalid
 * @err_reason: a short text saying why
 */
struct oracle_result {
	size_t first;
	struct oracle_key *keys;
	size_t nkeys;
	size_t cap;
	struct oracle_witness *witnesses;
	size_t nwitnesses;
	size_t wcap;
	uint64_t *region;
	size_t nregion;
	int err;
	size_t err_event;
	const char *err_reason;
};

/*
 * Run the oracle of @analysis (@mode matters for Valor and FastRCD only)
 * over @ev[0..n).  Returns out->first.  out must be released with
 * oracle_result_free().
 */
size_t oracle_run(const struct valor_event *ev, size_t n,
		  enum valor_analysis analysis, enum valor_region_mode mode,
		  struct oracle_result *out);
void oracle_result_free(struct oracle_result *r);

/*
 * The oracle's region of the thread that made event @event (an index up to
 * out->first), or UINT64_MAX for an index it did not reach.
 */
uint64_t oracle_region_of(const struct oracle_result *r, size_t event);

/* Whether @analysis keys read-write conflicts by the reader's region. */
bool oracle_rw_by_region(enum valor_analysis analysis);

/* The key kind under which @analysis compares a conflict of @kind. */
uint32_t oracle_key_kind(enum valor_analysis analysis, uint32_t kind);

/* Short name of an enum oracle_key_kind ("WW", ..., "W-race"). */
const char *oracle_key_kind_name(uint32_t kind);

/*
 * Whether the access of event @earlier conflicts, as a @kind pair, with
 * event r->first on byte @addr.
 */
bool oracle_witnessed(const struct oracle_result *r, uint32_t kind,
		      size_t earlier, uint64_t addr);

/*
 * Whether some access made in @region (a region number of the oracle's)
 * conflicts, as a @kind pair, with event r->first on byte @addr.
 */
bool oracle_witnessed_in_region(const struct oracle_result *r, uint32_t kind,
				uint64_t region, uint64_t addr);

/* Total order on keys (kind, who, tag, addr). */
int oracle_key_cmp(const struct oracle_key *a, const struct oracle_key *b);

/* Append @k to a growable key vector. */
void oracle_keys_push(struct oracle_key **v, size_t *n, size_t *cap,
		      const struct oracle_key *k);

/* Sort @v and drop duplicates; returns the new count. */
size_t oracle_keys_normalize(struct oracle_key *v, size_t n);

/*
 * Print @v[0..n) as TAP comments, one line per run of consecutive bytes
 * with the same kind, who and tag: "#   WW ev12 bytes 0x10004..0x10007".
 */
void oracle_keys_print(const struct oracle_key *v, size_t n, const char *title);

#endif /* VALOR_TESTS_ORACLE_H */
