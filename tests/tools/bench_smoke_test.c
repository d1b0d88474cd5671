// SPDX-License-Identifier: GPL-2.0
/*
 * The benchmark harness (`make bench`, tools/bench/) on tiny sizes: it
 * runs, it writes the results schema the README promises, and it fails
 * loudly where it must.  Timings are not checked -- they mean nothing at
 * these sizes.
 *
 * - The floor runtime defines every __tsan_* entry point the real
 *   runtime does (so any instrumented program links against it), and its
 *   atomics do the real operation (tests/tools/bench/floor_atomics.c).
 * - bench.py --smoke on three workloads of tools/bench/workloads/ exits
 *   0; its results.json passes bench.py --check-json, and here,
 *   independently, every geomean key is there and positive; a broken
 *   results.json fails --check-json.  With clang 14 installed, that
 *   includes the variants built with clang (native-clang, and Valor's own
 *   pass: valor-pass, fastrcd-pass, fasttrack-pass), each with numbers for
 *   every workload, and the pass's targets; without it, the run says it
 *   skipped them.
 * - A workload that fails its self-check, and a race-free-looking
 *   workload on which Valor reports conflicts (exit 66), make the harness
 *   fail and say why.
 *
 * Paths come from this binary's own (build/tests/tools/bench_smoke_test);
 * the harness needs build/bench/lib/ (make tests builds it) and python3.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

/* Seconds any one command may take before it is killed. */
#define CMD_TIME_LIMIT 150

/*
 * The smoke run's workloads: these three if they all exist (the cheapest
 * under every variant at -s 0.01 when they were written: about 13 s for
 * the whole run, builds included, on 2 CPUs), else the first three.
 */
#define SMOKE_WORKLOADS 3
static const char *const preferred[SMOKE_WORKLOADS] = { "blackscholes", "lu",
							"matmul" };

struct cmd_result {
	int status; /* exit status, or -1 if killed by a signal */
	char *out; /* stdout and stderr together, NUL-terminated */
};

static char root[PATH_MAX]; /* the source tree */
static char build[PATH_MAX + 8]; /* root/build */
static char bench_py[PATH_MAX + 32];

static void find_paths(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		perror("readlink /proc/self/exe");
		exit(1);
	}
	self[n] = '\0';
	/* root/build/tests/tools/bench_smoke_test */
	for (int i = 0; i < 4; i++)
		*strrchr(self, '/') = '\0';
	snprintf(root, sizeof(root), "%s", self);
	snprintf(build, sizeof(build), "%s/build", root);
	snprintf(bench_py, sizeof(bench_py), "%s/tools/bench/bench.py", root);
}

/* Format into a new string (never NULL). */
__attribute__((format(printf, 1, 2))) static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

/*
 * Run @argv (NULL-terminated; argv[0] looked up in PATH) with its output
 * in a memory file, so no pipe can fill up; killed after CMD_TIME_LIMIT.
 */
static struct cmd_result run_cmd(char *const argv[])
{
	struct cmd_result r = { .status = -1 };
	int fd = memfd_create("out", 0), ws;
	off_t size;
	pid_t pid;

	if (fd < 0)
		abort();
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		dup2(devnull, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		alarm(CMD_TIME_LIMIT); /* survives exec: SIGALRM ends it */
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			abort();
	if (WIFEXITED(ws))
		r.status = WEXITSTATUS(ws);
	size = lseek(fd, 0, SEEK_END);
	r.out = malloc((size_t)size + 1);
	if (!r.out || pread(fd, r.out, (size_t)size, 0) != size)
		abort();
	r.out[size] = '\0';
	close(fd);
	return r;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static bool write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	bool ok;

	if (!f)
		return false;
	ok = fputs(text, f) >= 0;
	return !fclose(f) && ok;
}

/* The __tsan_* functions an archive defines, one per line, sorted. */
static char *tsan_defined(const char *archive)
{
	char *const argv[] = {
		"sh", "-c",
		fmt("nm -g --defined-only '%s' | "
		    "awk '($2 == \"T\" || $2 == \"W\") && $3 ~ /^__tsan_/ "
		    "{ print $3 }' | LC_ALL=C sort -u",
		    archive),
		NULL
	};
	struct cmd_result r = run_cmd(argv);

	return r.status == 0 ? r.out : NULL;
}

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = strstr(text, line); p; p = strstr(p + 1, line))
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

/*
 * The number after "KEY": inside the JSON object that follows "OBJ":
 * (an object without nested objects, as results.json's "geomean" is),
 * or -1 if it is not there.
 */
static double json_number_in(const char *json, const char *obj, const char *key)
{
	char *pat = fmt("\"%s\":", obj);
	const char *start = strstr(json, pat), *end, *k;
	double v = -1;

	free(pat);
	if (!start || !(end = strchr(start, '}')))
		return -1;
	pat = fmt("\"%s\":", key);
	k = strstr(start, pat);
	if (k && k < end)
		v = strtod(k + strlen(pat), NULL);
	free(pat);
	return v;
}

/*
 * The value of the member @key of the JSON object at @obj (its '{'), or
 * NULL: a pointer to the value's first character.  Only the object's own
 * members are looked at, not those of the objects inside it.
 */
static const char *json_get(const char *obj, const char *key)
{
	size_t n = strlen(key);
	int depth = 0;

	if (!obj || *obj != '{')
		return NULL;
	for (const char *p = obj; *p; p++) {
		if (*p == '"') {
			const char *s = ++p, *q;

			for (; *p && *p != '"'; p++)
				if (*p == '\\' && p[1])
					p++;
			if (!*p)
				return NULL;
			if (depth != 1 || (size_t)(p - s) != n ||
			    strncmp(s, key, n))
				continue;
			q = p + 1 + strspn(p + 1, " \t\r\n");
			if (*q == ':')
				return q + 1 + strspn(q + 1, " \t\r\n");
		} else if (*p == '{' || *p == '[') {
			depth++;
		} else if ((*p == '}' || *p == ']') && --depth == 0) {
			return NULL;
		}
	}
	return NULL;
}

/* The number at @value (from json_get()), or -1 if there is none. */
static double json_num(const char *value)
{
	char *end;
	double v;

	if (!value)
		return -1;
	v = strtod(value, &end);
	return end == value ? -1 : v;
}

/* Whether `clang` is clang 14, the one Valor's pass plugin loads into. */
static bool have_pass_clang(void)
{
	char *const argv[] = { "clang", "--version", NULL };
	struct cmd_result r = run_cmd(argv);
	bool ok = r.status == 0 && strstr(r.out, "clang version 14.");

	free(r.out);
	return ok;
}

FIXTURE(bench)
{
	char tmp[64]; /* a fresh directory for the test's output */
};

FIXTURE_SETUP(bench)
{
	find_paths();
	snprintf(self->tmp, sizeof(self->tmp), "/tmp/valor-bench-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->tmp));
}

FIXTURE_TEARDOWN(bench)
{
	char *const argv[] = { "rm", "-rf", self->tmp, NULL };

	free(run_cmd(argv).out);
}

TEST_F_TIMEOUT(bench, floor_defines_every_runtime_entry_point, 60)
{
	char *rt = tsan_defined(fmt("%s/lib/libvalor-rt.a", build));
	char *fl = tsan_defined(fmt("%s/bench/lib/libvalor-floor.a", build));
	int n = 0;

	ASSERT_NE(NULL, rt);
	ASSERT_NE(NULL, fl);
	for (char *line = strtok(rt, "\n"); line; line = strtok(NULL, "\n")) {
		n++;
		EXPECT_TRUE(has_line(fl, line))
		TH_LOG("the floor does not define %s", line);
	}
	/* Reads, writes, ranges, atomics of five sizes, annotations... */
	EXPECT_GE(n, 100) TH_LOG("only %d __tsan_ symbols in the runtime", n);
}

TEST_F_TIMEOUT(bench, floor_atomics_are_real, 60)
{
	char *src = fmt("%s/tests/tools/bench/floor_atomics.c", root);
	char *obj = fmt("%s/floor_atomics.o", self->tmp);
	char *prog = fmt("%s/floor_atomics", self->tmp);
	char *const compile[] = { fmt("%s/bin/valor", build),
				  "cc",
				  "--compiler=gcc",
				  "-O2",
				  "-pthread",
				  "-c",
				  "-o",
				  obj,
				  src,
				  NULL };
	char *const link[] = { "gcc",
			       "-O2",
			       "-pthread",
			       "-o",
			       prog,
			       obj,
			       fmt("%s/bench/lib/libvalor-floor.a", build),
			       NULL };
	char *const count[] = {
		"sh", "-c", fmt("nm -u '%s' | grep -c ' __tsan_atomic'", obj),
		NULL
	};
	char *const run[] = { prog, NULL };
	struct cmd_result r;

	r = run_cmd(compile);
	ASSERT_EQ(0, r.status) TH_LOG("valor cc -c:\n%s", r.out);
	/* Compiled as the floor is: every atomic is a call into it. */
	r = run_cmd(count);
	EXPECT_GE(atoi(r.out), 50) TH_LOG("__tsan_atomic calls: %s", r.out);
	r = run_cmd(link);
	ASSERT_EQ(0, r.status) TH_LOG("link with the floor:\n%s", r.out);
	r = run_cmd(run);
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "floor_atomics: ok")) TH_LOG("%s", r.out);
}

TEST_F_TIMEOUT(bench, smoke_run_writes_the_results_schema, 150)
{
	static const char *const variants[] = { "floor", "libtsan", "valor",
						"fastrcd", "fasttrack" };
	/* Built with clang whatever --cc is: present with clang 14. */
	static const char *const clang_variants[] = {
		"native-clang", "valor-pass", "fastrcd-pass", "fasttrack-pass"
	};
	static const char *const suffixes[] = { "_vs_native", "_vs_floor",
						"_vs_libtsan",
						"_rss_vs_native" };
	/* Of each variant built with clang; from the third, ratios. */
	static const char *const fields[] = { "wall_s",		"rss_kb",
					      "vs_native",	"vs_floor",
					      "vs_libtsan",	"rss_vs_native",
					      "vs_native_clang" };
	const size_t n_clang = sizeof(clang_variants) / sizeof(*clang_variants);
	const size_t n_fields = sizeof(fields) / sizeof(*fields);
	bool with_clang = have_pass_clang();
	char *const list[] = { "python3", bench_py, "--list", NULL };
	char names[512] = "", *json_path, *json, *broken, *smoke_out;
	struct cmd_result r;
	int n = 0;

	r = run_cmd(list);
	ASSERT_EQ(0, r.status) TH_LOG("bench.py --list:\n%s", r.out);
	for (int i = 0; i < SMOKE_WORKLOADS; i++)
		n += has_line(r.out, preferred[i]);
	if (n == SMOKE_WORKLOADS) {
		snprintf(names, sizeof(names), "%s,%s,%s", preferred[0],
			 preferred[1], preferred[2]);
	} else {
		n = 0;
		for (char *w = strtok(r.out, "\n"); w && n < SMOKE_WORKLOADS;
		     w = strtok(NULL, "\n"), n++)
			snprintf(names + strlen(names),
				 sizeof(names) - strlen(names), "%s%s",
				 n ? "," : "", w);
	}
	ASSERT_GE(n, 2)
	TH_LOG("workloads in tools/bench/workloads/: %s", names);

	{
		char *const smoke[] = { "python3",
					bench_py,
					"--smoke",
					fmt("--workloads=%s", names),
					fmt("--out=%s/out", self->tmp),
					NULL };

		r = run_cmd(smoke);
	}
	ASSERT_EQ(0, r.status) TH_LOG("bench.py --smoke:\n%s", r.out);
	smoke_out = r.out;
	EXPECT_NE(NULL, strstr(r.out, "geomean")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "Thread scaling")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "Memory-size scaling"))
	TH_LOG("%s", r.out);

	json_path = fmt("%s/out/results.json", self->tmp);
	{
		char *const check[] = { "python3", bench_py,
					fmt("--check-json=%s", json_path),
					NULL };

		r = run_cmd(check);
		EXPECT_EQ(0, r.status) TH_LOG("--check-json:\n%s", r.out);
	}

	json = slurp(json_path);
	ASSERT_NE(NULL, json);
	for (size_t v = 0; v < sizeof(variants) / sizeof(*variants); v++) {
		for (size_t s = 0; s < sizeof(suffixes) / sizeof(*suffixes);
		     s++) {
			char *key = fmt("%s%s", variants[v], suffixes[s]);
			double x = json_number_in(json, "geomean", key);

			EXPECT_GT(x, 0) TH_LOG("geomean.%s is %g", key, x);
			free(key);
		}
	}
	if (with_clang) {
		const char *wls = json_get(json, "workloads");
		const char *wl[SMOKE_WORKLOADS];
		char *copy = strdup(names), *save = NULL;
		size_t nw = 0;

		EXPECT_EQ(NULL, json_get(json_get(json, "config"), "skipped"))
		TH_LOG("clang 14 is installed, yet:\n%s", smoke_out);
		for (char *w = strtok_r(copy, ",", &save);
		     w && nw < SMOKE_WORKLOADS; w = strtok_r(NULL, ",", &save))
			wl[nw++] = w;
		/*
		 * Each field in each workload, and the geomean of each ratio;
		 * but native-clang, the base of the others, has no
		 * vs_native_clang (the last field).
		 */
		for (size_t v = 0; v < n_clang; v++) {
			const char *cv = clang_variants[v];

			for (size_t f = 0; f < n_fields - (v == 0); f++) {
				char *key = fmt("%s_%s", cv, fields[f]);
				double x = json_number_in(json, "geomean", key);

				if (f >= 2) {
					EXPECT_GT(x, 0)
					TH_LOG("geomean.%s is %g", key, x);
				}
				free(key);
				for (size_t w = 0; w < nw; w++) {
					const char *vs =
						json_get(json_get(wls, wl[w]),
							 "variants");

					x = json_num(json_get(json_get(vs, cv),
							      fields[f]));
					EXPECT_GT(x, 0)
					TH_LOG("workloads.%s.variants.%s.%s is %g",
					       wl[w], cv, fields[f], x);
				}
			}
		}
		free(copy);
		EXPECT_NE(NULL,
			  strstr(json, "\"geomean valor-pass_vs_native\""))
		TH_LOG("no target of the pass in results.json");
		EXPECT_NE(NULL, strstr(smoke_out, "Targets of the pass"))
		TH_LOG("%s", smoke_out);
		EXPECT_NE(NULL, strstr(smoke_out, "fasttrack-pass"))
		TH_LOG("%s", smoke_out);
	} else {
		TH_LOG("no clang 14: the clang variants must be skipped");
		EXPECT_NE(NULL, strstr(smoke_out, "SKIPPING"))
		TH_LOG("%s", smoke_out);
	}
	EXPECT_NE(NULL, strstr(json, "\"scaling\"")) TH_LOG("no scaling");
	EXPECT_NE(NULL, strstr(json, "\"cpu_model\"")) TH_LOG("no machine");
	/* gnuplot is a dependency (tools/install-deps.sh): a plot there is. */
	{
		char *png = fmt("%s/out/results.png", self->tmp);
		struct stat st;

		EXPECT_EQ(0, stat(png, &st)) TH_LOG("no %s:\n%s", png, json);
		free(png);
	}

	/* A key renamed: --check-json must name the missing one. */
	broken = strstr(json, "\"valor_vs_floor\":");
	ASSERT_NE(NULL, broken);
	memcpy(broken, "\"valor_vs_flour\":", 17);
	ASSERT_TRUE(write_file(fmt("%s/broken.json", self->tmp), json));
	{
		char *const check[] = {
			"python3", bench_py,
			fmt("--check-json=%s/broken.json", self->tmp), NULL
		};

		r = run_cmd(check);
		EXPECT_EQ(1, r.status) TH_LOG("%s", r.out);
		EXPECT_NE(NULL,
			  strstr(r.out, "geomean.valor_vs_floor is missing"))
		TH_LOG("%s", r.out);
	}
}

/* Run bench.py on the one workload @name in @dir with @variants. */
static struct cmd_result bench_one(const char *tmp, const char *name,
				   const char *variants)
{
	char *const argv[] = { "python3",
			       bench_py,
			       "--smoke",
			       "--no-scaling",
			       fmt("--workload-dir=%s", tmp),
			       fmt("--workloads=%s", name),
			       fmt("--variants=%s", variants),
			       fmt("--bin-dir=%s/bin", tmp),
			       fmt("--out=%s/out", tmp),
			       NULL };

	return run_cmd(argv);
}

TEST_F_TIMEOUT(bench, failed_self_check_fails_the_run, 60)
{
	struct cmd_result r;
	char *json;

	ASSERT_TRUE(write_file(
		fmt("%s/selfcheck.c", self->tmp),
		"#include <stdio.h>\n"
		"int main(void)\n{\n"
		"\tfprintf(stderr, \"selfcheck: check=FAILED: wrong sum\\n\");\n"
		"\treturn 1;\n}\n"));
	r = bench_one(self->tmp, "selfcheck", "native,floor");
	EXPECT_EQ(1, r.status) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "exit status 1")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "check=FAILED: wrong sum"))
	TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "FAILURES")) TH_LOG("%s", r.out);
	json = slurp(fmt("%s/out/results.json", self->tmp));
	ASSERT_NE(NULL, json) TH_LOG("no results.json after a failure");
	EXPECT_NE(NULL, strstr(json, "\"status\": \"failed\""))
	TH_LOG("%s", json);
}

TEST_F_TIMEOUT(bench, conflicts_on_a_workload_fail_the_run, 60)
{
	struct cmd_result r;

	/*
	 * Unsynchronized increments in two threads: FastTrack reports the
	 * race whatever the interleaving, and the program exits 66.
	 */
	ASSERT_TRUE(write_file(
		fmt("%s/racy.c", self->tmp),
		"#include <pthread.h>\n#include <stdio.h>\n"
		"static volatile long n;\n"
		"static void *inc(void *a)\n{\n"
		"\tfor (int i = 0; i < 100000; i++)\n\t\tn++;\n"
		"\treturn a;\n}\n"
		"int main(void)\n{\n\tpthread_t t[2];\n"
		"\tfor (int i = 0; i < 2; i++)\n"
		"\t\tpthread_create(&t[i], NULL, inc, NULL);\n"
		"\tfor (int i = 0; i < 2; i++)\n"
		"\t\tpthread_join(t[i], NULL);\n"
		"\tprintf(\"racy check=ok result=%ld\\n\", n > 0 ? 1L : 0L);\n"
		"\treturn 0;\n}\n"));
	r = bench_one(self->tmp, "racy", "native,fasttrack");
	EXPECT_EQ(1, r.status) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "VALOR REPORTED CONFLICTS"))
	TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "exit 66")) TH_LOG("%s", r.out);
}

TEST_HARNESS_MAIN
