// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The report log: where reports, the exit summary and the runtime's
 * notes go (the log_path option: stderr, stdout or a file).
 *
 * The program owns its descriptors and may close the one the log writes
 * to: xz closes stderr before it exits, a program may close every
 * descriptor above 2.  The number is then the next one the program
 * opens, and reports went into whatever file took it: a program's own
 * output, corrupted.  So:
 *
 *   - standard error (or output) follows the descriptor while the
 *     program keeps it, redirected or not (dup2(2) of a pipe or a file
 *     onto 2 takes the reports along, as under ThreadSanitizer, so a
 *     harness that captures the program's stderr captures them too).
 *     Once the program closes it (close(2), fclose(3), close_range(2);
 *     the interceptors tell us; a close they do not see, a raw system
 *     call, shows as another file behind the number, or none, at the
 *     next write, which checks its identity), what is left goes to
 *     $TMPDIR/valor.PID.log (/tmp without TMPDIR), until a dup2(2) or
 *     dup3(2) onto the number gives the program a standard error again.
 *     No descriptor of the program's is held open behind its back: a
 *     dup taken at start would keep a pipe the program closed from
 *     reaching end of file.
 *   - a log file, and the fallback, are checked before every write by
 *     identity (device and inode): a descriptor that is no longer that
 *     file is never written, and the file is opened again by its path,
 *     appending.
 *
 * Descriptors the log opens are moved to LOG_FD_MIN or above, out of the
 * way of a program that counts on the lowest free number.  Writes come
 * from reports (under report.c's lock) and from a few notes (a thread
 * not analysed, libdw missing), so the descriptor changes under
 * log_lock.  The check costs an fstat(2) per write to a file, next to
 * the symbolizing a report costs.
 */
#include "rt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG_FD_MIN 100

static atomic_int log_lock;
static int log_fd = 2;
/* 1 or 2 while the log is standard output or error (error until opened). */
static int log_std_fd = 2;
static atomic_bool log_std_gone; /* the program closed log_std_fd */
/* What log_std_fd was when we last knew the program had it. */
static dev_t std_dev;
static ino_t std_ino;
static bool log_known; /* log_dev and log_ino say what log_fd must be */
static dev_t log_dev;
static ino_t log_ino;
/* The file to open again when log_fd is lost; empty before it is needed. */
static char log_path[4096];
static char fallback_dir[4000];

static bool log_is(int fd)
{
	struct stat st;

	return log_known && !fstat(fd, &st) && st.st_dev == log_dev &&
	       st.st_ino == log_ino;
}

static void log_remember(int fd)
{
	struct stat st;

	log_fd = fd;
	log_known = !fstat(fd, &st);
	log_dev = st.st_dev;
	log_ino = st.st_ino;
}

/* @path opened for appending, on a descriptor of LOG_FD_MIN or more. */
static int open_appending(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	int high;

	if (fd < 0 || fd >= LOG_FD_MIN)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, LOG_FD_MIN);
	if (high < 0)
		return fd;
	close(fd);
	return high;
}

void rt_log_open(void)
{
	const char *p = rt.opt.log_path, *tmp = getenv("TMPDIR");
	size_t n = strlen(p);
	int fd;

	snprintf(fallback_dir, sizeof(fallback_dir), "%s",
		 tmp && *tmp == '/' ? tmp : "/tmp");
	if (!strcmp(p, "stderr") || !strcmp(p, "stdout")) {
		struct stat st;

		log_std_fd = log_fd = !strcmp(p, "stderr") ? 2 : 1;
		/* Started without it: the first write goes to the fallback. */
		if (fstat(log_fd, &st)) {
			atomic_store(&log_std_gone, true);
			return;
		}
		std_dev = st.st_dev;
		std_ino = st.st_ino;
		return;
	}
	if (n > 3 && !strcmp(p + n - 3, ".%p"))
		snprintf(log_path, sizeof(log_path), "%.*s.%d", (int)(n - 3), p,
			 (int)getpid());
	else
		snprintf(log_path, sizeof(log_path), "%s", p);
	log_std_fd = -1;
	fd = open_appending(log_path);
	if (fd < 0)
		rt_die("valor: cannot open log_path '%s': %s "
		       "(give a writable file, or stderr)\n",
		       log_path, strerror(errno));
	log_remember(fd);
}

void rt_log_fd_closing(int fd)
{
	if (fd >= 0 && fd == log_std_fd)
		atomic_store(&log_std_gone, true);
}

void rt_log_fd_replaced(int fd)
{
	struct stat st;

	if (fd < 0 || fd != log_std_fd || fstat(fd, &st))
		return;
	rt_lock(&log_lock);
	std_dev = st.st_dev;
	std_ino = st.st_ino;
	rt_unlock(&log_lock);
	atomic_store(&log_std_gone, false);
}

/*
 * Whether standard error (or output) is still the file we last knew:
 * a close by a raw system call, which no interceptor sees, followed by
 * an open that took the number, must not send reports into the
 * program's file.  Redirections the interceptors see (dup2(2), dup3(2),
 * freopen(3)) update what we know first.  log_lock held.
 */
static bool std_still_ours(void)
{
	struct stat st;

	return !fstat(log_std_fd, &st) && st.st_dev == std_dev &&
	       st.st_ino == std_ino;
}

/*
 * The descriptor to write to: standard error or output while the
 * program has it; else the file, opened again if the program took ours.
 */
static int log_target(void)
{
	int fd;

	rt_lock(&log_lock);
	if (log_std_fd >= 0 && !atomic_load(&log_std_gone)) {
		if (std_still_ours()) {
			rt_unlock(&log_lock);
			return log_std_fd;
		}
		atomic_store(&log_std_gone, true);
	}
	if (!log_is(log_fd)) {
		if (!log_path[0])
			snprintf(log_path, sizeof(log_path), "%s/valor.%d.log",
				 fallback_dir, (int)getpid());
		fd = open_appending(log_path);
		if (fd >= 0)
			log_remember(fd);
		else
			log_known = false;
	}
	fd = log_known ? log_fd : -1;
	rt_unlock(&log_lock);
	return fd;
}

void rt_log_write(const char *buf, size_t len)
{
	int fd = log_target();

	while (fd >= 0 && len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

void rt_log_printf(const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	rt_log_write(buf,
		     (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}
