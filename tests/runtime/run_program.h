/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Building and running programs for the runtime tests: where the tree
 * and build/ are (found from /proc/self/exe, so a test binary works from
 * any directory), running a command with its output captured and a
 * time limit, reading files, and the `valor cc` / `valor run` command
 * lines the tests share.
 *
 * Included by the runtime test programs only (static inline throughout),
 * after kselftest_harness.h: the build helpers log with TH_LOG.
 */
#ifndef VALOR_TESTS_RUN_PROGRAM_H
#define VALOR_TESTS_RUN_PROGRAM_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* A program that takes longer than this is killed (SIGALRM) and fails. */
#define RUN_TIME_LIMIT 20

/*
 * snprintf for paths: a path that does not fit is a test setup error,
 * reported (to stderr) rather than silently truncated.
 */
__attribute__((format(printf, 3, 4))) static inline void
pathf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= size)
		fprintf(stderr, "path too long: %s...\n", buf);
}

/* Append to @buf (of @size) at *@used, never past its end. */
__attribute__((format(printf, 4, 5))) static inline void
appendf(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*used + 1 >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *used, size - *used, fmt, ap);
	va_end(ap);
	if (n > 0)
		*used += (size_t)n;
	if (*used >= size)
		*used = size - 1;
}

struct tree_paths {
	char root[PATH_MAX]; /* the source tree */
	char build[PATH_MAX]; /* root/build, where the test binary lives */
	char valor[PATH_MAX]; /* build/bin/valor */
};

/* Strip the last @levels components of @path in place. */
static inline void path_up(char *path, int levels)
{
	while (levels--) {
		char *slash = strrchr(path, '/');

		if (!slash || slash == path)
			return;
		*slash = 0;
	}
}

/*
 * The test binary is build/tests/<dir>/<name>: build/ is three levels
 * up, the source tree four.  Returns false if /proc/self/exe is unreadable.
 */
static inline bool tree_paths_find(struct tree_paths *t)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return false;
	exe[n] = 0;
	path_up(exe, 3);
	pathf(t->build, sizeof(t->build), "%s", exe);
	pathf(t->root, sizeof(t->root), "%s", exe);
	path_up(t->root, 1);
	pathf(t->valor, sizeof(t->valor), "%s/bin/valor", t->build);
	return true;
}

/* Whether @name is an executable found in PATH. */
static inline bool command_exists(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, name);
		if (!access(buf, X_OK))
			return true;
		path += n;
		if (*path == ':')
			path++;
	}
	return false;
}

/* mkdir -p */
static inline int make_dirs(const char *dir)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", dir);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -1;
	return 0;
}

/* The whole file (NUL-terminated) or NULL; *len gets its length. */
static inline char *read_file(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!buf || fd < 0) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			char *bigger = realloc(buf, cap * 2);

			if (!bigger) {
				free(buf);
				close(fd);
				return NULL;
			}
			buf = bigger;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

/* How a command ended. */
struct run_result {
	bool exited; /* normally, with @status */
	int status; /* exit status, or the signal that killed it */
	char *output; /* its stdout and stderr, interleaved */
};

static inline void run_result_free(struct run_result *r)
{
	free(r->output);
	r->output = NULL;
}

/* "exit 66", "killed by signal 6 (Aborted)", "timed out after 20 s" */
static inline const char *run_result_describe(const struct run_result *r,
					      char *buf, size_t size)
{
	if (r->exited)
		snprintf(buf, size, "exit %d", r->status);
	else if (r->status == SIGALRM)
		snprintf(buf, size, "timed out after %d s (killed)",
			 RUN_TIME_LIMIT);
	else
		snprintf(buf, size, "killed by signal %d (%s)", r->status,
			 strsignal(r->status));
	return buf;
}

/*
 * Start @argv (argv[0] is a path) with @env_set ("NAME=VALUE" strings,
 * NULL-terminated, may be NULL) added to the environment and
 * VALOR_OPTIONS removed unless @env_set gives it, its output (stdout and
 * stderr) to @output_path.  The command gets RUN_TIME_LIMIT seconds:
 * alarm() survives execve, so even a hung program behind `valor run` is
 * killed.  Returns the child's pid, or -1.
 */
static inline pid_t start_command(char *const argv[], char *const env_set[],
				  const char *output_path)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		int fd = open(output_path,
			      O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0 || null < 0)
			_exit(126);
		dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		unsetenv("VALOR_OPTIONS");
		for (char *const *e = env_set; e && *e; e++)
			putenv(*e);
		signal(SIGALRM, SIG_DFL);
		alarm(RUN_TIME_LIMIT);
		execv(argv[0], argv);
		dprintf(2, "cannot execute %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

/* Wait for @pid from start_command(); fill @r.  0, or -1. */
static inline int finish_command(pid_t pid, const char *output_path,
				 struct run_result *r)
{
	int status;

	memset(r, 0, sizeof(*r));
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	r->exited = WIFEXITED(status);
	r->status = r->exited ? WEXITSTATUS(status) : WTERMSIG(status);
	r->output = read_file(output_path, NULL);
	if (!r->output)
		r->output = strdup("");
	return 0;
}

/* start_command() and finish_command(): 0, or -1 if it did not start. */
static inline int run_command(char *const argv[], char *const env_set[],
			      const char *output_path, struct run_result *r)
{
	pid_t pid = start_command(argv, env_set, output_path);

	memset(r, 0, sizeof(*r));
	if (pid < 0)
		return -1;
	return finish_command(pid, output_path, r);
}

/* The last @max bytes of @s, from a line start where possible. */
static inline const char *tail_of(const char *s, size_t max)
{
	size_t n = strlen(s);
	const char *t;

	if (n <= max)
		return s;
	t = s + n - max;
	while (*t && *t != '\n')
		t++;
	return *t ? t + 1 : s + n - max;
}

/* How many times @needle occurs in @hay, without overlaps. */
static inline int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* An argv under construction; fixed size is plenty for the tests. */
struct argv_buf {
	char *v[64];
	int n;
	char storage[64][PATH_MAX];
};

static inline void argv_init(struct argv_buf *a)
{
	a->n = 0;
	a->v[0] = NULL;
}

__attribute__((format(printf, 2, 3))) static inline void
argv_add(struct argv_buf *a, const char *fmt, ...)
{
	va_list ap;

	if (a->n >= 63)
		return;
	va_start(ap, fmt);
	vsnprintf(a->storage[a->n], PATH_MAX, fmt, ap);
	va_end(ap);
	a->v[a->n] = a->storage[a->n];
	a->v[++a->n] = NULL;
}

/* The command line of @a, for messages. */
static inline const char *argv_show(const struct argv_buf *a, char *buf,
				    size_t size)
{
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < a->n; i++)
		appendf(buf, size, &used, "%s%s", i ? " " : "", a->v[i]);
	return buf;
}

/*
 * Run one build command; on failure log the command and its output.
 * Returns true on success.
 */
static inline bool build_step(struct __test_metadata *_metadata,
			      struct argv_buf *cmd, const char *log_path)
{
	struct run_result r;
	char shown[4096], d[128];
	bool ok;

	if (run_command(cmd->v, NULL, log_path, &r)) {
		TH_LOG("cannot run %s", argv_show(cmd, shown, sizeof(shown)));
		return false;
	}
	ok = r.exited && r.status == 0;
	if (!ok)
		TH_LOG("build failed (%s): %s\n%s",
		       run_result_describe(&r, d, sizeof(d)),
		       argv_show(cmd, shown, sizeof(shown)),
		       tail_of(r.output, 3000));
	run_result_free(&r);
	return ok;
}

/*
 * The corpus's scheduler, tests/runtime/corpus/support/sched.c, compiled
 * by @compiler WITHOUT instrumentation into @out_dir/support/sched.o
 * (path in @obj): the interleavings it forces stay invisible to the
 * analyses.  Built through a temporary name, so an interrupted build
 * never leaves a broken object behind.
 */
static inline bool build_sched(struct __test_metadata *_metadata,
			       const struct tree_paths *t, const char *compiler,
			       const char *out_dir, char *obj, size_t objlen)
{
	struct argv_buf *cmd = malloc(sizeof(*cmd));
	char dir[PATH_MAX], tmp[PATH_MAX], log[PATH_MAX];
	bool ok;

	pathf(dir, sizeof(dir), "%s/support", out_dir);
	pathf(obj, objlen, "%s/sched.o", dir);
	pathf(tmp, sizeof(tmp), "%s.%d.tmp", obj, (int)getpid());
	pathf(log, sizeof(log), "%s/sched.build.log", dir);
	if (!cmd || make_dirs(dir)) {
		TH_LOG("cannot create %s", dir);
		free(cmd);
		return false;
	}
	argv_init(cmd);
	argv_add(cmd, "/usr/bin/env");
	argv_add(cmd, "%s", compiler);
	argv_add(cmd, "-O2");
	argv_add(cmd, "-Wall");
	argv_add(cmd, "-Werror");
	argv_add(cmd, "-c");
	argv_add(cmd, "-o");
	argv_add(cmd, "%s", tmp);
	argv_add(cmd, "%s/tests/runtime/corpus/support/sched.c", t->root);
	ok = build_step(_metadata, cmd, log);
	free(cmd);
	if (ok && rename(tmp, obj)) {
		TH_LOG("cannot rename %s: %s", tmp, strerror(errno));
		ok = false;
	}
	return ok;
}

#endif /* VALOR_TESTS_RUN_PROGRAM_H */
