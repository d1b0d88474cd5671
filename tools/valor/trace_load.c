// SPDX-License-Identifier: GPL-2.0
/* Reading a trace file (or standard input) and choosing its parser. */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"

/* Read all of @fd; returns 0 and a malloc'ed buffer, or -errno. */
static int read_all(int fd, unsigned char **out, size_t *out_len)
{
	size_t len = 0, cap = 64 * 1024;
	unsigned char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t r;

		if (len == cap) {
			unsigned char *b2;

			cap *= 2;
			b2 = realloc(buf, cap);
			if (!b2) {
				free(buf);
				return -ENOMEM;
			}
			buf = b2;
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			free(buf);
			return (int)r;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	*out = buf;
	*out_len = len;
	return 0;
}

int trace_load(struct trace *t, const char *path)
{
	bool is_stdin = !strcmp(path, "-");
	unsigned char *buf = NULL;
	size_t len = 0;
	int fd, ret;

	memset(t, 0, sizeof(*t));
	t->path = path;
	t->display = is_stdin ? "<stdin>" : path;

	fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		diag_file(t->display, "cannot open: %s", strerror(errno));
		return -1;
	}
	ret = read_all(fd, &buf, &len);
	if (!is_stdin)
		close(fd);
	if (ret < 0) {
		diag_file(t->display, "cannot read: %s", strerror(-ret));
		return -1;
	}

	if (trace_is_binary(buf, len)) {
		t->format = TRACE_BINARY;
		ret = trace_read_binary(t, buf, len);
	} else {
		t->format = TRACE_TEXT;
		ret = trace_parse_text(t, (const char *)buf, len);
	}
	free(buf);
	if (ret < 0) {
		const char *path_keep = t->path, *display_keep = t->display;

		trace_free(t);
		t->path = path_keep;
		t->display = display_keep;
		return -1;
	}
	return 0;
}
