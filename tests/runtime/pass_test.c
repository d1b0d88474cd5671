// SPDX-License-Identifier: GPL-2.0
/*
 * Valor's LLVM pass (libvalor/instrument/), by what it leaves in the
 * code.  tests/runtime/programs/pass_shapes.c is compiled to IR by
 * `valor cc --compiler=clang` with the checks left as calls
 * (-mllvm -valor-inline-checks=0, so they can be counted), and each of
 * its functions must hold the calls its comment names:
 *
 *   - a check that a dominating check of the same address makes
 *     redundant is dropped, and only then: a lock, or a call on any path
 *     between them, keeps both; a read never covers a write;
 *   - arrays that never leave their function and functions marked
 *     no_sanitize("thread") get no checks;
 *   - atomics and fences become the runtime's calls with their memory
 *     orders; odd sizes become its range calls; a small block copy gets
 *     a check per piece, other block operations call the C library's
 *     (which the runtime intercepts);
 *   - by default every check is inlined, the module names the ABI
 *     version, and position-independent code for a shared library keeps
 *     calls to the exported entry points.
 *
 * How the runtime behaves on programs built with the pass (reports,
 * sites, stacks, signal handlers) is tested by errors_test.c and
 * corpus_test.c, which build with it too.  Output goes to
 * build/runtime-tests/pass/.
 */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../libvalor/runtime/pass_abi_version.h"
#include "kselftest_harness.h"
#include "json_lines.h"
#include "reports.h"
#include "run_program.h"

#define EXIT_USAGE 2

FIXTURE(shapes)
{
	struct tree_paths tree;
	char out[PATH_MAX]; /* build/runtime-tests/pass */
	char source[PATH_MAX]; /* pass_shapes.c */
	char *ir; /* the module the test compiled */
};

FIXTURE_SETUP(shapes)
{
	ASSERT_TRUE(tree_paths_find(&self->tree))
	TH_LOG("cannot find the build directory from /proc/self/exe");
	pathf(self->out, sizeof(self->out), "%s/runtime-tests/pass",
	      self->tree.build);
	pathf(self->source, sizeof(self->source),
	      "%s/tests/runtime/programs/pass_shapes.c", self->tree.root);
	ASSERT_EQ(0, make_dirs(self->out))
	TH_LOG("cannot create %s", self->out);
	ASSERT_TRUE(command_exists("clang"))
	TH_LOG("clang is not installed (tools/install-deps.sh installs it)");
}

FIXTURE_TEARDOWN(shapes)
{
	free(self->ir);
}

/*
 * Compile pass_shapes.c to IR as @name.ll with `valor cc --compiler=clang
 * -O2` and the extra arguments (NULL-terminated); the text in self->ir.
 */
static bool compile_ir(struct __test_metadata *_metadata,
		       FIXTURE_DATA(shapes) * self, const char *name, ...)
{
	struct argv_buf *cmd = malloc(sizeof(*cmd));
	char ll[PATH_MAX], log[PATH_MAX];
	const char *arg;
	va_list ap;
	bool ok;

	if (!cmd)
		return false;
	pathf(ll, sizeof(ll), "%s/%s.ll", self->out, name);
	pathf(log, sizeof(log), "%s/%s.build.log", self->out, name);
	argv_init(cmd);
	argv_add(cmd, "%s", self->tree.valor);
	argv_add(cmd, "cc");
	argv_add(cmd, "--compiler=clang");
	/* Unrolled loops would repeat the checks being counted. */
	argv_add(cmd, "-O2");
	argv_add(cmd, "-fno-unroll-loops");
	argv_add(cmd, "-g0");
	argv_add(cmd, "-S");
	argv_add(cmd, "-emit-llvm");
	va_start(ap, name);
	while ((arg = va_arg(ap, const char *)))
		argv_add(cmd, "%s", arg);
	va_end(ap);
	argv_add(cmd, "-o");
	argv_add(cmd, "%s", ll);
	argv_add(cmd, "%s", self->source);
	unlink(ll);
	ok = build_step(_metadata, cmd, log);
	free(cmd);
	free(self->ir);
	self->ir = ok ? read_file(ll, NULL) : NULL;
	return self->ir != NULL;
}

/* The body of the definition of @fn in @ir (malloc'd), or NULL. */
static char *function_body(const char *ir, const char *fn)
{
	char head[256];
	const char *start, *end;

	snprintf(head, sizeof(head), "@%s(", fn);
	for (start = strstr(ir, head); start; start = strstr(start + 1, head)) {
		const char *line = start;

		while (line > ir && line[-1] != '\n')
			line--;
		if (!strncmp(line, "define ", 7))
			break;
	}
	if (!start)
		return NULL;
	end = strstr(start, "\n}\n");
	if (!end)
		return NULL;
	return strndup(start, (size_t)(end - start));
}

/* How many times @fn's body holds @needle; -1 if @fn is not defined. */
static int count_in(const char *ir, const char *fn, const char *needle)
{
	char *body = function_body(ir, fn);
	int n;

	if (!body)
		return -1;
	n = count_of(body, needle);
	free(body);
	return n;
}

/* @fn holds exactly @n calls to @callee. */
#define EXPECT_CALLS(ir, fn, callee, n)                                       \
	do {                                                                  \
		int _got = count_in(ir, fn, "@" callee "(");                  \
		EXPECT_EQ(n, _got)                                            \
		TH_LOG("%s: %d calls to %s, expected %d%s", fn, _got, callee, \
		       n, _got < 0 ? " (no such function)" : "");             \
	} while (0)

/* Checks as calls, one per access (loops not coalesced), to be counted. */
#define CALLS_OFF \
	"-mllvm", "-valor-inline-checks=0", "-mllvm", "-valor-coalesce-loops=0"

TEST_F_TIMEOUT(shapes, a_dominating_check_of_the_same_address_covers, 120)
{
	ASSERT_TRUE(compile_ir(_metadata, self, "covered", CALLS_OFF, NULL));
	EXPECT_CALLS(self->ir, "reread", "__tsan_read4", 1);
	EXPECT_CALLS(self->ir, "narrower_reread", "__tsan_read8", 1);
	EXPECT_CALLS(self->ir, "narrower_reread", "__tsan_read4", 0);
	EXPECT_CALLS(self->ir, "read_after_write", "__tsan_write4", 1);
	EXPECT_CALLS(self->ir, "read_after_write", "__tsan_read4", 0);
	EXPECT_CALLS(self->ir, "reread_after_branch", "__tsan_read4", 1);
	/* *p before the loop covers it in the loop; q[i] is checked in it. */
	EXPECT_CALLS(self->ir, "reread_in_loop", "__tsan_read4", 2);
}

TEST_F_TIMEOUT(shapes, a_check_that_may_be_separated_by_sync_stays, 120)
{
	ASSERT_TRUE(compile_ir(_metadata, self, "kept", CALLS_OFF, NULL));
	EXPECT_CALLS(self->ir, "reread_across_lock", "__tsan_read4", 2);
	EXPECT_CALLS(self->ir, "reread_after_call_on_one_path", "__tsan_read4",
		     2);
	EXPECT_CALLS(self->ir, "reread_in_loop_with_call", "__tsan_read4", 2);
	EXPECT_CALLS(self->ir, "write_after_read", "__tsan_read4", 1);
	EXPECT_CALLS(self->ir, "write_after_read", "__tsan_write4", 1);
	EXPECT_CALLS(self->ir, "wider_reread", "__tsan_read4", 1);
	EXPECT_CALLS(self->ir, "wider_reread", "__tsan_read8", 1);
}

TEST_F_TIMEOUT(shapes, a_read_the_block_then_writes_is_checked_as_the_write,
	       120)
{
	ASSERT_TRUE(compile_ir(_metadata, self, "rmw", CALLS_OFF, NULL));
	EXPECT_CALLS(self->ir, "increment", "__tsan_write4", 1);
	EXPECT_CALLS(self->ir, "increment", "__tsan_read4", 0);
	EXPECT_CALLS(self->ir, "clamp", "__tsan_read4", 1);
	EXPECT_CALLS(self->ir, "clamp", "__tsan_write4", 1);
	EXPECT_CALLS(self->ir, "increment_around_call", "__tsan_read4", 1);
	EXPECT_CALLS(self->ir, "increment_around_call", "__tsan_write4", 1);
	/* Struct copies kept inline: each element's read becomes its write. */
	EXPECT_CALLS(self->ir, "swap_pairs", "__tsan_write16", 2);
	EXPECT_CALLS(self->ir, "swap_pairs", "__tsan_read16", 0);
	EXPECT_CALLS(self->ir, "swap_pairs_around_call", "__tsan_read16", 1);
	EXPECT_CALLS(self->ir, "swap_pairs_around_call", "__tsan_write16", 2);
}

TEST_F_TIMEOUT(shapes, neighbouring_accesses_are_checked_as_one_span, 120)
{
	ASSERT_TRUE(compile_ir(_metadata, self, "spans", CALLS_OFF, NULL));
	/* Without the inline checks a span is the ABI's range call. */
	EXPECT_CALLS(self->ir, "point_length", "__tsan_read_range", 1);
	EXPECT_EQ(1, count_in(self->ir, "point_length", ", i64 24)"));
	EXPECT_CALLS(self->ir, "point_length", "__tsan_read8", 0);
	EXPECT_CALLS(self->ir, "point_bent", "__tsan_read_range", 1);
	EXPECT_EQ(1, count_in(self->ir, "point_bent", ", i64 16)"));
	EXPECT_CALLS(self->ir, "point_bent", "__tsan_read8", 0);
	EXPECT_CALLS(self->ir, "gapped_ends", "__tsan_read_range", 0);
	EXPECT_CALLS(self->ir, "gapped_ends", "__tsan_read8", 2);
	EXPECT_CALLS(self->ir, "fields_around_call", "__tsan_read_range", 0);
	EXPECT_CALLS(self->ir, "fields_around_call", "__tsan_read8", 2);
	EXPECT_CALLS(self->ir, "field_on_one_path", "__tsan_read_range", 0);
	EXPECT_CALLS(self->ir, "field_on_one_path", "__tsan_read8", 2);

	/* Writes: whole aligned cells, no gap, each run when the first is. */
	EXPECT_CALLS(self->ir, "point_set", "__tsan_write_range", 1);
	EXPECT_EQ(1, count_in(self->ir, "point_set", ", i64 24)"));
	EXPECT_CALLS(self->ir, "point_set", "__tsan_write8", 0);
	EXPECT_CALLS(self->ir, "point_add", "__tsan_write_range", 1);
	EXPECT_CALLS(self->ir, "point_add", "__tsan_read_range", 1);
	EXPECT_EQ(2, count_in(self->ir, "point_add", ", i64 24)"));
	EXPECT_CALLS(self->ir, "gapped_set_ends", "__tsan_write_range", 0);
	EXPECT_CALLS(self->ir, "gapped_set_ends", "__tsan_write8", 2);
	EXPECT_CALLS(self->ir, "ints_set", "__tsan_write_range", 0);
	EXPECT_CALLS(self->ir, "ints_set", "__tsan_write4", 2);

	/* The spans are the pass's doing. */
	ASSERT_TRUE(compile_ir(_metadata, self, "no-spans", CALLS_OFF, "-mllvm",
			       "-valor-merge-reads=0", "-mllvm",
			       "-valor-merge-writes=0", NULL));
	EXPECT_CALLS(self->ir, "point_length", "__tsan_read_range", 0);
	EXPECT_CALLS(self->ir, "point_length", "__tsan_read8", 3);
	EXPECT_CALLS(self->ir, "point_bent", "__tsan_read8", 2);
	EXPECT_CALLS(self->ir, "point_set", "__tsan_write_range", 0);

	/* Inlined, a span is the runtime's span check's look, then its call. */
	ASSERT_TRUE(compile_ir(_metadata, self, "spans-inline", NULL));
	EXPECT_CALLS(self->ir, "point_length", "__valor_pass_read_span", 1);
	EXPECT_CALLS(self->ir, "point_length", "__valor_pass_read_first", 0);
	EXPECT_CALLS(self->ir, "point_set", "__valor_pass_write_span", 1);
	EXPECT_CALLS(self->ir, "point_set", "__valor_pass_access_slow", 0);
}

/* What the three tests above drop is the pass's doing: without it, all stay. */
TEST_F_TIMEOUT(shapes, without_elision_every_access_is_checked, 120)
{
	ASSERT_TRUE(compile_ir(_metadata, self, "all", CALLS_OFF, "-mllvm",
			       "-valor-elide-redundant=0", NULL));
	EXPECT_CALLS(self->ir, "reread", "__tsan_read4", 2);
	EXPECT_CALLS(self->ir, "narrower_reread", "__tsan_read4", 1);
	EXPECT_CALLS(self->ir, "read_after_write", "__tsan_read4", 1);
	EXPECT_CALLS(self->ir, "reread_in_loop", "__tsan_read4", 3);
	EXPECT_CALLS(self->ir, "increment", "__tsan_read4", 1);
	EXPECT_CALLS(self->ir, "increment", "__tsan_write4", 1);
	EXPECT_CALLS(self->ir, "swap_pairs", "__tsan_read16", 2);
	EXPECT_CALLS(self->ir, "swap_pairs", "__tsan_write16", 2);
}

TEST_F_TIMEOUT(shapes,
	       private_locals_and_blocks_and_opted_out_functions_are_not_checked,
	       120)
{
	ASSERT_TRUE(compile_ir(_metadata, self, "private", CALLS_OFF, NULL));
	EXPECT_EQ(0, count_in(self->ir, "private_local", "@__tsan_"));
	EXPECT_EQ(0, count_in(self->ir, "not_instrumented", "@__tsan_"));
	/* The same array, once its address is passed on, is checked. */
	EXPECT_CALLS(self->ir, "escaping_local", "__tsan_read4", 1);
	EXPECT_LT(0, count_in(self->ir, "escaping_local", "@__tsan_write"));
	/* A block fresh from calloc, freed, its address kept nowhere. */
	EXPECT_CALLS(self->ir, "private_block", "__tsan_read1", 1);
	EXPECT_CALLS(self->ir, "private_block", "__tsan_read4", 0);
	EXPECT_EQ(0, count_in(self->ir, "private_block", "@__tsan_write"));
	/* Stored in a global, or from realloc: checked. */
	EXPECT_CALLS(self->ir, "escaping_block", "__tsan_read4", 1);
	EXPECT_LT(0, count_in(self->ir, "escaping_block", "@__tsan_write"));
	EXPECT_CALLS(self->ir, "reallocated_block", "__tsan_read4", 1);
	EXPECT_LT(0, count_in(self->ir, "reallocated_block", "@__tsan_write"));
}

/*
 * Each access fetched before a lock is two prefetches once the check is
 * inlined (its memory and its cell word): counted against a build with
 * the step off, since the inlined check prefetches on its own paths.
 */
TEST_F_TIMEOUT(shapes,
	       a_critical_sections_first_accesses_are_fetched_before_the_lock,
	       120)
{
	int on[3], off[3];
	const char *fns[3] = { "lookup_under_lock", "deref_under_lock",
			       "reread" };

	ASSERT_TRUE(compile_ir(_metadata, self, "prefetch", NULL));
	for (int i = 0; i < 3; i++)
		on[i] = count_in(self->ir, fns[i], "@llvm.prefetch");
	ASSERT_TRUE(compile_ir(_metadata, self, "noprefetch", "-mllvm",
			       "-valor-prefetch-at-locks=0", NULL));
	for (int i = 0; i < 3; i++)
		off[i] = count_in(self->ir, fns[i], "@llvm.prefetch");
	/* table and table[h]; not the node. */
	EXPECT_EQ(4, on[0] - off[0])
	TH_LOG("lookup_under_lock: %d prefetches, %d without the step", on[0],
	       off[0]);
	/* *pp; not (*pp)->key. */
	EXPECT_EQ(2, on[1] - off[1])
	TH_LOG("deref_under_lock: %d prefetches, %d without the step", on[1],
	       off[1]);
	/* No lock, nothing added. */
	EXPECT_EQ(0, on[2] - off[2])
	TH_LOG("reread: %d prefetches, %d without the step", on[2], off[2]);
	EXPECT_LE(0, off[0]);
}

TEST_F_TIMEOUT(shapes, atomics_become_runtime_calls_with_their_orders, 120)
{
	ASSERT_TRUE(compile_ir(_metadata, self, "atomics", CALLS_OFF, NULL));
	/* Orders: 2 acquire, 3 release, 4 acq_rel, 5 seq_cst. */
	EXPECT_CALLS(self->ir, "atomics", "__tsan_atomic32_load", 1);
	/* The load's acquire, and the compare-and-swap's on failure. */
	EXPECT_EQ(2, count_in(self->ir, "atomics", ", i32 2)"));
	EXPECT_CALLS(self->ir, "atomics", "__tsan_atomic32_store", 1);
	EXPECT_EQ(1, count_in(self->ir, "atomics", ", i32 3)"));
	EXPECT_CALLS(self->ir, "atomics", "__tsan_atomic32_fetch_add", 1);
	EXPECT_CALLS(self->ir, "atomics",
		     "__tsan_atomic64_compare_exchange_val", 1);
	EXPECT_EQ(1, count_in(self->ir, "atomics", ", i32 4, i32 2)"));
	EXPECT_EQ(1, count_in(self->ir, "atomics",
			      "@__tsan_atomic_thread_fence(i32 5)"));
	/* No atomic instruction is left for the runtime not to see. */
	EXPECT_EQ(0, count_in(self->ir, "atomics", " atomic"));
	EXPECT_EQ(0, count_in(self->ir, "atomics", "cmpxchg"));
	EXPECT_EQ(0, count_in(self->ir, "atomics", "  fence "));
	/* fetch_max has no ABI call: a compare-and-swap loop of them. */
	EXPECT_CALLS(self->ir, "atomic_max", "__tsan_atomic32_load", 1);
	EXPECT_CALLS(self->ir, "atomic_max",
		     "__tsan_atomic32_compare_exchange_val", 1);
	EXPECT_EQ(0, count_in(self->ir, "atomic_max", "atomicrmw"));
}

TEST_F_TIMEOUT(shapes, block_copies_and_odd_sizes_are_checked, 120)
{
	ASSERT_TRUE(compile_ir(_metadata, self, "blocks", CALLS_OFF, NULL));
	EXPECT_CALLS(self->ir, "block_copy", "memcpy", 1);
	EXPECT_CALLS(self->ir, "block_copy", "memset", 1);
	EXPECT_EQ(0, count_in(self->ir, "block_copy", "@llvm.mem"));
	EXPECT_CALLS(self->ir, "small_copy", "__tsan_read16", 1);
	EXPECT_CALLS(self->ir, "small_copy", "__tsan_read8", 1);
	EXPECT_CALLS(self->ir, "small_copy", "__tsan_write16", 1);
	EXPECT_CALLS(self->ir, "small_copy", "__tsan_write8", 1);
	EXPECT_EQ(0, count_in(self->ir, "small_copy", "@memcpy("));
	EXPECT_LT(0, count_in(self->ir, "odd_size", "@__tsan_write_range("));
}

/*
 * The default: every check inlined (no call to a check function left,
 * no definition of one kept), the slow paths called, and the module
 * refers to the runtime's ABI version.
 */
TEST_F_TIMEOUT(shapes, checks_are_inlined_by_default, 120)
{
	ASSERT_TRUE(compile_ir(_metadata, self, "inlined", NULL));
	EXPECT_EQ(NULL, strstr(self->ir, "@__valor_check_"));
	EXPECT_NE(NULL, strstr(self->ir, "@__valor_pass_read_first("));
	EXPECT_NE(NULL, strstr(self->ir, "@" VALOR_PASS_ABI_SYMBOL_NAME " "));
	EXPECT_LT(0, count_in(self->ir, "reread", "@rt_cur_vt"));
}

/* Code that may end up in a shared library cannot reach the runtime inline. */
TEST_F_TIMEOUT(shapes, shared_library_code_calls_the_entry_points, 120)
{
	ASSERT_TRUE(compile_ir(_metadata, self, "pic", "-fPIC", NULL));
	EXPECT_EQ(NULL, strstr(self->ir, "@__valor_pass_read_first("));
	EXPECT_EQ(NULL, strstr(self->ir, "@rt_cur_vt"));
	EXPECT_CALLS(self->ir, "reread", "__tsan_read4", 1);
}

/* --abi=tsan keeps clang's own instrumentation: no elision, no inlining. */
TEST_F_TIMEOUT(shapes, abi_tsan_is_clangs_own_instrumentation, 120)
{
	ASSERT_TRUE(compile_ir(_metadata, self, "tsan", "--abi=tsan", NULL));
	EXPECT_CALLS(self->ir, "reread", "__tsan_read4", 2);
	EXPECT_EQ(NULL, strstr(self->ir, "__valor_pass"));
}

/* Checks as calls, loops coalesced (the default). */
#define COALESCE "-mllvm", "-valor-inline-checks=0", "-fno-vectorize"

/*
 * Loops are coalesced: a loop's reads that walk a block of memory, on
 * every iteration, in a loop nothing in which may synchronize and that
 * runs to its count, are checked once before the loop as a range; its
 * writes too unless -valor-coalesce-writes=0.
 */
TEST_F_TIMEOUT(shapes, loops_are_coalesced_only_when_it_is_exact, 120)
{
	ASSERT_TRUE(compile_ir(_metadata, self, "coalesced", COALESCE, NULL));
	EXPECT_CALLS(self->ir, "sum_array", "__tsan_read_range", 1);
	EXPECT_CALLS(self->ir, "sum_array", "__tsan_read4", 0);
	EXPECT_CALLS(self->ir, "strided", "__tsan_write_range", 0);
	EXPECT_CALLS(self->ir, "strided", "__tsan_write4", 1);
	EXPECT_CALLS(self->ir, "sum_until_negative", "__tsan_read_range", 0);
	EXPECT_LT(0,
		  count_in(self->ir, "sum_until_negative", "@__tsan_read4("));
	EXPECT_CALLS(self->ir, "sum_locked", "__tsan_read_range", 0);
	EXPECT_CALLS(self->ir, "sum_locked", "__tsan_read4", 1);
	EXPECT_CALLS(self->ir, "copy_some", "__tsan_read_range", 1);
	EXPECT_CALLS(self->ir, "copy_some", "__tsan_read4", 0);
	EXPECT_CALLS(self->ir, "copy_some", "__tsan_write4", 1);
	EXPECT_CALLS(self->ir, "exps", "__tsan_read_range", 1);
	EXPECT_CALLS(self->ir, "exps", "__tsan_read8", 0);
	/* Through a function of the file that cannot sync, or one that can. */
	EXPECT_CALLS(self->ir, "prices", "__tsan_read_range", 1);
	EXPECT_CALLS(self->ir, "prices", "__tsan_read8", 0);
	EXPECT_CALLS(self->ir, "prices_logged", "__tsan_read_range", 0);
	EXPECT_CALLS(self->ir, "prices_logged", "__tsan_read8", 1);
	/* Writes too, where they are as exact. */
	EXPECT_CALLS(self->ir, "exps", "__tsan_write_range", 1);
	EXPECT_CALLS(self->ir, "exps", "__tsan_write8", 0);
	EXPECT_CALLS(self->ir, "strided", "__tsan_write_range", 0);
	EXPECT_CALLS(self->ir, "strided", "__tsan_write4", 1);

	/* Reads of every other 8-byte element: a nest; of 4-byte ones, not. */
	EXPECT_CALLS(self->ir, "sum_even", "__valor_pass_read_nest", 1);
	EXPECT_CALLS(self->ir, "sum_even", "__tsan_read8", 0);
	EXPECT_CALLS(self->ir, "scale_even", "__valor_pass_write_nest", 1);
	EXPECT_CALLS(self->ir, "scale_even", "__tsan_write8", 0);
	EXPECT_CALLS(self->ir, "scale_even", "__tsan_read8", 0);
	EXPECT_CALLS(self->ir, "sum_even_ints", "__valor_pass_read_nest", 0);
	EXPECT_CALLS(self->ir, "sum_even_ints", "__tsan_read4", 1);

	/* An address the loop does not move: checked once, before it. */
	EXPECT_CALLS(self->ir, "accumulate", "__tsan_write_range", 1);
	EXPECT_CALLS(self->ir, "accumulate", "__tsan_write8", 0);
	EXPECT_CALLS(self->ir, "accumulate", "__tsan_read_range", 1);

	/* Nests: a's rows and b's columns, walked for every i and j. */
	EXPECT_CALLS(self->ir, "matrix_product", "__valor_pass_read_nest", 2);
	EXPECT_CALLS(self->ir, "matrix_product", "__valor_pass_write_nest", 1);
	EXPECT_CALLS(self->ir, "half_column_sums", "__valor_pass_read_nest", 1);
	EXPECT_CALLS(self->ir, "half_column_sums", "__tsan_read8", 0);
	EXPECT_CALLS(self->ir, "transpose_tile", "__valor_pass_read_nest", 1);
	EXPECT_CALLS(self->ir, "transpose_tile", "__valor_pass_write_nest", 1);
	EXPECT_CALLS(self->ir, "transpose_tile", "__tsan_read16", 0);
	EXPECT_CALLS(self->ir, "transpose_tile", "__tsan_write16", 0);
	EXPECT_CALLS(self->ir, "column_sums_locked", "__valor_pass_read_nest",
		     0);
	/* A loop stepping by a value: its count divides by the step. */
	EXPECT_CALLS(self->ir, "butterfly_stage", "__valor_pass_read_nest", 2);
	EXPECT_CALLS(self->ir, "butterfly_stage", "__valor_pass_write_nest", 2);
	EXPECT_CALLS(self->ir, "butterfly_stage", "__tsan_read_range", 0);
	EXPECT_CALLS(self->ir, "butterfly_stage", "__tsan_write_range", 0);

	/* -valor-coalesce-writes=0 leaves the writes to their checks. */
	ASSERT_TRUE(compile_ir(_metadata, self, "coalesced_reads", COALESCE,
			       "-mllvm", "-valor-coalesce-writes=0", NULL));
	EXPECT_CALLS(self->ir, "exps", "__tsan_read_range", 1);
	EXPECT_CALLS(self->ir, "exps", "__tsan_write_range", 0);
	EXPECT_CALLS(self->ir, "exps", "__tsan_write8", 1);
	EXPECT_CALLS(self->ir, "matrix_product", "__valor_pass_write_nest", 0);

	/* -valor-coalesce-strided=0 leaves strided reads to their checks. */
	ASSERT_TRUE(compile_ir(_metadata, self, "coalesced_dense", COALESCE,
			       "-mllvm", "-valor-coalesce-strided=0", NULL));
	EXPECT_CALLS(self->ir, "sum_even", "__valor_pass_read_nest", 0);
	EXPECT_CALLS(self->ir, "sum_even", "__tsan_read8", 1);
	EXPECT_CALLS(self->ir, "sum_array", "__tsan_read_range", 1);

	/* -valor-coalesce-gapped=0 leaves a tile's columns to their checks. */
	ASSERT_TRUE(compile_ir(_metadata, self, "coalesced_dense", COALESCE,
			       "-mllvm", "-valor-coalesce-gapped=0", NULL));
	EXPECT_CALLS(self->ir, "half_column_sums", "__valor_pass_read_nest", 0);
	EXPECT_CALLS(self->ir, "transpose_tile", "__valor_pass_read_nest", 0);
	EXPECT_CALLS(self->ir, "transpose_tile", "__tsan_read16", 1);
	EXPECT_CALLS(self->ir, "matrix_product", "__valor_pass_read_nest", 2);

	/* -valor-coalesce-loops=0 turns it off. */
	ASSERT_TRUE(compile_ir(_metadata, self, "uncoalesced", CALLS_OFF,
			       "-fno-vectorize", NULL));
	EXPECT_CALLS(self->ir, "sum_array", "__tsan_read_range", 0);
	EXPECT_CALLS(self->ir, "sum_array", "__tsan_read4", 1);
}

/* The 1-based line of @path holding @marker, or -1. */
static int line_of_marker(const char *path, const char *marker)
{
	char *text = read_file(path, NULL), *hit;
	int line = 1;

	if (!text)
		return -1;
	hit = strstr(text, marker);
	for (char *p = text; hit && p < hit; p++)
		line += *p == '\n';
	free(text);
	return hit ? line : -1;
}

/*
 * Build the program @src with `valor cc --compiler=clang`, the extra
 * arguments (NULL-terminated), the corpus's support headers and the
 * scheduler @sched, into @bin; the build's output goes to @log.
 */
static bool build_with_pass(struct __test_metadata *_metadata,
			    FIXTURE_DATA(shapes) * self, const char *src,
			    const char *sched, const char *bin, const char *log,
			    ...)
{
	struct argv_buf *cmd = malloc(sizeof(*cmd));
	const char *arg;
	va_list ap;
	bool ok;

	if (!cmd)
		return false;
	argv_init(cmd);
	argv_add(cmd, "%s", self->tree.valor);
	argv_add(cmd, "cc");
	argv_add(cmd, "--compiler=clang");
	va_start(ap, log);
	while ((arg = va_arg(ap, const char *)))
		argv_add(cmd, "%s", arg);
	va_end(ap);
	argv_add(cmd, "-iquote");
	argv_add(cmd, "%s/tests/runtime/corpus/support", self->tree.root);
	argv_add(cmd, "-o");
	argv_add(cmd, "%s", bin);
	argv_add(cmd, "%s", src);
	argv_add(cmd, "%s", sched);
	ok = build_step(_metadata, cmd, log);
	free(cmd);
	return ok;
}

/* A write-read conflict a program must report: its two lines' markers. */
struct race_lines {
	const char *write, *read;
};

/*
 * Build tests/runtime/programs/@program.c with the pass and run it under
 * each analysis: every conflict reported must be one of @races (by
 * line), and each of @races must be reported.  The build's -valor-stats
 * line must not say " 0 @done" (the step under test did something), or
 * this tests nothing the plain inline checks do not.
 */
static void expect_exact_races(struct __test_metadata *_metadata,
			       FIXTURE_DATA(shapes) * self, const char *program,
			       const char *done, const struct race_lines *races,
			       int n_races)
{
	static const char *const analyses[] = { "valor", "fastrcd",
						"fasttrack" };
	struct run_reports *rep = malloc(sizeof(*rep));
	char src[PATH_MAX], sched[PATH_MAX], bin[PATH_MAX], log[PATH_MAX];
	char opts[2 * PATH_MAX], out[PATH_MAX];
	int wline[4], rline[4];

	ASSERT_NE(NULL, rep);
	ASSERT_GE(4, n_races);
	pathf(src, sizeof(src), "%s/tests/runtime/programs/%s.c",
	      self->tree.root, program);
	pathf(bin, sizeof(bin), "%s/%s", self->out, program);
	for (int i = 0; i < n_races; i++) {
		wline[i] = line_of_marker(src, races[i].write);
		rline[i] = line_of_marker(src, races[i].read);
		ASSERT_LT(0, wline[i]);
		ASSERT_LT(0, rline[i]);
	}
	ASSERT_TRUE(build_sched(_metadata, &self->tree, "clang", self->out,
				sched, sizeof(sched)));
	pathf(log, sizeof(log), "%s/%s.build.log", self->out, program);
	ASSERT_TRUE(build_with_pass(_metadata, self, src, sched, bin, log,
				    "-O2", "-mllvm", "-valor-stats", NULL));
	/* The step under test did something (else this tests nothing new). */
	{
		char *text = read_file(log, NULL);
		char zero[64];

		ASSERT_NE(NULL, text);
		snprintf(zero, sizeof(zero), " 0 %s", done);
		EXPECT_NE(NULL, strstr(text, done))
		TH_LOG("no \"%s\" in the pass's stats: %s", done, text);
		EXPECT_EQ(NULL, strstr(text, zero))
		TH_LOG("the pass did no \"%s\": %s", done, text);
		free(text);
	}

	for (size_t a = 0; a < sizeof(analyses) / sizeof(analyses[0]); a++) {
		char *argv[] = { bin, NULL };
		char *env[] = { opts, NULL };
		struct run_result r;
		int right[4] = { 0 };

		pathf(log, sizeof(log), "%s/%s.%s.json", self->out, program,
		      analyses[a]);
		pathf(out, sizeof(out), "%s/%s.%s.out", self->out, program,
		      analyses[a]);
		unlink(log);
		pathf(opts, sizeof(opts),
		      "VALOR_OPTIONS=analysis=%s json=1 log_path=%s",
		      analyses[a], log);
		ASSERT_EQ(0, run_command(argv, env, out, &r));
		EXPECT_TRUE(r.exited && r.status == 66)
		TH_LOG("%s: exit %d: %s", analyses[a], r.status, r.output);
		run_result_free(&r);
		{
			char *text = read_file(log, NULL);

			parse_reports(text ? text : "", rep);
			free(text);
		}
		for (int k = 0; k < rep->n; k++) {
			char d[512];
			bool known = false;

			describe_conflict(&rep->c[k], d, sizeof(d));
			for (int i = 0; i < n_races; i++) {
				bool match = rep->c[k].first.line == wline[i] &&
					     rep->c[k].second.line == rline[i];

				known |= match;
				right[i] += match && rep->c[k].kind == 1;
			}
			EXPECT_TRUE(known)
			TH_LOG("%s: unexpected conflict %s", analyses[a], d);
		}
		for (int i = 0; i < n_races; i++) {
			EXPECT_LT(0, right[i])
			TH_LOG("%s: no write-read conflict %d -> %d",
			       analyses[a], wline[i], rline[i]);
		}
	}
	free(rep);
}

/*
 * Ranges are exact at run time too: on loop_ranges.c, whose loops are
 * coalesced (its writes too), each analysis reports T2's read of T1's
 * bytes and nothing else -- no conflict from a range one element too
 * long where the two threads' halves meet.
 */
TEST_F_TIMEOUT(shapes, coalesced_ranges_report_exactly_the_race, 180)
{
	static const struct race_lines races[] = {
		{ "racy: write", "racy: read" },
	};

	expect_exact_races(_metadata, self, "loop_ranges", "loop ranges", races,
			   1);
}

/*
 * And strided loops: strided_ranges.c's sum of every other double,
 * checked before its loop, reports T1's write of one of those elements
 * and none of its writes of the elements in between; T1's loop writing
 * those in between, checked before the loop, reports T2's read of one
 * of them and takes none of the others.
 */
TEST_F_TIMEOUT(shapes, strided_loops_report_exactly_the_races, 180)
{
	static const struct race_lines races[] = {
		{ "racy: write", "racy: read" },
		{ "strided: write", "strided: read" },
	};

	expect_exact_races(_metadata, self, "strided_ranges", "loop ranges",
			   races, 2);
}

/*
 * So are nests: nest_ranges.c's column sums over the bottom half of a
 * matrix report T1's one write there and not its fill of the top half;
 * the runtime's nest entry point, given every other element of two rows,
 * reports T1's write of one of them and none of its writes in between;
 * a tile of a transpose reports T1's write in it and none of T1's
 * accesses to the rest of the tile's rows; an FFT stage's butterflies,
 * whose loop steps by a value, report T1's write of an element of the
 * stage and none of its writes just past it.
 */
TEST_F_TIMEOUT(shapes, loop_nests_report_exactly_the_races, 180)
{
	static const struct race_lines races[] = {
		{ "racy: write", "racy: read" },
		{ "nest: write", "nest: read" },
		{ "tile: write", "tile: read" },
		{ "stage: write", "stage: read" },
	};

	expect_exact_races(_metadata, self, "nest_ranges", "loop ranges", races,
			   4);
}

/*
 * And neighbouring accesses checked as one span: neighbours.c's struct
 * fields read together report T1's writes of the fields the spans take
 * in, at the span's first read's line (across branches too), and not
 * its write of a field between two that are read, which no span may
 * take in; fields written together report T2's read of the last one at
 * the write span's line, and not its read of a field between two
 * written ones.
 */
TEST_F_TIMEOUT(shapes, neighbouring_accesses_report_exactly_the_races, 180)
{
	static const struct race_lines races[] = {
		{ "span: write", "span: read" },
		{ "bent: write", "bent: read" },
		{ "place: write", "place: read" },
	};

	expect_exact_races(_metadata, self, "neighbours", "writes merged",
			   races, 3);
}

/*
 * The pass runs at every optimization level and under both LTO modes
 * (before the link-time optimizer): two_races.c built each way reports
 * both of its races, each with its line, under Valor.
 */
TEST_F_TIMEOUT(shapes, every_optimization_level_and_lto_reports_the_races, 240)
{
	static const char *const modes[][2] = {
		{ "-O0", NULL },
		{ "-O3", NULL },
		{ "-O2", "-flto" },
		{ "-O2", "-flto=thin" },
	};
	struct run_reports *rep = malloc(sizeof(*rep));
	char src[PATH_MAX], sched[PATH_MAX], bin[PATH_MAX], log[PATH_MAX];
	char opts[2 * PATH_MAX], out[PATH_MAX];
	int hits, misses;

	ASSERT_NE(NULL, rep);
	pathf(src, sizeof(src), "%s/tests/runtime/programs/two_races.c",
	      self->tree.root);
	hits = line_of_marker(src, "the first race");
	misses = line_of_marker(src, "the second race");
	ASSERT_LT(0, hits);
	ASSERT_LT(0, misses);
	ASSERT_TRUE(build_sched(_metadata, &self->tree, "clang", self->out,
				sched, sizeof(sched)));
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		char *argv[] = { bin, NULL };
		char *env[] = { opts, NULL };
		struct run_result r;
		bool seen_hits = false, seen_misses = false;

		pathf(bin, sizeof(bin), "%s/two_races.%zu", self->out, m);
		pathf(log, sizeof(log), "%s/two_races.%zu.build.log", self->out,
		      m);
		/* modes[m][1] may be NULL: then it ends the arguments. */
		ASSERT_TRUE(build_with_pass(_metadata, self, src, sched, bin,
					    log, modes[m][0], modes[m][1],
					    NULL));

		pathf(log, sizeof(log), "%s/two_races.%zu.json", self->out, m);
		pathf(out, sizeof(out), "%s/two_races.%zu.out", self->out, m);
		unlink(log);
		pathf(opts, sizeof(opts), "VALOR_OPTIONS=json=1 log_path=%s",
		      log);
		ASSERT_EQ(0, run_command(argv, env, out, &r));
		EXPECT_TRUE(r.exited && r.status == 66)
		TH_LOG("%s %s: exit %d: %s", modes[m][0],
		       modes[m][1] ? modes[m][1] : "", r.status, r.output);
		run_result_free(&r);
		{
			char *text = read_file(log, NULL);

			parse_reports(text ? text : "", rep);
			free(text);
		}
		for (int k = 0; k < rep->n; k++) {
			seen_hits |= rep->c[k].first.line == hits &&
				     rep->c[k].second.line == hits;
			seen_misses |= rep->c[k].first.line == misses &&
				       rep->c[k].second.line == misses;
		}
		EXPECT_TRUE(seen_hits && seen_misses)
		TH_LOG("%s %s: races at lines %d and %d not both reported "
		       "(%d conflicts)",
		       modes[m][0], modes[m][1] ? modes[m][1] : "", hits,
		       misses, rep->n);
	}
	free(rep);
}

/* valor cc refuses what cannot work, saying what to do instead. */
TEST(pass_options_that_cannot_work_are_refused)
{
	struct tree_paths tree;
	struct run_result r;
	char log[PATH_MAX];

	ASSERT_TRUE(tree_paths_find(&tree));
	pathf(log, sizeof(log), "%s/runtime-tests/pass", tree.build);
	ASSERT_EQ(0, make_dirs(log));
	pathf(log, sizeof(log), "%s/runtime-tests/pass/refused.out",
	      tree.build);
	{
		char *argv[] = { tree.valor,   "cc",  "--compiler=gcc",
				 "--abi=pass", "-c",  "-o",
				 "/dev/null",  "x.c", NULL };

		ASSERT_EQ(0, run_command(argv, NULL, log, &r));
		EXPECT_TRUE(r.exited && r.status == EXIT_USAGE);
		EXPECT_NE(NULL, strstr(r.output, "--compiler=clang"))
		TH_LOG("%s", r.output);
		run_result_free(&r);
	}
	{
		char *argv[] = { tree.valor, "cc",  "--abi=fast",
				 "-c",	     "x.c", NULL };

		ASSERT_EQ(0, run_command(argv, NULL, log, &r));
		EXPECT_TRUE(r.exited && r.status == EXIT_USAGE);
		EXPECT_NE(NULL, strstr(r.output, "tsan or pass"))
		TH_LOG("%s", r.output);
		run_result_free(&r);
	}
}

/*
 * A stand-in clang at @dir/clang that notes its arguments in @dir/args
 * and runs clang-14 with them.
 */
static bool make_noting_clang(const char *dir)
{
	char path[PATH_MAX];
	FILE *f;

	if (make_dirs(dir))
		return false;
	pathf(path, sizeof(path), "%s/args", dir);
	unlink(path);
	pathf(path, sizeof(path), "%s/clang", dir);
	f = fopen(path, "w");
	if (!f)
		return false;
	fprintf(f,
		"#!/bin/sh\necho \"$*\" >> '%s/args'\nexec clang-14 \"$@\"\n",
		dir);
	return !fclose(f) && !chmod(path, 0755);
}

/* Whether the stand-in clang in @dir was asked for its predefines. */
static int was_probed(const char *dir)
{
	char path[PATH_MAX];
	char *args;
	int probed;

	pathf(path, sizeof(path), "%s/args", dir);
	args = read_file(path, NULL);
	if (!args)
		return -1;
	probed = strstr(args, "-dM -E") != NULL;
	free(args);
	return probed;
}

/*
 * valor cc reads the version of a clang installed as Debian installs it
 * (/usr/lib/llvm-N/bin/clang) off its path, and so does not run it an
 * extra time per compile step to ask; a clang anywhere else is asked.
 * Either way the step compiles with the pass.
 */
TEST(clang_version_comes_from_an_llvm_directory_without_asking)
{
	const char *where[] = { "llvm-14/bin", "elsewhere/bin" };
	struct tree_paths tree;

	ASSERT_TRUE(tree_paths_find(&tree));
	for (int i = 0; i < 2; i++) {
		char dir[PATH_MAX], cc[PATH_MAX], src[PATH_MAX], obj[PATH_MAX];
		char compiler[PATH_MAX + 16], log[PATH_MAX];
		struct run_result r;
		FILE *f;

		pathf(dir, sizeof(dir), "%s/runtime-tests/pass/probe/%s",
		      tree.build, where[i]);
		ASSERT_TRUE(make_noting_clang(dir));
		pathf(cc, sizeof(cc), "%s/clang", dir);
		pathf(src, sizeof(src), "%s/x.c", dir);
		pathf(obj, sizeof(obj), "%s/x.o", dir);
		pathf(log, sizeof(log), "%s/cc.out", dir);
		snprintf(compiler, sizeof(compiler), "--compiler=%s", cc);
		f = fopen(src, "w");
		ASSERT_NE(NULL, f);
		fprintf(f, "int shared;\nvoid set(int v) { shared = v; }\n");
		ASSERT_EQ(0, fclose(f));
		{
			char *argv[] = { tree.valor, "cc", compiler,
					 "-O2",	     "-c", "-o",
					 obj,	     src,  NULL };

			ASSERT_EQ(0, run_command(argv, NULL, log, &r));
		}
		EXPECT_TRUE(r.exited && r.status == 0)
		TH_LOG("%s: %s", where[i], r.output);
		run_result_free(&r);
		EXPECT_EQ(i == 0 ? 0 : 1, was_probed(dir))
		TH_LOG("%s/clang: asked for its predefines: %d", where[i],
		       was_probed(dir));
		{
			char *argv[] = { "/usr/bin/nm", obj, NULL };

			ASSERT_EQ(0, run_command(argv, NULL, log, &r));
		}
		EXPECT_NE(NULL, strstr(r.output, "__valor_pass"))
		TH_LOG("%s: no pass entry point in %s", where[i], r.output);
		run_result_free(&r);
	}
}

TEST_HARNESS_MAIN
