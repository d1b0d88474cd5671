// SPDX-License-Identifier: GPL-2.0
/*
 * The oracle checked by hand: small traces whose conflicts and races were
 * worked out on paper from Documentation/semantics.md, plus properties
 * that must hold between the oracles on random traces (every region
 * conflict is a race, SFR regions are finer than RFR ones, disciplined
 * traces are clean).  The differential test is only as good as the
 * oracle, so the oracle gets its own test.
 */
#include "kselftest_harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"
#include "trace.h"
#include "tracegen.h"

#define X 0x1000ULL /* a shared variable (8 bytes) */
#define Y 0x1040ULL /* another one */
#define M1 0x9000ULL /* mutexes */
#define M2 0x9040ULL
#define A1 0x9080ULL /* an atomic flag */

#define NONE ((size_t)-1)

/*
 * An expected key over @len bytes from @addr.  For region read-write keys
 * @who is the reader's trace id and @read_event the index of one of its
 * reads in the region (the region is looked up in the oracle's result);
 * otherwise @who is the later access's event index.
 */
struct want {
	uint32_t kind;
	uint64_t who;
	size_t read_event;
	uint64_t addr;
	uint32_t len;
};

#define EV_KEY(k, ev, a, n)                                                  \
	{                                                                    \
		.kind = VALOR_CONFLICT_##k, .who = (ev), .read_event = NONE, \
		.addr = (a), .len = (n)                                      \
	}
#define RD_KEY(tid, rd, a, n)                                                \
	{                                                                    \
		.kind = VALOR_CONFLICT_RW, .who = (tid), .read_event = (rd), \
		.addr = (a), .len = (n)                                      \
	}

static const char *const analysis_names[] = { "valor", "fastrcd", "fasttrack" };

/*
 * Run the oracle of (@a, @m) on @ev and check that the first conflicting
 * event is @first (NONE: no conflict) and that its keys are exactly @w.
 */
static bool expect(const struct valor_event *ev, size_t n,
		   enum valor_analysis a, enum valor_region_mode m,
		   size_t first, const struct want *w, size_t nw)
{
	struct oracle_key *keys = NULL;
	size_t nkeys = 0, cap = 0;
	struct oracle_result r;
	bool ok = true;

	oracle_run(ev, n, a, m, &r);
	if (r.err) {
		printf("# oracle rejects event %zu: %s\n", r.err_event,
		       r.err_reason);
		oracle_result_free(&r);
		return false;
	}
	for (size_t i = 0; i < nw; i++) {
		for (uint32_t b = 0; b < w[i].len; b++) {
			struct oracle_key k = {
				.kind = oracle_key_kind(a, w[i].kind),
				.who = w[i].who,
				.tag = ORACLE_TAG_EVENT,
				.addr = w[i].addr + b,
			};

			if (w[i].read_event != NONE)
				k.tag = oracle_region_of(&r, w[i].read_event);
			oracle_keys_push(&keys, &nkeys, &cap, &k);
		}
	}
	nkeys = oracle_keys_normalize(keys, nkeys);

	if (r.first != (first == NONE ? n : first)) {
		printf("# first conflict at %zu, expected %zd\n", r.first,
		       first == NONE ? (ssize_t)n : (ssize_t)first);
		ok = false;
	}
	if (nkeys != r.nkeys) {
		ok = false;
	} else {
		for (size_t i = 0; i < nkeys; i++)
			if (oracle_key_cmp(&keys[i], &r.keys[i]))
				ok = false;
	}
	if (!ok) {
		printf("# %s/%s:\n", analysis_names[a],
		       m == VALOR_REGIONS_SFR ? "sfr" : "rfr");
		tracegen_print(ev, n, r.first);
		oracle_keys_print(keys, nkeys, "expected");
		oracle_keys_print(r.keys, r.nkeys, "oracle");
	}
	free(keys);
	oracle_result_free(&r);
	return ok;
}

#define RFR VALOR_REGIONS_RFR
#define SFR VALOR_REGIONS_SFR
#define VALOR VALOR_ANALYSIS_VALOR
#define FASTRCD VALOR_ANALYSIS_FASTRCD
#define FASTTRACK VALOR_ANALYSIS_FASTTRACK

/* The same expectation for Valor and FastRCD in one region mode. */
#define EXPECT_REGIONS(ev, m, first, ...)                                    \
	do {                                                                 \
		const struct want _w[] = { __VA_ARGS__ };                    \
		EXPECT_TRUE(expect(ev, TRACE_LEN(ev), VALOR, m, first, _w,   \
				   TRACE_LEN(_w)));                          \
		EXPECT_TRUE(expect(ev, TRACE_LEN(ev), FASTRCD, m, first, _w, \
				   TRACE_LEN(_w)));                          \
	} while (0)

#define EXPECT_RACES(ev, first, ...)                                         \
	do {                                                                 \
		const struct want _w[] = { __VA_ARGS__ };                    \
		EXPECT_TRUE(expect(ev, TRACE_LEN(ev), FASTTRACK, RFR, first, \
				   _w, TRACE_LEN(_w)));                      \
		EXPECT_TRUE(expect(ev, TRACE_LEN(ev), FASTTRACK, SFR, first, \
				   _w, TRACE_LEN(_w)));                      \
	} while (0)

#define EXPECT_CLEAN(ev)                                                       \
	do {                                                                   \
		EXPECT_TRUE(                                                   \
			expect(ev, TRACE_LEN(ev), VALOR, RFR, NONE, NULL, 0)); \
		EXPECT_TRUE(                                                   \
			expect(ev, TRACE_LEN(ev), VALOR, SFR, NONE, NULL, 0)); \
		EXPECT_TRUE(expect(ev, TRACE_LEN(ev), FASTRCD, RFR, NONE,      \
				   NULL, 0));                                  \
		EXPECT_TRUE(expect(ev, TRACE_LEN(ev), FASTRCD, SFR, NONE,      \
				   NULL, 0));                                  \
		EXPECT_TRUE(expect(ev, TRACE_LEN(ev), FASTTRACK, RFR, NONE,    \
				   NULL, 0));                                  \
	} while (0)

TEST(lock_protected_accesses_are_clean)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_ACQ(0, M1), /* 1 */
		T_WR(0, X, 8), /* 2 */
		T_RD(0, X + 2, 4), /* 3 */
		T_REL(0, M1), /* 4 */
		T_ACQ(1, M1), /* 5 */
		T_RD(1, X, 8), /* 6 */
		T_WR(1, X + 3, 2), /* 7 */
		T_REL(1, M1), /* 8 */
		T_ACQ(0, M1), /* 9 */
		T_WR(0, X, 1), /* 10 */
		T_REL(0, M1), /* 11 */
	};

	EXPECT_CLEAN(ev);
}

TEST(unprotected_write_then_read)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_WR(0, X, 4), /* 1 */
		T_RD(1, X + 2, 4), /* 2: overlaps bytes X+2, X+3 */
		T_WR(1, X + 2, 4), /* 3: never reached */
	};

	EXPECT_REGIONS(ev, RFR, 2, EV_KEY(WR, 2, X + 2, 2));
	EXPECT_REGIONS(ev, SFR, 2, EV_KEY(WR, 2, X + 2, 2));
	EXPECT_RACES(ev, 2, EV_KEY(WR, 2, X + 2, 2));
}

TEST(disjoint_bytes_of_one_cell_never_conflict)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_WR(0, X, 3), /* 1 */
		T_WR(1, X + 3, 5), /* 2 */
		T_RD(0, X + 1, 2), /* 3 */
		T_RD(1, X + 4, 4), /* 4 */
		T_WR(0, X - 8, 11), /* 5: ends at X+2 */
		T_FREE(1, X + 5, 3), /* 6 */
	};

	EXPECT_CLEAN(ev);
}

TEST(write_write_across_cells)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_WR(1, X + 5, 6), /* 1: X+5 .. X+10, crosses a cell */
		T_WR(0, X + 10, 2), /* 2: X+10, X+11: only X+10 is shared */
	};

	EXPECT_REGIONS(ev, RFR, 2, EV_KEY(WW, 2, X + 10, 1));
	EXPECT_RACES(ev, 2, EV_KEY(WW, 2, X + 10, 1));
}

TEST(read_read_never_conflicts)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_CREATE(0, 2), /* 1 */
		T_RD(0, X, 8), /* 2 */
		T_RD(1, X, 8), /* 3 */
		T_RD(2, X + 4, 16), /* 4 */
	};

	EXPECT_CLEAN(ev);
}

/* T1 writes x, T1 acquires m, T2 reads x: Valor paper, Figure 3. */
TEST(rfr_and_sfr_differ_at_acquire)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_CREATE(0, 2), /* 1 */
		T_WR(1, X, 8), /* 2 */
		T_ACQ(1, M1), /* 3: a boundary in SFR only */
		T_RD(2, X, 8), /* 4 */
	};

	EXPECT_REGIONS(ev, RFR, 4, EV_KEY(WR, 4, X, 8));
	EXPECT_REGIONS(ev, SFR, NONE);
	EXPECT_RACES(ev, 4, EV_KEY(WR, 4, X, 8));
}

TEST(rfr_and_sfr_differ_at_join)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_CREATE(0, 2), /* 1 */
		T_EXIT(1), /* 2 */
		T_WR(0, X, 2), /* 3 */
		T_JOIN(0, 1), /* 4: a boundary in SFR only */
		T_WR(2, X + 1, 1), /* 5 */
	};

	EXPECT_REGIONS(ev, RFR, 5, EV_KEY(WW, 5, X + 1, 1));
	EXPECT_REGIONS(ev, SFR, NONE);
	EXPECT_RACES(ev, 5, EV_KEY(WW, 5, X + 1, 1));
}

/* Goldilocks: x handed from T1 to T3 through m1 then m2. */
TEST(happens_before_is_transitive_through_two_locks)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_CREATE(0, 2), /* 1 */
		T_CREATE(0, 3), /* 2 */
		T_WR(1, X, 8), /* 3 */
		T_ACQ(1, M1), /* 4 */
		T_REL(1, M1), /* 5 */
		T_ACQ(2, M1), /* 6 */
		T_ACQ(2, M2), /* 7 */
		T_REL(2, M2), /* 8 */
		T_REL(2, M1), /* 9 */
		T_ACQ(3, M2), /* 10 */
		T_REL(3, M2), /* 11 */
		T_RD(3, X, 8), /* 12 */
		T_WR(3, X, 8), /* 13 */
	};

	EXPECT_CLEAN(ev);
}

/* Without the second hand-off T3 is not ordered after T1's write. */
TEST(unsynchronised_handoff_races_but_does_not_conflict)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_CREATE(0, 2), /* 1 */
		T_CREATE(0, 3), /* 2 */
		T_WR(1, X, 8), /* 3 */
		T_ACQ(1, M1), /* 4 */
		T_REL(1, M1), /* 5 */
		T_ACQ(2, M1), /* 6 */
		T_REL(2, M1), /* 7 */
		T_ACQ(3, M2), /* 8 */
		T_REL(3, M2), /* 9 */
		T_RD(3, X, 8), /* 10 */
	};

	EXPECT_REGIONS(ev, RFR, NONE);
	EXPECT_REGIONS(ev, SFR, NONE);
	EXPECT_RACES(ev, 10, EV_KEY(WR, 10, X, 8));
}

/* A release joins into the sync object's clock, it does not replace it. */
TEST(unpaired_atomic_releases_accumulate)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_CREATE(0, 2), /* 1 */
		T_CREATE(0, 3), /* 2 */
		T_WR(1, X, 4), /* 3 */
		T_EV(VALOR_EV_RELEASE, 1, .addr = A1,
		     .flags = VALOR_EVF_ATOMIC), /* 4 */
		T_WR(3, Y, 4), /* 5 */
		T_EV(VALOR_EV_RELEASE, 3, .addr = A1,
		     .flags = VALOR_EVF_ATOMIC), /* 6 */
		T_EV(VALOR_EV_ACQUIRE, 2, .addr = A1,
		     .flags = VALOR_EVF_ATOMIC), /* 7 */
		T_RD(2, X, 4), /* 8 */
		T_WR(2, Y, 4), /* 9 */
	};

	EXPECT_CLEAN(ev);
}

/* LARD: memory freed by T1 and reused by T2 starts fresh. */
TEST(free_then_reuse_by_another_thread)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_CREATE(0, 2), /* 1 */
		T_RD(1, X, 8), /* 2 */
		T_WR(1, X, 8), /* 3 */
		T_FREE(1, X, 16), /* 4 */
		T_WR(2, X + 4, 8), /* 5 */
		T_RD(2, X, 16), /* 6 */
	};

	EXPECT_CLEAN(ev);
}

/* The free itself is a write: it conflicts with a reader's region. */
TEST(free_is_checked_as_a_write)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_CREATE(0, 2), /* 1 */
		T_RD(1, X + 6, 4), /* 2: X+6 .. X+9 */
		T_WR(2, Y, 1), /* 3 */
		T_EV(VALOR_EV_MUNMAP, 2, .addr = X, .arg = 8), /* 4 */
	};

	EXPECT_REGIONS(ev, RFR, 4, RD_KEY(1, 2, X + 6, 2));
	EXPECT_RACES(ev, 4, EV_KEY(RW, 4, X + 6, 2));
}

/* The read-write key names the reader's region, not the read. */
TEST(read_write_keyed_by_reader_region)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_RD(1, X, 4), /* 1: region A of T1 */
		T_END(1), /* 2 */
		T_RD(1, X + 1, 1), /* 3: region B */
		T_VALIDATE(1), /* 4: does not end B */
		T_RD(1, X + 2, 2), /* 5: region B */
		T_WR(0, X, 8), /* 6 */
	};
	struct oracle_result r;

	EXPECT_REGIONS(ev, RFR, 6, RD_KEY(1, 3, X + 1, 3));
	EXPECT_RACES(ev, 6, EV_KEY(RW, 6, X, 4));

	oracle_run(ev, TRACE_LEN(ev), VALOR, RFR, &r);
	EXPECT_NE(oracle_region_of(&r, 1), oracle_region_of(&r, 3));
	EXPECT_EQ(oracle_region_of(&r, 3), oracle_region_of(&r, 5));
	EXPECT_EQ(UINT64_MAX, oracle_region_of(&r, 7));
	oracle_result_free(&r);
}

/*
 * A read of a cell the reader's region wrote whole before: Valor keeps
 * no log entry for it, so its read-write key is optional for Valor (the
 * write-write key of the same pair of regions stays), and only for it.
 * A read of a cell the region wrote only in part is not.
 */
TEST(read_of_own_whole_cell_is_optional_for_valor)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_WR(1, X, 4), /* 1 */
		T_WR(1, X + 4, 4), /* 2: now all of X's cell */
		T_RD(1, X + 2, 4), /* 3 */
		T_WR(1, Y, 2), /* 4: part of Y's cell */
		T_RD(1, Y, 1), /* 5 */
		T_WR(0, X, 8), /* 6 */
	};
	const struct valor_event ev_y[] = {
		T_CREATE(0, 1),
		T_WR(1, Y, 2),
		T_RD(1, Y, 1),
		T_WR(0, Y, 1),
	};
	struct oracle_result r;
	size_t optional = 0, rw = 0;

	oracle_run(ev, TRACE_LEN(ev), VALOR, RFR, &r);
	ASSERT_EQ(6, r.first);
	for (size_t i = 0; i < r.nkeys; i++) {
		rw += r.keys[i].kind == VALOR_CONFLICT_RW;
		optional += r.keys[i].optional;
		if (r.keys[i].optional)
			EXPECT_EQ(VALOR_CONFLICT_RW, r.keys[i].kind);
	}
	EXPECT_EQ(4, rw);
	EXPECT_EQ(4, optional);
	oracle_result_free(&r);

	oracle_run(ev, TRACE_LEN(ev), FASTRCD, RFR, &r);
	for (size_t i = 0; i < r.nkeys; i++)
		EXPECT_FALSE(r.keys[i].optional);
	oracle_result_free(&r);

	oracle_run(ev_y, TRACE_LEN(ev_y), VALOR, RFR, &r);
	ASSERT_EQ(3, r.first);
	rw = 0;
	for (size_t i = 0; i < r.nkeys; i++) {
		rw += r.keys[i].kind == VALOR_CONFLICT_RW;
		EXPECT_FALSE(r.keys[i].optional);
	}
	EXPECT_EQ(1, rw);
	oracle_result_free(&r);
}

/* Two readers, and a write-write next to them, all at one event. */
TEST(one_event_many_keys)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_CREATE(0, 2), /* 1 */
		T_CREATE(0, 3), /* 2 */
		T_WR(1, X, 1), /* 3 */
		T_RD(2, X + 1, 2), /* 4 */
		T_RD(3, X + 2, 2), /* 5 */
		T_WR(0, X, 4), /* 6 */
	};

	EXPECT_REGIONS(ev, RFR, 6, EV_KEY(WW, 6, X, 1), RD_KEY(2, 4, X + 1, 2),
		       RD_KEY(3, 5, X + 2, 2));
	EXPECT_RACES(ev, 6, EV_KEY(WW, 6, X, 1), EV_KEY(RW, 6, X + 1, 3));
}

/*
 * Witnesses name every earlier access that conflicts.  T1's read happens
 * before T2's write through M1, and both race with T0's write: FastTrack's
 * key says only that the write races on X..X+3, and a report may name
 * either access.  For regions T1's read region is over.
 */
TEST(witnesses_name_every_conflicting_access)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_CREATE(0, 2), /* 1 */
		T_RD(1, X, 4), /* 2 */
		T_REL(1, M1), /* 3 */
		T_ACQ(2, M1), /* 4 */
		T_WR(2, X, 2), /* 5 */
		T_WR(0, X, 8), /* 6 */
	};
	struct oracle_result r;

	EXPECT_REGIONS(ev, RFR, 6, EV_KEY(WW, 6, X, 2));
	EXPECT_RACES(ev, 6, EV_KEY(WW, 6, X, 4));

	oracle_run(ev, TRACE_LEN(ev), FASTTRACK, RFR, &r);
	EXPECT_TRUE(oracle_witnessed(&r, VALOR_CONFLICT_WW, 5, X));
	EXPECT_TRUE(oracle_witnessed(&r, VALOR_CONFLICT_WW, 5, X + 1));
	EXPECT_FALSE(oracle_witnessed(&r, VALOR_CONFLICT_WW, 5, X + 2));
	EXPECT_TRUE(oracle_witnessed(&r, VALOR_CONFLICT_RW, 2, X));
	EXPECT_TRUE(oracle_witnessed(&r, VALOR_CONFLICT_RW, 2, X + 3));
	EXPECT_FALSE(oracle_witnessed(&r, VALOR_CONFLICT_RW, 2, X + 4));
	EXPECT_FALSE(oracle_witnessed(&r, VALOR_CONFLICT_WW, 2, X));
	EXPECT_FALSE(oracle_witnessed(&r, VALOR_CONFLICT_RW, 5, X));
	EXPECT_EQ((size_t)6, r.nwitnesses);
	oracle_result_free(&r);

	oracle_run(ev, TRACE_LEN(ev), FASTRCD, RFR, &r);
	EXPECT_TRUE(oracle_witnessed(&r, VALOR_CONFLICT_WW, 5, X));
	EXPECT_FALSE(oracle_witnessed(&r, VALOR_CONFLICT_RW, 2, X));
	EXPECT_EQ((size_t)2, r.nwitnesses);
	oracle_result_free(&r);
}

/* Only the first conflicting event counts, later ones are not keyed. */
TEST(stops_at_first_conflicting_event)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), /* 0 */
		T_WR(1, X, 1), /* 1 */
		T_REL(1, M1), /* 2 */
		T_WR(1, Y, 1), /* 3 */
		T_RD(0, Y, 1), /* 4: first conflict */
		T_RD(0, X, 1), /* 5: X's writer region ended: clean */
		T_WR(0, Y, 1), /* 6 */
	};

	EXPECT_REGIONS(ev, RFR, 4, EV_KEY(WR, 4, Y, 1));
	/* For FastTrack X was already racy at event 5, but Y comes first. */
	EXPECT_RACES(ev, 4, EV_KEY(WR, 4, Y, 1));
}

TEST(join_orders_and_exit_ends_the_region)
{
	const struct valor_event joined[] = {
		T_CREATE(0, 1), /* 0 */
		T_WR(1, X, 8), /* 1 */
		T_EXIT(1), /* 2 */
		T_JOIN(0, 1), /* 3 */
		T_RD(0, X, 8), /* 4 */
	};
	const struct valor_event not_joined[] = {
		T_CREATE(0, 1), /* 0 */
		T_WR(1, X, 8), /* 1 */
		T_EXIT(1), /* 2 */
		T_RD(0, X, 8), /* 3 */
	};

	EXPECT_CLEAN(joined);
	EXPECT_REGIONS(not_joined, RFR, NONE);
	EXPECT_REGIONS(not_joined, SFR, NONE);
	EXPECT_RACES(not_joined, 3, EV_KEY(WR, 3, X, 8));
}

/* A reused thread id is a new thread, ordered only through the joiner. */
TEST(thread_id_reuse)
{
	const struct valor_event by_joiner[] = {
		T_CREATE(0, 1), /* 0 */
		T_WR(1, X, 8), /* 1 */
		T_EXIT(1), /* 2 */
		T_JOIN(0, 1), /* 3 */
		T_CREATE(0, 1), /* 4 */
		T_WR(1, X, 8), /* 5 */
	};
	const struct valor_event by_other[] = {
		T_CREATE(0, 1), /* 0 */
		T_CREATE(0, 2), /* 1 */
		T_WR(1, X, 8), /* 2 */
		T_EXIT(1), /* 3 */
		T_JOIN(2, 1), /* 4 */
		T_CREATE(0, 1), /* 5 */
		T_WR(1, X, 8), /* 6 */
	};

	EXPECT_CLEAN(by_joiner);
	EXPECT_REGIONS(by_other, RFR, NONE);
	EXPECT_RACES(by_other, 6, EV_KEY(WW, 6, X, 8));
}

/* A thread seen without a create is a root, ordered with nobody. */
TEST(second_root_thread)
{
	const struct valor_event ev[] = {
		T_WR(0, X, 8), /* 0 */
		T_REL(0, M1), /* 1 */
		T_ACQ(5, M1), /* 2 */
		T_RD(5, X, 8), /* 3: ordered through M1 */
		T_WR(0, Y, 8), /* 4 */
		T_RD(5, Y, 8), /* 5 */
	};

	EXPECT_REGIONS(ev, RFR, 5, EV_KEY(WR, 5, Y, 8));
	EXPECT_RACES(ev, 5, EV_KEY(WR, 5, Y, 8));
}

TEST(rejects_what_replay_rejects)
{
	const struct valor_event join_live[] = {
		T_CREATE(0, 1), /* 0 */
		T_JOIN(0, 1), /* 1 */
	};
	const struct valor_event create_live[] = {
		T_CREATE(0, 1), /* 0 */
		T_CREATE(0, 1), /* 1 */
	};
	const struct valor_event after_exit[] = {
		T_CREATE(0, 1), /* 0 */
		T_EXIT(1), /* 1 */
		T_RD(1, X, 1), /* 2 */
	};
	const struct valor_event empty_access[] = {
		T_RD(0, X, 0), /* 0 */
	};
	struct oracle_result r;

	oracle_run(join_live, 2, VALOR, RFR, &r);
	EXPECT_EQ(-EINVAL, r.err);
	EXPECT_EQ((size_t)1, r.err_event);
	oracle_result_free(&r);
	oracle_run(create_live, 2, FASTTRACK, RFR, &r);
	EXPECT_EQ(-EEXIST, r.err);
	oracle_result_free(&r);
	oracle_run(after_exit, 3, FASTRCD, SFR, &r);
	EXPECT_EQ(-EINVAL, r.err);
	EXPECT_EQ((size_t)2, r.err_event);
	oracle_result_free(&r);
	oracle_run(empty_access, 1, VALOR, RFR, &r);
	EXPECT_EQ(-EINVAL, r.err);
	oracle_result_free(&r);
}

/*
 * Relations between the oracles that must hold on every trace: a region
 * conflict is a pair unordered by happens-before (the earlier region has
 * not released since), so FastTrack's first race comes no later; SFR
 * regions are pieces of RFR regions, so SFR's first conflict comes no
 * earlier.  And the generator's promise: nothing before the point where a
 * trace turns sloppy, nothing at all in a disciplined trace.
 */
TEST(oracles_agree_with_each_other_on_random_traces)
{
	struct valor_event ev[TRACEGEN_MAX_EVENTS];
	size_t clean = 0, total = 2000;

	for (size_t i = 0; i < total; i++) {
		struct tracegen_info info;
		size_t n = tracegen_make(tracegen_seed(42, i), ev, &info);
		size_t first[3];
		static const struct {
			enum valor_analysis a;
			enum valor_region_mode m;
		} runs[3] = { { VALOR, RFR },
			      { VALOR, SFR },
			      { FASTTRACK, RFR } };

		for (int j = 0; j < 3; j++) {
			struct oracle_result r;

			first[j] = oracle_run(ev, n, runs[j].a, runs[j].m, &r);
			if (r.err) {
				TH_LOG("trace %zu: event %zu rejected: %s", i,
				       r.err_event, r.err_reason);
				tracegen_print(ev, n, r.err_event);
			}
			ASSERT_EQ(0, r.err);
			if (first[j] < info.sloppy_from) {
				TH_LOG("trace %zu (sloppy %d from %zu)", i,
				       info.sloppy, info.sloppy_from);
				tracegen_print(ev, n, first[j]);
			}
			ASSERT_LE(info.sloppy_from, first[j]);
			oracle_result_free(&r);
		}
		ASSERT_LE(first[0], first[1]);
		if (first[2] > first[0]) {
			TH_LOG("trace %zu: region conflict at %zu, race at %zu",
			       i, first[0], first[2]);
			tracegen_print(ev, n, first[0]);
		}
		ASSERT_LE(first[2], first[0]);
		clean += first[2] == n;
	}
	printf("# %zu of %zu random traces race-free\n", clean, total);
	/* The generator aims at about half; far off means it drifted. */
	EXPECT_LT(total * 3 / 10, clean);
	EXPECT_GT(total * 7 / 10, clean);
}

TEST(same_seed_same_trace)
{
	struct valor_event a[TRACEGEN_MAX_EVENTS], b[TRACEGEN_MAX_EVENTS];
	size_t na = tracegen_make(tracegen_seed(7, 3), a, NULL);
	size_t nb = tracegen_make(tracegen_seed(7, 3), b, NULL);

	ASSERT_EQ(na, nb);
	EXPECT_EQ(0, memcmp(a, b, na * sizeof(a[0])));
	EXPECT_NE(tracegen_seed(7, 3), tracegen_seed(7, 4));
	EXPECT_NE(tracegen_seed(7, 3), tracegen_seed(8, 3));
}

TEST_HARNESS_MAIN
