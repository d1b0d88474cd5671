// SPDX-License-Identifier: GPL-2.0
/*
 * Valor's release walk (libvalor/core/valor.c, "Release without locks"):
 * a region end that gives up many cells stores each word without a lock
 * prefix, so another thread must not replace one of those words between
 * the walk's load and its store, or the walk writes the old word back
 * over the change.  The engine's hook stops the walk right there at one
 * cell while a second thread, on an OS thread of its own, changes that
 * cell the two ways another thread replaces a word the walking region
 * owns: by writing another byte of it (the cell is refined) and by
 * freeing it.  A third thread then looks for what the second did.  If
 * the second thread's change went in during the walk and was written
 * over, that look finds nothing.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <valor/engine.h>

#include "kselftest_harness.h"
#include "../../libvalor/core/internal.h"

/* Far from anything else; the walking region writes CELLS cells there. */
#define BASE 0x50000000ULL
#define CELLS 64U
#define TARGET (BASE + 5 * CELL_SIZE)
#define SITE_A 0xa1
#define SITE_B 0xb1
#define SITE_C 0xc1

enum meddle { WRITE_NEXT_BYTE, FREE_CELL };

struct sink {
	pthread_mutex_t lock;
	struct valor_conflict v[16];
	unsigned n;
};

static void sink_collect(void *arg, const struct valor_conflict *c)
{
	struct sink *s = arg;

	pthread_mutex_lock(&s->lock);
	if (s->n < 16)
		s->v[s->n] = *c;
	s->n++;
	pthread_mutex_unlock(&s->lock);
}

/* The second thread's side; the hook hands it over. */
static struct {
	struct valor_ctx *ctx;
	struct valor_thread *b;
	enum meddle how;
	atomic_int go, done, fired;
} meddler;

static void *meddler_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&meddler.go))
		;
	if (meddler.how == WRITE_NEXT_BYTE)
		valor_access(meddler.b, TARGET + 1, 1, true, SITE_B);
	else
		valor_free(meddler.b, TARGET, CELL_SIZE, SITE_B);
	atomic_store(&meddler.done, 1);
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Between the walk's load and store of the target's word: let the second
 * thread go, and go on once it waits for the walk (the engine counts
 * that) or is done.  A second is long enough for either.
 */
static void stop_at_target(struct valor_thread *th, uint64_t cell)
{
	double until;

	(void)th;
	if (cell != TARGET >> CELL_SHIFT || atomic_exchange(&meddler.fired, 1))
		return;
	atomic_store(&meddler.go, 1);
	until = now() + 1.0;
	while (!atomic_load(&meddler.done) &&
	       !atomic_load(&meddler.ctx->meddle_waits) && now() < until)
		;
}

FIXTURE(walk)
{
	struct sink sink;
	struct valor_ctx *ctx;
	struct valor_thread *a, *b, *c;
	pthread_t os_b;
	bool joined;
};

FIXTURE_VARIANT(walk)
{
	enum meddle how;
};

FIXTURE_VARIANT_ADD(walk, write_next_byte){ .how = WRITE_NEXT_BYTE };
FIXTURE_VARIANT_ADD(walk, free_cell){ .how = FREE_CELL };

FIXTURE_SETUP(walk)
{
	struct valor_params p = {
		.analysis = VALOR_ANALYSIS_VALOR,
		.on_conflict = sink_collect,
		.arg = &self->sink,
	};

	memset(&self->sink, 0, sizeof(self->sink));
	pthread_mutex_init(&self->sink.lock, NULL);
	self->ctx = valor_ctx_new(&p);
	ASSERT_NE(NULL, self->ctx);
	self->a = valor_thread_create(self->ctx, NULL);
	self->b = valor_thread_create(self->ctx, self->a);
	self->c = valor_thread_create(self->ctx, self->a);
	ASSERT_NE(NULL, self->a);
	ASSERT_NE(NULL, self->b);
	ASSERT_NE(NULL, self->c);
	memset(&meddler, 0, sizeof(meddler));
	meddler.ctx = self->ctx;
	meddler.b = self->b;
	meddler.how = variant->how;
	ASSERT_EQ(0, pthread_create(&self->os_b, NULL, meddler_main, NULL));
}

FIXTURE_TEARDOWN(walk)
{
	eng_release_walk_hook = NULL;
	atomic_store(&meddler.go, 1);
	if (!self->joined)
		pthread_join(self->os_b, NULL);
	valor_ctx_free(self->ctx);
}

TEST_F(walk, a_change_by_another_thread_outlives_the_walk)
{
	unsigned found = 0;

	/*
	 * C's pending read of the bytes A leaves alone: the free must show
	 * in its validation, A's write of byte 0 must not.
	 */
	if (variant->how == FREE_CELL)
		ASSERT_EQ(0, valor_access(self->c, TARGET + 1, CELL_SIZE - 1,
					  false, SITE_C));
	/* A owns the first byte of the target and all of the other cells. */
	for (unsigned i = 0; i < CELLS; i++)
		ASSERT_EQ(0, valor_access(self->a, BASE + i * CELL_SIZE,
					  BASE + i * CELL_SIZE == TARGET ?
						  1 :
						  CELL_SIZE,
					  true, SITE_A));
	eng_release_walk_hook = stop_at_target;
	valor_release(self->a, 0x1000);
	eng_release_walk_hook = NULL;
	ASSERT_EQ(1, atomic_load(&meddler.fired));
	pthread_join(self->os_b, NULL);
	self->joined = true;
	ASSERT_EQ(1, atomic_load(&meddler.done));
	EXPECT_EQ(1, atomic_load(&self->ctx->meddle_waits));

	if (variant->how == WRITE_NEXT_BYTE) {
		/* B's region owns byte 1: C's read of it conflicts now. */
		valor_access(self->c, TARGET + 1, 1, false, SITE_C);
	} else {
		/* The free bumped the version C read. */
		valor_release(self->c, 0x2000);
	}
	for (unsigned i = 0; i < self->sink.n && i < 16; i++) {
		const struct valor_conflict *k = &self->sink.v[i];

		TH_LOG("conflict %s: sites %#lx, %#lx",
		       valor_conflict_kind_name(k->kind),
		       (unsigned long)k->first.site,
		       (unsigned long)k->second.site);
		if ((k->first.site == SITE_B && k->second.site == SITE_C) ||
		    (k->first.site == SITE_C && k->second.site == SITE_B))
			found++;
	}
	EXPECT_EQ(1, found);
	/* A released before B's change: the two do not conflict. */
	EXPECT_EQ(1, self->sink.n);
}

TEST_HARNESS_MAIN
