// SPDX-License-Identifier: GPL-2.0
/*
 * Valor's read filter asked about a whole range at once
 * (rfilter_holds_range() in libvalor/core/valor_fast.h), which the LLVM
 * pass's range check before a loop uses to skip a range the region has
 * read already.  It must say yes exactly when every byte of the range is
 * in the read log from this region: reads made through the engine's
 * event API, then the question, byte-exact at both ends, across filter
 * chunks, and no longer once the region has ended.  The span check of
 * neighbouring reads (rfilter_holds_span(), one word of mask bytes) must
 * agree with it wherever it answers at all.
 */
#include <stdint.h>
#include <string.h>

#include <valor/engine.h>

#include "kselftest_harness.h"
#include "../../libvalor/core/valor_fast.h"

/* Far from anything else, 8-byte aligned; 600 cells span 5 filter chunks. */
#define BASE 0x40000000ULL
#define BYTES (600 * CELL_SIZE)
/* 4 MiB on: other filter entries than BASE's (and its 8 MiB aliases). */
#define YOUNG_BASE (BASE + (4ULL << 20))

FIXTURE(filter)
{
	struct valor_params p;
	struct valor_ctx *ctx;
	struct valor_thread *t;
};

/*
 * Each test but the one about young regions asks about a region past its
 * first RFILTER_YOUNG_ENTRIES entries, whose cells go into the filter at
 * their first read: reads of cells far from BASE (and from its filter
 * entries), each its own entry.
 */
static void past_young_reads(FIXTURE_DATA(filter) * self)
{
	for (uint64_t k = 0; k < RFILTER_YOUNG_ENTRIES; k++)
		valor_access(self->t, YOUNG_BASE + k * 512, 8, false, 99);
}

FIXTURE_SETUP(filter)
{
	memset(&self->p, 0, sizeof(self->p));
	self->p.analysis = VALOR_ANALYSIS_VALOR;
	self->ctx = valor_ctx_new(&self->p);
	ASSERT_NE(NULL, self->ctx);
	self->t = valor_thread_create(self->ctx, NULL);
	ASSERT_NE(NULL, self->t);
	past_young_reads(self);
}

FIXTURE_TEARDOWN(filter)
{
	if (self->ctx)
		valor_ctx_free(self->ctx);
}

static bool holds(FIXTURE_DATA(filter) * self, uint64_t off, size_t len)
{
	return rfilter_holds_range(self->t, BASE + off, len);
}

TEST_F(filter, nothing_read_holds_nothing)
{
	EXPECT_FALSE(holds(self, 0, 1));
	EXPECT_FALSE(holds(self, 0, BYTES));
}

TEST_F(filter, a_range_read_whole_is_held_to_the_byte)
{
	ASSERT_EQ(0, valor_access(self->t, BASE + 4, BYTES - 8, false, 1));
	EXPECT_TRUE(holds(self, 4, BYTES - 8));
	EXPECT_TRUE(holds(self, 4, 1));
	EXPECT_TRUE(holds(self, BYTES - 5, 1));
	EXPECT_TRUE(holds(self, 1000, 3000));
	/* One byte past either end. */
	EXPECT_FALSE(holds(self, 3, BYTES - 7));
	EXPECT_FALSE(holds(self, 4, BYTES - 7));
	EXPECT_FALSE(holds(self, 3, 1));
	EXPECT_FALSE(holds(self, BYTES - 4, 1));
}

TEST_F(filter, a_cell_missing_in_the_middle_is_seen)
{
	/* Cells 0..299 and 301..599: cell 300 is in the third chunk. */
	ASSERT_EQ(0, valor_access(self->t, BASE, 300 * CELL_SIZE, false, 1));
	ASSERT_EQ(0, valor_access(self->t, BASE + 301 * CELL_SIZE,
				  299 * CELL_SIZE, false, 1));
	EXPECT_TRUE(holds(self, 0, 300 * CELL_SIZE));
	EXPECT_TRUE(holds(self, 301 * CELL_SIZE, 299 * CELL_SIZE));
	EXPECT_FALSE(holds(self, 0, BYTES));
	EXPECT_FALSE(holds(self, 299 * CELL_SIZE, 3 * CELL_SIZE));
	/* Half of the missing cell read: only that half is held. */
	ASSERT_EQ(0,
		  valor_access(self->t, BASE + 300 * CELL_SIZE, 4, false, 1));
	EXPECT_TRUE(holds(self, 296 * CELL_SIZE, 2 * CELL_SIZE - 4));
	EXPECT_FALSE(holds(self, 0, BYTES));
}

TEST_F(filter, writes_are_not_reads)
{
	ASSERT_EQ(0, valor_access(self->t, BASE, BYTES, true, 1));
	EXPECT_FALSE(holds(self, 0, 8));
}

TEST_F(filter, nothing_is_held_once_the_region_ends)
{
	ASSERT_EQ(0, valor_access(self->t, BASE, BYTES, false, 1));
	ASSERT_TRUE(holds(self, 0, BYTES));
	ASSERT_EQ(0, valor_region_end(self->t));
	EXPECT_FALSE(holds(self, 0, BYTES));
	EXPECT_FALSE(holds(self, 0, 1));
}

/*
 * Every span of 1 to 64 bytes starting near a chunk boundary, over
 * reads with holes of a few bytes, asked both ways: the span check
 * never holds what the range check does not, and holds all it does
 * whenever the span lies in eight cells from its first cell's start.
 */
TEST_F(filter, a_span_is_held_exactly_when_its_range_is)
{
	const uint64_t edge = 1024; /* a chunk boundary from BASE */
	unsigned held = 0, agreed = 0;

	ASSERT_EQ(0, valor_access(self->t, BASE + 880, 133, false, 1));
	ASSERT_EQ(0, valor_access(self->t, BASE + 1016, 14, false, 1));
	ASSERT_EQ(0, valor_access(self->t, BASE + 1031, 100, false, 1));
	for (uint64_t o = edge - 140; o < edge + 140; o++) {
		for (size_t n = 1; n <= 64; n++) {
			bool range = holds(self, o, n);
			bool span = rfilter_holds_span(self->t, BASE + o, n);

			EXPECT_FALSE(span && !range)
			TH_LOG("span %llu+%zu held, its range not",
			       (unsigned long long)o, n);
			if ((o & (CELL_SIZE - 1)) + n <= 64) {
				EXPECT_EQ(range, span)
				TH_LOG("span %llu+%zu: range %d, span %d",
				       (unsigned long long)o, n, range, span);
				agreed++;
			}
			held += span;
		}
	}
	/* Both answers occur, across the edge too. */
	EXPECT_LT(1000, held);
	EXPECT_LT(10000, agreed);
	EXPECT_TRUE(rfilter_holds_span(self->t, BASE + edge - 8, 14));
	EXPECT_FALSE(rfilter_holds_span(self->t, BASE + edge + 4, 4));
}

/*
 * A span into a chunk whose filter entry another chunk 8 MiB away took
 * over (direct-mapped): the mask bytes there are that chunk's.
 */
TEST_F(filter, a_span_into_a_chunk_taken_over_is_not_held)
{
	const uint64_t wrap =
		(uint64_t)RFILTER_ENTRIES * RFILTER_CHUNK_CELLS * CELL_SIZE;

	ASSERT_EQ(0, valor_access(self->t, BASE + 1016, 16, false, 1));
	ASSERT_TRUE(rfilter_holds_span(self->t, BASE + 1016, 16));
	ASSERT_EQ(0, valor_access(self->t, BASE + wrap + 1024, 8, false, 1));
	EXPECT_FALSE(holds(self, 1016, 16));
	EXPECT_FALSE(rfilter_holds_span(self->t, BASE + 1016, 16));
	EXPECT_TRUE(rfilter_holds_span(self->t, BASE + 1016, 8));
}

/* Past the last mask byte the span check does not read on as if it wrapped. */
TEST_F(filter, a_span_across_the_end_of_the_masks_is_not_held)
{
	const uint64_t wrap =
		(uint64_t)RFILTER_ENTRIES * RFILTER_CHUNK_CELLS * CELL_SIZE;

	ASSERT_EQ(0, (BASE + wrap) % wrap);
	ASSERT_EQ(0, valor_access(self->t, BASE + wrap - 64, 128, false, 1));
	ASSERT_TRUE(holds(self, wrap - 8, 16));
	EXPECT_TRUE(rfilter_holds_span(self->t, BASE + wrap - 16, 16));
	EXPECT_TRUE(rfilter_holds_span(self->t, BASE + wrap, 16));
	EXPECT_FALSE(rfilter_holds_span(self->t, BASE + wrap - 8, 16));
}

/*
 * A walk's look at a run of cells one or two apart (rfilter_run_held(),
 * eight mask bytes at a time) holds the run exactly when each of its
 * cells is held whole, over reads that leave out every seventh cell
 * and half of another, for every start, length and step in a group.
 */
TEST_F(filter, a_run_is_held_exactly_when_each_of_its_cells_is)
{
	const uint64_t first = BASE >> CELL_SHIFT;
	const uint8_t *have = rfilter_mask_of(self->t->rfilter, first);

	for (unsigned c = 0; c < RLOG_GROUP_CELLS; c++)
		if (c % 7 != 3)
			ASSERT_EQ(0, valor_access(self->t, BASE + c * CELL_SIZE,
						  c == 40 ? 4 : CELL_SIZE,
						  false, 1));
	ASSERT_EQ(rfilter_tag(first, self->t->rgen),
		  *rfilter_tag_of(self->t->rfilter, first));
	for (unsigned step = 1; step <= 2; step++) {
		for (unsigned at = 0; at < RLOG_GROUP_CELLS; at++) {
			unsigned most = (RLOG_GROUP_CELLS - 1 - at) / step + 1;

			for (unsigned n = 1; n <= most; n++) {
				bool each = true;

				for (unsigned k = 0; k < n; k++)
					each &= rfilter_holds(
						self->t, first + at + k * step,
						0xff);
				EXPECT_EQ(each,
					  rfilter_run_held(have + at, n, step))
				TH_LOG("step %u, cells %u..+%u", step, at, n);
			}
		}
	}
}

/*
 * A finished thread's filter pages go back to the system before its
 * join: the filter reads as empty (zeros), to the last mask byte.
 */
TEST_F(filter, a_finished_thread_gives_its_filter_back)
{
	const struct rfilter *f = self->t->rfilter;
	const uint64_t first = BASE >> CELL_SHIFT;
	size_t nonzero = 0;

	ASSERT_EQ(0, valor_access(self->t, BASE, BYTES, false, 1));
	ASSERT_NE(0, *rfilter_tag_of(self->t->rfilter, first));
	ASSERT_EQ(0xff, *rfilter_mask_of(self->t->rfilter, first));
	valor_thread_exit(self->t);
	for (size_t i = 0; i < RFILTER_ENTRIES; i++)
		nonzero += f->tag[i] != 0;
	for (size_t i = 0; i < sizeof(f->mask); i++)
		nonzero += ((const uint8_t *)f->mask)[i] != 0;
	EXPECT_EQ(0, nonzero);
}

static uint64_t reads_logged(FIXTURE_DATA(filter) * self)
{
	struct valor_stats st;

	valor_ctx_stats(self->ctx, &st);
	return st.reads_logged;
}

/*
 * A young region's first read of a cell takes an entry but no filter
 * entry; its second read joins that entry and puts the cell in the
 * filter, so a third is not looked at.  Past RFILTER_YOUNG_ENTRIES
 * entries a cell is in the filter from its first read.
 */
TEST_F(filter, a_young_region_holds_a_cell_from_its_second_read)
{
	uint64_t n;

	ASSERT_EQ(0, valor_region_end(self->t));
	n = reads_logged(self);
	ASSERT_EQ(0, valor_access(self->t, BASE, 8, false, 1));
	EXPECT_EQ(n + 1, reads_logged(self));
	EXPECT_FALSE(holds(self, 0, 8));
	ASSERT_EQ(0, valor_access(self->t, BASE, 8, false, 1));
	EXPECT_EQ(n + 1, reads_logged(self));
	EXPECT_TRUE(holds(self, 0, 8));
	ASSERT_EQ(0, valor_access(self->t, BASE, 8, false, 2));
	EXPECT_EQ(n + 1, reads_logged(self));

	/* Entries 2 to RFILTER_YOUNG_ENTRIES: still young. */
	for (uint64_t k = 2; k <= RFILTER_YOUNG_ENTRIES; k++)
		ASSERT_EQ(0,
			  valor_access(self->t, BASE + k * 512, 8, false, 1));
	EXPECT_EQ(n + RFILTER_YOUNG_ENTRIES, reads_logged(self));
	EXPECT_FALSE(holds(self, RFILTER_YOUNG_ENTRIES * 512, 8));
	/* The next entry's cell is held at once. */
	ASSERT_EQ(0, valor_access(self->t,
				  BASE + (RFILTER_YOUNG_ENTRIES + 1) * 512, 8,
				  false, 1));
	EXPECT_EQ(n + RFILTER_YOUNG_ENTRIES + 1, reads_logged(self));
	EXPECT_TRUE(holds(self, (RFILTER_YOUNG_ENTRIES + 1) * 512, 8));
}

TEST_HARNESS_MAIN
