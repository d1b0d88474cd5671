// SPDX-License-Identifier: GPL-2.0
/*
 * Valor's shadow keeps 32 bits a cell; a cell whose state does not fit
 * takes a 64-bit word of its own, and a cell kept per byte names its
 * block of byte words (libvalor/core/valor_word.h).  Each way a cell
 * gets there (a version past 2,047, bytes more than one write behind, a
 * thread slot past 1,023, bytes kept per byte) must keep every verdict:
 * nothing reported for ordered accesses, the race still found.
 */
#include <errno.h>
#include <string.h>

#include "kselftest_harness.h"

#include <valor/engine.h>

#define X 0x10040ULL
#define M 0x30000ULL

struct counter {
	unsigned n;
	enum valor_conflict_kind last;
};

static void count(void *arg, const struct valor_conflict *c)
{
	struct counter *k = arg;

	k->n++;
	k->last = c->kind;
}

static struct valor_ctx *valor_ctx_counting(struct counter *k)
{
	struct valor_params p = {
		.analysis = VALOR_ANALYSIS_VALOR,
		.on_conflict = count,
		.arg = k,
	};

	return valor_ctx_new(&p);
}

static uint64_t wide_cells(struct valor_ctx *ctx)
{
	struct valor_stats st;

	valor_ctx_stats(ctx, &st);
	return st.cells_wide;
}

/*
 * A cell rewritten in 2,100 regions passes the compact word's last
 * version: it goes wide once, its version keeps counting, and a read
 * another region made before the next write is still reported.
 */
TEST(a_version_past_2047_goes_wide_and_keeps_counting)
{
	struct counter k = { 0 };
	struct valor_ctx *ctx = valor_ctx_counting(&k);
	struct valor_thread *a, *b;

	ASSERT_NE(NULL, ctx);
	a = valor_thread_create(ctx, NULL);
	b = valor_thread_create(ctx, NULL);
	for (int i = 0; i < 2100; i++) {
		valor_access(a, X, 8, true, 1);
		valor_release(a, M);
		valor_acquire(b, M);
		valor_access(b, X, 4, false, 2);
		valor_release(b, M);
		valor_acquire(a, M);
	}
	EXPECT_EQ(0, k.n);
	EXPECT_EQ(2100, valor_shadow_version(ctx, X));
	EXPECT_EQ(2100, valor_shadow_version(ctx, X + 7));
	EXPECT_EQ(1, wide_cells(ctx));

	/* b's read, then a's unordered write: read-write at b's region end. */
	valor_access(b, X, 8, false, 3);
	valor_access(a, X + 2, 2, true, 4);
	valor_release(a, M);
	EXPECT_EQ(1, valor_region_end(b));
	EXPECT_EQ(1, k.n);
	EXPECT_EQ(VALOR_CONFLICT_RW, k.last);
	EXPECT_EQ(2101, valor_shadow_version(ctx, X + 2));
	EXPECT_EQ(2100, valor_shadow_version(ctx, X + 4));

	/* Ownership of a wide word: a second writer conflicts at once. */
	valor_access(a, X, 8, true, 5);
	EXPECT_EQ(1, valor_access(b, X + 4, 4, true, 6));
	EXPECT_EQ(VALOR_CONFLICT_WW, k.last);
	EXPECT_EQ(1, wide_cells(ctx));
	valor_ctx_free(ctx);
}

/*
 * Half a cell written in five more regions while a reader holds the
 * other half: the compact word says "one write behind" at most, so the
 * cell goes wide (not per byte), and the verdicts are those of the
 * 64-bit word: the open read stays valid, a later write to its bytes
 * is found.
 */
TEST(bytes_further_behind_go_wide)
{
	struct counter k = { 0 };
	struct valor_ctx *ctx = valor_ctx_counting(&k);
	struct valor_thread *a, *b;
	struct valor_stats st;

	ASSERT_NE(NULL, ctx);
	a = valor_thread_create(ctx, NULL);
	b = valor_thread_create(ctx, NULL);
	valor_access(a, X, 8, true, 1);
	valor_release(a, M);
	EXPECT_EQ(0, wide_cells(ctx));
	valor_access(b, X + 4, 4, false, 2); /* b's region stays open */
	for (int i = 0; i < 5; i++) {
		valor_access(a, X, 4, true, 3);
		valor_release(a, M);
	}
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(0, st.cells_refined);
	EXPECT_EQ(1, st.cells_wide);
	EXPECT_EQ(0, valor_validate(b));
	EXPECT_EQ(6, valor_shadow_version(ctx, X));
	EXPECT_EQ(1, valor_shadow_version(ctx, X + 4));

	valor_access(a, X + 6, 1, true, 4);
	valor_release(a, M);
	EXPECT_EQ(1, valor_region_end(b));
	EXPECT_EQ(1, k.n);
	valor_ctx_free(ctx);
}

/*
 * A thread whose slot a compact word cannot name (the 1,025th live
 * thread and later) still owns what it writes: another thread's read of
 * it conflicts at once, a read after its region ended does not.
 */
TEST(a_thread_past_slot_1023_owns_through_a_wide_word)
{
	enum { N = 1030 };
	struct counter k = { 0 };
	struct valor_ctx *ctx = valor_ctx_counting(&k);
	static struct valor_thread *t[N];

	ASSERT_NE(NULL, ctx);
	t[0] = valor_thread_create(ctx, NULL);
	ASSERT_NE(NULL, t[0]);
	for (int i = 1; i < N; i++) {
		t[i] = valor_thread_create(ctx, t[0]);
		ASSERT_NE(NULL, t[i]);
	}
	valor_access(t[N - 1], X, 8, true, 1);
	EXPECT_EQ(1, wide_cells(ctx));
	/* Its own accesses need nothing more. */
	EXPECT_EQ(0, valor_access(t[N - 1], X, 4, false, 2));
	EXPECT_EQ(0, valor_access(t[N - 1], X + 4, 4, true, 3));
	EXPECT_EQ(1, valor_access(t[0], X + 2, 2, false, 4));
	EXPECT_EQ(VALOR_CONFLICT_WR, k.last);
	valor_region_end(t[0]);
	valor_release(t[N - 1], M);
	valor_acquire(t[1], M);
	EXPECT_EQ(0, valor_access(t[1], X, 8, false, 5));
	EXPECT_EQ(0, valor_region_end(t[1]));
	EXPECT_EQ(1, k.n);
	valor_ctx_free(ctx);
}

/*
 * Two regions writing different bytes of one cell split it per byte:
 * the cell word names the block of byte words itself, no wide word.
 * Each byte keeps its owner; a free of the cell makes it compact again.
 */
TEST(a_cell_split_between_regions_names_its_block)
{
	struct counter k = { 0 };
	struct valor_ctx *ctx = valor_ctx_counting(&k);
	struct valor_thread *a, *b, *c;
	struct valor_stats st;

	ASSERT_NE(NULL, ctx);
	a = valor_thread_create(ctx, NULL);
	b = valor_thread_create(ctx, NULL);
	c = valor_thread_create(ctx, NULL);
	EXPECT_EQ(0, valor_access(a, X, 1, true, 1));
	EXPECT_EQ(0, valor_access(b, X + 1, 1, true, 2));
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(1, st.cells_refined);
	EXPECT_EQ(0, st.cells_wide);
	EXPECT_EQ(0, k.n);
	/* c reads b's byte: one conflict, with b; then a's byte: another. */
	EXPECT_EQ(1, valor_access(c, X + 1, 1, false, 3));
	EXPECT_EQ(1, valor_access(c, X, 1, false, 4));
	EXPECT_EQ(2, k.n);
	/* Bytes nobody owns are free to read. */
	EXPECT_EQ(0, valor_access(c, X + 4, 4, false, 5));
	EXPECT_EQ(2, k.n);
	valor_region_end(a);
	valor_region_end(b);
	valor_region_end(c);

	/*
	 * Freed whole, the cell is one word again; the block goes to the
	 * next cell to split, and nothing of the old bytes comes with it.
	 */
	EXPECT_EQ(0, valor_free(a, X, 8, 7));
	EXPECT_EQ(2, valor_shadow_version(ctx, X + 5));
	EXPECT_EQ(0, valor_access(a, X + 8, 1, true, 8));
	EXPECT_EQ(0, valor_access(b, X + 12, 1, true, 9));
	valor_ctx_stats(ctx, &st);
	EXPECT_EQ(2, st.cells_refined);
	EXPECT_EQ(0, st.cells_wide);
	EXPECT_EQ(1, valor_shadow_version(ctx, X + 8));
	EXPECT_EQ(1, valor_shadow_version(ctx, X + 12));
	EXPECT_EQ(0, valor_shadow_version(ctx, X + 9));
	EXPECT_EQ(1, valor_access(c, X + 12, 1, false, 10));
	EXPECT_EQ(1, valor_access(c, X + 8, 1, false, 11));
	EXPECT_EQ(4, k.n);
	valor_ctx_free(ctx);
}

TEST_HARNESS_MAIN
