/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A trace loaded into memory: the events of one file, where each came
 * from (line numbers of a text trace), and the symbolic names a text
 * trace gave to addresses, so that reports can speak the trace's terms.
 * Traces are loaded whole because a replay runs once per analysis and
 * standard input can only be read once.
 */
#ifndef VALOR_TOOL_TRACE_H
#define VALOR_TOOL_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/valor.h>

enum trace_format {
	TRACE_TEXT,
	TRACE_BINARY,
};

/* A name a text trace gave to an address. */
struct trace_symbol {
	uint64_t addr;
	char *name;
};

struct trace {
	const char *path; /* as given on the command line ("-" = stdin) */
	const char *display; /* for messages: path, or "<stdin>" */
	enum trace_format format;

	struct valor_event *ev;
	size_t n;
	size_t cap;
	/* Text traces only (NULL otherwise), one entry per event. */
	uint32_t *line; /* the line the event came from */
	bool *site_is_line; /* ev.ip is that line number, not an explicit ip */

	struct trace_symbol *sym; /* sorted by address */
	size_t nsym;

	uint16_t stream_version; /* binary: the producer's version */
	size_t skipped_unknown; /* binary: events of kinds newer than us */
};

/*
 * trace_load() - read @path ("-" = standard input) and parse it
 *
 * Binary streams are recognised by their header magic; anything else is
 * parsed as text.  On failure a message naming the file (and line) has
 * been printed to stderr and -1 is returned; @t is then empty.
 */
int trace_load(struct trace *t, const char *path);
void trace_free(struct trace *t);

/* Append an event; @line is 0 for binary traces.  -1 on ENOMEM. */
int trace_append(struct trace *t, const struct valor_event *ev, uint32_t line,
		 bool site_is_line);

/* Take ownership of @name; the symbols are sorted by trace_sort_symbols(). */
int trace_add_symbol(struct trace *t, uint64_t addr, char *name);
void trace_sort_symbols(struct trace *t);

/*
 * trace_symbolize() - name @addr as "name" or "name+off" into @buf
 *
 * Uses the nearest symbol at or below @addr, within 4 KiB.  Returns false
 * (and leaves @buf empty) when no symbol is near.
 */
bool trace_symbolize(const struct trace *t, uint64_t addr, char *buf,
		     size_t len);

/*
 * trace_site_event() - the event whose line number @site is, or -1
 *
 * Text traces use line numbers as sites unless an event gives its own ip;
 * this finds the event when @site is such a line number.
 */
long trace_site_event(const struct trace *t, uint64_t site);

/* Parsers, used by trace_load(); both print their own errors. */
/*
 * Whether access @ev (every element of a strided one) runs past the end
 * of the address space; its size and count are at least 1.
 */
bool trace_access_wraps(const struct valor_event *ev);

int trace_parse_text(struct trace *t, const char *buf, size_t len);
int trace_read_binary(struct trace *t, const unsigned char *buf, size_t len);

/* Does @buf start like a binary stream (either byte order)? */
bool trace_is_binary(const unsigned char *buf, size_t len);

/*
 * trace_write_binary() - write @t as a binary stream to @path ("-" =
 * standard output).  Prints a message and returns -1 on failure.
 */
int trace_write_binary(const struct trace *t, const char *path);

#endif /* VALOR_TOOL_TRACE_H */
