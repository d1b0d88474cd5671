// SPDX-License-Identifier: GPL-2.0
/*
 * The runtime corpus: real threaded C and C++ programs
 * (tests/runtime/corpus/, tabled in Documentation/testing-runtime.md),
 * built with `valor cc` / `valor c++` by gcc and by clang, each run many
 * times under every analysis, with the verdict its header comment
 * states:
 *
 *   VALOR-EXPECT: clean
 *   VALOR-EXPECT: conflict kind=KIND lines=FIRST,SECOND analyses=A,B,...
 *
 * KIND is write-write, write-read or read-write (earlier access first);
 * FIRST and SECOND are the source lines of the earlier and the later
 * access, each marked "racy:" in the source; the analyses listed must
 * report it.  Optional: memory=global|heap|stack|tls (what the report
 * must say the memory is), block=SIZE,OFFSET (for memory=heap: the size of
 * the heap block and the offset of the conflicting bytes in it that the
 * report must give) and compilers=gcc|clang (default both).  A
 * racy program may have several conflict lines.
 * Documentation/testing-runtime.md describes the format and the corpus.
 *
 * Every run of a program under analysis A must then:
 *   - if no conflict line lists A: report nothing and exit 0;
 *   - otherwise exit 66, report every conflict listed for A (kind and
 *     both access lines, in the program's own file, and the memory
 *     type if given), and report nothing else -- every reported
 *     conflict lies on the lines listed for A (the analyses may report a
 *     racy statement's other halves too, as Documentation/semantics.md
 *     allows after a location's first conflict) and is between two
 *     different threads;
 *   - and the exit summary counts as many conflicts as the log has.
 * A program that exits 77 or prints "not set up:" could not set up what it
 * demonstrates (the allocator did not reuse a block, ...): that is a
 * failure too.
 *
 * Each program is tiny, and the corpus's helper support/sched.c, built
 * without instrumentation, forces the interleavings without sleeps and
 * without synchronization the analyses could see.
 *
 * VALOR_CORPUS_RUNS sets the runs per program and analysis (default 20),
 * VALOR_CORPUS_JOBS how many run at once (default: one per CPU).
 */
#include <dirent.h>
#include <stdint.h>

#include "kselftest_harness.h"
#include "json_lines.h"
#include "reports.h"
#include "run_program.h"

/* Every program of tests/runtime/corpus/, with its source suffix. */
#define CORPUS(X)                          \
	X(alone_phases, "c")               \
	X(barrier_phases, "c")             \
	X(condvar_message, "c")            \
	X(counter_mutex, "c")              \
	X(counter_racy, "c")               \
	X(cxx_atomic, "cpp")               \
	X(cxx_condition_variable, "cpp")   \
	X(cxx_racy_member, "cpp")          \
	X(cxx_shared_ptr, "cpp")           \
	X(cxx_thread_mutex, "cpp")         \
	X(dcl_atomic, "c")                 \
	X(dcl_racy, "c")                   \
	X(detached_threads, "c")           \
	X(dsm_fig1a, "c")                  \
	X(dsm_fig1b, "c")                  \
	X(dsm_same_value_write, "c")       \
	X(epoll_handoff, "c")              \
	X(false_sharing, "c")              \
	X(flag_plain_racy, "c")            \
	X(free_reuse_other_thread, "c")    \
	X(goldilocks_broken_transfer, "c") \
	X(goldilocks_transfer, "c")        \
	X(heap_block_sizes, "c")           \
	X(init_create_join, "c")           \
	X(lard_allocator_lock_race, "c")   \
	X(lard_malloc_free_reuse, "c")     \
	X(lard_thread_identity, "c")       \
	X(large_free_while_reading, "c")   \
	X(lockfree_queue, "c")             \
	X(long_region_read, "c")           \
	X(long_region_write, "c")          \
	X(memcpy_partly_read, "c")         \
	X(memcpy_shared, "c")              \
	X(mmap_reuse, "c")                 \
	X(mremap_move, "c")                \
	X(mutex_kinds, "c")                \
	X(packed_fields_racy, "c")         \
	X(pipe_message, "c")               \
	X(publish_relaxed, "c")            \
	X(publish_release_acquire, "c")    \
	X(pthread_once, "c")               \
	X(read_own_write, "c")             \
	X(realloc_while_reading, "c")      \
	X(rwlock, "c")                     \
	X(semaphores, "c")                 \
	X(slimstate_blocks, "c")           \
	X(slimstate_locked_phases, "c")    \
	X(slimstate_odd_even, "c")         \
	X(slimstate_read_read, "c")        \
	X(small_builtins_racy, "c")        \
	X(spinlock, "c")                   \
	X(stack_handoff_racy, "c")         \
	X(stack_handoff_sync, "c")         \
	X(string_racy, "c")                \
	X(thread_pool, "c")                \
	X(tls, "c")                        \
	X(valor_fig1b_read_write, "c")     \
	X(valor_fig3_acquire, "c")         \
	X(wide_values_racy, "c")

#define PROGRAM_FILE(name, suffix) #name "." suffix,
static const char *const corpus_files[] = { CORPUS(PROGRAM_FILE) };
#define CORPUS_SIZE (sizeof(corpus_files) / sizeof(corpus_files[0]))

/* The exit status the runtime gives a program that reported conflicts. */
#define EXIT_CONFLICTS 66
/*
 * A corpus program that could not set up its scenario exits 77 and says
 * "not set up: why" on stderr (a racy one may exit 66 all the same).
 */
#define EXIT_NOT_SET_UP 77
#define NOT_SET_UP "not set up:"

enum { ANALYSIS_VALOR, ANALYSIS_FASTRCD, ANALYSIS_FASTTRACK, NR_ANALYSES };
enum { COMPILER_GCC, COMPILER_CLANG, NR_COMPILERS };
static const char *const compiler_names[NR_COMPILERS] = { "gcc", "clang" };
static const char *const analysis_names[NR_ANALYSES] = { "valor", "fastrcd",
							 "fasttrack" };

/* ---- expectations ---------------------------------------------------- */

struct expected_conflict {
	int kind;
	int first_line, second_line;
	unsigned int analyses; /* bit per analysis */
	unsigned int compilers; /* bit per compiler */
	char memory[16]; /* what the report must say it is, or "" */
	long block_size, block_offset; /* block=: what it must say; -1 */
};

#define MAX_EXPECTED 8

struct program_spec {
	bool clean;
	int n;
	struct expected_conflict conflict[MAX_EXPECTED];
};

/* "a,b,c" of @names into a bit set; 0, or -1 with @err set. */
static int parse_set(const char *val, size_t vlen, const char *const *names,
		     int nnames, unsigned int *set, char *err, size_t errlen)
{
	while (vlen) {
		const char *comma = memchr(val, ',', vlen);
		size_t n = comma ? (size_t)(comma - val) : vlen;
		int i = index_of(names, nnames, val, n);

		if (i < 0) {
			snprintf(err, errlen, "unknown name '%.*s'", (int)n,
				 val);
			return -1;
		}
		*set |= 1u << i;
		val += n + (comma ? 1 : 0);
		vlen -= n + (comma ? 1 : 0);
	}
	return 0;
}

/*
 * Parse one "conflict ..." expectation (after the word); 0 or -1.
 * compilers= is optional (default: both): a racy statement can be
 * instrumented differently by gcc and clang.  memory= is optional: what
 * the report must say the memory is.
 */
static int parse_conflict(const char *s, struct expected_conflict *e, char *err,
			  size_t errlen)
{
	bool have_kind = false, have_lines = false;

	memset(e, 0, sizeof(*e));
	e->block_size = e->block_offset = -1;
	while (*s) {
		const char *word = s, *val;
		size_t wlen, vlen;

		while (*s && *s != ' ' && *s != '\t')
			s++;
		wlen = (size_t)(s - word);
		while (*s == ' ' || *s == '\t')
			s++;
		if (!wlen)
			continue;
		val = memchr(word, '=', wlen);
		if (!val) {
			snprintf(err, errlen, "'%.*s' is not key=value",
				 (int)wlen, word);
			return -1;
		}
		val++;
		vlen = (size_t)(word + wlen - val);
		if (!strncmp(word, "kind=", 5)) {
			e->kind = index_of(kind_names, NR_KINDS, val, vlen);
			if (e->kind < 0) {
				snprintf(err, errlen, "unknown kind '%.*s'",
					 (int)vlen, val);
				return -1;
			}
			have_kind = true;
		} else if (!strncmp(word, "lines=", 6)) {
			if (sscanf(val, "%d,%d", &e->first_line,
				   &e->second_line) != 2 ||
			    e->first_line <= 0 || e->second_line <= 0) {
				snprintf(err, errlen, "lines=%.*s is not N,M",
					 (int)vlen, val);
				return -1;
			}
			have_lines = true;
		} else if (!strncmp(word, "analyses=", 9)) {
			if (parse_set(val, vlen, analysis_names, NR_ANALYSES,
				      &e->analyses, err, errlen))
				return -1;
		} else if (!strncmp(word, "memory=", 7)) {
			static const char *const types[] = { "global", "heap",
							     "stack", "tls" };

			if (index_of(types, 4, val, vlen) < 0) {
				snprintf(err, errlen,
					 "memory=%.*s: not global, heap, "
					 "stack or tls",
					 (int)vlen, val);
				return -1;
			}
			snprintf(e->memory, sizeof(e->memory), "%.*s",
				 (int)vlen, val);
		} else if (!strncmp(word, "block=", 6)) {
			if (sscanf(val, "%ld,%ld", &e->block_size,
				   &e->block_offset) != 2 ||
			    e->block_size <= 0 || e->block_offset < 0) {
				snprintf(err, errlen,
					 "block=%.*s is not SIZE,OFFSET",
					 (int)vlen, val);
				return -1;
			}
		} else if (!strncmp(word, "compilers=", 10)) {
			if (parse_set(val, vlen, compiler_names, NR_COMPILERS,
				      &e->compilers, err, errlen))
				return -1;
		} else {
			snprintf(err, errlen, "unknown key in '%.*s'",
				 (int)wlen, word);
			return -1;
		}
	}
	if (!e->compilers)
		e->compilers = (1u << NR_COMPILERS) - 1;
	if (!have_kind || !have_lines || !e->analyses) {
		snprintf(err, errlen,
			 "a conflict needs kind=, lines= and "
			 "analyses=");
		return -1;
	}
	return 0;
}

/* Line @n (1-based) of @text, or NULL; *len gets its length. */
static const char *nth_line(const char *text, int n, size_t *len)
{
	const char *p = text;

	for (int i = 1; i < n; i++) {
		p = strchr(p, '\n');
		if (!p)
			return NULL;
		p++;
	}
	*len = strcspn(p, "\n");
	return p;
}

/*
 * Read the VALOR-EXPECT lines of @source; check that each expected
 * access line is marked "racy:" in the source, so that an edit that
 * moves lines fails here, with a clear message, and not as a wrong
 * verdict.  0, or -1 with @err set.
 */
static int parse_spec(const char *source, struct program_spec *spec, char *err,
		      size_t errlen)
{
	const char *p = source;

	memset(spec, 0, sizeof(*spec));
	while ((p = strstr(p, "VALOR-EXPECT:"))) {
		char line[512];
		size_t n;

		p += strlen("VALOR-EXPECT:");
		while (*p == ' ')
			p++;
		n = strcspn(p, "\n");
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = 0;
		/* A one-line comment: drop its closing. */
		if (strstr(line, "*/"))
			*strstr(line, "*/") = 0;
		n = strlen(line);
		while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
			line[--n] = 0;

		if (!strcmp(line, "clean")) {
			spec->clean = true;
		} else if (!strncmp(line, "conflict ", 9)) {
			if (spec->n == MAX_EXPECTED) {
				snprintf(err, errlen, "too many expectations");
				return -1;
			}
			if (parse_conflict(line + 9, &spec->conflict[spec->n],
					   err, errlen))
				return -1;
			spec->n++;
		} else {
			snprintf(err, errlen,
				 "VALOR-EXPECT: '%s' is neither 'clean' nor "
				 "'conflict ...'",
				 line);
			return -1;
		}
	}
	if (spec->clean == (spec->n > 0)) {
		snprintf(err, errlen,
			 spec->clean ? "both clean and conflicts expected" :
				       "no VALOR-EXPECT line");
		return -1;
	}
	for (int i = 0; i < spec->n; i++) {
		int lines[2] = { spec->conflict[i].first_line,
				 spec->conflict[i].second_line };

		for (int j = 0; j < 2; j++) {
			size_t len;
			const char *l = nth_line(source, lines[j], &len);

			if (!l || !memmem(l, len, "racy:", 5)) {
				snprintf(err, errlen,
					 "expected access line %d is not "
					 "marked 'racy:' (moved lines?)",
					 lines[j]);
				return -1;
			}
		}
	}
	return 0;
}

/* ---- checking one run -------------------------------------------------- */

/* Whether @e is expected of analysis @a on a build by compiler @cc. */
static bool applies(const struct expected_conflict *e, int a, int cc)
{
	return (e->analyses & (1u << a)) && (e->compilers & (1u << cc));
}

static bool line_listed(const struct program_spec *spec, int a, int cc,
			int line)
{
	for (int i = 0; i < spec->n; i++)
		if (applies(&spec->conflict[i], a, cc) &&
		    (spec->conflict[i].first_line == line ||
		     spec->conflict[i].second_line == line))
			return true;
	return false;
}

/*
 * Whether run @r with reports @rep meets @spec for analysis @a; if not,
 * why, in @why.
 */
static bool run_ok(const struct program_spec *spec, int a, int cc,
		   const char *file, const struct run_result *r,
		   const struct run_reports *rep, char *why, size_t whylen)
{
	bool racy = false;
	char d[512];

	for (int i = 0; i < spec->n; i++)
		racy |= applies(&spec->conflict[i], a, cc);
	if (rep->error[0]) {
		snprintf(why, whylen, "%s", rep->error);
		return false;
	}
	if (rep->summary_conflicts >= 0 &&
	    rep->summary_conflicts != rep->total) {
		snprintf(why, whylen,
			 "the exit summary counts %ld conflicts, the log has "
			 "%d",
			 rep->summary_conflicts, rep->total);
		return false;
	}
	if ((r->exited && r->status == EXIT_NOT_SET_UP) ||
	    strstr(r->output, NOT_SET_UP)) {
		snprintf(why, whylen,
			 "the program could not set up its scenario "
			 "(see its output)");
		return false;
	}
	if (!r->exited || r->status != (racy ? EXIT_CONFLICTS : 0)) {
		snprintf(why, whylen, "%s, expected exit %d",
			 run_result_describe(r, d, sizeof(d)),
			 racy ? EXIT_CONFLICTS : 0);
		return false;
	}
	for (int i = 0; i < rep->n; i++) {
		const struct conflict_seen *c = &rep->c[i];

		describe_conflict(c, d, sizeof(d));
		if (!racy) {
			snprintf(why, whylen, "unexpected conflict: %s", d);
			return false;
		}
		if (strcmp(c->analysis, analysis_names[a]) ||
		    strcmp(c->first.file, file) ||
		    strcmp(c->second.file, file) ||
		    !line_listed(spec, a, cc, c->first.line) ||
		    !line_listed(spec, a, cc, c->second.line)) {
			snprintf(why, whylen,
				 "conflict outside the expected lines: %s", d);
			return false;
		}
		if (c->first.tid == c->second.tid) {
			snprintf(why, whylen, "conflict within one thread: %s",
				 d);
			return false;
		}
	}
	for (int i = 0; i < spec->n; i++) {
		const struct expected_conflict *e = &spec->conflict[i];
		bool found = false;

		if (!applies(e, a, cc))
			continue;
		for (int j = 0; j < rep->n && !found; j++)
			found = rep->c[j].kind == e->kind &&
				rep->c[j].first.line == e->first_line &&
				rep->c[j].second.line == e->second_line &&
				(!e->memory[0] ||
				 !strcmp(rep->c[j].memory, e->memory)) &&
				(e->block_size < 0 ||
				 (rep->c[j].mem_size == e->block_size &&
				  rep->c[j].mem_offset == e->block_offset));
		if (!found) {
			snprintf(why, whylen,
				 "no %s conflict between lines %d and %d%s%s%s "
				 "(%d reported)",
				 kind_names[e->kind], e->first_line,
				 e->second_line,
				 e->memory[0] ? " on memory of type " : "",
				 e->memory,
				 e->block_size >= 0 ?
					 " in a block of the size "
					 "and at the offset given" :
					 "",
				 rep->n);
			return false;
		}
	}
	return true;
}

/* ---- building ----------------------------------------------------------- */

struct corpus_paths {
	struct tree_paths tree;
	char corpus[PATH_MAX]; /* tests/runtime/corpus */
	char support[PATH_MAX]; /* tests/runtime/corpus/support */
	char out[PATH_MAX]; /* build/corpus/<build> */
};

/* @build names the output directory: the compiler, and how it instruments. */
static bool corpus_paths_find(struct corpus_paths *p, const char *build)
{
	if (!tree_paths_find(&p->tree))
		return false;
	pathf(p->corpus, sizeof(p->corpus), "%s/tests/runtime/corpus",
	      p->tree.root);
	pathf(p->support, sizeof(p->support), "%s/support", p->corpus);
	pathf(p->out, sizeof(p->out), "%s/corpus/%s", p->tree.build, build);
	return true;
}

/*
 * Build @file of the corpus into @bin with `valor cc` or `valor c++`,
 * with the valor option @abi (--abi=..., or NULL for the default).
 */
static bool build_program(struct __test_metadata *_metadata,
			  const struct corpus_paths *p, const char *compiler,
			  const char *abi, const char *file,
			  const char *sched_obj, char *bin, size_t binlen)
{
	struct argv_buf *cmd = malloc(sizeof(*cmd));
	char log[PATH_MAX + 32], tmp[PATH_MAX + 32];
	size_t base = strcspn(file, ".");
	bool cxx = strstr(file, ".cpp") != NULL;
	bool ok;

	if (!cmd)
		return false;
	pathf(bin, binlen, "%s/%.*s", p->out, (int)base, file);
	pathf(log, sizeof(log), "%s.build.log", bin);
	/* Linked under a temporary name: a binary is never seen half-written. */
	pathf(tmp, sizeof(tmp), "%s.%d.tmp", bin, (int)getpid());
	argv_init(cmd);
	argv_add(cmd, "%s", p->tree.valor);
	argv_add(cmd, cxx ? "c++" : "cc");
	argv_add(cmd, "--compiler=%s", compiler);
	if (abi)
		argv_add(cmd, "%s", abi);
	/* -O2: what programs are built with (gcc then jumps to __tsan_init). */
	argv_add(cmd, "-O2");
	argv_add(cmd, "-Wall");
	argv_add(cmd, "-Werror");
	argv_add(cmd, "-iquote");
	argv_add(cmd, "%s", p->support);
	argv_add(cmd, "-o");
	argv_add(cmd, "%s", tmp);
	argv_add(cmd, "%s/%s", p->corpus, file);
	argv_add(cmd, "%s", sched_obj);
	ok = build_step(_metadata, cmd, log);
	free(cmd);
	if (ok && rename(tmp, bin)) {
		TH_LOG("cannot rename %s: %s", tmp, strerror(errno));
		ok = false;
	}
	return ok;
}

/* ---- the tests ---------------------------------------------------------- */

/* Every file of the corpus directory is in CORPUS() and the reverse. */
TEST(corpus_table_matches_directory)
{
	struct corpus_paths p;
	bool listed[CORPUS_SIZE] = { false };
	struct dirent *d;
	DIR *dir;

	ASSERT_TRUE(corpus_paths_find(&p, "gcc"));
	dir = opendir(p.corpus);
	ASSERT_NE(NULL, dir) TH_LOG("cannot open %s", p.corpus);
	while ((d = readdir(dir))) {
		bool found = false;

		if (d->d_name[0] == '.' || !strcmp(d->d_name, "support"))
			continue;
		for (size_t i = 0; i < CORPUS_SIZE; i++)
			if (!strcmp(corpus_files[i], d->d_name))
				found = listed[i] = true;
		EXPECT_TRUE(found)
		TH_LOG("%s/%s is not in CORPUS() of corpus_test.c", p.corpus,
		       d->d_name);
	}
	closedir(dir);
	for (size_t i = 0; i < CORPUS_SIZE; i++) {
		EXPECT_TRUE(listed[i])
		TH_LOG("%s is listed but missing", corpus_files[i]);
	}
	/* The issue asks for at least 40 programs. */
	EXPECT_LE(40, CORPUS_SIZE);
}

/* Each expectation parses and points at "racy:" lines. */
TEST(corpus_expectations_are_well_formed)
{
	struct corpus_paths p;

	ASSERT_TRUE(corpus_paths_find(&p, "gcc"));
	for (size_t i = 0; i < CORPUS_SIZE; i++) {
		char path[PATH_MAX + 256], err[256];
		struct program_spec spec;
		char *source;

		pathf(path, sizeof(path), "%s/%s", p.corpus, corpus_files[i]);
		source = read_file(path, NULL);
		EXPECT_NE(NULL, source) TH_LOG("cannot read %s", path);
		if (!source)
			continue;
		EXPECT_EQ(0, parse_spec(source, &spec, err, sizeof(err)))
		TH_LOG("%s: %s", corpus_files[i], err);
		free(source);
	}
}

FIXTURE(corpus)
{
	struct corpus_paths paths;
	bool skip;
};

FIXTURE_VARIANT(corpus)
{
	const char *file;
	const char *compiler;
	const char *abi; /* valor cc's --abi=, NULL for its default */
	const char *build; /* build/corpus/<build> */
	int cc;
};

/*
 * Each program three ways: gcc (the ThreadSanitizer ABI), clang with
 * its default, Valor's pass, and clang with the ABI (--abi=tsan).  The
 * two clang builds share their expectations (compilers=clang): the pass
 * must find what the ABI path finds.
 */
#define VARIANT(name, suffix, cc_name, abi_opt, build_name, cc_id) \
	FIXTURE_VARIANT_ADD(corpus, name##__##build_name){         \
		.file = #name "." suffix,                          \
		.compiler = #cc_name,                              \
		.abi = abi_opt,                                    \
		.build = #build_name,                              \
		.cc = cc_id,                                       \
	};
#define GCC_VARIANT(name, suffix) \
	VARIANT(name, suffix, gcc, NULL, gcc, COMPILER_GCC)
#define CLANG_VARIANT(name, suffix) \
	VARIANT(name, suffix, clang, NULL, clang, COMPILER_CLANG)
#define CLANG_TSAN_VARIANT(name, suffix) \
	VARIANT(name, suffix, clang, "--abi=tsan", clang_tsan, COMPILER_CLANG)
CORPUS(GCC_VARIANT)
CORPUS(CLANG_VARIANT)
CORPUS(CLANG_TSAN_VARIANT)

FIXTURE_SETUP(corpus)
{
	char rt[PATH_MAX + 32];

	ASSERT_TRUE(corpus_paths_find(&self->paths, variant->build))
	TH_LOG("cannot find the build directory from /proc/self/exe");
	pathf(rt, sizeof(rt), "%s/lib/libvalor-rt.a", self->paths.tree.build);
	ASSERT_EQ(0, access(self->paths.tree.valor, X_OK))
	TH_LOG("%s is not built (make)", self->paths.tree.valor);
	ASSERT_EQ(0, access(rt, R_OK))
	TH_LOG("%s is not built (make runtime)", rt);
	if (!command_exists(variant->compiler)) {
		self->skip = true;
		SKIP(return,
			   "%s is not installed (tools/install-deps.sh "
			   "installs it)",
			   variant->compiler);
	}
}

FIXTURE_TEARDOWN(corpus)
{
}

static int runs_per_analysis(void)
{
	const char *s = getenv("VALOR_CORPUS_RUNS");
	int n = s ? atoi(s) : 20;

	return n > 0 ? n : 20;
}

/* A summary of @spec for analysis @a: "clean" or "write-read 23,31 ...". */
static const char *spec_summary(const struct program_spec *spec, int a, int cc,
				char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < spec->n; i++)
		if (applies(&spec->conflict[i], a, cc))
			appendf(buf, size, &used, "%s%s %d,%d",
				used ? ", " : "",
				kind_names[spec->conflict[i].kind],
				spec->conflict[i].first_line,
				spec->conflict[i].second_line);
	if (!used)
		snprintf(buf, size, "clean");
	return buf;
}

/* Print @text under a "# " prefix per line, as TAP diagnostics. */
static void log_block(const char *title, const char *text)
{
	fprintf(stderr, "#   %s\n", title);
	while (*text) {
		size_t n = strcspn(text, "\n");

		fprintf(stderr, "#     %.*s\n", (int)n, text);
		text += n + (text[n] == '\n');
	}
}

/* One run of a program in flight. */
struct corpus_run {
	pid_t pid;
	char log[PATH_MAX];
	char out[PATH_MAX];
};

/* Start @bin under analysis @a, JSON reports to a log file of @slot. */
static pid_t start_run(const char *valor, const char *bin, int a, int slot,
		       struct corpus_run *cr)
{
	struct argv_buf *cmd = malloc(sizeof(*cmd));

	if (!cmd)
		return -1;
	/* Named by pid too: two test processes must not share files. */
	pathf(cr->log, sizeof(cr->log), "%s.%s.%d.%d.json", bin,
	      analysis_names[a], (int)getpid(), slot);
	pathf(cr->out, sizeof(cr->out), "%s.%s.%d.%d.out", bin,
	      analysis_names[a], (int)getpid(), slot);
	unlink(cr->log);
	argv_init(cmd);
	argv_add(cmd, "%s", valor);
	argv_add(cmd, "run");
	argv_add(cmd, "--analysis=%s", analysis_names[a]);
	argv_add(cmd, "--json");
	argv_add(cmd, "--log=%s", cr->log);
	argv_add(cmd, "--");
	argv_add(cmd, "%s", bin);
	cr->pid = start_command(cmd->v, NULL, cr->out);
	free(cmd);
	return cr->pid;
}

/* Wait for @cr; its result in @r, its reports in @rep. */
static int finish_run(struct corpus_run *cr, struct run_result *r,
		      struct run_reports *rep)
{
	char *json;

	if (finish_command(cr->pid, cr->out, r))
		return -1;
	json = read_file(cr->log, NULL);
	parse_reports(json ? json : "", rep);
	free(json);
	unlink(cr->out);
	return 0;
}

/*
 * Runs in parallel: VALOR_CORPUS_JOBS, or one per CPU (the programs are
 * tiny; most of a run is process start-up and, for racy ones, the
 * symbolization of the report).
 */
static int parallel_runs(void)
{
	const char *s = getenv("VALOR_CORPUS_JOBS");
	long n = s ? atol(s) : sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

/*
 * The first failing run of an analysis, in full; its log is kept (as
 * <program>.<analysis>.failed.json).
 */
static void log_failure(const char *bin, const char *file, const char *compiler,
			int a, int cc, int run, int runs,
			const struct program_spec *spec, const char *why,
			const struct run_result *r,
			const struct run_reports *rep, const char *log)
{
	char expect[512], d[128], kept[PATH_MAX + 16];
	char *seen = malloc(MAX_SEEN * 600 + 64);
	size_t used = 0;

	if (!seen)
		return;
	seen[0] = 0;
	for (int i = 0; i < rep->n; i++) {
		char c[512];

		describe_conflict(&rep->c[i], c, sizeof(c));
		appendf(seen, MAX_SEEN * 600 + 64, &used, "%s\n", c);
	}
	pathf(kept, sizeof(kept), "%s.%s.failed.json", bin, analysis_names[a]);
	rename(log, kept);
	fprintf(stderr,
		"# %s [%s] %s, run %d of %d: %s\n"
		"#   expected: %s; got %s, %d conflict(s)%s\n",
		file, compiler, analysis_names[a], run, runs, why,
		spec_summary(spec, a, cc, expect, sizeof(expect)),
		run_result_describe(r, d, sizeof(d)), rep->total,
		rep->n ? ":" : "");
	if (rep->n)
		log_block("reported (earlier access -> later access):", seen);
	fprintf(stderr, "#   JSON log kept in %s\n", kept);
	log_block("program output:", tail_of(r->output, 2000));
	free(seen);
}

/*
 * Build the program, then run it VALOR_CORPUS_RUNS times under each
 * analysis and check every run.  The first failing run of an analysis
 * is shown in full (reports, exit, output); the rest are counted.
 */
TEST_F_TIMEOUT(corpus, verdict, 600)
{
	const char *file = variant->file;
	char src[PATH_MAX + 256], err[256], sched_obj[PATH_MAX + 32];
	char bin[PATH_MAX + 256], summary[1024];
	struct program_spec spec;
	int runs = runs_per_analysis(), jobs = parallel_runs();
	struct corpus_run inflight[16];
	struct run_reports *rep = malloc(sizeof(*rep));
	int cc = variant->cc;
	size_t used = 0;
	char *source;

	if (self->skip)
		return;
	ASSERT_NE(NULL, rep);
	pathf(src, sizeof(src), "%s/%s", self->paths.corpus, file);
	source = read_file(src, NULL);
	ASSERT_NE(NULL, source) TH_LOG("cannot read %s", src);
	ASSERT_EQ(0, parse_spec(source, &spec, err, sizeof(err)))
	TH_LOG("%s: %s", file, err);
	free(source);

	ASSERT_TRUE(build_sched(_metadata, &self->paths.tree, variant->compiler,
				self->paths.out, sched_obj, sizeof(sched_obj)));
	ASSERT_TRUE(build_program(_metadata, &self->paths, variant->compiler,
				  variant->abi, file, sched_obj, bin,
				  sizeof(bin)));

	for (int a = 0; a < NR_ANALYSES; a++) {
		int passed = 0, failed = 0;

		for (int first = 1; first <= runs; first += jobs) {
			int batch = runs - first + 1 < jobs ? runs - first + 1 :
							      jobs;

			for (int j = 0; j < batch; j++)
				ASSERT_LT(0, start_run(self->paths.tree.valor,
						       bin, a, j, &inflight[j]))
			TH_LOG("cannot start valor run");
			for (int j = 0; j < batch; j++) {
				struct run_result r;
				char why[1024];

				ASSERT_EQ(0, finish_run(&inflight[j], &r, rep));
				if (run_ok(&spec, a, cc, file, &r, rep, why,
					   sizeof(why)))
					passed++;
				else if (!failed++)
					log_failure(bin, file, variant->build,
						    a, cc, first + j, runs,
						    &spec, why, &r, rep,
						    inflight[j].log);
				run_result_free(&r);
				unlink(inflight[j].log);
			}
		}
		appendf(summary, sizeof(summary), &used, "%s%s %d/%d",
			a ? ", " : "", analysis_names[a], passed, runs);
		EXPECT_EQ(runs, passed)
		TH_LOG("%s [%s] %s: %d of %d runs wrong", file, variant->build,
		       analysis_names[a], runs - passed, runs);
	}
	{
		char e[NR_ANALYSES][256];

		for (int a = 0; a < NR_ANALYSES; a++)
			spec_summary(&spec, a, cc, e[a], sizeof(e[a]));
		/* stderr: the test runs in a child that ends with _exit(). */
		fprintf(stderr,
			"# %s [%s]: runs right: %s; expected: valor %s | "
			"fastrcd %s | fasttrack %s\n",
			file, variant->build, summary, e[0], e[1], e[2]);
	}
	free(rep);
}

TEST_HARNESS_MAIN
