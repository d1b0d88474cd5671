/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The expected-verdict checker of the golden-trace tests
 * (tests/core/golden_*_test.c): a test writes down every conflict it
 * expects from a hand-written trace with C(...), and VERDICT() replays the
 * trace and requires exactly those conflicts, in any order, each record
 * consistent with the analysis that was asked for.  When the verdict
 * differs, both lists are printed before the test fails.  The short names
 * below (WW, VALOR, RFR, EAGER, ...) are the vocabulary of those tables.
 *
 * The macros assert, so they belong in kselftest_harness.h test bodies
 * (include the harness first); golden.c itself does not use the harness.
 *
 * Also here: the two-thread Valor context of the tests that read versions
 * through valor_shadow_version().
 */
#ifndef VALOR_TESTS_GOLDEN_H
#define VALOR_TESTS_GOLDEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/valor.h>
#include <valor/engine.h>

#include "trace.h"

#define WW VALOR_CONFLICT_WW
#define WR VALOR_CONFLICT_WR
#define RW VALOR_CONFLICT_RW

#define VALOR VALOR_ANALYSIS_VALOR
#define FASTRCD VALOR_ANALYSIS_FASTRCD
#define FASTTRACK VALOR_ANALYSIS_FASTTRACK
#define RFR VALOR_REGIONS_RFR
#define SFR VALOR_REGIONS_SFR

#define EAGER false
#define LAZY true

/*
 * One expected conflict.  first/second are (trace thread, event index) of
 * the earlier and the later access; at is the event whose replay reported
 * it (TRACE_AT_FINISH for the final region ends).
 */
struct golden_want {
	uint32_t kind;
	uint64_t addr;
	uint32_t size;
	uint32_t first_tid;
	size_t first_event;
	uint32_t second_tid;
	size_t second_event;
	bool lazy;
	size_t at;
};

#define C(k, a, n, t1, e1, t2, e2, lz, at_)          \
	((struct golden_want){ .kind = (k),          \
			       .addr = (a),          \
			       .size = (n),          \
			       .first_tid = (t1),    \
			       .first_event = (e1),  \
			       .second_tid = (t2),   \
			       .second_event = (e2), \
			       .lazy = (lz),         \
			       .at = (at_) })

/* The most conflicts one verdict may list. */
#define GOLDEN_MAX_WANTS 16

/*
 * Replay @ev[0..n) with @p and compare with @want[0..nwant), in any order.
 * True if the replay accepted every event and reported exactly those
 * conflicts, each record consistent; otherwise prints why, both lists
 * and the title (@what, the analysis and the region mode) and returns
 * false.
 */
bool golden_verdict_holds(const char *what, const struct valor_event *ev,
			  size_t n, const struct valor_params *p,
			  const struct golden_want *want, size_t nwant);

#define PARAMS(a, m) \
	(&(const struct valor_params){ .analysis = (a), .regions = (m) })
#define WANT(...) ((const struct golden_want[]){ __VA_ARGS__ })
#define NWANT(...) (sizeof(WANT(__VA_ARGS__)) / sizeof(struct golden_want))

#define GOLDEN_ASSERT(what, trace, params, want, nwant)                      \
	do {                                                                 \
		bool verdict_holds = golden_verdict_holds(                   \
			what, trace, TRACE_LEN(trace), params, want, nwant); \
                                                                             \
		ASSERT_TRUE(verdict_holds)                                   \
		TH_LOG("%s: verdict differs (see above)", what);             \
	} while (0)

/* The trace's verdict with @params (a const struct valor_params *). */
#define VERDICT_WITH(trace, params, ...)                        \
	GOLDEN_ASSERT(#trace, trace, params, WANT(__VA_ARGS__), \
		      NWANT(__VA_ARGS__))

/* The trace's verdict for one analysis and region mode. */
#define VERDICT(trace, analysis, regions, ...) \
	VERDICT_WITH(trace, PARAMS(analysis, regions), __VA_ARGS__)
#define NO_CONFLICT(trace, analysis, regions) \
	GOLDEN_ASSERT(#trace, trace, PARAMS(analysis, regions), NULL, 0)

/* The same verdict for every analysis in RFR mode. */
#define VERDICT_ALL(trace, ...)                              \
	do {                                                 \
		VERDICT(trace, VALOR, RFR, __VA_ARGS__);     \
		VERDICT(trace, FASTRCD, RFR, __VA_ARGS__);   \
		VERDICT(trace, FASTTRACK, RFR, __VA_ARGS__); \
	} while (0)

/* The same verdict for every analysis in either region mode. */
#define VERDICT_ANYWHERE(trace, ...)                         \
	do {                                                 \
		VERDICT_ALL(trace, __VA_ARGS__);             \
		VERDICT(trace, VALOR, SFR, __VA_ARGS__);     \
		VERDICT(trace, FASTRCD, SFR, __VA_ARGS__);   \
		VERDICT(trace, FASTTRACK, SFR, __VA_ARGS__); \
	} while (0)

/* No conflict for any analysis in either region mode. */
#define NO_CONFLICT_ANYWHERE(trace)                 \
	do {                                        \
		NO_CONFLICT(trace, VALOR, RFR);     \
		NO_CONFLICT(trace, FASTRCD, RFR);   \
		NO_CONFLICT(trace, FASTTRACK, RFR); \
		NO_CONFLICT(trace, VALOR, SFR);     \
		NO_CONFLICT(trace, FASTRCD, SFR);   \
		NO_CONFLICT(trace, FASTTRACK, SFR); \
	} while (0)

/*
 * A Valor context (default parameters otherwise) with two root threads,
 * for reading versions through valor_shadow_version().  NULL, with
 * nothing left allocated, if any of the three cannot be made.
 */
struct valor_ctx *golden_valor_ctx_two_threads(struct valor_thread **t1,
					       struct valor_thread **t2);

#endif /* VALOR_TESTS_GOLDEN_H */
