// SPDX-License-Identifier: GPL-2.0
/*
 * The engine's API contract (libvalor/include/valor/engine.h, replay.h),
 * beyond the verdicts of the golden traces: parameter checking, thread
 * handles and logical ids over a long lifetime with recycled slots, clocks
 * past 2^32, join and replay errors that must change nothing, the Valor
 * version inspection hook and the statistics counters.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <valor/engine.h>
#include <valor/replay.h>

#include "kselftest_harness.h"
#include "golden.h"
#include "trace.h"

#define X 0x10000ULL
#define Y 0x10040ULL
#define Z 0x10080ULL
#define M 0x900000ULL
#define M2 0x900040ULL

/* Conflicts delivered to a single-threaded test, in order. */
#define SINK_MAX 64
struct sink {
	struct valor_conflict v[SINK_MAX];
	size_t n;
};

static void sink_collect(void *arg, const struct valor_conflict *c)
{
	struct sink *s = arg;

	if (s->n < SINK_MAX)
		s->v[s->n] = *c;
	s->n++;
}

static struct valor_ctx *new_ctx(uint32_t analysis, struct sink *s,
				 struct valor_params *p)
{
	p->analysis = analysis;
	p->on_conflict = sink_collect;
	p->arg = s;
	memset(s, 0, sizeof(*s));
	return valor_ctx_new(p);
}

/* The three analyses, each test of this fixture runs once for each. */
FIXTURE(analysis){};
FIXTURE_VARIANT(analysis)
{
	uint32_t analysis;
};
FIXTURE_VARIANT_ADD(analysis, valor){ .analysis = VALOR };
FIXTURE_VARIANT_ADD(analysis, fastrcd){ .analysis = FASTRCD };
FIXTURE_VARIANT_ADD(analysis, fasttrack){ .analysis = FASTTRACK };
FIXTURE_SETUP(analysis)
{
}
FIXTURE_TEARDOWN(analysis)
{
}

/* ---- parameters ------------------------------------------------------ */

TEST(ctx_new_rejects_bad_params)
{
	static const struct valor_params bad[] = {
		{ .analysis = 7 },
		{ .analysis = VALOR_ANALYSIS_FASTTRACK + 1 },
		{ .regions = 5 },
		{ .regions = VALOR_REGIONS_SFR + 1 },
		{ .max_threads = VALOR_MAX_THREADS + 1 },
		{ .max_threads = UINT32_MAX },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		EXPECT_EQ(NULL, valor_ctx_new(&bad[i]))
		{
			TH_LOG("bad params #%zu accepted", i);
		}
		EXPECT_EQ(EINVAL, errno)
		{
			TH_LOG("bad params #%zu: errno %d", i, errno);
		}
	}
}

TEST(ctx_new_accepts_defaults_and_limits)
{
	static const struct valor_params good[] = {
		{ .analysis = VALOR },
		{ .analysis = FASTRCD, .regions = VALOR_REGIONS_SFR },
		{ .analysis = FASTTRACK },
		{ .max_threads = VALOR_MAX_THREADS },
		{ .max_threads = 1 },
		{ .read_log_entries = 1, .write_log_entries = 1 },
		{ .initial_clock = UINT32_MAX },
	};
	struct valor_ctx *ctx = valor_ctx_new(NULL);

	ASSERT_NE(NULL, ctx);
	valor_ctx_free(ctx);
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		ctx = valor_ctx_new(&good[i]);
		EXPECT_NE(NULL, ctx)
		{
			TH_LOG("good params #%zu rejected: errno %d", i, errno);
		}
		valor_ctx_free(ctx);
	}
}

TEST(names)
{
	EXPECT_STREQ("valor", valor_analysis_name(VALOR));
	EXPECT_STREQ("fastrcd", valor_analysis_name(FASTRCD));
	EXPECT_STREQ("fasttrack", valor_analysis_name(FASTTRACK));
	EXPECT_STREQ("write-write",
		     valor_conflict_kind_name(VALOR_CONFLICT_WW));
	EXPECT_STREQ("write-read", valor_conflict_kind_name(VALOR_CONFLICT_WR));
	EXPECT_STREQ("read-write", valor_conflict_kind_name(VALOR_CONFLICT_RW));
}

/* ---- threads: logical ids, slots, join -------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * 100,000 threads are created, run, exit and are joined one after another
 * through a context that has room for 8 live threads, so slots are
 * recycled thousands of times.  Every thread writes and reads the same
 * word; create and join order them all, so there must be no conflict, and
 * every thread must get a logical id of its own.  A race between the last
 * two threads is still found and names both.
 */
#define MANY_THREADS 100000
TEST_F_TIMEOUT(analysis, logical_ids_unique_over_100k_threads, 120)
{
	struct valor_params p = { .max_threads = 8 };
	struct sink s;
	struct valor_ctx *ctx = new_ctx(variant->analysis, &s, &p);
	struct valor_thread *main_th, *a, *b;
	uint64_t *ids = malloc((MANY_THREADS + 1) * sizeof(*ids));
	uint64_t main_id;

	ASSERT_NE(NULL, ctx);
	ASSERT_NE(NULL, ids);
	main_th = valor_thread_create(ctx, NULL);
	ASSERT_NE(NULL, main_th);
	main_id = valor_thread_id(main_th);
	for (size_t i = 0; i < MANY_THREADS; i++) {
		struct valor_thread *th = valor_thread_create(ctx, main_th);

		ASSERT_NE(NULL, th)
		{
			TH_LOG("thread %zu: errno %d", i, errno);
		}
		ids[i] = valor_thread_id(th);
		valor_access(th, X, 8, false, 1);
		valor_access(th, X, 8, true, 2);
		valor_thread_exit(th);
		ASSERT_EQ(0, valor_thread_join(main_th, th));
		valor_access(main_th, X, 8, false, 3);
	}
	ASSERT_EQ(0, s.n)
	{
		TH_LOG("%s: a false conflict, %s between tids %llu and %llu",
		       valor_analysis_name(variant->analysis),
		       valor_conflict_kind_name(s.v[0].kind),
		       (unsigned long long)s.v[0].first.tid,
		       (unsigned long long)s.v[0].second.tid);
	}

	/* The last two, concurrent: b's read races with a's write. */
	a = valor_thread_create(ctx, main_th);
	b = valor_thread_create(ctx, main_th);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	valor_access(a, Y, 8, true, 10);
	ASSERT_EQ(1, valor_access(b, Y, 8, false, 11));
	ASSERT_EQ(1, s.n);
	EXPECT_EQ(VALOR_CONFLICT_WR, s.v[0].kind);
	EXPECT_EQ(Y, s.v[0].addr);
	EXPECT_EQ(8, s.v[0].size);
	EXPECT_EQ(valor_thread_id(a), s.v[0].first.tid);
	EXPECT_EQ(valor_thread_id(b), s.v[0].second.tid);
	EXPECT_EQ(10, s.v[0].first.site);
	EXPECT_EQ(11, s.v[0].second.site);

	{
		struct valor_stats st;

		valor_ctx_stats(ctx, &st);
		EXPECT_EQ(MANY_THREADS + 3, st.threads_created);
	}
	ids[MANY_THREADS] = main_id;
	qsort(ids, MANY_THREADS + 1, sizeof(*ids), cmp_u64);
	for (size_t i = 1; i <= MANY_THREADS; i++) {
		ASSERT_NE(ids[i - 1], ids[i])
		{
			TH_LOG("logical id %llu given twice",
			       (unsigned long long)ids[i]);
		}
	}
	EXPECT_EQ(NULL, bsearch(&(uint64_t){ valor_thread_id(a) }, ids,
				MANY_THREADS + 1, sizeof(*ids), cmp_u64));
	EXPECT_EQ(NULL, bsearch(&(uint64_t){ valor_thread_id(b) }, ids,
				MANY_THREADS + 1, sizeof(*ids), cmp_u64));
	EXPECT_NE(valor_thread_id(a), valor_thread_id(b));
	free(ids);
	valor_ctx_free(ctx);
}

/*
 * A thread nobody joined: d writes x, exits and is forgotten; e, created
 * next by the same parent, writes x.  Nothing orders d before e, so
 * FastTrack must report a write-write race naming d and e.  d's region
 * ended at its exit: no region conflict.
 *
 * The region analyses run with room for two live threads, so e must get
 * d's slot at once -- and must not be taken for d.  FastTrack hands a
 * slot on only to a creator that joined its previous occupant (a new
 * occupant must not inherit "happens after" from the old one), so it gets
 * a third slot here.
 */
TEST_F(analysis, recycled_slot_of_detached_thread)
{
	struct valor_params p = {
		.max_threads = variant->analysis == FASTTRACK ? 3 : 2,
	};
	struct sink s;
	struct valor_ctx *ctx = new_ctx(variant->analysis, &s, &p);
	struct valor_thread *main_th, *d, *e;
	uint64_t d_id;

	ASSERT_NE(NULL, ctx);
	main_th = valor_thread_create(ctx, NULL);
	ASSERT_NE(NULL, main_th);
	d = valor_thread_create(ctx, main_th);
	ASSERT_NE(NULL, d);
	d_id = valor_thread_id(d);
	valor_access(d, X, 8, true, 1);
	valor_thread_exit(d);
	valor_thread_forget(d);
	e = valor_thread_create(ctx, main_th);
	ASSERT_NE(NULL, e);
	EXPECT_NE(d_id, valor_thread_id(e));
	valor_access(e, X, 8, true, 2);
	if (variant->analysis == FASTTRACK) {
		ASSERT_EQ(1, s.n);
		EXPECT_EQ(VALOR_CONFLICT_WW, s.v[0].kind);
		EXPECT_EQ(d_id, s.v[0].first.tid);
		EXPECT_EQ(valor_thread_id(e), s.v[0].second.tid);
		EXPECT_EQ(1, s.v[0].first.site);
		EXPECT_EQ(2, s.v[0].second.site);
	} else {
		EXPECT_EQ(0, s.n);
	}
	valor_ctx_free(ctx);
}

/* max_threads live threads at once; the next create fails with EAGAIN. */
TEST_F(analysis, max_threads_live)
{
	struct valor_params p = { .max_threads = 8 };
	struct sink s;
	struct valor_ctx *ctx = new_ctx(variant->analysis, &s, &p);
	struct valor_thread *main_th, *th[7];

	ASSERT_NE(NULL, ctx);
	main_th = valor_thread_create(ctx, NULL);
	ASSERT_NE(NULL, main_th);
	for (int i = 0; i < 7; i++) {
		th[i] = valor_thread_create(ctx, main_th);
		ASSERT_NE(NULL, th[i]);
	}
	errno = 0;
	EXPECT_EQ(NULL, valor_thread_create(ctx, main_th));
	EXPECT_EQ(EAGAIN, errno);
	valor_thread_exit(th[3]);
	ASSERT_EQ(0, valor_thread_join(main_th, th[3]));
	th[3] = valor_thread_create(ctx, main_th);
	EXPECT_NE(NULL, th[3]);
	valor_ctx_free(ctx);
}

/*
 * Joining a thread that has not exited fails and orders nothing: the
 * child's write is still unordered with (and, for the region analyses,
 * in an ongoing region at) the parent's later read.
 */
TEST_F(analysis, join_of_live_thread_is_einval)
{
	struct sink s;
	struct valor_params p = { 0 };
	struct valor_ctx *ctx = new_ctx(variant->analysis, &s, &p);
	struct valor_thread *main_th, *child;

	ASSERT_NE(NULL, ctx);
	main_th = valor_thread_create(ctx, NULL);
	child = valor_thread_create(ctx, main_th);
	ASSERT_NE(NULL, child);
	valor_access(child, X, 8, true, 1);
	EXPECT_EQ(-EINVAL, valor_thread_join(main_th, child));
	EXPECT_EQ(1, valor_access(main_th, X, 8, false, 2));
	ASSERT_EQ(1, s.n);
	EXPECT_EQ(VALOR_CONFLICT_WR, s.v[0].kind);
	EXPECT_EQ(valor_thread_id(child), s.v[0].first.tid);
	/* The handle is still good: the thread exits and is joined. */
	valor_access(child, Y, 8, true, 3);
	valor_thread_exit(child);
	EXPECT_EQ(0, valor_thread_join(main_th, child));
	valor_access(main_th, Y, 8, false, 4);
	EXPECT_EQ(1, s.n);
	valor_ctx_free(ctx);
}

/* ---- clocks past 2^32 ------------------------------------------------- */

/*
 * Every thread slot starts at 2^32 - 3 and both threads cross a boundary
 * in each round, so the rounds run the same patterns before, across and
 * after 2^32: a write-read conflict (eager), a read-write conflict (lazy
 * for Valor), and two hand-offs through locks that must stay silent.
 */
#define ROUNDS 8
#define ROUND_EVENTS 12
#define RX(i) (0x100000ULL + 256 * (i))
#define RY(i) (RX(i) + 64)
#define RZ(i) (RX(i) + 128)
#define RW_(i) (RX(i) + 192)
TEST_F(analysis, clocks_past_2_32)
{
	struct valor_params p = {
		.analysis = variant->analysis,
		.initial_clock = (1ULL << 32) - 3,
	};
	struct valor_event ev[ROUNDS * ROUND_EVENTS];
	struct trace_result r;
	bool valor = variant->analysis == VALOR;
	uint64_t last_region = 0;

	for (size_t i = 0; i < ROUNDS; i++) {
		struct valor_event *e = &ev[i * ROUND_EVENTS];

		e[0] = T_WR(1, RX(i), 8);
		e[1] = T_RD(2, RX(i), 8); /* write-read */
		e[2] = T_RD(1, RW_(i), 8);
		e[3] = T_WR(2, RW_(i), 8); /* read-write */
		e[4] = T_WR(1, RY(i), 8);
		e[5] = T_REL(1, M); /* T1: boundary */
		e[6] = T_ACQ(2, M);
		e[7] = T_RD(2, RY(i), 8); /* ordered */
		e[8] = T_WR(2, RZ(i), 8);
		e[9] = T_REL(2, M2); /* T2: boundary */
		e[10] = T_ACQ(1, M2);
		e[11] = T_RD(1, RZ(i), 8); /* ordered */
	}
	ASSERT_EQ(0, trace_run(&p, ev, ROUNDS * ROUND_EVENTS, &r));
	if (r.n != 2 * ROUNDS)
		trace_dump(&r, "clocks_past_2_32");
	ASSERT_EQ(2 * ROUNDS, r.n);
	for (size_t i = 0; i < ROUNDS; i++) {
		size_t base = i * ROUND_EVENTS;
		const struct trace_conflict *wr = NULL, *rw = NULL;

		for (size_t j = 0; j < r.n; j++) {
			if (r.v[j].c.addr == RX(i))
				wr = &r.v[j];
			else if (r.v[j].c.addr == RW_(i))
				rw = &r.v[j];
		}
		ASSERT_NE(NULL, wr)
		{
			TH_LOG("round %zu: write-read missed", i);
		}
		ASSERT_NE(NULL, rw)
		{
			TH_LOG("round %zu: read-write missed", i);
		}
		EXPECT_EQ(VALOR_CONFLICT_WR, wr->c.kind);
		EXPECT_EQ(1, wr->first_tid);
		EXPECT_EQ(2, wr->second_tid);
		EXPECT_EQ(base + 1, wr->reported_at);
		EXPECT_EQ(VALOR_CONFLICT_RW, rw->c.kind);
		EXPECT_EQ(1, rw->first_tid);
		EXPECT_EQ(2, rw->second_tid);
		EXPECT_EQ(base + 2, rw->first_event);
		EXPECT_EQ(base + 3, rw->second_event);
		EXPECT_EQ(valor ? base + 5 : base + 3, rw->reported_at);
		EXPECT_EQ(valor, rw->c.lazy);
		/* T1's region (or clock) of its write: one more each round. */
		EXPECT_LE(p.initial_clock, wr->c.first.region);
		if (i > 0)
			EXPECT_EQ(last_region + 1, wr->c.first.region);
		last_region = wr->c.first.region;
	}
	EXPECT_LT(1ULL << 32, last_region);
	trace_result_free(&r);
}

/* ---- Valor versions ---------------------------------------------------- */

/*
 * A version counts the regions that wrote a byte: the first write of a
 * region bumps it, further writes and reads of the region do not, a new
 * region bumps it again.  Versions are per byte: a 1-byte write leaves
 * the other bytes of its cell alone.
 */
TEST(shadow_version_counts_region_first_writes)
{
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = golden_valor_ctx_two_threads(&t1, &t2);
	uint64_t v;

	ASSERT_NE(NULL, ctx);
	v = valor_shadow_version(ctx, X);
	for (int b = 1; b < 16; b++)
		ASSERT_EQ(v, valor_shadow_version(ctx, X + b));

	valor_access(t1, X, 8, false, 1);
	EXPECT_EQ(v, valor_shadow_version(ctx, X));
	valor_access(t1, X, 8, true, 2);
	for (int b = 0; b < 8; b++)
		EXPECT_EQ(v + 1, valor_shadow_version(ctx, X + b));
	EXPECT_EQ(v, valor_shadow_version(ctx, X + 8));
	valor_access(t1, X, 8, true, 3);
	valor_access(t1, X + 2, 2, true, 4);
	valor_access(t1, X, 8, false, 5);
	for (int b = 0; b < 8; b++)
		EXPECT_EQ(v + 1, valor_shadow_version(ctx, X + b));

	EXPECT_EQ(0, valor_region_end(t1));
	valor_access(t1, X, 8, false, 6);
	EXPECT_EQ(v + 1, valor_shadow_version(ctx, X));
	valor_access(t1, X, 8, true, 7);
	for (int b = 0; b < 8; b++)
		EXPECT_EQ(v + 2, valor_shadow_version(ctx, X + b));
	EXPECT_EQ(0, valor_region_end(t1));

	/* One byte, another thread: only that byte moves. */
	valor_access(t2, X + 3, 1, true, 8);
	EXPECT_EQ(v + 3, valor_shadow_version(ctx, X + 3));
	EXPECT_EQ(v + 2, valor_shadow_version(ctx, X + 2));
	EXPECT_EQ(v + 2, valor_shadow_version(ctx, X + 4));
	/* A misaligned write across two cells. */
	valor_access(t2, X + 6, 4, true, 9);
	EXPECT_EQ(v + 2, valor_shadow_version(ctx, X + 5));
	EXPECT_EQ(v + 3, valor_shadow_version(ctx, X + 6));
	EXPECT_EQ(v + 3, valor_shadow_version(ctx, X + 7));
	EXPECT_EQ(v + 1, valor_shadow_version(ctx, X + 8));
	EXPECT_EQ(v + 1, valor_shadow_version(ctx, X + 9));
	EXPECT_EQ(v, valor_shadow_version(ctx, X + 10));
	valor_ctx_free(ctx);
}

/*
 * A write of many cells takes them in place, even cells two at a time:
 * each cell gets one past its own version, once per region, whether it
 * was taken in a pair or alone, and keeps its place in the pair.
 */
TEST(a_long_write_takes_each_cell_once_in_pairs_or_alone)
{
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = golden_valor_ctx_two_threads(&t1, &t2);
	uint64_t v;

	ASSERT_NE(NULL, ctx);
	v = valor_shadow_version(ctx, X);
	/* Cell X + 24 is a write ahead of its neighbours. */
	valor_access(t2, X + 24, 8, true, 1);
	EXPECT_EQ(0, valor_region_end(t2));
	/* Five cells from an odd one: alone, two pairs. */
	valor_access(t1, X + 8, 40, true, 2);
	valor_access(t1, X + 8, 40, true, 3);
	for (int b = 8; b < 48; b++) {
		EXPECT_EQ(b >= 24 && b < 32 ? v + 2 : v + 1,
			  valor_shadow_version(ctx, X + b))
		{
			TH_LOG("byte %d", b);
		}
	}
	EXPECT_EQ(v, valor_shadow_version(ctx, X));
	EXPECT_EQ(v, valor_shadow_version(ctx, X + 48));
	/* Owned: another thread's read of each of them conflicts. */
	for (int c = 8; c < 48; c += 8)
		EXPECT_EQ(1, valor_access(t2, X + c, 8, false, 4));
	EXPECT_EQ(0, valor_region_end(t1));
	valor_access(t1, X + 8, 40, true, 5);
	for (int b = 8; b < 48; b++)
		EXPECT_EQ(b >= 24 && b < 32 ? v + 3 : v + 2,
			  valor_shadow_version(ctx, X + b));
	valor_ctx_free(ctx);
}

/*
 * A free bumps every cell of its range by one, whether two cells go at
 * once or one at a time (a refined cell, one another region owns), and
 * reports the cell another region owns.
 */
TEST(a_free_bumps_each_cell_once_in_pairs_or_alone)
{
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = golden_valor_ctx_two_threads(&t1, &t2);
	uint64_t v;

	ASSERT_NE(NULL, ctx);
	v = valor_shadow_version(ctx, X);
	/* t1 writes X .. X + 64; X + 24 again in a region of its own. */
	valor_access(t1, X, 64, true, 1);
	EXPECT_EQ(0, valor_region_end(t1));
	valor_access(t1, X + 24, 8, true, 2);
	EXPECT_EQ(0, valor_region_end(t1));
	/* X + 40 split in bytes, X + 48 owned by t1 now. */
	valor_access(t1, X + 40, 1, true, 3);
	EXPECT_EQ(0, valor_region_end(t1));
	valor_access(t2, X + 41, 1, true, 4);
	EXPECT_EQ(0, valor_region_end(t2));
	valor_access(t1, X + 48, 8, true, 5);
	EXPECT_EQ(1, valor_free(t2, X + 8, 56, 6));
	for (int b = 0; b < 64; b++) {
		uint64_t want = v + 1;

		if (b >= 8)
			want++; /* the free */
		/* A second write before it; a cell's bytes freed whole all
		 * go one past the highest of them. */
		if ((b >= 24 && b < 32) || (b >= 40 && b < 56))
			want++;
		EXPECT_EQ(want, valor_shadow_version(ctx, X + b))
		{
			TH_LOG("byte %d", b);
		}
	}
	valor_ctx_free(ctx);
}

static struct valor_stats stats_of(struct valor_ctx *ctx)
{
	struct valor_stats st;

	valor_ctx_stats(ctx, &st);
	return st;
}

static uint64_t reads_logged(struct valor_ctx *ctx)
{
	return stats_of(ctx).reads_logged;
}

/*
 * A region's read of a cell it wrote whole takes no log entry
 * (engine.md): no other thread can write the cell before the region
 * ends without conflicting with the region's write.  A cell written in
 * part is logged as any other; and once a free ends the region's
 * ownership, the filter must not vouch for the cell any more.
 */
TEST(a_read_of_the_regions_own_write_is_not_logged)
{
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = golden_valor_ctx_two_threads(&t1, &t2);
	const uint64_t part = X + 64, apart = X + 0x8000; /* another group */
	uint64_t n;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, valor_access(t1, X, 8, true, 1));
	n = reads_logged(ctx);
	ASSERT_EQ(0, valor_access(t1, X, 8, false, 2));
	ASSERT_EQ(0, valor_access(t1, X + 2, 2, false, 3));
	EXPECT_EQ(n, reads_logged(ctx));
	ASSERT_EQ(0, valor_access(t1, part, 4, true, 4));
	ASSERT_EQ(0, valor_access(t1, part, 8, false, 5));
	EXPECT_EQ(n + 1, reads_logged(ctx));
	ASSERT_EQ(0, valor_access(t1, apart, 8, true, 6));
	ASSERT_EQ(0, valor_access(t1, apart, 8, false, 7));
	EXPECT_EQ(n + 1, reads_logged(ctx));
	EXPECT_EQ(0, valor_free(t1, apart, 8, 8));
	ASSERT_EQ(0, valor_access(t1, apart, 8, false, 9));
	EXPECT_EQ(n + 2, reads_logged(ctx));
	/* The other thread's write still conflicts: with the write. */
	EXPECT_EQ(1, valor_access(t2, X + 4, 4, true, 10));
	valor_ctx_free(ctx);
}

/*
 * Valor logs a read once per region: repeated reads of bytes the log
 * holds add nothing, whether the read spans cells or not, other bytes
 * of the cell do, and a region end starts over.  The filter that
 * decides this must keep a matrix column (one cell every KiB) and a
 * long sweep, not only the last few cells.
 */
TEST(read_log_holds_a_read_once_per_region)
{
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = golden_valor_ctx_two_threads(&t1, &t2);
	const uint64_t col = 0x400000, sweep = 0x800000;
	uint64_t n;

	ASSERT_NE(NULL, ctx);
	n = reads_logged(ctx);
	for (int i = 0; i < 3; i++)
		valor_access(t1, X, 8, false, 1);
	valor_access(t1, X + 2, 2, false, 2);
	EXPECT_EQ(n + 1, reads_logged(ctx));
	valor_access(t1, X + 8, 4, false, 3);
	valor_access(t1, X + 12, 4, false, 4);
	valor_access(t1, X + 8, 8, false, 5);
	EXPECT_EQ(n + 2, reads_logged(ctx));
	EXPECT_EQ(0, valor_region_end(t1));
	valor_access(t1, X, 8, false, 6);
	EXPECT_EQ(n + 3, reads_logged(ctx));
	/*
	 * A value across two cells (a complex double, a struct copy): one
	 * entry, since one site read both cells whole.
	 */
	for (int i = 0; i < 3; i++)
		valor_access(t1, X + 16, 16, false, 10);
	valor_access(t1, X + 20, 8, false, 11);
	EXPECT_EQ(n + 4, reads_logged(ctx));

	n = reads_logged(ctx);
	for (int pass = 0; pass < 3; pass++)
		for (uint64_t row = 0; row < 256; row++)
			valor_access(t1, col + row * 1024, 8, false, 7);
	EXPECT_EQ(n + 256, reads_logged(ctx));

	/* A sweep: one entry per group of 64 cells. */
	n = reads_logged(ctx);
	for (int pass = 0; pass < 2; pass++)
		for (uint64_t c = 0; c < 16384; c++)
			valor_access(t1, sweep + c * 8, 8, false, 8);
	EXPECT_EQ(n + 16384 / 64, reads_logged(ctx));
	/*
	 * The same over an array of ints, and one of bytes: as the scan
	 * leaves a cell read whole, the cell joins its group's entry.
	 */
	n = reads_logged(ctx);
	for (uint64_t i = 0; i < 2048; i++)
		valor_access(t1, sweep + 0x40000 + i * 4, 4, false, 12);
	EXPECT_EQ(n + 1024 / 64, reads_logged(ctx));
	n = reads_logged(ctx);
	for (uint64_t i = 0; i < 256; i++)
		valor_access(t1, sweep + 0x80000 + i, 1, false, 13);
	EXPECT_EQ(n + 1, reads_logged(ctx)); /* 32 cells of one group */
	/* Another site's bytes: an entry of their own. */
	valor_access(t1, sweep + 0x80000 + 256, 1, false, 14);
	EXPECT_EQ(n + 2, reads_logged(ctx));

	/*
	 * Other threads' writes still end up reported at validation: in
	 * the sweep of cells, in the sweep of bytes (a cell it left and the
	 * cell it stopped in), and not on the group's bytes nobody read.
	 */
	valor_access(t2, sweep + 8 * 100, 8, true, 9);
	valor_access(t2, sweep + 0x80000 + 77, 1, true, 15);
	valor_access(t2, sweep + 0x80000 + 255, 1, true, 16);
	valor_access(t2, sweep + 0x80000 + 300, 8, true, 17);
	EXPECT_EQ(3, valor_region_end(t1));
	valor_ctx_free(ctx);
}

/*
 * A cell whose halves two regions own at once is kept per byte; reading
 * it again in a region must still cost no entry, and a later write of
 * one of its bytes by the other thread must still be found.
 */
TEST(read_log_holds_a_read_of_a_split_cell_once_per_region)
{
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = golden_valor_ctx_two_threads(&t1, &t2);
	struct valor_stats st;
	uint64_t n;

	ASSERT_NE(NULL, ctx);
	valor_access(t1, X, 4, true, 1);
	valor_access(t2, X + 4, 4, true, 2);
	EXPECT_EQ(0, valor_region_end(t1));
	EXPECT_EQ(0, valor_region_end(t2));
	valor_ctx_stats(ctx, &st);
	ASSERT_EQ(1, st.cells_refined);

	valor_access(t1, X + 4, 4, false, 3);
	n = reads_logged(ctx);
	for (int i = 0; i < 3; i++) {
		valor_access(t1, X + 4, 4, false, 4);
		valor_access(t1, X + 5, 2, false, 5);
	}
	EXPECT_EQ(n, reads_logged(ctx));
	valor_access(t1, X, 1, false, 6);
	EXPECT_LT(n, reads_logged(ctx));

	valor_access(t2, X + 6, 1, true, 7);
	EXPECT_EQ(1, valor_region_end(t1));
	valor_ctx_free(ctx);
}

/*
 * The read filter's entry for a chunk of 128 cells starts over in each
 * region, for every cell of it: a read that a previous region logged is
 * logged again, so another thread's write of it is a read-write
 * conflict at this region's end.
 */
TEST(read_filter_starts_over_in_each_region)
{
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = golden_valor_ctx_two_threads(&t1, &t2);
	const uint64_t chunk = 0xa00000; /* 1 KiB aligned */

	ASSERT_NE(NULL, ctx);
	for (unsigned k = 0; k < 128; k++) {
		uint64_t cell = chunk + 8 * k,
			 other = chunk + 8 * ((k + 1) % 128);

		EXPECT_EQ(0, valor_access(t1, cell, 8, false, 1));
		EXPECT_EQ(0, valor_region_end(t1));
		EXPECT_EQ(0, valor_access(t1, other, 8, false, 2));
		EXPECT_EQ(0, valor_access(t1, cell, 8, false, 3));
		EXPECT_EQ(0, valor_access(t2, cell, 8, true, 4));
		EXPECT_EQ(1, valor_region_end(t1))
		{
			TH_LOG("cell %u of the chunk", k);
		}
		EXPECT_EQ(0, valor_region_end(t2));
	}
	valor_ctx_free(ctx);
}

static uint64_t cells_refined(struct valor_ctx *ctx)
{
	return stats_of(ctx).cells_refined;
}

/*
 * Halves of a cell written one region after another stay in one word,
 * whoever wrote the cell before: an int array that one thread fills and
 * others update element by element (k-means' assignments, a radix
 * sort's keys).  Each byte still keeps its own version, and a read of
 * either half still finds the other thread's later write of it.
 */
TEST(halves_written_in_turn_keep_a_cell_compact)
{
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = golden_valor_ctx_two_threads(&t1, &t2);
	uint64_t v;

	ASSERT_NE(NULL, ctx);
	valor_access(t1, X, 8, true, 1);
	EXPECT_EQ(0, valor_region_end(t1));
	v = valor_shadow_version(ctx, X);

	/* Another thread rewrites it int by int. */
	valor_access(t2, X, 4, true, 2);
	EXPECT_EQ(v + 1, valor_shadow_version(ctx, X));
	EXPECT_EQ(v, valor_shadow_version(ctx, X + 4));
	valor_access(t2, X + 4, 4, true, 3);
	EXPECT_EQ(v + 1, valor_shadow_version(ctx, X + 4));
	EXPECT_EQ(0, valor_region_end(t2));

	/* One half changes in a region, the other in the next. */
	valor_access(t1, X + 4, 4, true, 4);
	EXPECT_EQ(0, valor_region_end(t1));
	valor_access(t2, X, 4, true, 5);
	for (int b = 0; b < 8; b++)
		EXPECT_EQ(v + 2, valor_shadow_version(ctx, X + b));
	EXPECT_EQ(0, valor_region_end(t2));
	/* The same half again, then the other. */
	valor_access(t1, X + 4, 4, true, 6);
	EXPECT_EQ(v + 3, valor_shadow_version(ctx, X + 4));
	EXPECT_EQ(v + 2, valor_shadow_version(ctx, X));
	EXPECT_EQ(0, valor_region_end(t1));
	valor_access(t2, X, 4, true, 7);
	for (int b = 0; b < 8; b++)
		EXPECT_EQ(v + 3, valor_shadow_version(ctx, X + b));
	EXPECT_EQ(0, valor_region_end(t2));
	EXPECT_EQ(0, cells_refined(ctx));

	/* The verdicts: a write of the half read is found, ... */
	valor_access(t1, X + 4, 4, true, 8);
	EXPECT_EQ(0, valor_region_end(t1));
	valor_access(t2, X, 4, true, 9);
	EXPECT_EQ(0, valor_region_end(t2));
	valor_access(t1, X, 8, false, 10);
	valor_access(t2, X + 4, 4, true, 11);
	EXPECT_EQ(0, valor_region_end(t2));
	EXPECT_EQ(1, valor_region_end(t1));
	/* ... the reader's own write of it is not a conflict, ... */
	valor_access(t2, X, 4, true, 12);
	EXPECT_EQ(0, valor_region_end(t2));
	valor_access(t1, X, 8, false, 13);
	valor_access(t1, X, 4, true, 14);
	EXPECT_EQ(0, valor_region_end(t1));
	/* ... and a write the other thread made in between is. */
	valor_access(t1, X + 4, 4, false, 15);
	valor_access(t2, X + 4, 4, true, 16);
	EXPECT_EQ(0, valor_region_end(t2));
	valor_access(t1, X + 4, 4, true, 17);
	EXPECT_EQ(1, valor_region_end(t1));
	EXPECT_EQ(0, cells_refined(ctx));
	valor_ctx_free(ctx);
}

TEST(shadow_version_is_zero_for_other_analyses)
{
	static const uint32_t others[] = { FASTRCD, FASTTRACK };

	for (int i = 0; i < 2; i++) {
		struct valor_params p = { .analysis = others[i] };
		struct valor_ctx *ctx = valor_ctx_new(&p);
		struct valor_thread *t;

		ASSERT_NE(NULL, ctx);
		t = valor_thread_create(ctx, NULL);
		valor_access(t, X, 8, true, 1);
		valor_region_end(t);
		valor_access(t, X, 8, true, 2);
		EXPECT_EQ(0, valor_shadow_version(ctx, X));
		valor_ctx_free(ctx);
	}
}

/* ---- statistics --------------------------------------------------------- */

#define CELL(i) (0x200000ULL + 64 * (i))
TEST(stats_counters_move_as_documented)
{
	struct valor_params p = {
		.read_log_entries = 4,
		.write_log_entries = 4,
	};
	struct sink s;
	struct valor_ctx *ctx = new_ctx(VALOR, &s, &p);
	struct valor_stats st0, st;
	struct valor_thread *t1, *t2, *child;

	ASSERT_NE(NULL, ctx);
	valor_ctx_stats(ctx, &st0);
	EXPECT_EQ(0, st0.conflicts);
	EXPECT_EQ(0, st0.threads_created);
	EXPECT_EQ(0, st0.version_bumps);
	EXPECT_EQ(0, st0.read_log_overflows);
	EXPECT_EQ(0, st0.write_log_overflows);
	EXPECT_EQ(0, st0.cells_refined);

	t1 = valor_thread_create(ctx, NULL);
	t2 = valor_thread_create(ctx, NULL);
	ASSERT_NE(NULL, t1);
	ASSERT_NE(NULL, t2);
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(2, st.threads_created);

	/* Three distinct cells, each written twice in one region. */
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 3; i++)
			valor_access(t1, CELL(i), 8, true, 1);
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(3, st.version_bumps);
	EXPECT_EQ(0, st.write_log_overflows);
	EXPECT_LT(0, st.shadow_bytes);

	/* A region end and a validation with something to validate. */
	st0 = st;
	valor_access(t1, CELL(10), 8, false, 2);
	EXPECT_EQ(0, valor_region_end(t1));
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(st0.regions + 1, st.regions);
	EXPECT_LT(st0.validations, st.validations);
	st0 = st;
	valor_access(t1, CELL(10), 8, false, 3);
	EXPECT_EQ(0, valor_validate(t1));
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(st0.validations + 1, st.validations);
	EXPECT_EQ(st0.regions, st.regions);

	/*
	 * Ten cells of distinct groups (512 bytes) read in one region: the
	 * 4-entry log fills twice.
	 */
	EXPECT_EQ(0, valor_region_end(t1));
	valor_ctx_stats(ctx, &st0);
	for (int i = 0; i < 10; i++)
		valor_access(t1, 0x400000 + 512 * i, 8, false, 4);
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(st0.read_log_overflows + 2, st.read_log_overflows);

	/*
	 * Ten cells in a row written in one region: the 4-entry write set
	 * spills half of itself three times, and the region goes on.
	 */
	EXPECT_EQ(0, valor_region_end(t1));
	valor_ctx_stats(ctx, &st0);
	for (int i = 0; i < 10; i++)
		valor_access(t1, 0x300000 + 8 * i, 8, true, 5);
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(st0.write_log_overflows + 3, st.write_log_overflows);
	EXPECT_EQ(st0.version_bumps + 10, st.version_bumps);
	EXPECT_EQ(st0.regions, st.regions);

	/* Two threads writing different bytes of one cell split it. */
	EXPECT_EQ(0, valor_region_end(t1));
	valor_ctx_stats(ctx, &st0);
	valor_access(t1, CELL(60), 1, true, 6);
	valor_access(t2, CELL(60) + 1, 1, true, 7);
	valor_ctx_stats(ctx, &st);
	EXPECT_LT(st0.cells_refined, st.cells_refined);
	EXPECT_EQ(0, s.n);

	/* One conflict: counted once, delivered once. */
	EXPECT_EQ(1, valor_access(t2, CELL(60), 1, false, 8));
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(1, st.conflicts);
	EXPECT_EQ(1, s.n);

	/* Counters survive the threads that moved them. */
	st0 = st;
	child = valor_thread_create(ctx, t1);
	ASSERT_NE(NULL, child);
	valor_access(child, CELL(70), 8, true, 9);
	valor_thread_exit(child);
	ASSERT_EQ(0, valor_thread_join(t1, child));
	valor_thread_exit(t2);
	valor_thread_forget(t2);
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(3, st.threads_created);
	EXPECT_EQ(st0.version_bumps + 1, st.version_bumps);
	EXPECT_LE(st0.regions, st.regions);
	EXPECT_LE(st0.validations, st.validations);
	EXPECT_LE(st0.read_log_overflows, st.read_log_overflows);
	EXPECT_LE(st0.write_log_overflows, st.write_log_overflows);
	EXPECT_LE(st0.cells_refined, st.cells_refined);
	EXPECT_EQ(st0.conflicts, st.conflicts);
	valor_ctx_free(ctx);
}

/* A Valor context from @p with two threads without a parent. */
static struct valor_ctx *valor_ctx_two_roots(struct sink *s,
					     struct valor_params *p,
					     struct valor_thread **t1,
					     struct valor_thread **t2)
{
	struct valor_ctx *ctx = new_ctx(VALOR, s, p);

	*t1 = ctx ? valor_thread_create(ctx, NULL) : NULL;
	*t2 = ctx ? valor_thread_create(ctx, NULL) : NULL;
	return ctx;
}

/* A Valor context with defaults and two threads without a parent. */
FIXTURE(two_roots)
{
	struct sink s;
	struct valor_params p;
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx;
};

/*
 * A region's first few entries (16, RFILTER_YOUNG_ENTRIES) put their
 * cells in the read filter at their second read only: reads of 64 cells
 * far from the tests' addresses, each its own entry, take @th's region
 * past them.
 */
static void past_young_reads(struct valor_thread *th)
{
	for (uint64_t k = 0; k < 64; k++)
		valor_access(th, 0x4000000ULL + 512 * k, 8, false, 99);
}

FIXTURE_SETUP(two_roots)
{
	memset(&self->p, 0, sizeof(self->p));
	self->ctx =
		valor_ctx_two_roots(&self->s, &self->p, &self->t1, &self->t2);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_NE(NULL, self->t1);
	ASSERT_NE(NULL, self->t2);
}

FIXTURE_TEARDOWN(two_roots)
{
	if (self->ctx)
		valor_ctx_free(self->ctx);
}

/*
 * A re-read of bytes the region has read already is not looked at again,
 * even when another region owns them now: that region's write conflicts
 * with the first read, and validation reports it, naming the first
 * read's site; the re-read adds no report of its own.  Bytes a region
 * has not read are still checked at the read.
 */
TEST_F(two_roots, reread_of_logged_bytes_is_reported_at_validation)
{
	EXPECT_EQ(0, valor_access(self->t1, X, 4, false, 1));
	EXPECT_EQ(0, valor_access(self->t2, X, 8, true, 2));
	/* The logged half: nothing yet. */
	EXPECT_EQ(0, valor_access(self->t1, X, 4, false, 3));
	EXPECT_EQ(0, self->s.n);
	/* The first read's conflict, when t1's region ends. */
	EXPECT_EQ(1, valor_region_end(self->t1));
	ASSERT_EQ(1, self->s.n);
	EXPECT_EQ(VALOR_CONFLICT_RW, self->s.v[0].kind);
	EXPECT_EQ(1, self->s.v[0].first.site);
	EXPECT_EQ(2, self->s.v[0].second.site);
	/* A new region has read nothing: write-read, at the read. */
	EXPECT_EQ(1, valor_access(self->t1, X, 4, false, 4));
	ASSERT_EQ(2, self->s.n);
	EXPECT_EQ(VALOR_CONFLICT_WR, self->s.v[1].kind);
	EXPECT_EQ(2, self->s.v[1].first.site);
	EXPECT_EQ(4, self->s.v[1].second.site);
	EXPECT_EQ(0, valor_region_end(self->t2));
}

/*
 * A free of a large block leaves the words of cells no thread wrote at
 * version 0 (their shadow pages may stay the kernel's zero page) and
 * bumps the others.  A read of a left cell from before the free is
 * reported against the free, as the bump would have been at validation:
 * here sooner, when the reader next logs a read at version 0 and looks
 * at the free first.  That read, after the free, is not reported.
 */
TEST_F(two_roots,
       a_large_free_leaves_unwritten_cells_and_reports_reads_before_it)
{
	const uint64_t B = X + (1ULL << 20), size = 128 << 10;

	EXPECT_EQ(0, valor_access(self->t1, B + 0x1000, 8, false, 1));
	EXPECT_EQ(0, valor_access(self->t2, B + 0x2000, 8, true, 2));
	EXPECT_EQ(0, valor_region_end(self->t2));
	EXPECT_EQ(0, valor_free(self->t2, B, size, 3));
	EXPECT_EQ(0, valor_shadow_version(self->ctx, B + 0x1000));
	EXPECT_EQ(2, valor_shadow_version(self->ctx, B + 0x2000));
	EXPECT_EQ(1, valor_access(self->t1, B + 0x3000, 8, false, 4));
	EXPECT_EQ(0, valor_region_end(self->t1));
	ASSERT_EQ(1, self->s.n);
	EXPECT_EQ(VALOR_CONFLICT_RW, self->s.v[0].kind);
	EXPECT_EQ(B + 0x1000, self->s.v[0].addr);
	EXPECT_EQ(8, self->s.v[0].size);
	EXPECT_EQ(1, self->s.v[0].first.site);
	EXPECT_EQ(3, self->s.v[0].second.site);
	EXPECT_TRUE(self->s.v[0].second.is_write);
	EXPECT_EQ(valor_thread_id(self->t2), self->s.v[0].second.tid);
	/* A new region's read of a left cell is a read like any other. */
	EXPECT_EQ(0, valor_access(self->t1, B + 0x1000, 8, false, 5));
	EXPECT_EQ(0, valor_region_end(self->t1));
	EXPECT_EQ(1, self->s.n);
}

/*
 * The frees published for a reader that has not looked at them yet are
 * kept: past 64 of them, a large free bumps every cell as a small one
 * does, and the reader's earlier reads are reported either way.
 */
TEST_F(two_roots, a_reader_behind_on_64_large_frees_makes_the_next_bump_all)
{
	const uint64_t B = X + (1ULL << 20), size = 64 << 10;
	const uint64_t last = B + 64 * size;

	EXPECT_EQ(0, valor_access(self->t1, B, 8, false, 1));
	EXPECT_EQ(0, valor_access(self->t1, last, 8, false, 2));
	for (uint64_t i = 0; i <= 64; i++)
		EXPECT_EQ(0, valor_free(self->t2, B + i * size, size, 10 + i));
	EXPECT_EQ(0, valor_shadow_version(self->ctx, B));
	EXPECT_EQ(1, valor_shadow_version(self->ctx, last));
	EXPECT_EQ(2, valor_region_end(self->t1));
	ASSERT_EQ(2, self->s.n);
	for (size_t i = 0; i < 2; i++) {
		const struct valor_conflict *c = &self->s.v[i];

		EXPECT_EQ(VALOR_CONFLICT_RW, c->kind);
		EXPECT_EQ(c->addr == B ? 1 : 2, c->first.site);
		EXPECT_EQ(c->addr == B ? 10 : 74, c->second.site);
	}
	/* With t1's log empty, the ring is free again. */
	EXPECT_EQ(0, valor_free(self->t2, B, size, 80));
	EXPECT_EQ(0, valor_shadow_version(self->ctx, B));
}

/*
 * A read-modify-write of the two ints of a cell (read one, write it,
 * read the other, write it: a loop updating an int array) logs the cell
 * once when one site reads both, written before or never: the second
 * read finds its half at the version the first read saw.  That entry
 * still finds another thread's write of the second half, and names the
 * read; a read of it by another site keeps an entry of its own.
 */
TEST_F(two_roots, read_modify_write_of_halves_logs_the_cell_once)
{
	uint64_t n;

	EXPECT_EQ(0, valor_access(self->t1, X, 8, true, 1));
	EXPECT_EQ(0, valor_region_end(self->t1));

	n = reads_logged(self->ctx);
	for (uint64_t cell = X; cell <= X + 8; cell += 8) {
		for (uint64_t half = cell; half < cell + 8; half += 4) {
			EXPECT_EQ(0, valor_access(self->t1, half, 4, false, 2));
			EXPECT_EQ(0, valor_access(self->t1, half, 4, true, 3));
		}
		EXPECT_EQ(n + 1, reads_logged(self->ctx));
		n++;
	}
	EXPECT_EQ(0, valor_region_end(self->t1));
	EXPECT_EQ(0, self->s.n);

	n = reads_logged(self->ctx);
	EXPECT_EQ(0, valor_access(self->t1, X + 16, 4, false, 4));
	EXPECT_EQ(0, valor_access(self->t1, X + 16, 4, true, 5));
	EXPECT_EQ(0, valor_access(self->t1, X + 20, 4, false, 4));
	EXPECT_EQ(n + 1, reads_logged(self->ctx));
	EXPECT_EQ(0, valor_access(self->t1, X + 24, 4, false, 6));
	EXPECT_EQ(0, valor_access(self->t1, X + 24, 4, true, 7));
	EXPECT_EQ(0, valor_access(self->t1, X + 28, 4, false, 8));
	EXPECT_EQ(n + 3, reads_logged(self->ctx));
	/* Other bytes than t1 owns: no conflict until t1's region ends. */
	EXPECT_EQ(0, valor_access(self->t2, X + 20, 4, true, 9));
	EXPECT_EQ(0, valor_access(self->t2, X + 28, 4, true, 10));
	EXPECT_EQ(0, self->s.n);
	EXPECT_EQ(2, valor_region_end(self->t1));
	ASSERT_EQ(2, self->s.n);
	for (unsigned i = 0; i < 2; i++) {
		EXPECT_EQ(VALOR_CONFLICT_RW, self->s.v[i].kind);
		EXPECT_EQ(4, self->s.v[i].size);
	}
	EXPECT_EQ(X + 20, self->s.v[0].addr);
	EXPECT_EQ(4, self->s.v[0].first.site);
	EXPECT_EQ(9, self->s.v[0].second.site);
	EXPECT_EQ(X + 28, self->s.v[1].addr);
	EXPECT_EQ(8, self->s.v[1].first.site);
	EXPECT_EQ(10, self->s.v[1].second.site);
	EXPECT_EQ(0, valor_region_end(self->t2));
}

/*
 * A sweep over an array that two threads wrote, cell by cell in turn,
 * once each: its cells share a version but not a writer, and a group
 * entry takes them all (one per 64 cells).  A cell written once more is
 * at another version and takes an entry of its own (the last one, so
 * that its entry does not take the group's place for the cells after
 * it).  A write of a grouped cell by the other thread is still a
 * conflict at the region's end, naming the sweep's read.
 */
TEST_F(two_roots, sweep_over_cells_of_several_writers_logs_a_group_once)
{
	const uint64_t base = 0x40000, cells = 128;
	uint64_t n;

	for (uint64_t c = 0; c < cells; c++)
		EXPECT_EQ(0, valor_access(c % 2 ? self->t2 : self->t1,
					  base + 8 * c, 8, true, 1));
	EXPECT_EQ(0, valor_region_end(self->t1));
	EXPECT_EQ(0, valor_region_end(self->t2));
	EXPECT_EQ(0,
		  valor_access(self->t1, base + 8 * (cells - 1), 8, true, 2));
	EXPECT_EQ(0, valor_region_end(self->t1));

	n = reads_logged(self->ctx);
	for (uint64_t c = 0; c < cells; c++)
		EXPECT_EQ(0, valor_access(self->t1, base + 8 * c, 8, false, 3));
	EXPECT_EQ(n + cells / 64 + 1, reads_logged(self->ctx));

	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 70, 8, true, 4));
	EXPECT_EQ(0, self->s.n);
	EXPECT_EQ(1, valor_region_end(self->t1));
	ASSERT_EQ(1, self->s.n);
	EXPECT_EQ(VALOR_CONFLICT_RW, self->s.v[0].kind);
	EXPECT_EQ(base + 8 * 70, self->s.v[0].addr);
	EXPECT_EQ(3, self->s.v[0].first.site);
	EXPECT_EQ(4, self->s.v[0].second.site);
	EXPECT_EQ(0, valor_region_end(self->t2));
}

/*
 * A column walk over a matrix by an unrolled loop: eight load
 * instructions, a site each, take turns down the rows, and every column
 * after the first joins the entries the first made, one per (group,
 * site).  Finding those entries must not depend on how a group's index
 * and a site's address line up: with row strides of a few groups and
 * sites a few bytes apart, a hash that only XORs them sent many pairs
 * to one slot, and the walk logged an entry per read (a 1000 x 1000
 * matrix product then overflowed its log on every row).
 */
TEST_F(two_roots, column_walk_by_several_sites_logs_a_group_once_per_site)
{
	const uint64_t base = 0x1000000, row = 1000, rows = 512, cols = 64;
	uint64_t n, want = 0;

	for (uint64_t k = 0; k < rows; k++) {
		uint64_t first = (base / 8 + k * row) / 64;
		uint64_t last = (base / 8 + k * row + cols - 1) / 64;

		want += last - first + 1;
	}
	n = reads_logged(self->ctx);
	for (uint64_t j = 0; j < cols; j++)
		for (uint64_t k = 0; k < rows; k++)
			ASSERT_EQ(0, valor_access(self->t1,
						  base + 8 * (k * row + j), 8,
						  false,
						  0x401a30 + 0x1d * (k % 8)));
	EXPECT_EQ(n + want, reads_logged(self->ctx));

	/* Each of those entries stands for its cells: a write is caught. */
	EXPECT_EQ(0, valor_access(self->t2, base + 8 * (300 * row + 40), 8,
				  true, 7));
	EXPECT_EQ(1, valor_region_end(self->t1));
	ASSERT_EQ(1, self->s.n);
	EXPECT_EQ(VALOR_CONFLICT_RW, self->s.v[0].kind);
	EXPECT_EQ(base + 8 * (300 * row + 40), self->s.v[0].addr);
	EXPECT_EQ(0x401a30 + 0x1d * (300 % 8), self->s.v[0].first.site);
	EXPECT_EQ(0, valor_region_end(self->t2));
}

/*
 * A read of a whole range (a loop's reads checked at once, a memcpy's
 * source) takes each group's cells at one word in one entry: 64 cells
 * of 8 bytes, one entry.  Each cell still stands for itself: another
 * thread's write of any of them conflicts at the region's end, naming
 * the range's read.
 */
TEST_F(two_roots, range_read_logs_a_group_of_cells_once)
{
	const uint64_t base = 0x80000, cells = 64;
	uint64_t n = reads_logged(self->ctx);

	EXPECT_EQ(0, valor_access(self->t1, base, 8 * cells, false, 3));
	EXPECT_EQ(n + 1, reads_logged(self->ctx));
	/* Read again: the filter holds every cell; nothing is logged. */
	EXPECT_EQ(0, valor_access(self->t1, base, 8 * cells, false, 5));
	EXPECT_EQ(n + 1, reads_logged(self->ctx));

	EXPECT_EQ(0, valor_access(self->t2, base, 8, true, 4));
	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 37, 8, true, 6));
	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 63, 4, true, 7));
	EXPECT_EQ(0, self->s.n);
	EXPECT_EQ(3, valor_region_end(self->t1));
	ASSERT_EQ(3, self->s.n);
	for (unsigned i = 0; i < 3; i++) {
		EXPECT_EQ(VALOR_CONFLICT_RW, self->s.v[i].kind);
		EXPECT_EQ(3, self->s.v[i].first.site);
	}
	EXPECT_EQ(0, valor_region_end(self->t2));
}

/*
 * Every other cell of a group read by one site (a red-black sweep's
 * neighbours: the even cells of one group, the odd cells of the next)
 * is one entry per group, and validation looks at the cells it read,
 * half a group at a time: another thread's writes of a read cell in
 * either half are conflicts naming the read, its writes of the cells
 * in between are not.
 */
TEST_F(two_roots, every_other_cell_read_is_validated_cell_by_cell)
{
	const uint64_t base = 0x7770000;
	const uint64_t odd = base + 64 * 8 + 8; /* the next group's cell 1 */
	const uint64_t odd2 = odd + 64 * 8;
	uint64_t n = reads_logged(self->ctx);

	EXPECT_EQ(0, valor_access_strided(self->t1, base, 8, 16, 32, false, 3));
	EXPECT_EQ(0, valor_access_strided(self->t1, odd, 8, 16, 32, false, 5));
	EXPECT_EQ(n + 2, reads_logged(self->ctx));

	/* Unread cells of both groups, in both halves: no conflict. */
	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 11, 8, true, 7));
	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 41, 8, true, 7));
	EXPECT_EQ(0, valor_access(self->t2, odd + 8 * 9, 8, true, 7));
	EXPECT_EQ(0, valor_access(self->t2, odd + 8 * 49, 8, true, 7));
	EXPECT_EQ(0, valor_region_end(self->t2));
	EXPECT_EQ(0, valor_region_end(self->t1));
	EXPECT_EQ(0, self->s.n);

	/* The odd cells of a group whose even cells nobody wrote, too. */
	EXPECT_EQ(0, valor_access_strided(self->t1, base, 8, 16, 32, false, 3));
	EXPECT_EQ(0, valor_access_strided(self->t1, odd2, 8, 16, 32, false, 5));
	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 12, 8, true, 8));
	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 62, 4, true, 9));
	EXPECT_EQ(0, valor_access(self->t2, odd2 + 8 * 20, 8, true, 10));
	EXPECT_EQ(0, self->s.n);
	EXPECT_EQ(3, valor_region_end(self->t1));
	ASSERT_EQ(3, self->s.n);
	/* In any order: each write once, with the read of its cell. */
	for (unsigned i = 0; i < 3; i++) {
		const struct valor_conflict *c = &self->s.v[i];

		EXPECT_EQ(VALOR_CONFLICT_RW, c->kind);
		switch (c->second.site) {
		case 8:
			EXPECT_EQ(base + 8 * 12, c->addr);
			EXPECT_EQ(3, c->first.site);
			break;
		case 9:
			EXPECT_EQ(base + 8 * 62, c->addr);
			EXPECT_EQ(3, c->first.site);
			break;
		case 10:
			EXPECT_EQ(odd2 + 8 * 20, c->addr);
			EXPECT_EQ(5, c->first.site);
			break;
		default:
			EXPECT_TRUE(false)
			TH_LOG("a conflict with site %llu",
			       (unsigned long long)c->second.site);
		}
	}
	EXPECT_NE(self->s.v[0].second.site, self->s.v[1].second.site);
	EXPECT_NE(self->s.v[1].second.site, self->s.v[2].second.site);
	EXPECT_NE(self->s.v[0].second.site, self->s.v[2].second.site);
	EXPECT_EQ(0, valor_region_end(self->t2));
}

/*
 * A strided write puts the cells it owns into the read filter, so that
 * the row's read after it (red-black relaxation) finds them held; the
 * cells between them are still the read's to log and validate.
 */
TEST_F(two_roots, a_row_read_after_its_strided_write_still_logs_the_gaps)
{
	const uint64_t base = 0x7a80000;
	uint64_t n;

	EXPECT_EQ(0, valor_access_strided(self->t1, base, 8, 16, 64, true, 3));
	n = reads_logged(self->ctx);
	EXPECT_EQ(0, valor_access(self->t1, base, 128 * 8, false, 4));
	/* The odd cells of two groups, one entry each. */
	EXPECT_EQ(n + 2, reads_logged(self->ctx));
	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 7, 8, true, 5));
	EXPECT_EQ(0, self->s.n);
	EXPECT_EQ(1, valor_access(self->t2, base + 8 * 10, 8, true, 6));
	ASSERT_EQ(1, self->s.n);
	EXPECT_EQ(VALOR_CONFLICT_WW, self->s.v[0].kind);
	EXPECT_EQ(3, self->s.v[0].first.site);
	EXPECT_EQ(0, valor_region_end(self->t2));
	EXPECT_EQ(1, valor_region_end(self->t1));
	ASSERT_EQ(2, self->s.n);
	EXPECT_EQ(VALOR_CONFLICT_RW, self->s.v[1].kind);
	EXPECT_EQ(base + 8 * 7, self->s.v[1].addr);
	EXPECT_EQ(4, self->s.v[1].first.site);
	EXPECT_EQ(5, self->s.v[1].second.site);
}

/*
 * A range over cells the region read already, some at other words:
 * the cells the filter holds stay with the entries of their first
 * reads (a conflict names those reads), a cell read by half is logged
 * for the other half only, and cells at another version take an entry
 * of their own.  A cell another region owns is a conflict at the read,
 * as a one-cell read of it is, and the cells after it are still read.
 */
TEST_F(two_roots, range_read_keeps_held_cells_and_splits_at_other_words)
{
	const uint64_t base = 0xc0000;
	uint64_t n;

	/* Cells 40-63 written once more than cells 0-39, by t2. */
	for (uint64_t c = 0; c < 64; c++)
		EXPECT_EQ(0, valor_access(self->t2, base + 8 * c, 8, true, 1));
	EXPECT_EQ(0, valor_region_end(self->t2));
	for (uint64_t c = 40; c < 64; c++)
		EXPECT_EQ(0, valor_access(self->t2, base + 8 * c, 8, true, 1));
	EXPECT_EQ(0, valor_region_end(self->t2));

	/* Cells read once are held from here on (past_young_reads()). */
	past_young_reads(self->t1);
	EXPECT_EQ(0, valor_access(self->t1, base + 8 * 5, 8, false, 2));
	EXPECT_EQ(0, valor_access(self->t1, base + 8 * 9, 4, false, 8));
	n = reads_logged(self->ctx);
	/* t2 takes cell 20 over; the range runs over it. */
	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 20, 8, true, 4));
	EXPECT_EQ(1, valor_access(self->t1, base, 8 * 64, false, 3));
	ASSERT_EQ(1, self->s.n);
	EXPECT_EQ(VALOR_CONFLICT_WR, self->s.v[0].kind);
	EXPECT_EQ(base + 8 * 20, self->s.v[0].addr);
	EXPECT_EQ(4, self->s.v[0].first.site);
	EXPECT_EQ(3, self->s.v[0].second.site);
	/*
	 * Cells 0-19 (less 5, with cell 9's second half), 21-39 and 40-63:
	 * cell 20 is logged by the full path; two words, two entries more.
	 */
	EXPECT_LE(n + 3, reads_logged(self->ctx));
	EXPECT_GE(n + 4, reads_logged(self->ctx));
	EXPECT_EQ(0, valor_region_end(self->t2));

	/*
	 * t2 writes cells 5, 9 and 50 in a new region: four reads break,
	 * cell 9's two halves each naming its own read.
	 */
	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 5, 8, true, 6));
	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 9, 8, true, 7));
	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 50, 8, true, 9));
	EXPECT_EQ(4, valor_region_end(self->t1));
	ASSERT_EQ(5, self->s.n);
	EXPECT_EQ(base + 8 * 5, self->s.v[1].addr);
	EXPECT_EQ(2, self->s.v[1].first.site);
	EXPECT_EQ(base + 8 * 9, self->s.v[2].addr);
	EXPECT_EQ(8, self->s.v[2].first.site);
	EXPECT_EQ(base + 8 * 9, self->s.v[3].addr);
	EXPECT_EQ(3, self->s.v[3].first.site);
	EXPECT_EQ(base + 8 * 50, self->s.v[4].addr);
	EXPECT_EQ(3, self->s.v[4].first.site);
	for (unsigned i = 1; i < 5; i++)
		EXPECT_EQ(VALOR_CONFLICT_RW, self->s.v[i].kind);
	EXPECT_EQ(0, valor_region_end(self->t2));
}

/*
 * A write of many cells at once (a loop's write range, a memset) takes
 * the cells over as runs of the write set instead of an entry each:
 * each cell's version moves once per region, a second write of the range
 * moves none, a read of one of them that it overwrote is reported at the
 * reader's region end naming the range's site, and the writer's region
 * end gives every cell up, its partial first and last cells too.
 */
TEST_F(two_roots, range_write_takes_its_cells_over_as_a_run)
{
	const uint64_t base = 0x80000, cells = 64;
	uint64_t bumps;

	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 10, 8, false, 1));
	bumps = stats_of(self->ctx).version_bumps;
	EXPECT_EQ(0, valor_access(self->t1, base + 4, 8 * cells - 8, true, 2));
	EXPECT_EQ(bumps + cells, stats_of(self->ctx).version_bumps);
	EXPECT_EQ(0, valor_access(self->t1, base + 4, 8 * cells - 8, true, 3));
	EXPECT_EQ(bumps + cells, stats_of(self->ctx).version_bumps);

	EXPECT_EQ(1, valor_region_end(self->t2));
	ASSERT_EQ(1, self->s.n);
	EXPECT_EQ(VALOR_CONFLICT_RW, self->s.v[0].kind);
	EXPECT_EQ(base + 8 * 10, self->s.v[0].addr);
	EXPECT_EQ(1, self->s.v[0].first.site);
	EXPECT_EQ(2, self->s.v[0].second.site);

	EXPECT_EQ(0, valor_region_end(self->t1));
	EXPECT_EQ(0, valor_access(self->t2, base, 8, true, 4));
	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 20, 8, true, 4));
	EXPECT_EQ(0,
		  valor_access(self->t2, base + 8 * (cells - 1), 8, true, 4));
	EXPECT_EQ(0, valor_region_end(self->t2));
	EXPECT_EQ(1, self->s.n);
}

/*
 * A cell of the range that another region owns is that cell's write
 * conflict, and the run goes on after it: the cells after it are the
 * range's, which a read by the other thread then conflicts with.
 */
TEST_F(two_roots, range_write_goes_on_past_a_cell_another_region_owns)
{
	const uint64_t base = 0x90000, cells = 32;

	EXPECT_EQ(0, valor_access(self->t2, base + 8 * 8, 8, true, 1));
	EXPECT_EQ(1, valor_access(self->t1, base, 8 * cells, true, 2));
	ASSERT_EQ(1, self->s.n);
	EXPECT_EQ(VALOR_CONFLICT_WW, self->s.v[0].kind);
	EXPECT_EQ(base + 8 * 8, self->s.v[0].addr);
	EXPECT_EQ(1, valor_access(self->t2, base + 8 * 20, 8, false, 3));
	ASSERT_EQ(2, self->s.n);
	EXPECT_EQ(VALOR_CONFLICT_WR, self->s.v[1].kind);
	EXPECT_EQ(base + 8 * 20, self->s.v[1].addr);
	EXPECT_EQ(2, self->s.v[1].first.site);
	EXPECT_EQ(3, self->s.v[1].second.site);
	valor_region_end(self->t1);
	valor_region_end(self->t2);
}

/*
 * KiB of this process's mappings the kernel was advised to back with
 * huge pages (the "hg" flag in smaps); -1 if smaps cannot be read.
 */
static long huge_advised_kib(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	long total = 0, size = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Size: %ld kB", &size) == 1)
			continue;
		if (!strncmp(line, "VmFlags:", 8) && strstr(line, " hg"))
			total += size;
	}
	fclose(f);
	return total;
}

/*
 * The dense hint puts a large block's records on huge pages (advice the
 * kernel keeps in the mapping's flags), leaves a block under 4 MiB
 * alone, and changes no verdict.
 */
TEST(dense_hint_advises_huge_pages_for_large_blocks_only)
{
	const uintptr_t block = 0x40000000;
	struct valor_params p = { 0 };
	struct sink s;
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx;
	long before;

	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK))
		SKIP(return, "the kernel has no transparent huge pages");
	ctx = valor_ctx_two_roots(&s, &p, &t1, &t2);
	ASSERT_NE(NULL, ctx);
	ASSERT_NE(NULL, t1);
	ASSERT_NE(NULL, t2);
	before = huge_advised_kib();
	ASSERT_LE(0, before);
	valor_hint_dense(t1, block, (4 << 20) - 8);
	EXPECT_EQ(before, huge_advised_kib());
	valor_hint_dense(t1, block, 8 << 20);
	/* At least the 2 MiB pages wholly inside 8 MiB of records. */
	EXPECT_LE(before + 4096, huge_advised_kib());

	EXPECT_EQ(0, valor_access(t1, block + (6 << 20), 8, true, 1));
	EXPECT_EQ(1, valor_access(t2, block + (6 << 20), 8, true, 2));
	ASSERT_EQ(1, s.n);
	EXPECT_EQ(VALOR_CONFLICT_WW, s.v[0].kind);
	valor_ctx_free(ctx);
}

/*
 * A region that writes more cells in a row than its write set holds
 * keeps owning them all: another thread's write of the first one is a
 * write-write conflict that names the first write's site, and after the
 * region ends it is not.  Scattered cells, one spill later, go to the
 * region's bitmaps, and it owns them too.
 */
TEST(full_write_set_keeps_the_region_owning_its_cells)
{
	struct valor_params p = { .write_log_entries = 4 };
	struct sink s;
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = valor_ctx_two_roots(&s, &p, &t1, &t2);
	struct valor_stats st;

	ASSERT_NE(NULL, ctx);
	ASSERT_NE(NULL, t1);
	ASSERT_NE(NULL, t2);
	for (int i = 0; i < 10; i++)
		valor_access(t1, X + 8 * i, 8, true, 1);
	/* Owned, so not written again. */
	valor_access(t1, X, 8, true, 20);
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(10, st.version_bumps);
	EXPECT_EQ(0, st.regions);

	EXPECT_EQ(1, valor_access(t2, X, 8, true, 21));
	ASSERT_EQ(1, s.n);
	EXPECT_EQ(VALOR_CONFLICT_WW, s.v[0].kind);
	/* The spilled write still has its site. */
	EXPECT_EQ(1, s.v[0].first.site);
	EXPECT_EQ(21, s.v[0].second.site);
	EXPECT_EQ(0, valor_region_end(t2));
	EXPECT_EQ(0, valor_region_end(t1));
	/* Every cell the region owned, spilled or not, is given up. */
	for (int i = 1; i < 10; i++)
		EXPECT_EQ(0, valor_access(t2, X + 8 * i, 8, true, 22 + i));
	EXPECT_EQ(1, s.n);
	EXPECT_EQ(0, valor_region_end(t2));

	/* Every other 64 bytes: no run to spill into, and no split. */
	valor_ctx_stats(ctx, &st);
	for (int i = 0; i < 10; i++)
		valor_access(t1, CELL(100 + 2 * i), 8, true, 30 + i);
	{
		struct valor_stats after;

		valor_ctx_stats(ctx, &after);
		EXPECT_EQ(st.regions, after.regions);
		EXPECT_LT(st.write_log_overflows, after.write_log_overflows);
	}
	EXPECT_EQ(1, valor_access(t2, CELL(100), 8, true, 40));
	EXPECT_EQ(2, s.n);
	valor_ctx_free(ctx);
}

/*
 * A sweep by an unrolled loop of vector stores: two cells a store, from
 * eight sites in turn (clang's -O2 with its ThreadSanitizer).  Its
 * spilled runs are a store long, but its cells come in order: the
 * region spills and goes on owning them all (judged by its runs, it
 * split, and another thread's write of the first cell went unreported),
 * and the ring of runs grows rather than lose the first cell's site.
 */
TEST(sweep_from_eight_sites_in_turn_spills_without_splitting)
{
	struct valor_params p = { .write_log_entries = 64 };
	struct sink s;
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = valor_ctx_two_roots(&s, &p, &t1, &t2);
	struct valor_stats st;

	ASSERT_NE(NULL, ctx);
	ASSERT_NE(NULL, t1);
	ASSERT_NE(NULL, t2);
	/* The runtime checks a 16-byte store as its two cells. */
	for (int i = 0; i < 2048; i++) {
		valor_access(t1, X + 16 * i, 8, true, 40 + i % 8);
		valor_access(t1, X + 16 * i + 8, 8, true, 40 + i % 8);
	}
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(0, st.regions);
	EXPECT_LT(0, st.write_log_overflows);

	EXPECT_EQ(1, valor_access(t2, X + 8, 8, true, 50));
	ASSERT_EQ(1, s.n);
	EXPECT_EQ(VALOR_CONFLICT_WW, s.v[0].kind);
	EXPECT_EQ(40, s.v[0].first.site);
	EXPECT_EQ(50, s.v[0].second.site);
	EXPECT_EQ(0, valor_region_end(t2));
	EXPECT_EQ(0, valor_region_end(t1));
	valor_ctx_free(ctx);
}

/*
 * A thread's write log starts small and grows when one region's write
 * set fills it, up to write_log_entries: a region of 3,000 scattered
 * writes under a limit of 4,096 neither spills nor splits, and keeps
 * owning every cell with its own site; an earlier region's entry moves
 * with the log, so the report of a read it overwrote still names it.
 */
TEST(write_log_grows_with_the_region_and_keeps_its_entries)
{
	struct valor_params p = { .write_log_entries = 4096 };
	struct sink s;
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = valor_ctx_two_roots(&s, &p, &t1, &t2);
	struct valor_stats st;

	ASSERT_NE(NULL, ctx);
	ASSERT_NE(NULL, t1);
	ASSERT_NE(NULL, t2);
	EXPECT_EQ(0, valor_access(t2, Y, 8, false, 5));
	EXPECT_EQ(0, valor_access(t1, Y, 8, true, 7));
	EXPECT_EQ(0, valor_region_end(t1));
	for (int i = 0; i < 3000; i++)
		EXPECT_EQ(0, valor_access(t1, CELL(2 * i), 8, true, 100 + i));
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(0, st.write_log_overflows);
	EXPECT_EQ(1, st.regions);

	/* t2's read of Y, overwritten by t1's first region. */
	EXPECT_EQ(1, valor_region_end(t2));
	ASSERT_EQ(1, s.n);
	EXPECT_EQ(VALOR_CONFLICT_RW, s.v[0].kind);
	EXPECT_EQ(5, s.v[0].first.site);
	EXPECT_EQ(7, s.v[0].second.site);

	/* The first and last cells of the big region are t1's still. */
	EXPECT_EQ(1, valor_access(t2, CELL(0), 8, true, 8));
	ASSERT_EQ(2, s.n);
	EXPECT_EQ(VALOR_CONFLICT_WW, s.v[1].kind);
	EXPECT_EQ(100, s.v[1].first.site);
	EXPECT_EQ(1, valor_access(t2, CELL(2 * 2999), 8, true, 9));
	ASSERT_EQ(3, s.n);
	EXPECT_EQ(100 + 2999, s.v[2].first.site);
	valor_ctx_free(ctx);
}

#define RUN1 0x300000ULL
#define RUN2 0x380000ULL

/*
 * Runs of cells a region spilled in several steps are all given up when
 * it ends: a write set of 8 spills four entries at a time, so one spill
 * ends the first run (11 cells) and starts the second.
 */
TEST(spilled_runs_are_given_up_whole)
{
	struct valor_params p = { .write_log_entries = 8 };
	struct sink s;
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = valor_ctx_two_roots(&s, &p, &t1, &t2);
	struct valor_stats st;

	ASSERT_NE(NULL, ctx);
	ASSERT_NE(NULL, t1);
	ASSERT_NE(NULL, t2);
	for (int i = 0; i < 11; i++)
		valor_access(t1, RUN1 + 8 * i, 8, true, 40);
	for (int i = 0; i < 10; i++)
		valor_access(t1, RUN2 + 8 * i, 8, true, 41);
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(0, st.regions); /* spilled, never split */
	EXPECT_LE(3, st.write_log_overflows);
	/* Still owned: the last cell of each run conflicts. */
	EXPECT_EQ(1, valor_access(t2, RUN1 + 80, 8, true, 42));
	EXPECT_EQ(1, valor_access(t2, RUN2 + 72, 8, true, 42));
	EXPECT_EQ(40, s.v[0].first.site);
	EXPECT_EQ(41, s.v[1].first.site);
	EXPECT_EQ(0, valor_region_end(t2));
	EXPECT_EQ(0, valor_region_end(t1));
	for (int i = 0; i < 11; i++)
		EXPECT_EQ(0, valor_access(t2, RUN1 + 8 * i, 8, true, 43));
	for (int i = 0; i < 10; i++)
		EXPECT_EQ(0, valor_access(t2, RUN2 + 8 * i, 8, true, 44));
	EXPECT_EQ(2, s.n);
	valor_ctx_free(ctx);
}

#define SCATTER(i) (0x6000000ULL + 8 * (((i)*4099ULL) % 65536))
#define LEAF_BYTES (1ULL << 24) /* SHADOW_LEAF_SHIFT */

/*
 * A region whose first writes are scattered (a hash table's slots, a
 * radix sort's buckets) does not split when its write log fills: it
 * keeps the cells as bits and owns all of them until it ends.  300
 * cells in two shadow leaves under a write log of 8: no region ends
 * early, the first cell and one in the other leaf still conflict, and
 * the region's end gives every one of them up, once.
 */
TEST(scattered_first_writes_stay_owned_without_a_split)
{
	struct valor_params p = { .write_log_entries = 8 };
	struct sink s;
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = valor_ctx_two_roots(&s, &p, &t1, &t2);
	struct valor_stats st;
	uint64_t v0;

	ASSERT_NE(NULL, ctx);
	ASSERT_NE(NULL, t1);
	ASSERT_NE(NULL, t2);
	v0 = valor_shadow_version(ctx, SCATTER(0));
	for (int i = 0; i < 300; i++) {
		EXPECT_EQ(0, valor_access(t1, SCATTER(i), 8, true, 50));
		EXPECT_EQ(0, valor_access(t1, SCATTER(i) + LEAF_BYTES, 8, true,
					  51));
	}
	/* Written again in the same region: no new version. */
	EXPECT_EQ(0, valor_access(t1, SCATTER(0), 8, true, 52));
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(0, st.regions);
	EXPECT_LE(3, st.write_log_overflows);
	EXPECT_EQ(v0 + 1, valor_shadow_version(ctx, SCATTER(0)));

	EXPECT_EQ(1, valor_access(t2, SCATTER(0), 8, true, 53));
	EXPECT_EQ(1, valor_access(t2, SCATTER(1) + LEAF_BYTES, 8, true, 53));
	ASSERT_EQ(2, s.n);
	EXPECT_EQ(VALOR_CONFLICT_WW, s.v[0].kind);
	EXPECT_EQ(VALOR_CONFLICT_WW, s.v[1].kind);
	EXPECT_EQ(0, valor_region_end(t2));
	EXPECT_EQ(0, valor_region_end(t1));

	/* Released: t2 takes every cell over without a report. */
	for (int i = 2; i < 300; i++) {
		EXPECT_EQ(0, valor_access(t2, SCATTER(i), 8, true, 54));
		EXPECT_EQ(0, valor_access(t2, SCATTER(i) + LEAF_BYTES, 8, true,
					  54));
	}
	EXPECT_EQ(2, s.n);
	valor_ctx_free(ctx);
}

/*
 * The bitmaps keep a bit per line of eight cells, and release looks at
 * all eight: a cell of the line that another thread's open region owns
 * stays its own, so a write to it still conflicts.
 */
TEST(releasing_a_line_of_scattered_writes_spares_other_owners)
{
	struct valor_params p = { .write_log_entries = 8 };
	struct sink s;
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = valor_ctx_two_roots(&s, &p, &t1, &t2);
	struct valor_stats st;

	ASSERT_NE(NULL, ctx);
	ASSERT_NE(NULL, t1);
	ASSERT_NE(NULL, t2);
	EXPECT_EQ(0, valor_access(t2, SCATTER(200) + 8, 8, true, 70));
	for (int i = 0; i < 300; i++)
		EXPECT_EQ(0, valor_access(t1, SCATTER(i), 8, true, 71));
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(0, st.regions);
	EXPECT_LE(3, st.write_log_overflows);
	EXPECT_EQ(0, s.n);
	EXPECT_EQ(0, valor_region_end(t1));

	/* t1's cells are free; the one t2 wrote in the line is not. */
	EXPECT_EQ(0, valor_access(t2, SCATTER(200), 8, true, 72));
	EXPECT_EQ(0, s.n);
	EXPECT_EQ(1, valor_access(t1, SCATTER(200) + 8, 8, true, 73));
	ASSERT_EQ(1, s.n);
	EXPECT_EQ(VALOR_CONFLICT_WW, s.v[0].kind);
	EXPECT_EQ(0, valor_region_end(t2));
	EXPECT_EQ(0, valor_region_end(t1));
	valor_ctx_free(ctx);
}

/*
 * More leaves in one region than a thread keeps bitmaps for (64, a
 * gigabyte of data): the region splits, as before there were bitmaps,
 * and what it wrote before the split is given up.
 */
TEST(scattered_writes_over_too_many_leaves_split_the_region)
{
	struct valor_params p = { .write_log_entries = 8 };
	struct sink s;
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = valor_ctx_two_roots(&s, &p, &t1, &t2);
	struct valor_stats st;

	ASSERT_NE(NULL, ctx);
	ASSERT_NE(NULL, t1);
	ASSERT_NE(NULL, t2);
	for (int i = 0; i < 200; i++)
		EXPECT_EQ(0, valor_access(t1, 0x100000000ULL + i * LEAF_BYTES,
					  8, true, 60));
	valor_ctx_stats(ctx, &st);
	EXPECT_LE(1, st.regions);
	EXPECT_EQ(0, valor_access(t2, 0x100000000ULL, 8, true, 61));
	EXPECT_EQ(0, s.n);
	EXPECT_EQ(0, valor_region_end(t2));
	EXPECT_EQ(0, valor_region_end(t1));
	valor_ctx_free(ctx);
}

#define EVERY_OTHER(k) (0x500000ULL + 16 * (k))
#define LEAF_EDGE 0x3000000ULL

/*
 * A write of every other cell (a red-black sweep, one strided event)
 * takes the cells as runs, not as write-log entries: 100 of them under
 * a write log of 8 neither spill nor split.  Each written cell moves
 * one version, once per region, the cells between them none; a cell
 * another region owns is reported, a split one goes the general way,
 * and a conflict with any of the others names the strided write's site.
 */
TEST(a_strided_write_takes_every_other_cell_once_as_runs)
{
	struct valor_params p = { .write_log_entries = 8 };
	struct sink s;
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = valor_ctx_two_roots(&s, &p, &t1, &t2);
	struct valor_stats before, after;
	uint64_t v, v5;

	ASSERT_NE(NULL, ctx);
	ASSERT_NE(NULL, t1);
	ASSERT_NE(NULL, t2);
	v = valor_shadow_version(ctx, EVERY_OTHER(0));
	/* Element 5 split in bytes; element 3 t2's in its open region. */
	valor_access(t1, EVERY_OTHER(5), 1, true, 1);
	EXPECT_EQ(0, valor_region_end(t1));
	valor_access(t2, EVERY_OTHER(5) + 1, 1, true, 2);
	EXPECT_EQ(0, valor_region_end(t2));
	v5 = valor_shadow_version(ctx, EVERY_OTHER(5) + 4);
	valor_access(t2, EVERY_OTHER(3), 8, true, 3);
	valor_ctx_stats(ctx, &before);

	EXPECT_EQ(1, valor_access_strided(t1, EVERY_OTHER(0), 8, 16, 100, true,
					  4));
	ASSERT_EQ(1, s.n);
	EXPECT_EQ(VALOR_CONFLICT_WW, s.v[0].kind);
	EXPECT_EQ(3, s.v[0].first.site);
	EXPECT_EQ(4, s.v[0].second.site);
	valor_ctx_stats(ctx, &after);
	EXPECT_EQ(before.regions, after.regions);
	EXPECT_EQ(before.write_log_overflows, after.write_log_overflows);
	for (int k = 0; k < 100; k++) {
		if (k == 3)
			continue;
		EXPECT_EQ(k == 5 ? v5 + 1 : v + 1,
			  valor_shadow_version(ctx, EVERY_OTHER(k) + 4))
		{
			TH_LOG("element %d", k);
		}
		EXPECT_EQ(v, valor_shadow_version(ctx, EVERY_OTHER(k) + 8))
		{
			TH_LOG("the cell after element %d", k);
		}
	}
	/* Again in the same region: owned, no version moves. */
	EXPECT_EQ(0, valor_access_strided(t1, EVERY_OTHER(50), 8, 16, 50, true,
					  5));
	EXPECT_EQ(v + 1, valor_shadow_version(ctx, EVERY_OTHER(99)));
	/* Owned by t1 with the strided write's site; the gaps are free. */
	EXPECT_EQ(1, valor_access(t2, EVERY_OTHER(99), 8, true, 6));
	ASSERT_EQ(2, s.n);
	EXPECT_EQ(4, s.v[1].first.site);
	EXPECT_EQ(0, valor_access(t2, EVERY_OTHER(98) + 8, 8, true, 7));
	EXPECT_EQ(2, s.n);
	valor_region_end(t2);
	valor_region_end(t1);
	/* A new region writes them again. */
	valor_access_strided(t1, EVERY_OTHER(0), 8, 16, 99, true, 8);
	EXPECT_EQ(v + 2, valor_shadow_version(ctx, EVERY_OTHER(0)));
	EXPECT_EQ(v + 2, valor_shadow_version(ctx, EVERY_OTHER(98)));
	EXPECT_EQ(v, valor_shadow_version(ctx, EVERY_OTHER(98) - 8));
	/* Across the 16 MiB of shadow one leaf covers, from an odd cell. */
	valor_access_strided(t1, LEAF_EDGE - 56, 8, 16, 8, true, 9);
	for (int k = 0; k < 8; k++) {
		EXPECT_EQ(v + 1,
			  valor_shadow_version(ctx, LEAF_EDGE - 56 + 16 * k));
		EXPECT_EQ(v,
			  valor_shadow_version(ctx, LEAF_EDGE - 48 + 16 * k));
	}
	valor_ctx_free(ctx);
}

/* ---- threads that run alone (VALOR_ONE_ROOT) ---------------------------- */

#define W 0x100c0ULL

TEST_F(analysis, one_root_refuses_a_second_root)
{
	struct valor_params p = { .flags = VALOR_ONE_ROOT };
	struct sink s;
	struct valor_ctx *ctx = new_ctx(variant->analysis, &s, &p);
	struct valor_thread *t0, *t1, *t2;

	ASSERT_NE(NULL, ctx);
	t0 = valor_thread_create(ctx, NULL);
	ASSERT_NE(NULL, t0);
	errno = 0;
	EXPECT_EQ(NULL, valor_thread_create(ctx, NULL));
	EXPECT_EQ(EINVAL, errno);
	t1 = valor_thread_create(ctx, t0);
	ASSERT_NE(NULL, t1);
	/* Not even once the root has exited. */
	valor_thread_exit(t0);
	errno = 0;
	EXPECT_EQ(NULL, valor_thread_create(ctx, NULL));
	EXPECT_EQ(EINVAL, errno);
	t2 = valor_thread_create(ctx, t1);
	EXPECT_NE(NULL, t2);
	EXPECT_EQ(2, stats_of(ctx).threads_created - 1);
	valor_ctx_free(ctx);

	/* Unknown flags are refused. */
	p = (struct valor_params){ .analysis = variant->analysis,
				   .flags = VALOR_ONE_ROOT << 1 };
	errno = 0;
	EXPECT_EQ(NULL, valor_ctx_new(&p));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * T0 runs alone before it creates T1 and again once T1 has exited and
 * been joined (in the middle of its region under rfr).  What it reads
 * and writes then is skipped, yet every conflict stays: T1's read of X
 * meets T0's write while T1's region is ongoing, and T0's read of W,
 * made before T1 wrote W, is still checked when T0's region ends,
 * although T0 rewrote W alone.  T1's write of Z is over before T0's
 * accesses of it begin.  Without VALOR_ONE_ROOT nothing is skipped and
 * the verdicts are the same.  FastTrack skips the same accesses: before
 * T0 creates T1, and once T0 has joined it.
 */
TEST_F(analysis, accesses_of_a_thread_alone_are_skipped_and_lose_nothing)
{
	const struct valor_event ev[] = {
		T_WR(0, X, 4), /* alone */
		T_RD(0, Y, 8), /* alone */
		T_CREATE(0, 1), T_RD(0, W, 4), T_RD(1, X, 4),
		T_WR(0, X, 4), /* RW: T1's read of X */
		T_WR(1, W, 4), /* RW: T0's read of W */
		T_WR(1, Z, 2),	T_EXIT(1),     T_JOIN(0, 1),
		T_WR(0, W, 4), /* alone: T0 read W, T1 wrote it */
		T_RD(0, Z, 2), /* alone */
		T_WR(0, Z, 1), /* alone */
		T_END(0),	T_RD(0, X, 8), /* alone */
	};
	const size_t alone = 6;

	for (int one_root = 0; one_root < 2; one_root++) {
		struct valor_params p = {
			.analysis = variant->analysis,
			.flags = one_root ? VALOR_ONE_ROOT : 0,
		};
		struct trace_result tr;

		ASSERT_EQ(0, trace_run(&p, ev, TRACE_LEN(ev), &tr));
		EXPECT_EQ(one_root ? alone : 0, tr.stats.accesses_alone);
		EXPECT_EQ(1, trace_count_at(&tr, VALOR_CONFLICT_RW, X, 0, 1));
		EXPECT_EQ(1, trace_count_at(&tr, VALOR_CONFLICT_RW, W, 0, 1));
		EXPECT_EQ(2, tr.n);
		if (tr.n != 2)
			trace_dump(&tr, one_root ? "one root" : "roots open");
		trace_result_free(&tr);
	}
}

/*
 * FastTrack: a thread that exited without being joined still races with
 * the one left, which therefore does not run alone: T0 joins T2, but T1
 * exited unjoined, so its write of X is not ordered before T0's.  Once
 * T0 joins T1 too, what T0 does is skipped.
 */
TEST(fasttrack_lone_thread_waits_for_every_join)
{
	const struct valor_event
		ev[] = {
			T_CREATE(0, 1), T_CREATE(0, 2), T_WR(1, X, 8),
			T_EXIT(1),	T_EXIT(2),	T_JOIN(0, 2),
			T_WR(0, X, 8), /* WW: T1 was not joined */
			T_JOIN(0, 1),	T_WR(0, X, 8), /* alone */
			T_RD(0, Y, 8), /* alone */
		};
	struct valor_params p = { .analysis = FASTTRACK,
				  .flags = VALOR_ONE_ROOT };
	struct trace_result tr;

	ASSERT_EQ(0, trace_run(&p, ev, TRACE_LEN(ev), &tr));
	EXPECT_EQ(2, tr.stats.accesses_alone);
	EXPECT_EQ(1, trace_count_at(&tr, VALOR_CONFLICT_WW, X, 1, 0));
	EXPECT_EQ(1, tr.n);
	trace_result_free(&tr);
}

/* ---- replay: malformed events are rejected and change nothing ----------- */

static void expect_rejected(struct __test_metadata *_metadata,
			    struct valor_ctx *ctx, struct valor_replay *rp,
			    struct valor_event ev, int err, const char *what)
{
	struct valor_stats before, after;

	valor_ctx_stats(ctx, &before);
	EXPECT_EQ(err, valor_replay_event(rp, &ev))
	{
		TH_LOG("%s", what);
	}
	valor_ctx_stats(ctx, &after);
	EXPECT_EQ(0, memcmp(&before, &after, sizeof(before)))
	{
		TH_LOG("%s: the rejected event changed the context", what);
	}
}

/*
 * A strided access is its elements, in order, under every analysis:
 * another thread's accesses of the gaps between a strided write's
 * elements conflict with nothing, those of the elements conflict once
 * each and name the strided write's site, and a strided read of them
 * does too.
 */
TEST_F(analysis, a_strided_access_conflicts_as_its_elements_do)
{
	struct valor_params p = { 0 };
	struct sink s;
	struct valor_ctx *ctx = new_ctx(variant->analysis, &s, &p);
	struct valor_thread *t1, *t2;

	ASSERT_NE(NULL, ctx);
	t1 = valor_thread_create(ctx, NULL);
	t2 = valor_thread_create(ctx, NULL);
	ASSERT_NE(NULL, t1);
	ASSERT_NE(NULL, t2);
	EXPECT_EQ(0,
		  valor_access_strided(t1, EVERY_OTHER(0), 8, 16, 10, true, 1));
	EXPECT_EQ(0, valor_access_strided(t2, EVERY_OTHER(0) + 8, 8, 16, 10,
					  false, 2));
	EXPECT_EQ(0, valor_access(t2, EVERY_OTHER(9) + 8, 8, true, 3));
	EXPECT_EQ(0, s.n);
	EXPECT_EQ(1, valor_access(t2, EVERY_OTHER(4), 8, false, 4));
	ASSERT_EQ(1, s.n);
	EXPECT_EQ(1, s.v[0].first.site);
	EXPECT_EQ(4, s.v[0].second.site);
	EXPECT_EQ(5,
		  valor_access_strided(t2, EVERY_OTHER(5), 8, 16, 5, false, 5));
	ASSERT_EQ(6, s.n);
	for (int i = 1; i < 6; i++) {
		EXPECT_EQ(1, s.v[i].first.site);
		EXPECT_EQ(5, s.v[i].second.site);
	}
	/* Out of the address space: nothing, as for valor_access(). */
	EXPECT_EQ(0, valor_access_strided(t1, 1ULL << 48, 8, 16, 2, true, 6));
	EXPECT_EQ(0, valor_access_strided(t1, 0, 8, SIZE_MAX / 2, 4, true, 6));
	EXPECT_EQ(6, s.n);
	valor_ctx_free(ctx);
}

TEST_F(analysis, replay_rejects_malformed_events)
{
	struct sink s;
	struct valor_params p = { 0 };
	struct valor_ctx *ctx = new_ctx(variant->analysis, &s, &p);
	struct valor_replay *rp;
	struct valor_event ev;

	ASSERT_NE(NULL, ctx);
	rp = valor_replay_new(ctx);
	ASSERT_NE(NULL, rp);

	/* Before any thread exists: nothing may be created by them. */
	expect_rejected(_metadata, ctx, rp, T_RD(1, X, 0), -EINVAL,
			"zero-sized read");
	expect_rejected(_metadata, ctx, rp, T_WR(1, X, 0), -EINVAL,
			"zero-sized write");
	ev = T_EV(99, 1, .addr = X, .size = 8);
	expect_rejected(_metadata, ctx, rp, ev, -EINVAL, "kind 99");
	ev = T_EV(VALOR_EV_KIND_MAX + 1, 1, .addr = X, .size = 8);
	expect_rejected(_metadata, ctx, rp, ev, -EINVAL, "kind MAX + 1");

	ASSERT_EQ(0, valor_replay_event(rp, &T_WR(1, X, 8)));
	ASSERT_EQ(0, valor_replay_event(rp, &T_CREATE(1, 2)));
	ASSERT_EQ(0, valor_replay_event(rp, &T_WR(2, Y, 8)));
	ASSERT_EQ(0, valor_replay_event(rp, &T_EXIT(2)));

	/* Events of an exited thread. */
	expect_rejected(_metadata, ctx, rp, T_WR(2, Y, 8), -EINVAL,
			"write of an exited thread");
	expect_rejected(_metadata, ctx, rp, T_RD(2, Z, 8), -EINVAL,
			"read of an exited thread");
	expect_rejected(_metadata, ctx, rp, T_REL(2, M), -EINVAL,
			"release of an exited thread");
	expect_rejected(_metadata, ctx, rp, T_EXIT(2), -EINVAL, "second exit");
	expect_rejected(_metadata, ctx, rp, T_RD(1, X, 0), -EINVAL,
			"zero-sized read of a live thread");

	/* Create of a live id; join of a live thread. */
	ASSERT_EQ(0, valor_replay_event(rp, &T_CREATE(1, 3)));
	expect_rejected(_metadata, ctx, rp, T_CREATE(1, 3), -EEXIST,
			"create of a live thread id");
	ASSERT_EQ(0, valor_replay_event(rp, &T_WR(3, Z, 8)));
	expect_rejected(_metadata, ctx, rp, T_JOIN(1, 3), -EINVAL,
			"join of a live thread");
	/* The rejected join ordered nothing: T3's write still conflicts. */
	EXPECT_EQ(1, valor_replay_event(rp, &T_RD(1, Z, 8)));
	ASSERT_EQ(1, s.n);
	EXPECT_EQ(VALOR_CONFLICT_WR, s.v[0].kind);
	EXPECT_EQ(3, valor_replay_source_tid(rp, s.v[0].first.tid));
	EXPECT_EQ(1, valor_replay_source_tid(rp, s.v[0].second.tid));

	/* Both children join normally afterwards. */
	EXPECT_EQ(0, valor_replay_event(rp, &T_EXIT(3)));
	EXPECT_EQ(0, valor_replay_event(rp, &T_JOIN(1, 3)));
	EXPECT_EQ(0, valor_replay_event(rp, &T_JOIN(1, 2)));
	EXPECT_EQ(0, valor_replay_event(rp, &T_RD(1, Y, 8)));
	EXPECT_EQ(UINT32_MAX, valor_replay_source_tid(rp, 0xdeadbeefULL));
	EXPECT_EQ(0, valor_replay_finish(rp));
	EXPECT_EQ(1, s.n);
	valor_replay_free(rp);
	valor_ctx_free(ctx);
}

TEST_HARNESS_MAIN
