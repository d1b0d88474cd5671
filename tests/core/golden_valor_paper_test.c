// SPDX-License-Identifier: GPL-2.0
/*
 * Golden traces from the Valor paper (Biswas et al., OOPSLA 2015, sections
 * 3 and 4): Figures 1(a), 1(b), 2(a), 2(b), the RFR/SFR difference of
 * Figure 3, and the algorithm details the prose fixes (same-region writes,
 * read-read, bounded read logs, the reporting order of lazy and eager
 * conflicts, VALIDATE, free).
 *
 * Each test is one short hand-written trace and the exact verdict of each
 * analysis: how many conflicts, and for each its kind, bytes, both trace
 * threads, both events, whether Valor found it lazily and at which event.
 * Documentation/testing-golden.md tabulates them; Documentation/semantics.md
 * is the definition every verdict is derived from.
 */
#include <stdbool.h>
#include <stdint.h>

#include <valor/engine.h>

#include "kselftest_harness.h"
#include "golden.h"
#include "trace.h"

/* Trace thread ids: T0 of the figures is thread 3, T1 is 1, T2 is 2. */
#define T0 3

/* Data, each in its own 64-byte line unless a test says otherwise. */
#define X 0x10000ULL
#define Y 0x10040ULL
#define Z 0x10080ULL
#define P 0x20000ULL
/* Synchronization objects, never accessed as data. */
#define M 0x900000ULL
#define M2 0x900040ULL

/*
 * Figure 1(a): T0's region p wrote x and ended; T1's region j writes x
 * (no conflict: p is over), then T2 reads x while j is ongoing.  Every
 * analysis reports the write-read conflict eagerly, at T2's read, against
 * T1's write only (T0's write is ordered before T1's through m).
 */
TEST(fig1a_write_read_is_eager)
{
	const struct valor_event fig1a[] = {
		T_WR(T0, X, 8), /* 0: region p of T0 */
		T_REL(T0, M), /* 1: p ends */
		T_ACQ(1, M), /* 2 */
		T_WR(1, X, 8), /* 3: <v+1, j@T1> */
		T_RD(2, X, 8), /* 4: j is ongoing: conflict */
	};

	VERDICT_ANYWHERE(fig1a, C(WR, X, 8, 1, 3, 2, 4, EAGER, 4));
}

/* Figure 1(a) with T2 writing instead: write-write, also eager. */
TEST(fig1a_write_write_is_eager)
{
	const struct valor_event fig1a_ww[] = {
		T_WR(T0, X, 8), /* 0 */
		T_REL(T0, M), /* 1 */
		T_ACQ(1, M), /* 2 */
		T_WR(1, X, 8), /* 3 */
		T_WR(2, X, 8), /* 4 */
	};

	VERDICT_ALL(fig1a_ww, C(WW, X, 8, 1, 3, 2, 4, EAGER, 4));
}

/*
 * Figure 1(b): T1 reads x (logs <x, v>), T2 writes x (v+1) while T1's
 * region is ongoing.  Valor cannot see it at the write (no last readers)
 * and finds it when T1's region ends; FastRCD and FastTrack at the write.
 */
TEST(fig1b_read_write_is_lazy_for_valor)
{
	const struct valor_event fig1b[] = {
		T_RD(1, X, 8), /* 0: read log <x, v> */
		T_WR(2, X, 8), /* 1: <v+1, k@T2> */
		T_REL(1, M), /* 2: T1's region j ends: validation */
	};

	VERDICT(fig1b, VALOR, RFR, C(RW, X, 8, 1, 0, 2, 1, LAZY, 2));
	VERDICT(fig1b, FASTRCD, RFR, C(RW, X, 8, 1, 0, 2, 1, EAGER, 1));
	VERDICT(fig1b, FASTTRACK, RFR, C(RW, X, 8, 1, 0, 2, 1, EAGER, 1));
}

/*
 * Figure 2(a): T1 reads x, then writes it itself.  At validation x's epoch
 * has changed (p@T0 -> j@T1) and its version is v+1, but T1 is the last
 * writer and the version moved by one: no conflict.
 */
TEST(fig2a_own_write_after_read_is_no_conflict)
{
	const struct valor_event fig2a[] = {
		T_WR(T0, X, 8), /* 0: <v, p@T0> */
		T_REL(T0, M), /* 1 */
		T_ACQ(1, M), /* 2 */
		T_RD(1, X, 8), /* 3: read log <x, v> */
		T_WR(1, X, 8), /* 4: <v+1, j@T1> */
		T_REL(1, M), /* 5: validation: v+1, last writer T1 */
	};

	NO_CONFLICT_ANYWHERE(fig2a);
}

/*
 * Figure 2(b): between T1's read and T1's write, T2 wrote x in a region k
 * that ended before T1's write (no write-write conflict).  T1 is again the
 * last writer, but the version advanced by two: read-write conflict.
 * T1's acquire of m orders T2's write before T1's (no FastTrack
 * write-write race) and, in RFR mode, does not end T1's region.
 *
 * The later access of Valor's report is T2's write, which is no longer the
 * last writer; the report must still name T2 and its write (the engine
 * keeps each slot's recent writes for that), never T1 against itself.
 */
TEST(fig2b_version_advanced_twice_is_conflict)
{
	const struct valor_event fig2b[] = {
		T_RD(1, X, 8), /* 0: read log <x, v> */
		T_WR(2, X, 8), /* 1: <v+1, k@T2> */
		T_REL(2, M), /* 2: region k ends */
		T_ACQ(1, M), /* 3: not a boundary in RFR mode */
		T_WR(1, X, 8), /* 4: <v+2, j@T1> */
		T_REL(1, M), /* 5: validation: v+2 >= v+2 */
	};

	VERDICT(fig2b, VALOR, RFR, C(RW, X, 8, 1, 0, 2, 1, LAZY, 5));
	VERDICT(fig2b, FASTRCD, RFR, C(RW, X, 8, 1, 0, 2, 1, EAGER, 1));
	VERDICT(fig2b, FASTTRACK, RFR, C(RW, X, 8, 1, 0, 2, 1, EAGER, 1));
	/* In SFR mode the acquire ends T1's region and validates there. */
	VERDICT(fig2b, VALOR, SFR, C(RW, X, 8, 1, 0, 2, 1, LAZY, 3));
	VERDICT(fig2b, FASTRCD, SFR, C(RW, X, 8, 1, 0, 2, 1, EAGER, 1));
}

/*
 * Figure 2(b) byte by byte: T2's intervening write covers only bytes 0..1
 * of the cell T1 read whole.  Those bytes advance by two (conflict); bytes
 * 2..7 advance by one with T1 as last writer, which is Figure 2(a) (none).
 */
TEST(fig2b_per_byte)
{
	const struct valor_event fig2b_bytes[] = {
		T_RD(1, X, 8), /* 0 */
		T_WR(2, X, 2), /* 1: bytes 0..1 */
		T_REL(2, M), /* 2 */
		T_ACQ(1, M), /* 3 */
		T_WR(1, X, 8), /* 4 */
		T_REL(1, M), /* 5 */
	};

	VERDICT(fig2b_bytes, VALOR, RFR, C(RW, X, 2, 1, 0, 2, 1, LAZY, 5));
	VERDICT(fig2b_bytes, FASTRCD, RFR, C(RW, X, 2, 1, 0, 2, 1, EAGER, 1));
	VERDICT(fig2b_bytes, FASTTRACK, RFR, C(RW, X, 2, 1, 0, 2, 1, EAGER, 1));
}

/* The versions behind Figure 2, read through the inspection hook. */
TEST(fig2_versions)
{
	struct valor_thread *t1, *t2;
	struct valor_ctx *ctx = golden_valor_ctx_two_threads(&t1, &t2);
	uint64_t v;

	ASSERT_NE(NULL, ctx);

	/* 2(a): read at v, own write: v+1. */
	v = valor_shadow_version(ctx, X);
	valor_access(t1, X, 8, false, 1);
	valor_access(t1, X, 8, true, 2);
	EXPECT_EQ(v + 1, valor_shadow_version(ctx, X));
	EXPECT_EQ(0, valor_region_end(t1));

	/* 2(b): read at v, T2's region writes and ends, own write: v+2. */
	v = valor_shadow_version(ctx, Y);
	valor_access(t1, Y, 8, false, 3);
	valor_access(t2, Y, 8, true, 4);
	EXPECT_EQ(0, valor_region_end(t2));
	valor_access(t1, Y, 8, true, 5);
	EXPECT_EQ(v + 2, valor_shadow_version(ctx, Y));
	EXPECT_EQ(1, valor_region_end(t1));
	valor_ctx_free(ctx);
}

/*
 * Figure 3, write then read: T1's region continues past its acquire in
 * RFR mode (so T2's read conflicts with T1's write) but ends there in SFR
 * mode.  The happens-before race exists either way: T1's acquire gives T2
 * no edge.
 */
TEST(fig3_rfr_sees_conflict_sfr_does_not)
{
	const struct valor_event fig3[] = {
		T_WR(1, X, 8), /* 0 */
		T_ACQ(1, M), /* 1: boundary in SFR only */
		T_RD(2, X, 8), /* 2 */
	};

	VERDICT(fig3, VALOR, RFR, C(WR, X, 8, 1, 0, 2, 2, EAGER, 2));
	VERDICT(fig3, FASTRCD, RFR, C(WR, X, 8, 1, 0, 2, 2, EAGER, 2));
	NO_CONFLICT(fig3, VALOR, SFR);
	NO_CONFLICT(fig3, FASTRCD, SFR);
	VERDICT(fig3, FASTTRACK, RFR, C(WR, X, 8, 1, 0, 2, 2, EAGER, 2));
	VERDICT(fig3, FASTTRACK, SFR, C(WR, X, 8, 1, 0, 2, 2, EAGER, 2));
}

/* Figure 3, read then write: the same difference for read-write. */
TEST(fig3_read_write_rfr_vs_sfr)
{
	const struct valor_event fig3_rw[] = {
		T_RD(1, X, 8), /* 0 */
		T_ACQ(1, M), /* 1: SFR validates and empties the log here */
		T_WR(2, X, 8), /* 2 */
		T_REL(1, M), /* 3: RFR validates here */
	};

	VERDICT(fig3_rw, VALOR, RFR, C(RW, X, 8, 1, 0, 2, 2, LAZY, 3));
	VERDICT(fig3_rw, FASTRCD, RFR, C(RW, X, 8, 1, 0, 2, 2, EAGER, 2));
	NO_CONFLICT(fig3_rw, VALOR, SFR);
	NO_CONFLICT(fig3_rw, FASTRCD, SFR);
	VERDICT(fig3_rw, FASTTRACK, RFR, C(RW, X, 8, 1, 0, 2, 2, EAGER, 2));
	VERDICT(fig3_rw, FASTTRACK, SFR, C(RW, X, 8, 1, 0, 2, 2, EAGER, 2));
}

/*
 * A region writing, reading and partly rewriting its own data conflicts
 * with nothing (Algorithm 3 line 2: same-region writes do nothing), and a
 * properly synchronized later thread sees no conflict either.
 */
TEST(write_write_same_region)
{
	const struct valor_event ww_same[] = {
		T_WR(1, X, 8), /* 0 */
		T_WR(1, X, 8), /* 1 */
		T_RD(1, X, 8), /* 2 */
		T_WR(1, X + 2, 2), /* 3 */
		T_REL(1, M), /* 4 */
		T_ACQ(2, M), /* 5 */
		T_RD(2, X, 8), /* 6 */
		T_WR(2, X, 8), /* 7 */
	};

	NO_CONFLICT_ANYWHERE(ww_same);
}

/* Reads never conflict with reads, whatever their overlap and regions. */
TEST(read_read_never)
{
	const struct valor_event read_read[] = {
		T_RD(1, X, 8), /* 0 */
		T_RD(2, X, 8), /* 1 */
		T_RD(2, X + 3, 1), /* 2 */
		T_RD(1, X + 4, 4), /* 3 */
		T_RD(T0, X, 16), /* 4 */
		T_REL(1, M), /* 5 */
		T_RD(1, X + 6, 4), /* 6 */
		T_REL(2, M), /* 7 */
	};

	NO_CONFLICT_ANYWHERE(read_read);
}

/*
 * A bounded read log (read_log_entries = 4): the read of x0 conflicts with
 * T2's write.  Four reads fill the log; the fifth finds it full, so the
 * log is validated and emptied before the fifth is logged: Valor reports
 * the conflict there (lazily, at event 5), not at the region end.  The
 * validation splits the region for read-write detection: T2's later write
 * of x1, read before the split, is not checked against that read
 * (semantics.md) -- a conflict Valor misses by design.  FastRCD and
 * FastTrack, which keep no read log, report both at the writes.
 */
#define XI(i) (0x30000ULL + 64 * (i))
TEST(read_log_overflow_validates_mid_region)
{
	const struct valor_event overflow[] = {
		T_RD(1, XI(0), 8), /* 0 */
		T_WR(2, XI(0), 8), /* 1: read-write on x0 pending for T1 */
		T_RD(1, XI(1), 8), /* 2 */
		T_RD(1, XI(2), 8), /* 3 */
		T_RD(1, XI(3), 8), /* 4: the log is full */
		T_RD(1, XI(4), 8), /* 5: validate, empty, then log x4 */
		T_WR(2, XI(1), 8), /* 6: after the split */
		T_REL(1, M), /* 7: validates x4 only */
	};
	struct valor_params small_log = { .read_log_entries = 4 };

	small_log.analysis = VALOR;
	VERDICT_WITH(overflow, &small_log,
		     C(RW, XI(0), 8, 1, 0, 2, 1, LAZY, 5));
	small_log.analysis = FASTRCD;
	VERDICT_WITH(overflow, &small_log,
		     C(RW, XI(0), 8, 1, 0, 2, 1, EAGER, 1),
		     C(RW, XI(1), 8, 1, 2, 2, 6, EAGER, 6));
	small_log.analysis = FASTTRACK;
	VERDICT_WITH(overflow, &small_log,
		     C(RW, XI(0), 8, 1, 0, 2, 1, EAGER, 1),
		     C(RW, XI(1), 8, 1, 2, 2, 6, EAGER, 6));
	/* With the default capacity the same trace has both, lazily. */
	VERDICT(overflow, VALOR, RFR, C(RW, XI(0), 8, 1, 0, 2, 1, LAZY, 7),
		C(RW, XI(1), 8, 1, 2, 2, 6, LAZY, 7));
}

/*
 * Valor's ordering rule: when T1 detects an eager conflict while a
 * read-write conflict of its own is pending, it validates first, so the
 * read-write conflict on x is reported before the write-write one on y.
 * The early validation does not report x again when T1's region ends.
 */
TEST(pending_validation_reported_before_eager)
{
	const struct valor_event order[] = {
		T_RD(1, X, 8), /* 0 */
		T_WR(2, X, 8), /* 1: read-write pending for T1 */
		T_WR(T0, Y, 8), /* 2: T0 keeps its region */
		T_WR(1, Y, 8), /* 3: write-write with T0 */
	};
	struct valor_params p = { .analysis = VALOR };
	struct trace_result r;

	VERDICT(order, VALOR, RFR, C(RW, X, 8, 1, 0, 2, 1, LAZY, 3),
		C(WW, Y, 8, T0, 2, 1, 3, EAGER, 3));
	VERDICT(order, FASTRCD, RFR, C(RW, X, 8, 1, 0, 2, 1, EAGER, 1),
		C(WW, Y, 8, T0, 2, 1, 3, EAGER, 3));
	VERDICT(order, FASTTRACK, RFR, C(RW, X, 8, 1, 0, 2, 1, EAGER, 1),
		C(WW, Y, 8, T0, 2, 1, 3, EAGER, 3));

	/* The order itself. */
	ASSERT_EQ(0, trace_run(&p, order, TRACE_LEN(order), &r));
	ASSERT_EQ(2, r.n);
	EXPECT_EQ(RW, r.v[0].c.kind);
	EXPECT_EQ(X, r.v[0].c.addr);
	EXPECT_EQ(WW, r.v[1].c.kind);
	EXPECT_EQ(Y, r.v[1].c.addr);
	trace_result_free(&r);
}

/*
 * A free is a write of the freed bytes: another thread freeing memory that
 * an ongoing region read is a read-write conflict, also when nothing ever
 * wrote the memory (version 0) -- clearing the history must not make the
 * version look unchanged.
 */
TEST(free_while_reader_region_ongoing)
{
	const struct valor_event free_unwritten[] = {
		T_RD(1, P, 8), /* 0 */
		T_FREE(2, P, 8), /* 1 */
		T_REL(1, M), /* 2 */
	};

	VERDICT(free_unwritten, VALOR, RFR, C(RW, P, 8, 1, 0, 2, 1, LAZY, 2));
	VERDICT(free_unwritten, FASTRCD, RFR,
		C(RW, P, 8, 1, 0, 2, 1, EAGER, 1));
	VERDICT(free_unwritten, FASTTRACK, RFR,
		C(RW, P, 8, 1, 0, 2, 1, EAGER, 1));
}

/*
 * The same with initialized memory, and history after the free: a new
 * allocation at P starts fresh and its own conflicts are still found.
 */
TEST(free_while_reader_region_ongoing_then_reuse)
{
	const struct valor_event free_written[] = {
		T_WR(2, P, 8), /* 0: T2 initializes p */
		T_REL(2, M), /* 1: publishes it */
		T_ACQ(1, M), /* 2 */
		T_RD(1, P, 8), /* 3 */
		T_FREE(2, P, 8), /* 4: T1's region is ongoing */
		T_REL(1, M), /* 5 */
		T_WR(T0, P, 8), /* 6: reuse; history was cleared */
		T_RD(1, P, 8), /* 7: T0's region is ongoing */
	};

	VERDICT(free_written, VALOR, RFR, C(RW, P, 8, 1, 3, 2, 4, LAZY, 5),
		C(WR, P, 8, T0, 6, 1, 7, EAGER, 7));
	VERDICT(free_written, FASTRCD, RFR, C(RW, P, 8, 1, 3, 2, 4, EAGER, 4),
		C(WR, P, 8, T0, 6, 1, 7, EAGER, 7));
	VERDICT(free_written, FASTTRACK, RFR, C(RW, P, 8, 1, 3, 2, 4, EAGER, 4),
		C(WR, P, 8, T0, 6, 1, 7, EAGER, 7));
}

/*
 * VALIDATE reports a pending read-write conflict at once and does not end
 * the region: T1's write of y still conflicts with T0's later read, and
 * T1's read of z, made before the VALIDATE, is still checked against a
 * write after it.  x is not reported a second time.
 */
TEST(validate_event_reports_without_ending_region)
{
	static const uint32_t eager_analyses[] = { FASTRCD, FASTTRACK };
	const struct valor_event validate[] = {
		T_WR(1, Y, 8), /* 0 */
		T_RD(1, X, 8), /* 1 */
		T_RD(1, Z, 8), /* 2 */
		T_WR(2, X, 8), /* 3 */
		T_VALIDATE(1), /* 4 */
		T_RD(T0, Y, 8), /* 5: T1's region still ongoing */
		T_WR(2, Z, 8), /* 6 */
		T_REL(1, M), /* 7 */
	};

	VERDICT(validate, VALOR, RFR, C(RW, X, 8, 1, 1, 2, 3, LAZY, 4),
		C(WR, Y, 8, 1, 0, T0, 5, EAGER, 5),
		C(RW, Z, 8, 1, 2, 2, 6, LAZY, 7));
	for (size_t a = 0; a < 2; a++)
		VERDICT(validate, eager_analyses[a], RFR,
			C(RW, X, 8, 1, 1, 2, 3, EAGER, 3),
			C(WR, Y, 8, 1, 0, T0, 5, EAGER, 5),
			C(RW, Z, 8, 1, 2, 2, 6, EAGER, 6));
}

/*
 * Regions still ongoing when the trace ends are ended by the replay's
 * finish, which validates: the conflict is reported at TRACE_AT_FINISH.
 */
TEST(unfinished_region_validated_at_finish)
{
	const struct valor_event unfinished[] = {
		T_RD(1, X, 4), /* 0 */
		T_WR(2, X, 4), /* 1 */
	};

	VERDICT(unfinished, VALOR, RFR,
		C(RW, X, 4, 1, 0, 2, 1, LAZY, TRACE_AT_FINISH));
	VERDICT(unfinished, FASTRCD, RFR, C(RW, X, 4, 1, 0, 2, 1, EAGER, 1));
	VERDICT(unfinished, FASTTRACK, RFR, C(RW, X, 4, 1, 0, 2, 1, EAGER, 1));
}

TEST_HARNESS_MAIN
