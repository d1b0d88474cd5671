// SPDX-License-Identifier: GPL-2.0
/*
 * Binary traces: a struct valor_stream_header followed by records of
 * header.record_size bytes, each starting with a struct valor_event, in
 * the producer's byte order (uapi/linux/valor.h).
 */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "diag.h"

#define HEADER_SIZE sizeof(struct valor_stream_header)
#define RECORD_V1_SIZE sizeof(struct valor_event)

static uint32_t load_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

bool trace_is_binary(const unsigned char *buf, size_t len)
{
	uint32_t magic;

	if (len < sizeof(magic))
		return false;
	magic = load_u32(buf);
	return magic == VALOR_STREAM_MAGIC ||
	       magic == __builtin_bswap32(VALOR_STREAM_MAGIC);
}

/*
 * What the replay would reject, said precisely.  Kinds are checked by the
 * caller, which knows whether unknown kinds may be skipped.
 */
static const char *event_problem(const struct valor_event *ev)
{
	switch (ev->kind) {
	case VALOR_EV_ACCESS:
		if (ev->size == 0)
			return "access of 0 bytes";
		if ((ev->flags & VALOR_EVF_STRIDED) &&
		    !VALOR_ACCESS_COUNT(ev->arg))
			return "strided access of 0 elements";
		if (trace_access_wraps(ev))
			return ev->flags & VALOR_EVF_STRIDED ?
				       "strided access runs past the end of the address space" :
				       "access runs past the end of the address space";
		break;
	case VALOR_EV_FREE:
	case VALOR_EV_MUNMAP:
		if (ev->arg && ev->addr + ev->arg - 1 < ev->addr)
			return "range runs past the end of the address space";
		break;
	}
	return NULL;
}

int trace_read_binary(struct trace *t, const unsigned char *buf, size_t len)
{
	struct valor_stream_header h;
	size_t body, nrec;

	if (load_u32(buf) != VALOR_STREAM_MAGIC) {
		diag_file(
			t->display,
			"binary trace written in the other byte order; convert it on a machine of that byte order");
		return -1;
	}
	if (len < HEADER_SIZE) {
		diag_file(t->display,
			  "truncated stream header: %zu of %zu bytes", len,
			  HEADER_SIZE);
		return -1;
	}
	memcpy(&h, buf, HEADER_SIZE);
	if (h.version == 0) {
		diag_file(t->display, "stream header has version 0 (invalid)");
		return -1;
	}
	if (h.record_size < RECORD_V1_SIZE) {
		diag_file(
			t->display,
			"stream header says records are %u bytes; they are at least %zu",
			h.record_size, RECORD_V1_SIZE);
		return -1;
	}
	t->stream_version = h.version;

	body = len - HEADER_SIZE;
	nrec = body / h.record_size;
	if (body % h.record_size) {
		diag_file(
			t->display,
			"truncated: event %zu (offset %zu) has %zu of %u bytes",
			nrec + 1, HEADER_SIZE + nrec * h.record_size,
			body % h.record_size, h.record_size);
		return -1;
	}

	for (size_t i = 0; i < nrec; i++) {
		size_t off = HEADER_SIZE + i * h.record_size;
		struct valor_event ev;
		const char *why;

		/* Records may be longer than ours: newer fields are ignored. */
		memcpy(&ev, buf + off, RECORD_V1_SIZE);
		if (ev.kind == VALOR_EV_NONE || ev.kind > VALOR_EV_KIND_MAX) {
			/* uapi promise: old consumers skip newer kinds. */
			if (h.version > VALOR_UAPI_VERSION) {
				t->skipped_unknown++;
				continue;
			}
			diag_file(t->display,
				  "event %zu (offset %zu): unknown kind %u",
				  i + 1, off, ev.kind);
			return -1;
		}
		if (ev.flags & ~VALOR_EVF_KNOWN) {
			/* Same promise for flags; in our own version they are bad. */
			if (h.version <= VALOR_UAPI_VERSION) {
				diag_file(
					t->display,
					"event %zu (offset %zu): unknown flags 0x%x",
					i + 1, off,
					ev.flags & ~VALOR_EVF_KNOWN);
				return -1;
			}
			ev.flags &= VALOR_EVF_KNOWN;
		}
		why = event_problem(&ev);
		if (why) {
			diag_file(t->display, "event %zu (offset %zu): %s",
				  i + 1, off, why);
			return -1;
		}
		if (trace_append(t, &ev, 0, false) < 0) {
			diag_file(t->display, "out of memory at event %zu",
				  i + 1);
			return -1;
		}
	}
	if (t->skipped_unknown)
		fprintf(stderr,
			"%s: note: skipped %zu events of kinds newer than this valor (stream version %u)\n",
			t->display, t->skipped_unknown, h.version);
	return 0;
}

int trace_write_binary(const struct trace *t, const char *path)
{
	struct valor_stream_header h = {
		.magic = VALOR_STREAM_MAGIC,
		.version = VALOR_UAPI_VERSION,
		.record_size = RECORD_V1_SIZE,
	};
	bool is_stdout = !strcmp(path, "-");
	const char *display = is_stdout ? "<stdout>" : path;
	FILE *f = is_stdout ? stdout : fopen(path, "wbe");
	bool ok;

	if (!f) {
		diag_file(display, "cannot create: %s", strerror(errno));
		return -1;
	}
	ok = fwrite(&h, sizeof(h), 1, f) == 1;
	if (ok && t->n)
		ok = fwrite(t->ev, sizeof(*t->ev), t->n, f) == t->n;
	if (is_stdout)
		ok = fflush(f) == 0 && ok;
	else
		ok = fclose(f) == 0 && ok;
	if (!ok) {
		diag_file(display, "cannot write: %s", strerror(errno));
		if (!is_stdout)
			unlink(path);
		return -1;
	}
	return 0;
}
