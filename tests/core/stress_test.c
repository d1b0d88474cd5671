// SPDX-License-Identifier: GPL-2.0
/*
 * Real threads drive one engine context concurrently, as the in-process
 * runtime will: each pthread reports its own events through its own
 * handle (created from the main thread's handle before it starts).
 *
 * What must hold under contention:
 *  - Valor's write metadata is updated atomically: no version increment
 *    is lost when threads write the same cell, nor when they write
 *    different bytes of one cell (which also never conflict);
 *  - schedules that are race-free by construction (a real mutex, a real
 *    barrier, each mirrored as acquire/release) produce no conflict in any
 *    analysis;
 *  - FastRCD and FastTrack survive unsynchronized hammering of one
 *    location (and report conflicts) and of adjacent bytes (and report
 *    none).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <valor/engine.h>

#include "kselftest_harness.h"

#define VALOR VALOR_ANALYSIS_VALOR
#define FASTRCD VALOR_ANALYSIS_FASTRCD
#define FASTTRACK VALOR_ANALYSIS_FASTTRACK

#define MAX_WORKERS 8

/* Program data whose addresses the engine sees; one cache line each. */
static uint64_t shared_word __attribute__((aligned(64)));
static uint8_t shared_cell[8] __attribute__((aligned(64)));
static uint64_t counters[8] __attribute__((aligned(64)));
#define SLICE_WORDS 4
static uint64_t slices[MAX_WORKERS * SLICE_WORDS] __attribute__((aligned(64)));

struct run;

struct worker {
	struct run *run;
	struct valor_thread *th;
	pthread_t pt;
	unsigned int index;
};

struct run {
	struct valor_ctx *ctx;
	struct valor_thread *main_th;
	unsigned int nworkers;
	unsigned long iterations;
	void *(*body)(void *);
	pthread_barrier_t start; /* all handles live before anyone works */
	pthread_barrier_t finish; /* nobody exits before all have worked */
	pthread_barrier_t phase; /* the phased schedule's barrier */
	pthread_mutex_t lock; /* the locked schedule's mutex */
	atomic_ulong conflicts;
	struct worker w[MAX_WORKERS];
};

static void count_conflict(void *arg, const struct valor_conflict *c)
{
	struct run *run = arg;

	(void)c;
	atomic_fetch_add_explicit(&run->conflicts, 1, memory_order_relaxed);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(&w->run->start);
	w->run->body(w);
	pthread_barrier_wait(&w->run->finish);
	valor_thread_exit(w->th);
	return NULL;
}

/*
 * Run @body on @nworkers threads against a fresh context of @analysis.
 * Returns 0, or -1 if the context or a thread could not be set up.
 */
static int run_workers(struct run *run, uint32_t analysis,
		       unsigned int nworkers, unsigned long iterations,
		       void *(*body)(void *))
{
	struct valor_params p = {
		.analysis = analysis,
		.on_conflict = count_conflict,
		.arg = run,
	};

	memset(run, 0, sizeof(*run));
	run->nworkers = nworkers;
	run->iterations = iterations;
	run->body = body;
	atomic_init(&run->conflicts, 0);
	run->ctx = valor_ctx_new(&p);
	if (!run->ctx)
		return -1;
	run->main_th = valor_thread_create(run->ctx, NULL);
	if (!run->main_th)
		return -1;
	pthread_barrier_init(&run->start, NULL, nworkers);
	pthread_barrier_init(&run->finish, NULL, nworkers);
	pthread_barrier_init(&run->phase, NULL, nworkers);
	pthread_mutex_init(&run->lock, NULL);
	for (unsigned int i = 0; i < nworkers; i++) {
		struct worker *w = &run->w[i];

		w->run = run;
		w->index = i;
		w->th = valor_thread_create(run->ctx, run->main_th);
		if (!w->th)
			return -1;
	}
	for (unsigned int i = 0; i < nworkers; i++)
		if (pthread_create(&run->w[i].pt, NULL, worker_main,
				   &run->w[i]))
			return -1;
	for (unsigned int i = 0; i < nworkers; i++) {
		pthread_join(run->w[i].pt, NULL);
		if (valor_thread_join(run->main_th, run->w[i].th))
			return -1;
	}
	pthread_barrier_destroy(&run->start);
	pthread_barrier_destroy(&run->finish);
	pthread_barrier_destroy(&run->phase);
	pthread_mutex_destroy(&run->lock);
	return 0;
}

static unsigned long conflicts(struct run *run)
{
	return atomic_load(&run->conflicts);
}

/* The versions of the 8 bytes at @addr in a fresh Valor context. */
static int initial_versions(uintptr_t addr, uint64_t out[8])
{
	struct valor_params p = { .analysis = VALOR };
	struct valor_ctx *probe = valor_ctx_new(&p);

	if (!probe)
		return -1;
	for (int b = 0; b < 8; b++)
		out[b] = valor_shadow_version(probe, addr + b);
	valor_ctx_free(probe);
	return 0;
}

/* ---- (a) Valor: one cell, all threads, a new region per write ---------- */

static void *write_same_word(void *arg)
{
	struct worker *w = arg;

	for (unsigned long i = 0; i < w->run->iterations; i++) {
		valor_region_end(w->th);
		valor_access(w->th, (uintptr_t)&shared_word, 8, true, 1);
	}
	return NULL;
}

TEST(valor_no_lost_version_increments)
{
	const unsigned int n = 4;
	const unsigned long m = 200000;
	static struct run run;
	uint64_t before[8];

	ASSERT_EQ(0, initial_versions((uintptr_t)&shared_word, before));
	ASSERT_EQ(0, run_workers(&run, VALOR, n, m, write_same_word));
	for (int b = 0; b < 8; b++) {
		EXPECT_EQ(before[b] + n * m,
			  valor_shadow_version(run.ctx,
					       (uintptr_t)&shared_word + b))
		{
			TH_LOG("byte %d", b);
		}
	}
	/* Write-write conflicts are expected here; only report them. */
	TH_LOG("%lu write-write conflicts reported", conflicts(&run));
	valor_ctx_free(run.ctx);
}

/*
 * The same over many cells, all threads on the same cell at a time: each
 * cell meets its first contention -- a writer finds another thread owning
 * it and refines it -- while the owner may be releasing it at its region
 * end.  Every write is the first of its region, so each byte's version
 * must equal the number of writes made to its cell.
 */
#define MANY_CELLS 65536
static uint64_t many_cells[MANY_CELLS] __attribute__((aligned(64)));
static atomic_uint writes_done[MANY_CELLS];
static atomic_ulong current_cell;

static void *write_current_cell(void *arg)
{
	struct worker *w = arg;
	unsigned long mine = MANY_CELLS;

	for (;;) {
		unsigned long i = atomic_load(&current_cell);

		if (i >= MANY_CELLS)
			break;
		if (i == mine) {
			/* Wrote it already: wait for another thread to. */
			if (atomic_load(&writes_done[i]) >= 2)
				atomic_compare_exchange_strong(&current_cell,
							       &i, i + 1);
			else
				sched_yield();
			continue;
		}
		valor_access(w->th, (uintptr_t)&many_cells[i], 8, true, 1);
		atomic_fetch_add(&writes_done[i], 1);
		valor_region_end(w->th);
		mine = i;
	}
	return NULL;
}

TEST(valor_no_lost_version_at_first_contention)
{
	static struct run run;
	unsigned long lost = 0, first_bad = MANY_CELLS;
	struct valor_ctx *probe;
	struct valor_stats st;

	for (unsigned long i = 0; i < MANY_CELLS; i++)
		atomic_init(&writes_done[i], 0);
	atomic_init(&current_cell, 0);
	ASSERT_EQ(0, run_workers(&run, VALOR, 4, 0, write_current_cell));
	/* Where every version starts: the same bytes in a fresh context. */
	probe = valor_ctx_new(&(struct valor_params){ .analysis = VALOR });
	ASSERT_NE(NULL, probe);
	for (unsigned long i = 0; i < MANY_CELLS; i++) {
		for (int b = 0; b < 8; b++) {
			uintptr_t a = (uintptr_t)&many_cells[i] + b;

			if (valor_shadow_version(run.ctx, a) !=
			    valor_shadow_version(probe, a) +
				    atomic_load(&writes_done[i])) {
				lost++;
				if (first_bad == MANY_CELLS)
					first_bad = i;
			}
		}
	}
	valor_ctx_free(probe);
	valor_ctx_stats(run.ctx, &st);
	TH_LOG("%llu cells refined, %lu conflicts",
	       (unsigned long long)st.cells_refined, conflicts(&run));
	EXPECT_EQ(0, lost)
	{
		TH_LOG("%lu bytes with a lost version, first in cell %lu", lost,
		       first_bad);
	}
	valor_ctx_free(run.ctx);
}

/* ---- (b) Valor: one cell, one byte per thread -------------------------- */

static void *write_own_byte(void *arg)
{
	struct worker *w = arg;
	uintptr_t byte = (uintptr_t)&shared_cell[w->index];

	for (unsigned long i = 0; i < w->run->iterations; i++) {
		valor_region_end(w->th);
		valor_access(w->th, byte, 1, true, 1);
		valor_access(w->th, byte, 1, false, 2);
	}
	return NULL;
}

TEST(valor_adjacent_bytes_no_conflict_no_lost_version)
{
	const unsigned int n = 8;
	const unsigned long m = 50000;
	static struct run run;
	uint64_t before[8];

	ASSERT_EQ(0, initial_versions((uintptr_t)shared_cell, before));
	ASSERT_EQ(0, run_workers(&run, VALOR, n, m, write_own_byte));
	EXPECT_EQ(0, conflicts(&run));
	for (unsigned int b = 0; b < n; b++) {
		EXPECT_EQ(before[b] + m,
			  valor_shadow_version(run.ctx,
					       (uintptr_t)&shared_cell[b]))
		{
			TH_LOG("byte %u", b);
		}
	}
	valor_ctx_free(run.ctx);
}

/* ---- (c) race-free schedules: a mutex, a barrier ----------------------- */

static void *locked_increments(void *arg)
{
	struct worker *w = arg;
	struct run *run = w->run;

	for (unsigned long i = 0; i < run->iterations; i++) {
		uint64_t *c = &counters[(i + w->index) % 8];

		pthread_mutex_lock(&run->lock);
		valor_acquire(w->th, (uintptr_t)&run->lock);
		valor_access(w->th, (uintptr_t)c, 8, false, 1);
		valor_access(w->th, (uintptr_t)c, 8, true, 2);
		(*c)++;
		valor_release(w->th, (uintptr_t)&run->lock);
		pthread_mutex_unlock(&run->lock);
		if (i % 64 == 0)
			valor_region_end(w->th);
	}
	return NULL;
}

static void *phased_slices(void *arg)
{
	struct worker *w = arg;
	struct run *run = w->run;
	unsigned int n = run->nworkers;

	for (unsigned long phase = 0; phase < run->iterations; phase++) {
		/* The slice another thread wrote in the previous phase. */
		uint64_t *s = &slices[((w->index + phase) % n) * SLICE_WORDS];

		valor_access(w->th, (uintptr_t)s, SLICE_WORDS * 8, false, 1);
		for (int k = 0; k < SLICE_WORDS; k++) {
			valor_access(w->th, (uintptr_t)&s[k], 8, true, 2);
			s[k]++;
		}
		valor_release(w->th, (uintptr_t)&run->phase);
		pthread_barrier_wait(&run->phase);
		valor_acquire(w->th, (uintptr_t)&run->phase);
	}
	return NULL;
}

TEST(race_free_locked_schedule_no_conflict)
{
	static const uint32_t analyses[] = { VALOR, FASTRCD, FASTTRACK };
	static struct run run;

	for (int a = 0; a < 3; a++) {
		const unsigned long m = 20000;
		uint64_t sum = 0;

		memset(counters, 0, sizeof(counters));
		ASSERT_EQ(0, run_workers(&run, analyses[a], 4, m,
					 locked_increments));
		for (int k = 0; k < 8; k++)
			sum += counters[k];
		EXPECT_EQ(4 * m, sum);
		EXPECT_EQ(0, conflicts(&run))
		{
			TH_LOG("%s", valor_analysis_name(analyses[a]));
		}
		valor_ctx_free(run.ctx);
	}
}

TEST(race_free_phased_schedule_no_conflict)
{
	static const uint32_t analyses[] = { VALOR, FASTRCD, FASTTRACK };
	static struct run run;

	for (int a = 0; a < 3; a++) {
		ASSERT_EQ(0, run_workers(&run, analyses[a], 4, 5000,
					 phased_slices));
		EXPECT_EQ(0, conflicts(&run))
		{
			TH_LOG("%s", valor_analysis_name(analyses[a]));
		}
		valor_ctx_free(run.ctx);
	}
}

/* ---- (d) unsynchronized hammering ------------------------------------- */

static void *hammer_same_word(void *arg)
{
	struct worker *w = arg;
	uintptr_t x = (uintptr_t)&shared_word;

	for (unsigned long i = 0; i < w->run->iterations; i++) {
		if (i % 16 == 0)
			valor_region_end(w->th);
		valor_access(w->th, x, 8, true, 1);
		valor_access(w->th, x + (i % 8), 1, false, 2);
		valor_access(w->th, x + 4, 4, (i & 1) != 0, 3);
	}
	return NULL;
}

static void *hammer_own_byte(void *arg)
{
	struct worker *w = arg;
	uintptr_t byte = (uintptr_t)&shared_cell[w->index];

	for (unsigned long i = 0; i < w->run->iterations; i++) {
		if (i % 16 == 0)
			valor_region_end(w->th);
		valor_access(w->th, byte, 1, true, 1);
		valor_access(w->th, byte, 1, false, 2);
		valor_access(w->th, byte, 1, (i & 1) != 0, 3);
	}
	return NULL;
}

/*
 * Every thread's last region stays ongoing until all have worked (the
 * finish barrier), so some thread's write must meet another's ongoing
 * region: conflicts are certain, not only likely.
 */
TEST(hammering_same_location_reports_conflicts)
{
	static const uint32_t analyses[] = { FASTRCD, FASTTRACK, VALOR };
	static struct run run;

	for (int a = 0; a < 3; a++) {
		ASSERT_EQ(0, run_workers(&run, analyses[a], 4, 50000,
					 hammer_same_word));
		EXPECT_LT(0, conflicts(&run))
		{
			TH_LOG("%s", valor_analysis_name(analyses[a]));
		}
		valor_ctx_free(run.ctx);
	}
}

TEST(hammering_adjacent_bytes_no_conflict)
{
	static const uint32_t analyses[] = { FASTRCD, FASTTRACK, VALOR };
	static struct run run;

	for (int a = 0; a < 3; a++) {
		ASSERT_EQ(0, run_workers(&run, analyses[a], 8, 50000,
					 hammer_own_byte));
		EXPECT_EQ(0, conflicts(&run))
		{
			TH_LOG("%s", valor_analysis_name(analyses[a]));
		}
		valor_ctx_free(run.ctx);
	}
}

TEST_HARNESS_MAIN
