// SPDX-License-Identifier: GPL-2.0
/*
 * Engine bugs found so far, each as the minimal trace that showed it
 * (most were shrunk by the differential test), and the compact-cell
 * patterns of Valor's cell word that must not refine.
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"

#include "golden.h"
#include "trace.h"

#define X 0x10020ULL
#define M 0x30000ULL

/* A free racing with a write of other bytes of the freeing thread's read. */
TEST(free_forgets_own_reads_of_the_cell)
{
	const struct valor_event trace[] = {
		T_RD(0, X + 6, 2), /* 0 */
		T_WR(1, X, 2), /* 1 */
		T_FREE(0, X, 8), /* 2 */
	};

	VERDICT_ALL(trace, C(WW, X, 2, 1, 1, 0, 2, EAGER, 2));
}

/* A thread's own read survives its own later write (FastRCD, FastTrack). */
TEST(own_read_kept_after_own_write)
{
	const struct valor_event trace[] = {
		T_RD(1, X, 1), /* 0 */
		T_WR(1, X, 1), /* 1 */
		T_WR(2, X, 1), /* 2 */
	};

	VERDICT(trace, VALOR, RFR, C(WW, X, 1, 1, 1, 2, 2, EAGER, 2),
		C(RW, X, 1, 1, 0, 2, 2, LAZY, TRACE_AT_FINISH));
	VERDICT(trace, FASTRCD, RFR, C(WW, X, 1, 1, 1, 2, 2, EAGER, 2),
		C(RW, X, 1, 1, 0, 2, 2, EAGER, 2));
	VERDICT(trace, FASTTRACK, RFR, C(WW, X, 1, 1, 1, 2, 2, EAGER, 2),
		C(RW, X, 1, 1, 0, 2, 2, EAGER, 2));
}

/* A free of a cell two threads own parts of names each owner. */
TEST(free_of_split_cell_names_each_owner)
{
	const struct valor_event trace[] = {
		T_WR(1, X + 7, 1), /* 0 */
		T_WR(2, X, 4), /* 1 */
		T_FREE(3, X, 8), /* 2 */
	};

	VERDICT_ALL(trace, C(WW, X, 4, 2, 1, 3, 2, EAGER, 2),
		    C(WW, X + 7, 1, 1, 0, 3, 2, EAGER, 2));
}

/* A read-write report names the free, not an older writer of the cell. */
TEST(read_write_report_names_the_free)
{
	const struct valor_event trace[] = {
		T_WR(1, X + 2, 1), /* 0 */
		T_RD(0, X + 5, 3), /* 1 */
		T_EXIT(1), /* 2 */
		T_FREE(7, X - 5, 16), /* 3 */
	};

	VERDICT(trace, VALOR, RFR,
		C(RW, X + 5, 3, 0, 1, 7, 3, LAZY, TRACE_AT_FINISH));
	VERDICT(trace, FASTRCD, RFR, C(RW, X + 5, 3, 0, 1, 7, 3, EAGER, 3));
	/* T1 exited but nobody joined it: its write races with the free. */
	VERDICT(trace, FASTTRACK, RFR, C(WW, X + 2, 1, 1, 0, 7, 3, EAGER, 3),
		C(RW, X + 5, 3, 0, 1, 7, 3, EAGER, 3));
}

/*
 * The validating thread wrote last, after another thread's intervening
 * write: the report must name that write, not an older one (T0's).
 */
TEST(read_write_report_names_the_intervening_write)
{
	const struct valor_event trace[] = {
		T_WR(0, X, 8), /* 0 */
		T_CREATE(0, 1), /* 1 */
		T_CREATE(0, 2), /* 2 */
		T_RD(1, X, 8), /* 3 */
		T_WR(2, X, 8), /* 4 */
		T_REL(2, M), /* 5 */
		T_WR(1, X, 8), /* 6 */
		T_END(1), /* 7 */
	};

	VERDICT(trace, VALOR, RFR, C(RW, X, 8, 1, 3, 2, 4, LAZY, 7));
}

struct counter {
	unsigned n;
};

static void count(void *arg, const struct valor_conflict *c)
{
	(void)c;
	((struct counter *)arg)->n++;
}

static struct valor_ctx *two_threads(struct counter *k, struct valor_thread **a,
				     struct valor_thread **b)
{
	struct valor_params p = {
		.analysis = VALOR_ANALYSIS_VALOR,
		.on_conflict = count,
		.arg = k,
	};
	struct valor_ctx *ctx = valor_ctx_new(&p);

	if (ctx) {
		*a = valor_thread_create(ctx, NULL);
		*b = valor_thread_create(ctx, NULL);
	}
	return ctx;
}

/*
 * One thread rewriting the same half of a cell in region after region,
 * while another reads the other half, keeps the cell compact (the gap
 * field) and reports nothing; the true conflict at the end is found.
 */
TEST(rewriting_half_a_cell_stays_compact)
{
	struct valor_thread *a, *b;
	struct counter k = { 0 };
	struct valor_ctx *ctx = two_threads(&k, &a, &b);
	struct valor_stats st;

	ASSERT_NE(NULL, ctx);
	for (int i = 0; i < 100; i++) {
		valor_access(a, X, 4, true, 1);
		valor_access(b, X + 4, 4, false, 2);
		valor_release(a, M);
	}
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(0, k.n);
	EXPECT_EQ(0, st.cells_refined);
	EXPECT_EQ(100, valor_shadow_version(ctx, X));
	EXPECT_EQ(0, valor_shadow_version(ctx, X + 4));

	valor_access(a, X, 4, true, 1);
	EXPECT_EQ(1, valor_access(b, X + 2, 1, false, 3));
	valor_ctx_free(ctx);
}

/*
 * Once the written half gets more than 15 versions ahead of a half that
 * was written before, the cell refines; that must not change a verdict:
 * a read of the behind half stays valid across the refinement, and a
 * write to it afterwards is still found by validation.
 */
TEST(refinement_past_the_gap_keeps_every_byte)
{
	struct valor_thread *a, *b;
	struct counter k = { 0 };
	struct valor_ctx *ctx = two_threads(&k, &a, &b);
	struct valor_stats st;

	ASSERT_NE(NULL, ctx);
	valor_access(a, X, 8, true, 1);
	valor_release(a, M);
	valor_access(b, X + 4, 4, false, 2); /* b's region stays open */
	for (int i = 0; i < 40; i++) {
		valor_access(a, X, 4, true, 3);
		valor_release(a, M);
	}
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(1, st.cells_refined);
	EXPECT_EQ(0, valor_validate(b));
	EXPECT_EQ(41, valor_shadow_version(ctx, X));
	EXPECT_EQ(1, valor_shadow_version(ctx, X + 4));

	valor_access(a, X + 6, 1, true, 4);
	valor_release(a, M);
	EXPECT_EQ(1, valor_region_end(b));
	EXPECT_EQ(1, k.n);
	valor_ctx_free(ctx);
}

/*
 * A finished thread's stack is reused by the next thread: forgetting it
 * clears its history without a report, for every analysis, and leaves
 * memory that had no history alone.
 */
TEST(forget_clears_history_without_a_check)
{
	for (int a = VALOR_ANALYSIS_VALOR; a <= VALOR_ANALYSIS_FASTTRACK; a++) {
		struct valor_params p = {
			.analysis = a,
			.on_conflict = count,
			.arg = NULL,
		};
		struct counter k = { 0 };
		struct valor_thread *t1, *t2;
		struct valor_ctx *ctx;

		p.arg = &k;
		ctx = valor_ctx_new(&p);
		ASSERT_NE(NULL, ctx);
		t1 = valor_thread_create(ctx, NULL);
		t2 = valor_thread_create(ctx, NULL);
		valor_access(t1, X, 8, true, 1); /* t1's region owns X */
		valor_forget(t1, X - 64, 4096);
		/* A new user of the memory starts fresh: no conflict. */
		EXPECT_EQ(0, valor_access(t2, X, 8, true, 2));
		EXPECT_EQ(0, k.n);
		if (a == VALOR_ANALYSIS_VALOR) {
			/* Versions only grow; untouched cells stay untouched. */
			EXPECT_EQ(2, valor_shadow_version(ctx, X));
			EXPECT_EQ(0, valor_shadow_version(ctx, X + 64));
		}
		valor_ctx_free(ctx);
	}
}

/*
 * mremap: the write moves with the data; the old address has no owner
 * any more; misaligned or overlapping moves are refused.
 */
TEST(move_carries_write_history)
{
	for (int a = VALOR_ANALYSIS_VALOR; a <= VALOR_ANALYSIS_FASTTRACK; a++) {
		struct counter k = { 0 };
		struct valor_params p = {
			.analysis = a,
			.on_conflict = count,
			.arg = &k,
		};
		struct valor_ctx *ctx = valor_ctx_new(&p);
		struct valor_thread *t1, *t2;
		const uintptr_t from = 0x100000, to = 0x200000;

		ASSERT_NE(NULL, ctx);
		t1 = valor_thread_create(ctx, NULL);
		t2 = valor_thread_create(ctx, NULL);
		valor_access(t1, from + 8, 8, true, 1);
		EXPECT_EQ(-EINVAL, valor_move(t1, from + 4, to, 4096));
		EXPECT_EQ(-EINVAL, valor_move(t1, from, from + 8, 4096));
		EXPECT_EQ(0, valor_move(t1, from, to, 4096));
		EXPECT_EQ(0, valor_access(t2, from + 8, 8, false, 2));
		EXPECT_EQ(1, valor_access(t2, to + 8, 8, false, 3))
		TH_LOG("%s: the moved write must conflict",
		       valor_analysis_name(a));
		valor_ctx_free(ctx);
	}
}

/*
 * A free finds the freeing thread's own reads through a sorted index once
 * its read log is long (RINDEX_MIN): the verdict must be the one the
 * short log gives.  The prefix reads cells nobody else touches.
 */
TEST(free_with_a_long_read_log_checks_the_same_reads)
{
	enum { PREFIX = 150 };
	const struct valor_event tail[] = {
		T_RD(0, X + 6, 2), /* read, then written by 1: RW */
		T_RD(0, X + 16, 8), /* read, freed, never written */
		T_WR(1, X + 6, 2),  T_RD(0, X + 4, 1),
		T_FREE(0, X, 24), /* checks both reads one last time */
		T_WR(1, X + 16, 8), /* after the free: no conflict */
	};
	const size_t ntail = sizeof(tail) / sizeof(tail[0]);
	static struct valor_event longer[PREFIX + 8];
	struct trace_result a = { 0 }, b = { 0 };
	const int analyses[] = { VALOR_ANALYSIS_VALOR, VALOR_ANALYSIS_FASTRCD,
				 VALOR_ANALYSIS_FASTTRACK };

	for (size_t i = 0; i < PREFIX; i++)
		longer[i] = (struct valor_event)T_RD(0, M + 8 * i, 8);
	for (size_t i = 0; i < ntail; i++)
		longer[PREFIX + i] = tail[i];
	for (size_t k = 0; k < 3; k++) {
		struct valor_params p = { .analysis = analyses[k] };

		ASSERT_EQ(0, trace_run(&p, tail, ntail, &a));
		ASSERT_EQ(0, trace_run(&p, longer, PREFIX + ntail, &b));
		EXPECT_LT(0, a.n);
		ASSERT_EQ(a.n, b.n)
		{
			trace_dump(&a, "short log");
			trace_dump(&b, "long log");
		}
		for (size_t i = 0; i < a.n; i++) {
			const struct trace_conflict *x = &a.v[i], *y = &b.v[i];

			EXPECT_EQ(x->c.kind, y->c.kind);
			EXPECT_EQ(x->c.addr, y->c.addr);
			EXPECT_EQ(x->c.size, y->c.size);
			EXPECT_EQ(x->first_tid, y->first_tid);
			EXPECT_EQ(x->second_tid, y->second_tid);
			EXPECT_EQ(x->first_event + PREFIX, y->first_event);
			EXPECT_EQ(x->second_event + PREFIX, y->second_event);
			if (x->reported_at != TRACE_AT_FINISH)
				EXPECT_EQ(x->reported_at + PREFIX,
					  y->reported_at);
		}
		trace_result_free(&a);
		trace_result_free(&b);
		memset(&a, 0, sizeof(a));
		memset(&b, 0, sizeof(b));
	}
}

TEST_HARNESS_MAIN
