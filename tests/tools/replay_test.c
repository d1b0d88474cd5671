// SPDX-License-Identifier: GPL-2.0
/*
 * End-to-end tests of `valor replay`: the bundled examples give the
 * verdicts Documentation/cli.md promises, malformed and hostile input is
 * reported (file:line, exit 1) and never crashes the tool, --json lines
 * are JSON objects, and a trace converted to a binary stream replays to
 * the same conflicts.
 *
 * The binary under test is build/bin/valor, found from this test's own
 * path (build/tests/tools/replay_test), and the examples are
 * tools/examples/ of the same tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/valor.h>

#include "kselftest_harness.h"

/* --- running the tool */

struct run {
	int status; /* exit status, or -1 if the tool did not exit */
	int signal; /* the signal that killed it, or 0 */
	char *out; /* NUL-terminated stdout and stderr */
	size_t out_len;
	char *err;
	size_t err_len;
};

static char tree_root[PATH_MAX + 16]; /* the source/build tree */
static char valor_path[PATH_MAX + 32];
static char examples_dir[PATH_MAX + 32];

/* build/tests/tools/replay_test -> build/bin/valor and the tree root. */
static void find_paths(void)
{
	char self[PATH_MAX], *dir;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		perror("readlink /proc/self/exe");
		exit(1);
	}
	self[n] = '\0';
	dir = dirname(self); /* .../build/tests/tools */
	snprintf(valor_path, sizeof(valor_path), "%s/../../bin/valor", dir);
	snprintf(tree_root, sizeof(tree_root), "%s/../../..", dir);
	snprintf(examples_dir, sizeof(examples_dir), "%s/tools/examples",
		 tree_root);
}

/* Path of an example; a few may be used in one argument list. */
static char *example(const char *name)
{
	static char path[4][PATH_MAX + 128];
	static unsigned int next;
	char *p = path[next++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", examples_dir, name);
	return p;
}

static char *slurp_fd(int fd, size_t *len)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *buf = malloc((size_t)size + 1);

	if (!buf)
		abort();
	if (size > 0 && pread(fd, buf, (size_t)size, 0) != size)
		abort();
	buf[size] = '\0';
	*len = (size_t)size;
	return buf;
}

/* The contents of @path, NUL-terminated; NULL if it cannot be opened. */
static char *slurp_path(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	char *buf;

	if (fd < 0)
		return NULL;
	buf = slurp_fd(fd, len);
	close(fd);
	return buf;
}

/*
 * Run valor with @argv (NULL-terminated, without argv[0]) and @input on
 * standard input.  Output is collected through memory files, so there is
 * no pipe to deadlock on however much the tool prints.
 */
static void run_valor(struct run *r, const void *input, size_t input_len,
		      const char *const *argv)
{
	int in = memfd_create("stdin", 0), out = memfd_create("stdout", 0),
	    err = memfd_create("stderr", 0);
	const char *args[32];
	size_t n = 0;
	pid_t pid;
	int ws;

	if (in < 0 || out < 0 || err < 0)
		abort();
	if (input_len && write(in, input, input_len) != (ssize_t)input_len)
		abort();
	lseek(in, 0, SEEK_SET);
	args[n++] = valor_path;
	while (*argv && n < 31)
		args[n++] = *argv++;
	args[n] = NULL;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		dup2(in, 0);
		dup2(out, 1);
		dup2(err, 2);
		execv(valor_path, (char *const *)args);
		_exit(127);
	}
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			abort();
	r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
	r->signal = WIFSIGNALED(ws) ? WTERMSIG(ws) : 0;
	r->out = slurp_fd(out, &r->out_len);
	r->err = slurp_fd(err, &r->err_len);
	close(in);
	close(out);
	close(err);
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

#define VALOR(r, ...) \
	run_valor(r, NULL, 0, (const char *const[]){ __VA_ARGS__, NULL })
#define VALOR_IN(r, text, ...)           \
	run_valor(r, text, strlen(text), \
		  (const char *const[]){ __VA_ARGS__, NULL })

/* `valor replay -` with @len bytes of @data on standard input. */
static void replay_stdin(struct run *r, const void *data, size_t len)
{
	run_valor(r, data, len, (const char *const[]){ "replay", "-", NULL });
}

/*
 * Expect @out to contain the text printf makes of @fmt and the rest (a
 * line number of an example, mostly), and show both if it does not.
 */
#define EXPECT_OUTPUT(out, fmt, ...)                              \
	do {                                                      \
		char want_[256];                                  \
                                                                  \
		snprintf(want_, sizeof(want_), fmt, __VA_ARGS__); \
		EXPECT_NE(NULL, strstr(out, want_))               \
		TH_LOG("want %s in\n%s", want_, out);             \
	} while (0)

static size_t count_substr(const char *hay, const char *needle)
{
	size_t n = 0, len = strlen(needle);

	for (const char *p = strstr(hay, needle); p;
	     p = strstr(p + len, needle))
		n++;
	return n;
}

/* Does a line containing @a come right before a line starting with @b? */
static bool line_then(const char *out, const char *a, const char *b)
{
	for (const char *p = strstr(out, a); p; p = strstr(p + 1, a)) {
		const char *nl = strchr(p, '\n');

		if (nl && !strncmp(nl + 1, b, strlen(b)))
			return true;
	}
	return false;
}

/* 1-based number of the @nth line of @path that starts with @prefix. */
static unsigned int nth_line_of(const char *path, const char *prefix,
				unsigned int nth)
{
	FILE *f = fopen(path, "r");
	char buf[4096];
	unsigned int n = 0;

	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f)) {
		n++;
		if (!strncmp(buf, prefix, strlen(prefix)) && !--nth) {
			fclose(f);
			return n;
		}
	}
	fclose(f);
	return 0;
}

static unsigned int line_of(const char *path, const char *prefix)
{
	return nth_line_of(path, prefix, 1);
}

/* --- a small strict JSON checker, for the --json output */

static const char *json_value(const char *p);

static const char *json_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	return p;
}

static const char *json_string(const char *p)
{
	if (*p++ != '"')
		return NULL;
	while (*p && *p != '"') {
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!strchr("0123456789abcdefABCDEF",
						    p[i]) ||
					    !p[i])
						return NULL;
				p += 4;
			} else if (!*p || !strchr("\"\\/bfnrt", *p)) {
				return NULL;
			}
		}
		p++;
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *json_number(const char *p)
{
	const char *start;

	if (*p == '-')
		p++;
	start = p;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == start || (*start == '0' && p - start > 1))
		return NULL;
	if (*p == '.') {
		start = ++p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == start)
			return NULL;
	}
	return p;
}

static const char *json_object(const char *p)
{
	if (*p++ != '{')
		return NULL;
	p = json_ws(p);
	if (*p == '}')
		return p + 1;
	for (;;) {
		p = json_string(json_ws(p));
		if (!p)
			return NULL;
		p = json_ws(p);
		if (*p++ != ':')
			return NULL;
		p = json_value(json_ws(p));
		if (!p)
			return NULL;
		p = json_ws(p);
		if (*p == '}')
			return p + 1;
		if (*p++ != ',')
			return NULL;
	}
}

static const char *json_value(const char *p)
{
	if (*p == '{')
		return json_object(p);
	if (*p == '"')
		return json_string(p);
	if (!strncmp(p, "true", 4))
		return p + 4;
	if (!strncmp(p, "false", 5))
		return p + 5;
	if (!strncmp(p, "null", 4))
		return p + 4;
	return json_number(p);
}

/* Is @line (without newline) exactly one JSON object? */
static bool json_object_line(const char *line)
{
	const char *end = json_object(json_ws(line));

	return end && *json_ws(end) == '\0';
}

/*
 * Remove every "key":VALUE member whose key is in @keys from JSON-lines
 * text, for comparing output that differs only in those members.  Values
 * of these keys are strings without escapes, numbers or null.
 */
static void json_strip(char *s, const char *const *keys)
{
	for (const char *const *k = keys; *k; k++) {
		char pat[64];
		char *p;

		snprintf(pat, sizeof(pat), "\"%s\":", *k);
		while ((p = strstr(s, pat))) {
			char *v = p + strlen(pat), *end;

			if (*v == '"')
				end = strchr(v + 1, '"') + 1;
			else
				end = v + strcspn(v, ",}");
			if (*end == ',')
				end++;
			else if (p[-1] == ',')
				p--;
			memmove(p, end, strlen(end) + 1);
		}
	}
}

/* --- command line */

TEST(help_and_version)
{
	struct run r;

	find_paths();
	VALOR(&r, "--help");
	ASSERT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "replay"));
	/* Only what exists is listed. */
	EXPECT_EQ(NULL, strstr(r.out, "attach"));
	run_free(&r);

	VALOR(&r, "help", "replay");
	ASSERT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "--analysis="));
	EXPECT_NE(NULL, strstr(r.out, "--exitcode="));
	run_free(&r);

	VALOR(&r, "replay", "--help");
	ASSERT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "--convert="));
	run_free(&r);

	VALOR(&r, "--version");
	ASSERT_EQ(0, r.status);
	EXPECT_EQ(0, strncmp(r.out, "valor ", 6));
	run_free(&r);
}

TEST(usage_errors_exit_2)
{
	const char *const *cases[] = {
		(const char *const[]){ "frobnicate", NULL },
		(const char *const[]){ "--frobnicate", NULL },
		(const char *const[]){ "help", "frobnicate", NULL },
		(const char *const[]){ "replay", NULL },
		(const char *const[]){ "replay", "--bogus", "x", NULL },
		(const char *const[]){ "replay", "--analysis=helgrind", "x",
				       NULL },
		(const char *const[]){ "replay", "--exitcode=256", "x", NULL },
		(const char *const[]){ "replay", "--read-log=0", "x", NULL },
		(const char *const[]){ "replay", "--max-footprint=12Q", "x",
				       NULL },
		(const char *const[]){ "replay", "--analysis", NULL },
		(const char *const[]){ "replay", "--convert=o", "a", "b",
				       NULL },
	};
	struct run r;

	find_paths();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run_valor(&r, NULL, 0, cases[i]);
		EXPECT_EQ(2, r.status)
		TH_LOG("case %zu (%s ...): stderr: %s", i, cases[i][0], r.err);
		/* Every usage error says what to do next. */
		EXPECT_NE(NULL, strstr(r.err, "--help"))
		TH_LOG("case %zu: stderr: %s", i, r.err);
		EXPECT_EQ(0, r.out_len);
		run_free(&r);
	}
	VALOR(&r, "no-such-command");
	EXPECT_NE(NULL, strstr(r.err, "unknown command 'no-such-command'"));
	run_free(&r);
}

/* --- the bundled examples */

TEST(racy_counter_valor)
{
	const char *path;
	char want[256], want2[256];
	struct run r;

	find_paths();
	path = example("racy-counter.trace");
	VALOR(&r, "replay", path);
	ASSERT_EQ(66, r.status) TH_LOG("stdout: %s\nstderr: %s", r.out, r.err);
	/* T3's unlocked increment against T2's locked one: two read-write
	 * conflicts (each thread read before the other wrote) and one
	 * write-write; total is always locked and never conflicts. */
	EXPECT_NE(NULL, strstr(r.out, "valor: 3 conflicts in 28 events"))
	TH_LOG("%s", r.out);
	EXPECT_EQ(2, count_substr(r.out,
				  "read-write conflict on 4 bytes at counter"));
	EXPECT_EQ(1,
		  count_substr(r.out,
			       "write-write conflict on 4 bytes at counter"));
	EXPECT_EQ(2, count_substr(r.out, "found lazily"));
	EXPECT_EQ(NULL, strstr(r.out, "at total"));
	EXPECT_EQ(0, r.err_len);
	/* Each lazy report names the write that broke the read: T3's read
	 * was overwritten by T2 (not by T1's initialisation long before),
	 * T2's by T3. */
	snprintf(want, sizeof(want), "earlier: T3 read at line %u,",
		 line_of(path, "T3 read counter"));
	snprintf(want2, sizeof(want2), "    later:   T2 write at line %u,",
		 nth_line_of(path, "T2 write counter", 2));
	EXPECT_TRUE(line_then(r.out, want, want2))
	TH_LOG("want '%s' then '%s' in\n%s", want, want2, r.out);
	snprintf(want, sizeof(want), "later:   T3 write at line %u,",
		 line_of(path, "T3 write counter"));
	EXPECT_EQ(2, count_substr(r.out, want)) TH_LOG("want 2 x %s", want);
	run_free(&r);
}

TEST(racy_counter_all_analyses)
{
	struct run r;

	find_paths();
	VALOR(&r, "replay", "--analysis=all", example("racy-counter.trace"));
	ASSERT_EQ(66, r.status) TH_LOG("stderr: %s", r.err);
	/* In the documented order, each with at least one finding. */
	char *v = strstr(r.out, "\nvalor: "), *f = strstr(r.out, "\nfastrcd: "),
	     *t = strstr(r.out, "\nfasttrack: ");
	ASSERT_NE(NULL, v);
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, t);
	EXPECT_TRUE(v < f && f < t);
	EXPECT_EQ(NULL, strstr(r.out, ": 0 conflicts"));
	EXPECT_EQ(NULL, strstr(r.out, ": 0 races"));
	/* FastTrack also sees the write-read race with T2's finished
	 * critical section, which is no region conflict. */
	EXPECT_NE(NULL,
		  strstr(r.out,
			 "fasttrack: write-read race on 4 bytes at counter"));
	EXPECT_EQ(NULL, strstr(r.out, "at total"));
	/* A 4-byte access pair is one report, however the engine's
	 * metadata splits the cell. */
	EXPECT_EQ(NULL, strstr(r.out, "on 1 byte"));
	EXPECT_EQ(
		1,
		count_substr(
			r.out,
			"fastrcd: write-write conflict on 4 bytes at counter"));
	EXPECT_EQ(1,
		  count_substr(
			  r.out,
			  "fasttrack: write-write race on 4 bytes at counter"));
	run_free(&r);
}

TEST(exitcode_option)
{
	struct run r;

	find_paths();
	VALOR(&r, "replay", "--exitcode=3", example("racy-counter.trace"));
	EXPECT_EQ(3, r.status);
	run_free(&r);
	VALOR(&r, "replay", "--exitcode=0", example("racy-counter.trace"));
	EXPECT_EQ(0, r.status);
	EXPECT_NE(NULL, strstr(r.out, "valor: 3 conflicts"));
	run_free(&r);
}

TEST(read_log_option)
{
	const char *path;
	struct run r;

	find_paths();
	path = example("racy-counter.trace");
	/* Default: T2 validates its read of counter when its critical
	 * section ends. */
	VALOR(&r, "replay", path);
	EXPECT_OUTPUT(r.out, "racy-counter.trace:%u: valor: read-write",
		      nth_line_of(path, "T2 release m", 2));
	run_free(&r);
	/* A one-entry read log is full after that read: the next read
	 * (of total) validates it first. */
	VALOR(&r, "replay", "--read-log=1", path);
	EXPECT_EQ(66, r.status);
	EXPECT_OUTPUT(r.out, "racy-counter.trace:%u: valor: read-write",
		      nth_line_of(path, "T2 read total", 2));
	run_free(&r);
}

TEST(producer_consumer_is_clean)
{
	struct run r;

	find_paths();
	VALOR(&r, "replay", "--analysis=all",
	      example("producer-consumer.trace"));
	ASSERT_EQ(0, r.status) TH_LOG("stdout: %s\nstderr: %s", r.out, r.err);
	EXPECT_NE(NULL, strstr(r.out, "valor: 0 conflicts in"));
	EXPECT_NE(NULL, strstr(r.out, "fastrcd: 0 conflicts in"));
	EXPECT_NE(NULL, strstr(r.out, "fasttrack: 0 races in"));
	EXPECT_EQ(NULL, strstr(r.out, "earlier:"));
	run_free(&r);

	VALOR(&r, "replay", "--sfr", "--analysis=all",
	      example("producer-consumer.trace"));
	EXPECT_EQ(0, r.status) TH_LOG("SFR: %s", r.out);
	run_free(&r);
}

TEST(figure_1b)
{
	const char *path;
	struct run r;

	find_paths();
	path = example("valor-fig1b.trace");
	/* Valor: lazily, when T1's region ends at its release. */
	VALOR(&r, "replay", path);
	ASSERT_EQ(66, r.status) TH_LOG("%s%s", r.out, r.err);
	EXPECT_NE(NULL, strstr(r.out, "valor: 1 conflict in 9 events"));
	EXPECT_OUTPUT(
		r.out,
		"valor-fig1b.trace:%u: valor: read-write conflict on 8 bytes at x (0x10000), found lazily by T1's read validation",
		line_of(path, "T1 release l"));
	EXPECT_OUTPUT(r.out, "T1 read at line %u", line_of(path, "T1 read x"));
	EXPECT_OUTPUT(r.out, "T2 write at line %u",
		      line_of(path, "T2 write x"));
	run_free(&r);

	/* FastRCD: the same conflict, eagerly at T2's write. */
	VALOR(&r, "replay", "--analysis=fastrcd", path);
	ASSERT_EQ(66, r.status);
	EXPECT_NE(NULL, strstr(r.out, "fastrcd: 1 conflict in 9 events"));
	EXPECT_OUTPUT(
		r.out,
		"valor-fig1b.trace:%u: fastrcd: read-write conflict on 8 bytes at x (0x10000), found eagerly by T2",
		line_of(path, "T2 write x"));
	run_free(&r);
}

TEST(figure_2b)
{
	const char *path;
	struct run r;

	find_paths();
	path = example("valor-fig2b.trace");
	VALOR(&r, "replay", path);
	ASSERT_EQ(66, r.status) TH_LOG("%s%s", r.out, r.err);
	/* The version advanced by two: a read-write conflict, lazily, and
	 * no write-write conflict (T2's region ended before T1 wrote). */
	EXPECT_NE(NULL, strstr(r.out, "valor: 1 conflict in 10 events"));
	EXPECT_OUTPUT(
		r.out,
		"valor-fig2b.trace:%u: valor: read-write conflict on 8 bytes at x (0x10000), found lazily by T1's read validation",
		line_of(path, "T1 region-end"));
	EXPECT_EQ(NULL, strstr(r.out, "write-write"));
	/* The write that broke T1's read is T2's, although T1 wrote last
	 * and T0 wrote x before (the report must not name either). */
	EXPECT_OUTPUT(r.out, "later:   T2 write at line %u,",
		      line_of(path, "T2 write x"));
	run_free(&r);

	/* FastTrack: T1's write races with T2's too (nothing orders them). */
	VALOR(&r, "replay", "--analysis=fasttrack", path);
	ASSERT_EQ(66, r.status);
	EXPECT_NE(NULL, strstr(r.out, "fasttrack: read-write race"));
	EXPECT_NE(NULL, strstr(r.out, "fasttrack: write-write race"));
	run_free(&r);
}

/* --- JSON lines */

TEST(json_lines_are_objects)
{
	size_t conflicts = 0, summaries = 0;
	char *line, *save;
	struct run r;

	find_paths();
	VALOR(&r, "replay", "--json", "--analysis=all",
	      example("racy-counter.trace"));
	ASSERT_EQ(66, r.status);
	ASSERT_GT(r.out_len, 0);
	ASSERT_EQ('\n', r.out[r.out_len - 1]);
	for (line = strtok_r(r.out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		EXPECT_TRUE(json_object_line(line))
		TH_LOG("not JSON: %s", line);
		if (strstr(line, "\"type\":\"conflict\"")) {
			conflicts++;
			EXPECT_NE(NULL, strstr(line, "\"kind\":\""));
			EXPECT_NE(NULL, strstr(line, "\"first\":{\"tid\":"));
			EXPECT_NE(NULL, strstr(line, "\"second\":{\"tid\":"));
			EXPECT_NE(NULL, strstr(line, "\"symbol\":\"counter"));
		} else {
			EXPECT_NE(NULL, strstr(line, "\"type\":\"summary\""))
			TH_LOG("neither conflict nor summary: %s", line);
			summaries++;
		}
	}
	EXPECT_EQ(3, summaries);
	EXPECT_GE(conflicts, 3);
	run_free(&r);

	/* The checker itself rejects what is not an object. */
	EXPECT_FALSE(json_object_line("{\"a\":1,}"));
	EXPECT_FALSE(json_object_line("{\"a\":1} x"));
	EXPECT_FALSE(json_object_line("[1]"));
	EXPECT_TRUE(json_object_line("{\"a\":{\"b\":null},\"c\":\"\\u0001\"}"));
}

/* --- binary streams */

static void temp_path(char *buf, size_t len, const char *name)
{
	const char *dir = getenv("TMPDIR");

	snprintf(buf, len, "%s/valor-replay-test.%d.%s",
		 dir && *dir ? dir : "/tmp", (int)getpid(), name);
}

/*
 * The example @name converted by `valor replay --convert` to a binary
 * stream: its bytes, NUL-terminated; NULL if the file cannot be read.
 * @tag names the temporary file, which is removed again.
 */
static char *example_stream(struct __test_metadata *_metadata, const char *name,
			    const char *tag, size_t *len)
{
	char bin[PATH_MAX], opt[PATH_MAX + 16];
	struct run r;
	char *data;

	temp_path(bin, sizeof(bin), tag);
	snprintf(opt, sizeof(opt), "--convert=%s", bin);
	VALOR(&r, "replay", opt, example(name));
	ASSERT_EQ(0, r.status);
	run_free(&r);
	data = slurp_path(bin, len);
	unlink(bin);
	return data;
}

TEST(convert_round_trip)
{
	static const char *const source_keys[] = { "file", "line", "symbol",
						   NULL };
	static const char *const names[] = {
		"racy-counter.trace",
		"valor-fig1b.trace",
		"valor-fig2b.trace",
		"producer-consumer.trace",
	};
	char bin[PATH_MAX];
	struct run text, binary, conv;

	find_paths();
	temp_path(bin, sizeof(bin), "vtrace");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char opt[PATH_MAX + 16];
		struct stat st;
		uint32_t magic;
		FILE *f;

		snprintf(opt, sizeof(opt), "--convert=%s", bin);
		VALOR(&conv, "replay", opt, example(names[i]));
		ASSERT_EQ(0, conv.status) TH_LOG("%s", conv.err);
		ASSERT_EQ(0, conv.out_len);
		run_free(&conv);

		/* Header, then whole records. */
		ASSERT_EQ(0, stat(bin, &st));
		ASSERT_EQ(0, (st.st_size - 16) % 48);
		f = fopen(bin, "rb");
		ASSERT_NE(NULL, f);
		ASSERT_EQ(1, fread(&magic, sizeof(magic), 1, f));
		fclose(f);
		EXPECT_EQ(VALOR_STREAM_MAGIC, magic);

		VALOR(&text, "replay", "--json", "--analysis=all",
		      example(names[i]));
		VALOR(&binary, "replay", "--json", "--analysis=all", bin);
		EXPECT_EQ(text.status, binary.status);
		/* Same conflicts, same sites (line numbers), same events;
		 * only what a binary stream cannot carry differs. */
		json_strip(text.out, source_keys);
		json_strip(binary.out, source_keys);
		EXPECT_STREQ(text.out, binary.out);
		run_free(&text);
		run_free(&binary);
	}
	unlink(bin);
}

TEST(binary_from_stdin)
{
	struct run r;
	size_t len;
	char *data;

	find_paths();
	data = example_stream(_metadata, "valor-fig1b.trace", "stdin.vtrace",
			      &len);
	ASSERT_NE(NULL, data);

	replay_stdin(&r, data, len);
	EXPECT_EQ(66, r.status) TH_LOG("%s", r.err);
	EXPECT_NE(NULL, strstr(r.out, "<stdin>: event "));
	EXPECT_NE(NULL, strstr(r.out, "valor: 1 conflict in 9 events"));
	run_free(&r);

	/* Truncated inside the last record: named, exit 1. */
	replay_stdin(&r, data, len - 5);
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "<stdin>: error: truncated: event 9"))
	TH_LOG("%s", r.err);
	run_free(&r);

	/* Truncated inside the header. */
	replay_stdin(&r, data, 10);
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "truncated stream header"));
	run_free(&r);

	/* Other byte order. */
	{
		uint32_t swapped = __builtin_bswap32(VALOR_STREAM_MAGIC);

		memcpy(data, &swapped, 4);
		replay_stdin(&r, data, len);
		EXPECT_EQ(1, r.status);
		EXPECT_NE(NULL, strstr(r.err, "byte order"));
		run_free(&r);
	}
	free(data);
}

TEST(binary_bad_records)
{
	struct {
		struct valor_stream_header h;
		struct valor_event ev[2];
	} s = {
		.h = { .magic = VALOR_STREAM_MAGIC, .version = 1,
		       .record_size = sizeof(struct valor_event) },
		.ev = {
			{ .kind = VALOR_EV_ACCESS, .tid = 1, .addr = 0x1000,
			  .size = 4, .flags = VALOR_EVF_WRITE },
			{ .kind = 99, .tid = 1 },
		},
	};
	struct run r;

	find_paths();
	replay_stdin(&r, &s, sizeof(s));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "event 2 (offset 64): unknown kind 99"))
	TH_LOG("%s", r.err);
	run_free(&r);

	/* A newer producer's kinds are skipped, as the uapi promises. */
	s.h.version = VALOR_UAPI_VERSION + 1;
	replay_stdin(&r, &s, sizeof(s));
	EXPECT_EQ(0, r.status) TH_LOG("%s", r.err);
	EXPECT_NE(NULL, strstr(r.out, "valor: 0 conflicts in 1 event\n"));
	EXPECT_NE(NULL, strstr(r.err, "skipped 1 event"));
	run_free(&r);

	/* Records too small for an event. */
	s.h.version = 1;
	s.h.record_size = 40;
	replay_stdin(&r, &s, sizeof(s));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "records are 40 bytes"));
	run_free(&r);

	/* An access of zero bytes; one running off the address space. */
	s.h.record_size = sizeof(struct valor_event);
	s.ev[1] = s.ev[0];
	s.ev[1].size = 0;
	replay_stdin(&r, &s, sizeof(s));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL,
		  strstr(r.err, "event 2 (offset 64): access of 0 bytes"));
	run_free(&r);
	s.ev[1].size = 16;
	s.ev[1].addr = UINT64_MAX - 7;
	replay_stdin(&r, &s, sizeof(s));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "past the end of the address space"));
	run_free(&r);
	/* Inside 64 bits but outside what the engine analyses. */
	s.ev[1].addr = 1ULL << 60;
	replay_stdin(&r, &s, sizeof(s));
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "<stdin>: error: event 2: cannot replay"))
	TH_LOG("%s", r.err);
	run_free(&r);
}

/* --- malformed text */

struct bad_text {
	const char *text;
	const char *where; /* expected "<stdin>:LINE:" prefix */
	const char *what; /* expected part of the message */
};

static const struct bad_text bad_texts[] = {
	{ "T1 write x 4\n\nT1 wrte x 4\n",
	  "<stdin>:3:4: error:", "unknown operation 'wrte'" },
	{ "# c\nT1 write x\n", "<stdin>:2:", "missing an address and a size" },
	{ "T1 read x 0\n", "<stdin>:1:11:", "at least 1 byte" },
	{ "T1 read x 99999999999999999999999\n",
	  "<stdin>:1:11:", "number too large" },
	{ "T1 read x 4294967296\n", "<stdin>:1:", "access size too large" },
	{ "T1 read 0xffffffffffffffff 2\n",
	  "<stdin>:1:", "past the end of the address space" },
	{ "T4294967295 exit\n", "<stdin>:1:1:", "thread number too large" },
	{ "let x = 0x10\nlet x = 0x20\n",
	  "<stdin>:2:5:", "already defined on line 1" },
	{ "T1 read y 4\nlet y = 0x20\n",
	  "<stdin>:2:5:", "first use on line 1" },
	{ "T1 read x 4 extra\n", "<stdin>:1:13:", "unexpected 'extra'" },
	{ "T1 read x 4 ip=1 @2\n", "<stdin>:1:", "site is given twice" },
	{ "T1 read x 4 colour=3\n", "<stdin>:1:", "unknown attribute" },
	{ "hello\n", "<stdin>:1:1:", "starts with a thread" },
	{ "T1 join T1\n", "<stdin>:1:9:", "cannot join itself" },
	{ "T1 read x\x01 4\n", "<stdin>:1:10:", "control byte 0x01" },
	{ "T1 read 12ab 4\n", "<stdin>:1:", "in a number" },
	{ "T1 read x$ 4\n", "<stdin>:1:", "cannot appear in a name" },
	/* Accepted by the parser, refused by the replay: still file:line. */
	{ "T1 create T2\nT1 join T2\n",
	  "<stdin>:2: error:", "T2 has not exited" },
	{ "T1 create T2\nT1 create T2\n",
	  "<stdin>:2: error:", "T2 is already running" },
	{ "T2 exit\nT2 read x 1\n", "<stdin>:2: error:", "T2 has exited" },
	{ "T1 join T7\n", "<stdin>:1: error:", "T7 never ran" },
	{ "T1 read 0xffffffffffff 2\n",
	  "<stdin>:1: error:", "48-bit user address space" },
	/* Would need gigabytes of metadata: refused up front. */
	{ "T1 read x 4\nT1 write 0 4294967295\n",
	  "<stdin>:2: error:", "touch more than 268435456 bytes" },
	/* Strided accesses: count= and stride= on reads and writes only. */
	{ "T1 write x 8 stride=16\n", "<stdin>:1:", "stride= needs count=" },
	{ "T1 read x 8 count=0\n", "<stdin>:1:19:", "count must be 1 to" },
	{ "T1 read x 8 count=2 count=3\n", "<stdin>:1:", "given twice" },
	{ "T1 free x 8 count=2\n", "<stdin>:1:", "unknown attribute" },
	{ "T1 read 0xfffffffffffffff0 8 count=3 stride=8\n",
	  "<stdin>:1:", "run past the end of the address space" },
	{ "T1 write 0x1000 1 count=4294967295 stride=0\n",
	  "<stdin>:1: error:", "touch more than 268435456 bytes" },
};

TEST(malformed_text_exit_1)
{
	struct run r;

	find_paths();
	for (size_t i = 0; i < sizeof(bad_texts) / sizeof(bad_texts[0]); i++) {
		const struct bad_text *b = &bad_texts[i];

		VALOR_IN(&r, b->text, "replay", "-");
		EXPECT_EQ(1, r.status) TH_LOG("case %zu: %s", i, b->text);
		EXPECT_EQ(0, strncmp(r.err, b->where, strlen(b->where)))
		TH_LOG("case %zu: want '%s', got: %s", i, b->where, r.err);
		EXPECT_NE(NULL, strstr(r.err, b->what))
		TH_LOG("case %zu: want '%s', got: %s", i, b->what, r.err);
		run_free(&r);
	}
}

TEST(text_features)
{
	static const char text[] = "# names, offsets, explicit sites\r\n"
				   "let base = 0x4000\n"
				   "let hi = base+8\n"
				   "T1 write base 8   # a comment\n"
				   "T2 read hi-4 2 ip=0x401234 ts=5 cpu=1\n"
				   "\t T1 region-end\n";
	struct run r;

	find_paths();
	VALOR_IN(&r, text, "replay", "-");
	EXPECT_EQ(66, r.status) TH_LOG("%s", r.err);
	EXPECT_NE(
		NULL,
		strstr(r.out,
		       "<stdin>:5: valor: write-read conflict on 2 bytes at base+4 (0x4004)"))
	TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "T1 write at line 4"));
	EXPECT_NE(NULL, strstr(r.out, "T2 read at ip 0x401234"));
	run_free(&r);

	/*
	 * A strided write: its elements conflict, the gaps between them
	 * do not, and the report shows the whole access.
	 */
	VALOR_IN(&r,
		 "T1 create T2\n"
		 "T2 write 0x4000 8 count=4 stride=16\n"
		 "T1 write 0x4008 8\n"
		 "T1 write 0x4030 4\n",
		 "replay", "-");
	EXPECT_EQ(66, r.status) TH_LOG("%s", r.err);
	EXPECT_NE(NULL, strstr(r.out, "<stdin>:4: valor: write-write conflict "
				      "on 4 bytes at 0x4030"))
	TH_LOG("%s", r.out);
	EXPECT_EQ(NULL, strstr(r.out, "<stdin>:3:")) TH_LOG("%s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "1 conflict in 4 events"))
	TH_LOG("%s", r.out);
	run_free(&r);

	/* Two files: each replayed on its own, summaries name the file. */
	VALOR(&r, "replay", example("producer-consumer.trace"),
	      example("valor-fig1b.trace"));
	EXPECT_EQ(66, r.status);
	EXPECT_NE(NULL,
		  strstr(r.out, "producer-consumer.trace: valor: 0 conflicts"));
	EXPECT_NE(NULL, strstr(r.out, "valor-fig1b.trace: valor: 1 conflict"));
	run_free(&r);

	/* A missing file among good ones: reported, exit 1 wins. */
	VALOR(&r, "replay", example("valor-fig1b.trace"), "/nonexistent.trace");
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL,
		  strstr(r.err, "/nonexistent.trace: error: cannot open"));
	EXPECT_NE(NULL, strstr(r.out, "valor-fig1b.trace: valor: 1 conflict"));
	run_free(&r);
}

/* --- hostile input */

/* @head, @n copies of @fill, then @tail into @buf, which must hold them. */
static char *long_text(char *buf, const char *head, char fill, size_t n,
		       const char *tail)
{
	size_t head_len = strlen(head);

	memcpy(buf, head, head_len);
	memset(buf + head_len, fill, n);
	strcpy(buf + head_len + n, tail);
	return buf;
}

TEST(long_lines)
{
	size_t n = 1 << 20;
	char *text = malloc(n + 64);
	struct run r;

	find_paths();
	ASSERT_NE(NULL, text);
	/* A 1 MB comment is fine. */
	long_text(text, "#", 'c', n, "\nT1 read x 4\n");
	VALOR_IN(&r, text, "replay", "-");
	EXPECT_EQ(0, r.status) TH_LOG("%.300s", r.err);
	run_free(&r);

	/* A 1 MB name is a name. */
	long_text(text, "T1 write ", 'n', n, " 4\nT2 read ");
	VALOR_IN(&r, text, "replay", "-");
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "<stdin>:2:"));
	run_free(&r);

	/* A 1 MB number: an error, with the echo cut short. */
	long_text(text, "T1 read x ", '9', n, "\n");
	VALOR_IN(&r, text, "replay", "-");
	EXPECT_EQ(1, r.status);
	EXPECT_NE(NULL, strstr(r.err, "number too large"));
	EXPECT_LT(r.err_len, 4096);
	run_free(&r);
	free(text);
}

/* xorshift64*: deterministic, seeded from the test's constant. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

TEST(fuzz_never_crashes)
{
	static const char alphabet[] =
		"T0123456789 \t\n#@=+-xlmabcdefwritejonq\xff";
	const uint64_t seed = 0x76616c6f72ULL;
	size_t text_len, bin_len;
	char *text, *binary;
	uint64_t s = seed;
	struct run r;

	find_paths();
	text = slurp_path(example("racy-counter.trace"), &text_len);
	ASSERT_NE(NULL, text);
	binary = example_stream(_metadata, "racy-counter.trace", "fuzz.vtrace",
				&bin_len);
	ASSERT_NE(NULL, binary);

	for (int i = 0; i < 300; i++) {
		char *buf;
		size_t len;

		switch (rnd(&s) % 4) {
		case 0: /* random bytes */
			len = rnd(&s) % 512;
			buf = malloc(len + 1);
			for (size_t j = 0; j < len; j++)
				buf[j] = (char)rnd(&s);
			break;
		case 1: /* a text trace with characters replaced */
			len = text_len;
			buf = malloc(len + 1);
			memcpy(buf, text, len);
			for (int k = rnd(&s) % 8 + 1; k; k--)
				buf[rnd(&s) % len] =
					alphabet[rnd(&s) %
						 (sizeof(alphabet) - 1)];
			break;
		case 2: /* a binary trace, truncated */
			len = rnd(&s) % (bin_len + 1);
			buf = malloc(len + 1);
			memcpy(buf, binary, len);
			break;
		default: /* a binary trace with bytes replaced */
			len = bin_len;
			buf = malloc(len + 1);
			memcpy(buf, binary, len);
			for (int k = rnd(&s) % 16 + 1; k; k--)
				buf[rnd(&s) % len] = (char)rnd(&s);
			break;
		}
		run_valor(&r, buf, len,
			  (const char *const[]){ "replay", "--analysis=all",
						 "-", NULL });
		ASSERT_EQ(0, r.signal)
		TH_LOG("seed 0x%llx iteration %d: killed by signal %d",
		       (unsigned long long)seed, i, r.signal);
		ASSERT_TRUE(r.status == 0 || r.status == 1 || r.status == 66)
		TH_LOG("iteration %d: exit %d: %s", i, r.status, r.err);
		/* Exit 1 always comes with a message naming the input. */
		if (r.status == 1)
			EXPECT_EQ(0, strncmp(r.err, "<stdin>", 7))
		TH_LOG("iteration %d: %s", i, r.err);
		run_free(&r);
		free(buf);
	}
	free(text);
	free(binary);
}

TEST_HARNESS_MAIN
