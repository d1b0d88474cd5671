// SPDX-License-Identifier: GPL-2.0
/*
 * Golden traces from the four companion papers (digested in
 * ../shared/seeds/DIGEST-001-004.md): the DSM race detector's Figure 1 and
 * false sharing, Goldilocks' ownership transfer and hand-offs, LARD's rules
 * for memory reuse, runtime-internal synchronization and thread identity,
 * and SlimState's a[4] examples, plus the byte-precision cases (mixed
 * sizes, misaligned accesses) the compact shadow must get right.
 *
 * Each test is one short hand-written trace and the exact verdict of each
 * analysis.  Documentation/testing-golden.md tabulates them;
 * Documentation/semantics.md is the definition every verdict follows.
 */
#include <stdbool.h>
#include <stdint.h>

#include <valor/engine.h>

#include "kselftest_harness.h"
#include "golden.h"
#include "trace.h"

/* Data, each in its own 64-byte line unless a test says otherwise. */
#define X 0x10000ULL
#define Y 0x10040ULL
#define Z 0x10080ULL
#define W 0x100c0ULL
#define P 0x20000ULL
/* Synchronization objects, never accessed as data. */
#define L 0x900000ULL
#define L2 0x900040ULL

/* ---- DSM (Perkovic & Keleher), Figure 1 and its pitfalls ------------- */

/*
 * Figure 1(a): P1 writes x, then writes it again under L; P2 reads x under
 * L afterwards.  Both writes happen before the read through L: no race.
 */
TEST(dsm_fig1a_lock_ordered_no_race)
{
	const struct valor_event dsm_fig1a[] = {
		T_WR(1, X, 8), /* 0: w1(x) */
		T_ACQ(1, L), /* 1 */
		T_WR(1, X, 8), /* 2: w2(x) */
		T_REL(1, L), /* 3 */
		T_ACQ(2, L), /* 4 */
		T_RD(2, X, 8), /* 5: r1(x) */
		T_REL(2, L), /* 6 */
	};

	NO_CONFLICT_ANYWHERE(dsm_fig1a);
}

/*
 * Figure 1(b): P2 takes L first and reads x; P1's unlocked w1(x) follows
 * with no release-acquire from P2: a happens-before race (FastTrack).  It
 * is not a region conflict: P2's region ended at its release before the
 * write, so Valor and FastRCD rightly stay silent.  w2(x) under L is
 * ordered after r1(x) and is not a race.
 */
TEST(dsm_fig1b_unlocked_write_after_locked_read)
{
	const struct valor_event dsm_fig1b[] = {
		T_ACQ(2, L), /* 0 */
		T_RD(2, X, 8), /* 1: r1(x) */
		T_REL(2, L), /* 2 */
		T_WR(1, X, 8), /* 3: w1(x), unlocked */
		T_ACQ(1, L), /* 4 */
		T_WR(1, X, 8), /* 5: w2(x) */
		T_REL(1, L), /* 6 */
	};

	VERDICT(dsm_fig1b, FASTTRACK, RFR, C(RW, X, 8, 2, 1, 1, 3, EAGER, 3));
	NO_CONFLICT(dsm_fig1b, VALOR, RFR);
	NO_CONFLICT(dsm_fig1b, FASTRCD, RFR);
}

/*
 * False sharing next to a true race.  T1 and T2 write and read disjoint
 * halves of one 8-byte cell (same word, same cache line): never a
 * conflict.  On the neighbouring word T1 writes 8 bytes and T2 reads 4
 * bytes straddling both words: the conflict is exactly bytes 8..9 -- the
 * read's bytes 6..7 are T2's own -- and it is reported once.  The next
 * words of the line, written and read by different threads, stay silent.
 */
TEST(false_sharing_next_to_true_race)
{
	const struct valor_event false_sharing[] = {
		T_WR(1, X + 0, 4), /* 0 */
		T_WR(2, X + 4, 4), /* 1: same cell, disjoint bytes */
		T_RD(2, X + 4, 4), /* 2 */
		T_RD(1, X + 0, 4), /* 3 */
		T_WR(1, X + 8, 8), /* 4 */
		T_RD(2, X + 6, 4), /* 5: bytes 6..9 */
		T_WR(2, X + 16, 8), /* 6 */
		T_RD(1, X + 24, 8), /* 7 */
		T_WR(1, X + 32, 2), /* 8 */
		T_WR(2, X + 34, 2), /* 9 */
	};

	VERDICT_ALL(false_sharing, C(WR, X + 8, 2, 1, 4, 2, 5, EAGER, 5));
}

/*
 * A write that stores the value already there is still a write: it races
 * with an unordered read (diffs or dirty bits would miss it).
 */
TEST(same_value_write_races_with_read)
{
	const struct valor_event same_value[] = {
		T_WR(1, X, 8), /* 0: x = 1 */
		T_REL(1, L), /* 1 */
		T_ACQ(2, L), /* 2 */
		T_RD(2, X, 8), /* 3 */
		T_WR(1, X, 8), /* 4: x = 1 again, unsynchronized */
		T_REL(2, L), /* 5 */
	};

	VERDICT(same_value, VALOR, RFR, C(RW, X, 8, 2, 3, 1, 4, LAZY, 5));
	VERDICT(same_value, FASTRCD, RFR, C(RW, X, 8, 2, 3, 1, 4, EAGER, 4));
	VERDICT(same_value, FASTTRACK, RFR, C(RW, X, 8, 2, 3, 1, 4, EAGER, 4));
}

/* ---- Goldilocks (Elmas, Qadeer & Tasiran) ----------------------------- */

#define O_DATA 0x40000ULL /* o.data */
#define GA 0x40040ULL /* global a */
#define GB 0x40080ULL /* global b */
#define MA 0x910000ULL
#define MB 0x910040ULL

/*
 * Example 2 (Figure 2), executed thread after thread: T1 initializes
 * o.data unlocked and publishes o through a under ma; T2 moves o from a to
 * b (under ma, then mb) without touching o.data; T3 writes o.data under
 * mb, then unlocked after its release.  Ownership of o.data moves T1 -> T3
 * through two locks: no race (Eraser-style locksets would report one),
 * no region conflict.
 */
TEST(goldilocks_ownership_transfer_through_two_locks)
{
	const struct valor_event transfer[] = {
		T_WR(1, O_DATA, 4), /* 0: tmp1.data = 0 */
		T_ACQ(1, MA), /* 1 */
		T_WR(1, GA, 8), /* 2: a = tmp1 */
		T_REL(1, MA), /* 3 */
		T_ACQ(2, MA), /* 4 */
		T_RD(2, GA, 8), /* 5: tmp2 = a */
		T_REL(2, MA), /* 6 */
		T_ACQ(2, MB), /* 7 */
		T_WR(2, GB, 8), /* 8: b = tmp2 */
		T_REL(2, MB), /* 9 */
		T_ACQ(3, MB), /* 10 */
		T_RD(3, GB, 8), /* 11: b... */
		T_WR(3, O_DATA, 4), /* 12: ...data = 2 */
		T_RD(3, GB, 8), /* 13: tmp3 = b */
		T_REL(3, MB), /* 14 */
		T_WR(3, O_DATA, 4), /* 15: tmp3.data = 3 */
	};

	NO_CONFLICT_ANYWHERE(transfer);
}

/*
 * The same execution with T2 reading a without ma: the hand-off chain is
 * broken, so T2's read of a and T3's first write of o.data race with T1's
 * writes (FastTrack).  T1's region ended long before: no region conflict.
 */
TEST(goldilocks_broken_transfer_is_race)
{
	const struct valor_event broken[] = {
		T_WR(1, O_DATA, 4), /* 0 */
		T_ACQ(1, MA), /* 1 */
		T_WR(1, GA, 8), /* 2 */
		T_REL(1, MA), /* 3 */
		T_RD(2, GA, 8), /* 4: no acquire of ma */
		T_ACQ(2, MB), /* 5 */
		T_WR(2, GB, 8), /* 6 */
		T_REL(2, MB), /* 7 */
		T_ACQ(3, MB), /* 8 */
		T_RD(3, GB, 8), /* 9 */
		T_WR(3, O_DATA, 4), /* 10 */
		T_REL(3, MB), /* 11 */
	};

	VERDICT(broken, FASTTRACK, RFR, C(WR, GA, 8, 1, 2, 2, 4, EAGER, 4),
		C(WW, O_DATA, 4, 1, 0, 3, 10, EAGER, 10));
	NO_CONFLICT(broken, VALOR, RFR);
	NO_CONFLICT(broken, FASTRCD, RFR);
}

/*
 * A flag hand-off through an atomic: the atomic store-release and
 * load-acquire of the flag are synchronization (release/acquire of the
 * flag's address), never data accesses.  No race.
 */
#define FLAG 0x40100ULL
TEST(flag_handoff_through_atomic)
{
	const struct valor_event flag_handoff[] = {
		T_WR(1, X, 8), /* 0: data = 42 */
		T_REL(1, FLAG), /* 1: atomic_store_explicit(release) */
		T_ACQ(2, FLAG), /* 2: atomic_load_explicit(acquire) */
		T_RD(2, X, 8), /* 3 */
		T_WR(2, X, 8), /* 4 */
	};

	NO_CONFLICT_ANYWHERE(flag_handoff);
}

/*
 * The same hand-off spun on plain loads and stores (synchronization built
 * from ordinary memory is invisible): both the flag and the data race.
 */
TEST(flag_handoff_through_plain_memory_is_race)
{
	const struct valor_event plain_flag[] = {
		T_WR(1, X, 8), /* 0: data = 42 */
		T_WR(1, FLAG, 4), /* 1: flag = 1 (plain) */
		T_RD(2, FLAG, 4), /* 2: while (!flag) (plain) */
		T_RD(2, X, 8), /* 3 */
	};

	VERDICT_ALL(plain_flag, C(WR, FLAG, 4, 1, 1, 2, 2, EAGER, 2),
		    C(WR, X, 8, 1, 0, 2, 3, EAGER, 3));
}

/*
 * Fork/join hand-off: the parent's write before the create is visible to
 * the child; the child's accesses are visible to the parent after the
 * join.  No race, no conflict.
 */
TEST(fork_join_handoff)
{
	const struct valor_event fork_join[] = {
		T_WR(1, X, 8), /* 0 */
		T_CREATE(1, 2), /* 1 */
		T_RD(2, X, 8), /* 2 */
		T_WR(2, X, 8), /* 3 */
		T_EXIT(2), /* 4 */
		T_JOIN(1, 2), /* 5 */
		T_RD(1, X, 8), /* 6 */
		T_WR(1, X, 8), /* 7 */
	};

	NO_CONFLICT_ANYWHERE(fork_join);
}

/*
 * Without the join the parent's read races with the child's write
 * (FastTrack); the child's region ended at its exit, so there is no region
 * conflict.
 */
TEST(fork_without_join_is_race)
{
	const struct valor_event no_join[] = {
		T_CREATE(1, 2), /* 0 */
		T_WR(2, X, 8), /* 1 */
		T_EXIT(2), /* 2 */
		T_RD(1, X, 8), /* 3 */
	};

	VERDICT(no_join, FASTTRACK, RFR, C(WR, X, 8, 2, 1, 1, 3, EAGER, 3));
	NO_CONFLICT(no_join, VALOR, RFR);
	NO_CONFLICT(no_join, FASTRCD, RFR);
}

/* ---- LARD: rules R2 (untracked sync), R3 (clear history), R5 (ids) ---- */

/*
 * R3: free clears history.  T1 writes and reads p, frees it; T2 gets the
 * same address from malloc and uses it with no program synchronization
 * with T1 (the allocator's hand-off is invisible).  No conflict, no race,
 * and T1's pending read of the freed block is dropped, not validated.
 */
TEST(lard_malloc_free_reuse_by_other_thread)
{
	const struct valor_event reuse[] = {
		T_WR(1, P, 16), /* 0 */
		T_RD(1, P, 16), /* 1 */
		T_FREE(1, P, 16), /* 2 */
		T_WR(2, P, 8), /* 3: the new block */
		T_RD(2, P + 8, 8), /* 4 */
		T_WR(2, P + 8, 8), /* 5 */
		T_REL(1, L), /* 6: T1's read of P was dropped */
		T_REL(2, L), /* 7 */
	};

	NO_CONFLICT_ANYWHERE(reuse);
}

/*
 * R3 at byte precision: freeing half of a cell forgets only those bytes.
 * T2 reusing them conflicts with nothing; T2 writing the other half, still
 * in T1's ongoing region, conflicts.
 */
TEST(lard_partial_free_forgets_only_freed_bytes)
{
	const struct valor_event partial_free[] = {
		T_WR(1, P, 8), /* 0 */
		T_FREE(1, P + 4, 4), /* 1 */
		T_WR(2, P + 4, 4), /* 2: forgotten bytes */
		T_WR(2, P, 4), /* 3: T1's bytes */
	};

	VERDICT_ALL(partial_free, C(WW, P, 4, 1, 0, 2, 3, EAGER, 3));
}

/*
 * R2: a race across an allocator-internal lock.  T1 writes x, then calls
 * malloc, which takes and releases the allocator's lock; T2 calls malloc
 * (same lock) and reads x.  The lock is not program synchronization and
 * the driver does not feed it: the race is reported.
 */
#define ALLOC_LOCK 0x920000ULL
TEST(lard_race_across_allocator_lock)
{
	const struct valor_event unfed[] = {
		T_WR(1, X, 8), /* 0 */
		/* malloc() in T1 and T2: lock/unlock not fed */
		T_RD(2, X, 8), /* 1 */
	};

	VERDICT_ALL(unfed, C(WR, X, 8, 1, 0, 2, 1, EAGER, 1));
}

/*
 * Why R2 exists: had the driver fed the allocator's lock as acquire and
 * release, it would order the two accesses and hide the race.
 */
TEST(lard_feeding_allocator_lock_hides_race)
{
	const struct valor_event fed[] = {
		T_WR(1, X, 8), /* 0 */
		T_ACQ(1, ALLOC_LOCK), /* 1: inside T1's malloc */
		T_REL(1, ALLOC_LOCK), /* 2 */
		T_ACQ(2, ALLOC_LOCK), /* 3: inside T2's malloc */
		T_REL(2, ALLOC_LOCK), /* 4 */
		T_RD(2, X, 8), /* 5 */
	};

	NO_CONFLICT_ANYWHERE(fed);
}

/*
 * R5: two logical threads share OS thread id 2 in turn.  A (the first)
 * writes x and x2 and exits without being joined; B (created later with
 * the reused id) writes x.  A and B are different threads and unordered:
 * FastTrack reports a write-write race that a detector keyed by OS id
 * would miss.  B's write of z then conflicts with T3's read, and T3's read
 * of x2 races with A's write: each report names the right logical thread.
 * A's region ended at its exit, so Valor and FastRCD report only the
 * conflict on z.
 *
 * With max_threads = 3 the region analyses must give B the slot A left
 * (three threads are live).  FastTrack may hand a slot on only to a
 * creator that joined its previous occupant (engine.md), which T1 did not
 * do here, so it runs with one slot more.
 */
#define X2 0x10100ULL
TEST(lard_tid_reuse_distinct_logical_threads)
{
	const struct valor_event tid_reuse[] = {
		T_WR(3, W, 8), /* 0: T3, a root thread, is live */
		T_CREATE(1, 2), /* 1: A */
		T_WR(2, X, 8), /* 2: A */
		T_WR(2, X2, 8), /* 3: A */
		T_EXIT(2), /* 4: A exits, never joined */
		T_CREATE(1, 2), /* 5: B, reusing id 2 */
		T_WR(2, X, 8), /* 6: B */
		T_WR(2, Z, 8), /* 7: B */
		T_RD(3, Z, 8), /* 8: B's region is ongoing */
		T_RD(3, X2, 8), /* 9: A's region is over */
		T_EXIT(2), /* 10 */
		T_JOIN(1, 2), /* 11: joins B */
	};
	struct valor_params p = { .max_threads = 3 };
	const struct golden_want z_conflict = C(WR, Z, 8, 2, 7, 3, 8, EAGER, 8);
	struct trace_result r;

	p.analysis = VALOR;
	VERDICT_WITH(tid_reuse, &p, z_conflict);
	p.analysis = FASTRCD;
	VERDICT_WITH(tid_reuse, &p, z_conflict);
	p.analysis = FASTTRACK;
	p.max_threads = 4;
	VERDICT_WITH(tid_reuse, &p, C(WW, X, 8, 2, 2, 2, 6, EAGER, 6),
		     z_conflict, C(WR, X2, 8, 2, 3, 3, 9, EAGER, 9));

	/* The logical ids behind the reports: A on x/x2, B on x/z. */
	ASSERT_EQ(0, trace_run(&p, tid_reuse, TRACE_LEN(tid_reuse), &r));
	ASSERT_EQ(3, r.n);
	{
		uint64_t a = 0, b = 0, b_z = 0, a_x2 = 0;

		for (size_t i = 0; i < r.n; i++) {
			if (r.v[i].c.addr == X) {
				a = r.v[i].c.first.tid;
				b = r.v[i].c.second.tid;
			} else if (r.v[i].c.addr == Z) {
				b_z = r.v[i].c.first.tid;
			} else if (r.v[i].c.addr == X2) {
				a_x2 = r.v[i].c.first.tid;
			}
		}
		EXPECT_NE(0, a);
		EXPECT_NE(0, b);
		EXPECT_NE(a, b);
		EXPECT_EQ(b, b_z);
		EXPECT_EQ(a, a_x2);
	}
	trace_result_free(&r);
}

/* ---- SlimState (Wilcox, Finch, Flanagan & Freund): int a[4] ---------- */

#define A 0x50000ULL /* int a[4]; a[i] at A + 4 * i */

/*
 * Under a lock A writes a[0..3], B writes a[0..3], A writes a[0..1]
 * (COARSE, then SPLIT(2) in SlimState): no race.  Then T1 reads the whole
 * array outside the lock and T2 writes a[2] outside the lock: exactly one
 * conflict, on a[2] (bytes 8..11) -- not on the rest of the cell a[2]
 * shares with a[3], not on a[0..1].
 */
TEST(slimstate_locked_phases_then_unlocked_a2)
{
	const struct valor_event slim_lock[] = {
		T_ACQ(1, L), /* 0 */
		T_WR(1, A + 0, 4), /* 1 */
		T_WR(1, A + 4, 4), /* 2 */
		T_WR(1, A + 8, 4), /* 3 */
		T_WR(1, A + 12, 4), /* 4 */
		T_REL(1, L), /* 5 */
		T_ACQ(2, L), /* 6 */
		T_WR(2, A + 0, 4), /* 7 */
		T_WR(2, A + 4, 4), /* 8 */
		T_WR(2, A + 8, 4), /* 9 */
		T_WR(2, A + 12, 4), /* 10 */
		T_REL(2, L), /* 11 */
		T_ACQ(1, L), /* 12 */
		T_WR(1, A + 0, 4), /* 13 */
		T_WR(1, A + 4, 4), /* 14 */
		T_REL(1, L), /* 15 */
		T_RD(1, A, 16), /* 16: unlocked read of a[0..3] */
		T_WR(2, A + 8, 4), /* 17: unlocked write of a[2] */
		T_REL(1, L2), /* 18 */
	};

	VERDICT(slim_lock, VALOR, RFR, C(RW, A + 8, 4, 1, 16, 2, 17, LAZY, 18));
	VERDICT(slim_lock, FASTRCD, RFR,
		C(RW, A + 8, 4, 1, 16, 2, 17, EAGER, 17));
	VERDICT(slim_lock, FASTTRACK, RFR,
		C(RW, A + 8, 4, 1, 16, 2, 17, EAGER, 17));
}

/*
 * Odd and even indices by two threads (STRIDE(2)): each 8-byte cell is
 * split between the threads, no race.  Then T2 writes a[2] (T1's) outside
 * any lock: exactly one conflict, on a[2].
 */
TEST(slimstate_odd_even_then_unlocked_a2)
{
	const struct valor_event slim_stride[] = {
		T_WR(1, A + 0, 4), /* 0: a[0] */
		T_WR(2, A + 4, 4), /* 1: a[1] */
		T_WR(1, A + 8, 4), /* 2: a[2] */
		T_WR(2, A + 12, 4), /* 3: a[3] */
		T_RD(2, A + 4, 4), /* 4 */
		T_RD(1, A + 0, 4), /* 5 */
		T_RD(2, A + 12, 4), /* 6 */
		T_WR(2, A + 8, 4), /* 7: a[2] */
	};

	VERDICT_ALL(slim_stride, C(WW, A + 8, 4, 1, 2, 2, 7, EAGER, 7));
}

/*
 * Disjoint blocks (BLOCK(2)): T1 owns a[0..1], T2 a[2..3], each written
 * with one 8-byte access.  Then T1 writes a[2]: exactly one conflict.
 */
TEST(slimstate_blocks_then_unlocked_a2)
{
	const struct valor_event slim_blocks[] = {
		T_WR(1, A + 0, 8), /* 0: a[0..1] */
		T_WR(2, A + 8, 8), /* 1: a[2..3] */
		T_RD(1, A + 4, 4), /* 2 */
		T_RD(2, A + 12, 4), /* 3 */
		T_WR(1, A + 8, 4), /* 4: a[2] */
	};

	VERDICT_ALL(slim_blocks, C(WW, A + 8, 4, 2, 1, 1, 4, EAGER, 4));
}

/* Overlapping reads of the array by both threads: never a conflict. */
TEST(slimstate_read_read_overlap)
{
	const struct valor_event slim_reads[] = {
		T_RD(1, A, 16), /* 0 */
		T_RD(2, A + 4, 8), /* 1 */
		T_RD(1, A + 8, 4), /* 2 */
		T_RD(2, A + 0, 16), /* 3 */
		T_RD(1, A + 6, 3), /* 4 */
	};

	NO_CONFLICT_ANYWHERE(slim_reads);
}

/* ---- byte precision: mixed sizes, misaligned accesses ----------------- */

#define CB 0x60000ULL /* a 16-byte, 16-aligned area per test */

/*
 * An 8-byte write at offset 4 crosses a cell boundary; a 1-byte read at
 * offset 11 conflicts on exactly that byte, and reads of the untouched
 * bytes on both sides do not.
 */
TEST(misaligned_write_vs_single_byte_read)
{
	const struct valor_event crossing[] = {
		T_WR(1, CB + 4, 8), /* 0: bytes 4..11 */
		T_RD(2, CB + 11, 1), /* 1 */
		T_RD(2, CB + 12, 4), /* 2 */
		T_RD(2, CB + 0, 4), /* 3 */
	};

	VERDICT_ALL(crossing, C(WR, CB + 11, 1, 1, 0, 2, 1, EAGER, 1));
}

/* Adjacent but disjoint accesses of other sizes: never a conflict. */
TEST(adjacent_mixed_sizes_no_conflict)
{
	const struct valor_event adjacent[] = {
		T_WR(1, CB + 6, 2), /* 0: bytes 6..7 */
		T_RD(2, CB + 8, 2), /* 1: bytes 8..9 */
		T_WR(2, CB + 10, 4), /* 2: bytes 10..13 */
		T_RD(1, CB + 5, 1), /* 3 */
		T_WR(1, CB + 14, 1), /* 4 */
		T_RD(2, CB + 15, 1), /* 5 */
		T_WR(1, CB + 0, 4), /* 6 */
		T_RD(2, CB + 4, 1), /* 7 */
	};

	NO_CONFLICT_ANYWHERE(adjacent);
}

/*
 * A wide access over a narrower one: T2's 16-byte write conflicts with T1's
 * 6-byte misaligned write on exactly bytes 5..10.  The bytes lie in two
 * cells but are one run of consecutive conflicting bytes between the same
 * two accesses: one report, addr = first byte, size = 6 (engine.h).
 */
TEST(wide_write_over_misaligned_write)
{
	const struct valor_event wide[] = {
		T_WR(1, CB + 5, 6), /* 0: bytes 5..10 */
		T_WR(2, CB + 0, 16), /* 1 */
	};

	VERDICT_ALL(wide, C(WW, CB + 5, 6, 1, 0, 2, 1, EAGER, 1));
}

/*
 * A read of a whole, uniform cell, then another thread's 1-byte write that
 * splits it: validation compares byte by byte and reports that byte only.
 */
TEST(read_of_whole_cell_then_one_byte_written)
{
	const struct valor_event one_byte[] = {
		T_RD(1, CB, 8), /* 0 */
		T_WR(2, CB + 2, 1), /* 1 */
		T_REL(1, L), /* 2 */
	};

	VERDICT(one_byte, VALOR, RFR, C(RW, CB + 2, 1, 1, 0, 2, 1, LAZY, 2));
	VERDICT(one_byte, FASTRCD, RFR, C(RW, CB + 2, 1, 1, 0, 2, 1, EAGER, 1));
	VERDICT(one_byte, FASTTRACK, RFR,
		C(RW, CB + 2, 1, 1, 0, 2, 1, EAGER, 1));
}

/*
 * A cell first used whole by one thread, then split by a narrow write of
 * another, keeps every byte's history: the 8-byte read of a third thread
 * conflicts with both writers on their own bytes only.
 */
TEST(refined_cell_keeps_every_byte)
{
	const struct valor_event refine[] = {
		T_WR(1, CB + 0, 8), /* 0 */
		T_REL(1, L), /* 1 */
		T_ACQ(2, L), /* 2 */
		T_WR(2, CB + 2, 2), /* 3: splits the cell */
		T_WR(1, CB + 6, 2), /* 4: T1's new region */
		T_ACQ(3, L), /* 5: sees T1's first region only */
		T_RD(3, CB + 0, 8), /* 6 */
	};

	VERDICT_ALL(refine, C(WR, CB + 2, 2, 2, 3, 3, 6, EAGER, 6),
		    C(WR, CB + 6, 2, 1, 4, 3, 6, EAGER, 6));
}

/*
 * One region writes a cell's halves from two lines; another thread's
 * 8-byte write meets both: one conflict per half, each naming the line
 * that wrote it, not one conflict per byte nor one naming a line for
 * bytes it did not write.
 */
TEST(a_write_meets_two_writes_of_one_region)
{
	const struct valor_event halves[] = {
		T_WR(1, CB + 0, 4), /* 0 */
		T_WR(1, CB + 4, 4), /* 1 */
		T_WR(2, CB + 0, 8), /* 2 */
	};

	VERDICT_ALL(halves, C(WW, CB + 0, 4, 1, 0, 2, 2, EAGER, 2),
		    C(WW, CB + 4, 4, 1, 1, 2, 2, EAGER, 2));
}

TEST_HARNESS_MAIN
