// SPDX-License-Identifier: GPL-2.0
/*
 * FastRCD's and FastTrack's cell records (libvalor/core/hbcell.h): a
 * cell keeps up to three access records with byte masks in its shadow
 * and moves them to a block when it needs more.  These traces check
 * what that representation must not change -- every racing access is
 * still found, a report covers exactly the bytes of the access it names
 * -- and what it is for: bytes one site reads share a record.
 */
#include "kselftest_harness.h"

#include <valor/engine.h>

#include "trace.h"

#define X 0x10000ULL

#define FASTRCD VALOR_ANALYSIS_FASTRCD
#define FASTTRACK VALOR_ANALYSIS_FASTTRACK

/* A read or write with a site of its own choosing (trace.h: "ip"). */
#define T_RD_AT(t, a, n, site) \
	T_EV(VALOR_EV_ACCESS, t, .addr = (a), .size = (n), .ip = (site))

FIXTURE(hb){};
FIXTURE_VARIANT(hb)
{
	uint32_t analysis;
};
FIXTURE_VARIANT_ADD(hb, fastrcd){ .analysis = FASTRCD };
FIXTURE_VARIANT_ADD(hb, fasttrack){ .analysis = FASTTRACK };
FIXTURE_SETUP(hb)
{
}
FIXTURE_TEARDOWN(hb)
{
}

/*
 * Six threads read one cell at once: six read records, more than a cell
 * holds, so they move to a block.  A write by a seventh thread races
 * with every one of them (their regions are ongoing and none of the
 * reads happens before it), and each is reported.
 */
TEST_F(hb, reads_of_six_threads_leave_the_cell_and_all_race)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), T_CREATE(0, 2), T_CREATE(0, 3), T_CREATE(0, 4),
		T_CREATE(0, 5), T_CREATE(0, 6), T_CREATE(0, 7), T_RD(1, X, 8),
		T_RD(2, X, 8),	T_RD(3, X, 8),	T_RD(4, X, 8),	T_RD(5, X, 8),
		T_RD(6, X, 8),	T_WR(7, X, 8),
	};
	struct valor_params p = { .analysis = variant->analysis };
	struct trace_result tr;

	ASSERT_EQ(0, trace_run(&p, ev, TRACE_LEN(ev), &tr));
	EXPECT_EQ(1, tr.stats.cells_refined);
	for (uint32_t t = 1; t <= 6; t++)
		EXPECT_EQ(1, trace_count_at(&tr, VALOR_CONFLICT_RW, X, t, 7));
	EXPECT_EQ(6, tr.n);
	for (size_t i = 0; i < tr.n; i++) {
		EXPECT_EQ(X, tr.v[i].c.addr);
		EXPECT_EQ(8, tr.v[i].c.size);
	}
	if (tr.n != 6)
		trace_dump(&tr, "six readers");
	trace_result_free(&tr);
}

/*
 * A byte-by-byte scan from one site is one record, not eight.  A later
 * write of one byte by another thread is reported for that byte alone;
 * a write of the whole cell then for the bytes around it, as two runs
 * (byte 5 is the writer's own by then), each naming the scan's site.
 */
TEST_F(hb, a_scan_of_bytes_from_one_site_is_one_record)
{
	const uint64_t scan = 1000;
	const struct valor_event ev[] = {
		T_CREATE(0, 1),
		T_CREATE(0, 2),
		T_RD_AT(1, X + 0, 1, scan),
		T_RD_AT(1, X + 1, 1, scan),
		T_RD_AT(1, X + 2, 1, scan),
		T_RD_AT(1, X + 3, 1, scan),
		T_RD_AT(1, X + 4, 1, scan),
		T_RD_AT(1, X + 5, 1, scan),
		T_RD_AT(1, X + 6, 1, scan),
		T_RD_AT(1, X + 7, 1, scan),
		T_WR(2, X + 5, 1),
		T_WR(2, X, 8),
	};
	struct valor_params p = { .analysis = variant->analysis };
	struct trace_result tr;

	ASSERT_EQ(0, trace_run(&p, ev, TRACE_LEN(ev), &tr));
	EXPECT_EQ(0, tr.stats.cells_refined);
	ASSERT_EQ(3, tr.n);
	EXPECT_EQ(X + 5, tr.v[0].c.addr);
	EXPECT_EQ(1, tr.v[0].c.size);
	EXPECT_EQ(X, tr.v[1].c.addr);
	EXPECT_EQ(5, tr.v[1].c.size);
	EXPECT_EQ(X + 6, tr.v[2].c.addr);
	EXPECT_EQ(2, tr.v[2].c.size);
	for (size_t i = 0; i < tr.n; i++) {
		EXPECT_EQ(VALOR_CONFLICT_RW, tr.v[i].c.kind);
		EXPECT_EQ(scan, tr.v[i].c.first.site);
		EXPECT_EQ(1, tr.v[i].first_tid);
		EXPECT_EQ(2, tr.v[i].second_tid);
	}
	trace_result_free(&tr);
}

/*
 * Two variables in one cell, written in one region from two sites (the
 * corpus's flag_plain_racy under clang): a read of the second is
 * reported against the write of the second, for its four bytes only.
 */
TEST_F(hb, a_report_names_the_access_to_its_bytes)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1),	   T_CREATE(0, 2),    T_WR(1, X, 4),
		T_WR(1, X + 4, 4), T_RD(2, X + 4, 4),
	};
	struct valor_params p = { .analysis = variant->analysis };
	struct trace_result tr;

	ASSERT_EQ(0, trace_run(&p, ev, TRACE_LEN(ev), &tr));
	ASSERT_EQ(1, tr.n);
	EXPECT_EQ(VALOR_CONFLICT_WR, tr.v[0].c.kind);
	EXPECT_EQ(X + 4, tr.v[0].c.addr);
	EXPECT_EQ(4, tr.v[0].c.size);
	EXPECT_EQ(3, tr.v[0].first_event);
	EXPECT_EQ(4, tr.v[0].second_event);
	trace_result_free(&tr);
}

/*
 * FastTrack: a read that the earlier reads of a cell happen before
 * stands for them.  T1 and T2 read X concurrently, T0 joins both and
 * reads X; T3, created before any of it, then writes X.  T3 races with
 * all three reads, and T0's read is enough to find it: the read set
 * holds only T0's read by then, so there is one report.
 */
TEST(fasttrack_read_after_joins_stands_for_the_reads_before_it)
{
	const struct valor_event ev[] = {
		T_CREATE(0, 1), T_CREATE(0, 2), T_CREATE(0, 3), T_RD(1, X, 8),
		T_RD(2, X, 8),	T_EXIT(1),	T_EXIT(2),	T_JOIN(0, 1),
		T_JOIN(0, 2),	T_RD(0, X, 8),	T_WR(3, X, 8),
	};
	struct valor_params p = { .analysis = FASTTRACK };
	struct trace_result tr;

	ASSERT_EQ(0, trace_run(&p, ev, TRACE_LEN(ev), &tr));
	EXPECT_EQ(0, tr.stats.cells_refined);
	EXPECT_EQ(1, trace_count_at(&tr, VALOR_CONFLICT_RW, X, 0, 3));
	EXPECT_EQ(1, tr.n);
	if (tr.n == 1) {
		EXPECT_EQ(10, tr.v[0].reported_at);
	} else {
		trace_dump(&tr, "joined readers");
	}
	trace_result_free(&tr);
}

TEST_HARNESS_MAIN
