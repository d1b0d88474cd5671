// SPDX-License-Identifier: GPL-2.0
/*
 * The differential test: every analysis against the naive oracle
 * (tests/lib/oracle.c) on random traces (tests/lib/tracegen.c).
 *
 * For each trace the oracle finds the first event k at which any conflict
 * occurs; the engine replays ev[0..k] (all of it if there is none) and
 * finishes, which ends every region, and the two key sets must be equal
 * (Documentation/semantics.md, "What is exact").  The reports are also
 * checked for what the keys leave out: eager kinds are reported at event
 * k by its thread against one of the threads the oracle names, Valor's
 * read-write conflicts are lazy and the others are not.
 *
 * Environment:
 *   VALOR_DIFF_TRACES  traces per analysis and region mode (default 10000)
 *   VALOR_DIFF_SEED    base seed (default DEFAULT_SEED), decimal or 0x...
 *   VALOR_DIFF_ONLY    run only the trace with this index (replay)
 *   VALOR_DIFF_CONFIGS run only configurations whose names start with
 *                      one of these comma-separated prefixes; the others
 *                      are reported as skipped
 * Documentation/testing-oracle.md says how to replay and shrink failures.
 */
#include "kselftest_harness.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <valor/engine.h>

#include "../../libvalor/core/internal.h" /* eng_zfree_min */
#include "oracle.h"
#include "trace.h"
#include "tracegen.h"

#define DEFAULT_SEED 0x56414c4f52ULL /* "VALOR" */
#define DEFAULT_TRACES 10000
/* Below this many traces a run may miss a kind by chance. */
#define COVERAGE_MIN_TRACES 1000
/* Mismatches printed in full (with a shrunk trace); the rest are counted. */
#define MAX_PRINTED 3

struct config {
	const char *name;
	enum valor_analysis analysis;
	enum valor_region_mode mode;
};

static const struct config cfg_valor_rfr = {
	.name = "valor/rfr",
	.analysis = VALOR_ANALYSIS_VALOR,
	.mode = VALOR_REGIONS_RFR,
};

static const struct config cfg_valor_sfr = {
	.name = "valor/sfr",
	.analysis = VALOR_ANALYSIS_VALOR,
	.mode = VALOR_REGIONS_SFR,
};

static const struct config cfg_fastrcd_rfr = {
	.name = "fastrcd/rfr",
	.analysis = VALOR_ANALYSIS_FASTRCD,
	.mode = VALOR_REGIONS_RFR,
};

static const struct config cfg_fastrcd_sfr = {
	.name = "fastrcd/sfr",
	.analysis = VALOR_ANALYSIS_FASTRCD,
	.mode = VALOR_REGIONS_SFR,
};

static const struct config cfg_fasttrack = {
	.name = "fasttrack",
	.analysis = VALOR_ANALYSIS_FASTTRACK,
	.mode = VALOR_REGIONS_RFR,
};

enum outcome {
	MATCH,
	MISMATCH, /* key sets or report details differ */
	REJECTED, /* the engine refused an event the oracle accepts */
	INVALID, /* the oracle refuses the trace: a generator bug */
};

struct coverage {
	size_t traces;
	size_t clean;
	size_t conflicting;
	size_t keys[ORACLE_KEY_KINDS]; /* compared keys, per kind */
	size_t reports[3]; /* reports checked against witnesses, per kind */
	size_t quarter[4]; /* where in the trace first conflicts fall */
	size_t alone; /* traces in which a thread ran alone */
	size_t alone_conflicting; /* ... and which had a conflict */
	size_t strided_first; /* first conflicts a strided access took part in */
	size_t swept_first; /* ... that an access of the sweep area took part in */
	size_t optional_left; /* traces whose engine left out optional keys */
	size_t lazy_free_rw; /* read-write reports of a free left lazy */
	size_t bad;
};

static bool is_strided(const struct valor_event *e)
{
	return e->kind == VALOR_EV_ACCESS && (e->flags & VALOR_EVF_STRIDED);
}

static bool is_free(const struct valor_event *e)
{
	return e->kind == VALOR_EV_FREE || e->kind == VALOR_EV_MUNMAP;
}

static bool in_sweep_area(const struct valor_event *e)
{
	return e->kind == VALOR_EV_ACCESS && e->addr >= TRACEGEN_SWEEP_BASE &&
	       e->addr < TRACEGEN_SWEEP_BASE + TRACEGEN_SWEEP_SIZE;
}

/* Whether an access that is @what makes or meets the first conflict. */
static bool at_first(const struct valor_event *ev,
		     const struct oracle_result *o,
		     bool (*what)(const struct valor_event *))
{
	if (what(&ev[o->first]))
		return true;
	for (size_t i = 0; i < o->nwitnesses; i++)
		if (what(&ev[o->witnesses[i].earlier]))
			return true;
	return false;
}

static uint64_t env_u64(const char *name, uint64_t dflt, bool *set)
{
	const char *s = getenv(name);
	char *end;
	uint64_t v;

	if (set)
		*set = false;
	if (!s || !*s)
		return dflt;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end) {
		fprintf(stderr, "# ignoring %s=%s: not a number\n", name, s);
		return dflt;
	}
	if (set)
		*set = true;
	return v;
}

/* Whether every thread of @ev but the first is created by another. */
static bool one_root(const struct valor_event *ev, size_t n)
{
	bool known[64] = { false };

	for (size_t i = 0; i < n; i++) {
		if (i && !known[ev[i].tid % 64])
			return false;
		known[ev[i].tid % 64] = true;
		if (ev[i].kind == VALOR_EV_THREAD_CREATE)
			known[ev[i].arg % 64] = true;
	}
	return true;
}

/*
 * Engine parameters of trace @index: one trace in four starts every clock
 * just below 2^32 so that counters cross it within the trace.  Traces
 * with one root are replayed as the runtime runs programs, under
 * VALOR_ONE_ROOT (threads that run alone are skipped), but for one in
 * four, which keeps the other way checked too.
 */
static struct valor_params params_of(const struct config *cfg, size_t index,
				     const struct valor_event *ev, size_t n)
{
	struct valor_params p = {
		.analysis = cfg->analysis,
		.regions = cfg->mode,
	};

	if (index % 4 == 3)
		p.initial_clock = (1ULL << 32) - 3;
	if (index % 4 != 1 && one_root(ev, n))
		p.flags = VALOR_ONE_ROOT;
	return p;
}

static bool eager(const struct config *cfg, uint32_t kind)
{
	return kind != VALOR_CONFLICT_RW ||
	       cfg->analysis != VALOR_ANALYSIS_VALOR;
}

/* The engine's reports as oracle keys, normalized. */
static size_t engine_keys(const struct config *cfg,
			  const struct oracle_result *o,
			  const struct trace_result *tr, struct oracle_key **v)
{
	size_t n = 0, cap = 0;

	*v = NULL;
	for (size_t i = 0; i < tr->n; i++) {
		const struct trace_conflict *tc = &tr->v[i];

		for (uint64_t b = 0; b < tc->c.size; b++) {
			struct oracle_key k = {
				.kind = oracle_key_kind(cfg->analysis,
							tc->c.kind),
				.addr = tc->c.addr + b,
			};

			if (tc->c.kind == VALOR_CONFLICT_RW &&
			    oracle_rw_by_region(cfg->analysis)) {
				k.who = tc->first_tid;
				k.tag = oracle_region_of(o, tc->first_event);
			} else {
				/*
				 * The later access of an eager conflict is the
				 * event it was reported at; Valor's traces
				 * share read sites (share_read_sites()), so
				 * its site need not name that event.
				 */
				k.who = cfg->analysis == VALOR_ANALYSIS_VALOR ?
						tc->reported_at :
						tc->second_event;
				k.tag = ORACLE_TAG_EVENT;
			}
			oracle_keys_push(v, &n, &cap, &k);
		}
	}
	return oracle_keys_normalize(*v, n);
}

/*
 * Whether the engine's keys @b are the oracle's @a, where the engine may
 * leave out the oracle's optional keys (both sorted).
 */
static bool same_keys(const struct oracle_key *a, size_t na,
		      const struct oracle_key *b, size_t nb)
{
	size_t j = 0;

	for (size_t i = 0; i < na; i++) {
		if (j < nb && !oracle_key_cmp(&a[i], &b[j]))
			j++;
		else if (!a[i].optional)
			return false;
	}
	return j == nb;
}

/*
 * Whether the report's first site is an access of its first thread of the
 * report's kind (a read for read-write, a write otherwise).
 */
static bool site_is_access_of(const struct valor_event *ev, size_t n,
			      const struct trace_conflict *tc)
{
	const struct valor_event *e;
	bool want_write = tc->c.kind != VALOR_CONFLICT_RW;

	if (tc->first_event >= n)
		return false;
	e = &ev[tc->first_event];
	return e->kind == VALOR_EV_ACCESS && e->tid == tc->first_tid &&
	       !!(e->flags & VALOR_EVF_WRITE) == want_write;
}

/*
 * The report's earlier side.  FastTrack must name an access that races,
 * with the report's kind, on every byte of the report.  Valor and FastRCD
 * may name any access of the right kind from the region that conflicts:
 * a region does not repeat the metadata work for a cell it has already
 * written (or, for Valor, read), so the site kept is the region's first
 * access to the cell, which need not cover every byte reported.
 */
static bool earlier_side_ok(const struct config *cfg,
			    const struct valor_event *ev, size_t n,
			    const struct oracle_result *o,
			    const struct trace_conflict *tc)
{
	uint64_t region = oracle_region_of(o, tc->first_event);

	if (!site_is_access_of(ev, n, tc))
		return false;
	for (uint64_t b = 0; b < tc->c.size; b++) {
		uint64_t addr = tc->c.addr + b;

		if (cfg->analysis == VALOR_ANALYSIS_FASTTRACK ?
			    !oracle_witnessed(o, tc->c.kind, tc->first_event,
					      addr) :
			    !oracle_witnessed_in_region(o, tc->c.kind, region,
							addr))
			return false;
	}
	return true;
}

/*
 * What the keys do not say: who reported when, against whom.  Only called
 * once the key sets are equal.  Prints the first problem when @verbose.
 */
static bool reports_consistent(const struct config *cfg,
			       const struct valor_event *ev, size_t n,
			       const struct oracle_result *o,
			       const struct trace_result *tr, bool verbose)
{
	size_t k = o->first;

	if (k >= n && tr->n) {
		if (verbose)
			printf("# reports on a trace without conflicts\n");
		return false;
	}
	for (size_t i = 0; i < tr->n; i++) {
		const struct trace_conflict *tc = &tr->v[i];
		bool lazy_kind = !eager(cfg, tc->c.kind);
		const char *why = NULL;

		if (tc->c.analysis != cfg->analysis)
			why = "wrong analysis in the report";
		else if (tc->c.size == 0)
			why = "empty report";
		else if (tc->c.lazy != lazy_kind)
			why = lazy_kind ? "Valor read-write not marked lazy" :
					  "eager conflict marked lazy";
		else if (!lazy_kind && tc->reported_at != k)
			why = "eager conflict not reported at its event";
		else if (lazy_kind && tc->reported_at != k &&
			 tc->reported_at != TRACE_AT_FINISH)
			why = "lazy conflict reported before the write";
		else if (tc->second_tid != UINT32_MAX &&
			 tc->second_tid != ev[k].tid)
			why = "later access made by another thread";
		else if (!lazy_kind && tc->second_tid == UINT32_MAX)
			why = "eager conflict without the later thread";
		else if (!earlier_side_ok(cfg, ev, n, o, tc))
			why = "the earlier site is not an access that "
			      "conflicts there";
		if (why) {
			if (verbose)
				printf("# report %zu: %s\n", i, why);
			return false;
		}
	}
	return true;
}

/*
 * Compare the engine with the oracle on @ev[0..n).  With @verbose, print
 * everything needed to understand a mismatch.
 */
static enum outcome compare(const struct config *cfg,
			    const struct valor_params *p,
			    const struct valor_event *ev, size_t n,
			    bool verbose, struct coverage *cov)
{
	struct oracle_key *mine = NULL;
	struct oracle_result o;
	struct trace_result tr;
	enum outcome res = MATCH;
	size_t nmine, prefix;

	oracle_run(ev, n, cfg->analysis, cfg->mode, &o);
	if (o.err) {
		if (verbose) {
			printf("# the oracle rejects event %zu (%s): "
			       "generator bug\n",
			       o.err_event, o.err_reason);
			tracegen_print(ev, n, o.err_event);
		}
		oracle_result_free(&o);
		return INVALID;
	}
	prefix = o.first < n ? o.first + 1 : n;
	if (trace_run(p, ev, prefix, &tr) < 0) {
		if (verbose) {
			printf("# the engine rejected event %zd: %d (%s)\n",
			       tr.err ? (ssize_t)tr.err_event : -1, tr.err,
			       strerror(-tr.err));
			tracegen_print(ev, prefix, o.first);
		}
		trace_result_free(&tr);
		oracle_result_free(&o);
		return REJECTED;
	}
	nmine = engine_keys(cfg, &o, &tr, &mine);
	if (!same_keys(o.keys, o.nkeys, mine, nmine) ||
	    !reports_consistent(cfg, ev, n, &o, &tr, verbose))
		res = MISMATCH;

	if (res == MATCH && cov) {
		if (tr.stats.accesses_alone) {
			cov->alone++;
			cov->alone_conflicting += o.first < n;
		}
		if (o.first == n) {
			cov->clean++;
		} else {
			cov->conflicting++;
			cov->strided_first += at_first(ev, &o, is_strided);
			cov->swept_first += at_first(ev, &o, in_sweep_area);
			cov->quarter[o.first * 4 / n]++;
			for (size_t i = 0; i < o.nkeys; i++)
				cov->keys[o.keys[i].kind]++;
			cov->optional_left += nmine < o.nkeys;
			for (size_t i = 0; i < tr.n; i++) {
				cov->reports[tr.v[i].c.kind]++;
				cov->lazy_free_rw +=
					tr.v[i].c.kind == VALOR_CONFLICT_RW &&
					is_free(&ev[o.first]) &&
					eng_zfree_min == 1;
			}
		}
	}
	if (res != MATCH && verbose) {
		printf("# %s, %zu events, first conflict at %zd%s%s\n",
		       cfg->name, prefix, o.first < n ? (ssize_t)o.first : -1,
		       p->initial_clock ? ", initial_clock 2^32-3" : "",
		       p->flags & VALOR_ONE_ROOT ? ", one root" : "");
		tracegen_print(ev, prefix, o.first);
		oracle_keys_print(o.keys, o.nkeys, "oracle keys");
		oracle_keys_print(mine, nmine, "engine keys");
		trace_dump(&tr, "engine reports");
	}
	free(mine);
	trace_result_free(&tr);
	oracle_result_free(&o);
	return res;
}

/*
 * Shrink a failing trace: drop chunks of events, halving the chunk size,
 * as long as the trace stays valid and fails the same way.  Removing an
 * event can only make a trace invalid (caught by the oracle) or change
 * its verdicts, so what remains is a genuine smaller counterexample.
 */
static size_t shrink(const struct config *cfg, const struct valor_params *p,
		     struct valor_event *ev, size_t n, enum outcome want)
{
	struct valor_event cand[TRACEGEN_MAX_EVENTS];
	size_t chunk = n / 2 ? n / 2 : 1;

	for (;;) {
		bool progress = false;

		for (size_t i = 0; i + chunk <= n;) {
			size_t m = 0;

			for (size_t j = 0; j < n; j++)
				if (j < i || j >= i + chunk)
					cand[m++] = ev[j];
			if (m &&
			    compare(cfg, p, cand, m, false, NULL) == want) {
				memcpy(ev, cand, m * sizeof(*ev));
				n = m;
				progress = true;
			} else {
				i += chunk;
			}
		}
		if (!progress) {
			if (chunk == 1)
				break;
			chunk /= 2;
		}
	}
	return n;
}

static void report_failure(const struct config *cfg, uint64_t base,
			   size_t index, uint64_t seed,
			   const struct valor_params *p,
			   const struct valor_event *ev, size_t n,
			   enum outcome res)
{
	struct valor_event small[TRACEGEN_MAX_EVENTS];
	size_t m;

	printf("# ---- %s MISMATCH: trace %zu, trace seed 0x%llx ----\n",
	       cfg->name, index, (unsigned long long)seed);
	printf("# replay: VALOR_DIFF_SEED=0x%llx VALOR_DIFF_ONLY=%zu "
	       "build/tests/core/differential_test\n",
	       (unsigned long long)base, index);
	compare(cfg, p, ev, n, true, NULL);
	if (res == INVALID)
		return;
	memcpy(small, ev, n * sizeof(*ev));
	m = shrink(cfg, p, small, n, res);
	printf("# ---- shrunk to %zu events ----\n", m);
	compare(cfg, p, small, m, true, NULL);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) +
	       (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static uint64_t config_seed(const struct config *cfg, uint64_t base)
{
	/* Different traces per configuration, all replayable from @base. */
	return base ^ ((uint64_t)(cfg->analysis * 2 + cfg->mode + 1) *
		       0x9e3779b97f4a7c15ULL);
}

/*
 * Valor keeps one read-log entry for the cells of a group that one site
 * read whole at one cell word, as a loop reads an array.  Traces give
 * every access its own site, so for Valor about half of each thread's
 * reads take the site of an earlier read of the same thread in the same
 * region instead: a report naming that site still names a read of the
 * region that conflicts, which is all the checks below ask of Valor.
 * Any other event of the thread may end its region: the chain restarts.
 */
static void share_read_sites(struct valor_event *ev, size_t n, uint64_t seed)
{
	uint64_t chain[64] = { 0 };

	for (size_t i = 0; i < n; i++) {
		uint32_t t = ev[i].tid % 64;
		uint64_t h = (seed + i) * 0x9e3779b97f4a7c15ULL;

		if (ev[i].kind != VALOR_EV_ACCESS) {
			chain[t] = 0;
			continue;
		}
		if (ev[i].flags & VALOR_EVF_WRITE)
			continue;
		if (chain[t] && (h >> 63))
			ev[i].ip = chain[t];
		else
			chain[t] = ev[i].ip = i + 1;
	}
}

/* Is @cfg among the prefixes of VALOR_DIFF_CONFIGS (all if unset)? */
static bool config_selected(const struct config *cfg)
{
	const char *list = getenv("VALOR_DIFF_CONFIGS");

	if (!list || !*list)
		return true;
	while (*list) {
		size_t len = strcspn(list, ",");

		if (len && !strncmp(cfg->name, list, len))
			return true;
		list += len + (list[len] == ',');
	}
	return false;
}

static void run_config(struct __test_metadata *_metadata,
		       const struct config *cfg)
{
	struct valor_event ev[TRACEGEN_MAX_EVENTS];
	struct coverage cov = { 0 };
	struct timespec t0;
	bool only_set, seed_set;
	uint64_t base = env_u64("VALOR_DIFF_SEED", DEFAULT_SEED, &seed_set);
	uint64_t traces = env_u64("VALOR_DIFF_TRACES", DEFAULT_TRACES, NULL);
	uint64_t only = env_u64("VALOR_DIFF_ONLY", 0, &only_set);
	uint64_t from = only_set ? only : 0, to = only_set ? only + 1 : traces;
	size_t zfree_min_default = eng_zfree_min;

	if (!config_selected(cfg))
		SKIP(return, "not in VALOR_DIFF_CONFIGS");
	printf("# seed: 0x%llx%s\n", (unsigned long long)base,
	       seed_set ? " (VALOR_DIFF_SEED)" : " (default)");
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t i = from; i < to; i++) {
		uint64_t seed = tracegen_seed(config_seed(cfg, base), i);
		size_t n = tracegen_make(seed, ev, NULL);
		struct valor_params p = params_of(cfg, i, ev, n);
		enum outcome res;

		if (cfg->analysis == VALOR_ANALYSIS_VALOR)
			share_read_sites(ev, n, seed);
		/*
		 * Every other trace frees lazily whatever the size, so that
		 * the ring of frees that leave zero words (internal.h,
		 * "struct zfree") meets the oracle too.
		 */
		eng_zfree_min = i % 2 ? 1 : zfree_min_default;
		res = compare(cfg, &p, ev, n, false, &cov);

		cov.traces++;
		if (res == MATCH)
			continue;
		if (cov.bad++ < MAX_PRINTED)
			report_failure(cfg, base, i, seed, &p, ev, n, res);
		fflush(stdout);
	}

	printf("# %s: %zu traces in %.1f s: %zu with conflicts, %zu clean, "
	       "%zu mismatched\n",
	       cfg->name, cov.traces, seconds_since(&t0), cov.conflicting,
	       cov.clean, cov.bad);
	printf("# %s: keys compared:", cfg->name);
	for (uint32_t k = 0; k < ORACLE_KEY_KINDS; k++)
		if (cov.keys[k])
			printf(" %s %zu", oracle_key_kind_name(k), cov.keys[k]);
	printf("; reports checked: WW %zu, WR %zu, RW %zu\n",
	       cov.reports[VALOR_CONFLICT_WW], cov.reports[VALOR_CONFLICT_WR],
	       cov.reports[VALOR_CONFLICT_RW]);
	printf("# %s: first conflict in each quarter of the trace: %zu %zu "
	       "%zu %zu\n",
	       cfg->name, cov.quarter[0], cov.quarter[1], cov.quarter[2],
	       cov.quarter[3]);
	printf("# %s: traces with a thread that ran alone: %zu (%zu with "
	       "conflicts)\n",
	       cfg->name, cov.alone, cov.alone_conflicting);
	printf("# %s: first conflicts with a strided access on a side: %zu\n",
	       cfg->name, cov.strided_first);
	printf("# %s: first conflicts in the sweep area: %zu\n", cfg->name,
	       cov.swept_first);
	printf("# %s: traces whose reads of the region's own writes "
	       "went unlogged (optional keys left out): %zu\n",
	       cfg->name, cov.optional_left);
	printf("# %s: read-write reports against a free that left zero "
	       "words: %zu\n",
	       cfg->name, cov.lazy_free_rw);
	eng_zfree_min = zfree_min_default;
	if (cov.bad)
		TH_LOG("%s: %zu of %zu traces differ from the oracle (seed "
		       "0x%llx)",
		       cfg->name, cov.bad, cov.traces,
		       (unsigned long long)base);
	fflush(stdout);
	ASSERT_EQ((size_t)0, cov.bad);

	if (only_set || traces < COVERAGE_MIN_TRACES)
		return;
	/* A run that compared nothing interesting proves nothing. */
	EXPECT_LT((size_t)0, cov.clean);
	EXPECT_LT((size_t)0, cov.conflicting);
	EXPECT_LT((size_t)0, cov.reports[VALOR_CONFLICT_WW]);
	EXPECT_LT((size_t)0, cov.reports[VALOR_CONFLICT_WR]);
	EXPECT_LT((size_t)0, cov.reports[VALOR_CONFLICT_RW]);
	/* Skipping a lone thread's accesses was checked. */
	EXPECT_LT((size_t)0, cov.alone_conflicting);
	/* So were strided accesses, in conflicts, and sweeps of many cells. */
	EXPECT_LT((size_t)0, cov.strided_first);
	EXPECT_LT((size_t)0, cov.swept_first);
	/* Valor's reads met frees that left zero words. */
	if (cfg->analysis == VALOR_ANALYSIS_VALOR)
		EXPECT_LT((size_t)0, cov.lazy_free_rw);
}

TEST(valor_rfr)
{
	run_config(_metadata, &cfg_valor_rfr);
}

TEST(valor_sfr)
{
	run_config(_metadata, &cfg_valor_sfr);
}

TEST(fastrcd_rfr)
{
	run_config(_metadata, &cfg_fastrcd_rfr);
}

TEST(fastrcd_sfr)
{
	run_config(_metadata, &cfg_fastrcd_sfr);
}

TEST(fasttrack)
{
	run_config(_metadata, &cfg_fasttrack);
}

/*
 * The harness kills a test after a fixed 30 s; give each configuration
 * time in proportion to the traces it runs (about 3 ms a trace, well
 * above what it needs, so a slow machine does not fail the check).
 */
static void __attribute__((constructor)) scale_timeouts(void)
{
	uint64_t traces = env_u64("VALOR_DIFF_TRACES", DEFAULT_TRACES, NULL);
	uint64_t t = 60 + traces * 3 / 1000;
	int timeout = t > 1000000 ? 1000000 : (int)t;

	_valor_rfr_object.timeout = timeout;
	_valor_sfr_object.timeout = timeout;
	_fastrcd_rfr_object.timeout = timeout;
	_fastrcd_sfr_object.timeout = timeout;
	_fasttrack_object.timeout = timeout;
}

TEST_HARNESS_MAIN
