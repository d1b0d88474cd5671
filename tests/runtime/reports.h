/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The conflicts a run reported, read from its JSON-lines log
 * (`valor run --json --log=FILE`, Documentation/runtime-usage.md): for
 * each conflict the analysis, the kind and, for the earlier and the later
 * access, the innermost frame's file (basename) and line and the thread;
 * and the exit summary's count.
 *
 * A report names the "current" access (the thread that found the
 * conflict) and the "earlier" one.  For a conflict found lazily -- Valor
 * validating a region's reads at its end -- the current access is the
 * validated read, which came first, and the earlier one the write that
 * overwrote it: the tests compare accesses in program order (first,
 * second), as the corpus's expectations state them.
 *
 * Included by the runtime test programs only (static inline throughout).
 */
#ifndef VALOR_TESTS_REPORTS_H
#define VALOR_TESTS_REPORTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json_lines.h"

static const char *const kind_names[] = { "write-write", "write-read",
					  "read-write" };
#define NR_KINDS 3

static inline int index_of(const char *const *names, int n, const char *s,
			   size_t len)
{
	for (int i = 0; i < n; i++)
		if (strlen(names[i]) == len && !strncmp(names[i], s, len))
			return i;
	return -1;
}

struct access_seen {
	char file[256]; /* basename of the innermost frame's file */
	int line;
	char caller[64]; /* the next frame's function; "" if none */
	uint64_t tid;
};

struct conflict_seen {
	int kind;
	char analysis[16];
	char memory[16]; /* heap, global, stack, tls or unknown */
	long mem_size; /* the memory's size as reported; -1 if none */
	long mem_offset; /* the access's offset in it; -1 if none */
	struct access_seen first, second; /* earlier, later */
};

#define MAX_SEEN 64

struct run_reports {
	int n; /* conflicts kept (at most MAX_SEEN) */
	int total; /* conflict lines in the log */
	long summary_conflicts; /* the summary's count; -1 if no summary */
	struct conflict_seen c[MAX_SEEN];
	char error[512]; /* a malformed log */
};

static inline void access_from_json(const struct json *a,
				    struct access_seen *out)
{
	const struct json *frame = json_at(json_get(a, "stack"), 0);
	const char *file = json_str(json_get(frame, "file"));
	const char *base = file ? strrchr(file, '/') : NULL;

	memset(out, 0, sizeof(*out));
	snprintf(out->file, sizeof(out->file), "%s",
		 base ? base + 1 :
		 file ? file :
			"?");
	out->line = (int)json_num(json_get(frame, "line"), 0);
	frame = json_at(json_get(a, "stack"), 1);
	snprintf(out->caller, sizeof(out->caller), "%s",
		 json_str(json_get(frame, "function")) ?: "");
	out->tid = (uint64_t)json_num(json_get(a, "tid"), 0);
}

/* Read the JSON lines of @log into @r. */
static inline void parse_reports(const char *log, struct run_reports *r)
{
	const char *p = log;

	memset(r, 0, sizeof(*r));
	r->summary_conflicts = -1;
	while (*p) {
		size_t len = strcspn(p, "\n");
		struct json *o;
		const char *type, *kind, *analysis;

		if (!len) {
			p++;
			continue;
		}
		o = json_parse(p, len);
		if (!o || o->type != JSON_OBJECT) {
			snprintf(r->error, sizeof(r->error),
				 "not a JSON object in the log: %.*s",
				 (int)(len > 300 ? 300 : len), p);
			json_free(o);
			return;
		}
		type = json_str(json_get(o, "type"));
		if (type && !strcmp(type, "summary"))
			r->summary_conflicts =
				(long)json_num(json_get(o, "conflicts"), -2);
		if (type && !strcmp(type, "conflict")) {
			struct conflict_seen *c = &r->c[r->n];
			const struct json *lazy = json_get(o, "lazy");
			bool current_first = lazy && lazy->type == JSON_BOOL &&
					     lazy->boolean;

			kind = json_str(json_get(o, "kind"));
			analysis = json_str(json_get(o, "analysis"));
			c->kind = kind ? index_of(kind_names, NR_KINDS, kind,
						  strlen(kind)) :
					 -1;
			snprintf(c->analysis, sizeof(c->analysis), "%s",
				 analysis ? analysis : "?");
			snprintf(
				c->memory, sizeof(c->memory), "%s",
				json_str(json_get(json_get(o, "memory"), "type")) ?:
					"?");
			c->mem_size = (long)json_num(
				json_get(json_get(o, "memory"), "size"), -1);
			c->mem_offset = (long)json_num(
				json_get(json_get(o, "memory"), "offset"), -1);
			access_from_json(json_get(o, current_first ? "current" :
								     "earlier"),
					 &c->first);
			access_from_json(json_get(o, current_first ? "earlier" :
								     "current"),
					 &c->second);
			r->total++;
			if (r->n < MAX_SEEN)
				r->n++;
		}
		json_free(o);
		p += len;
	}
}

static inline void describe_conflict(const struct conflict_seen *c, char *buf,
				     size_t size)
{
	snprintf(buf, size,
		 "%s %s on %s memory: %s:%d (T%llu) -> %s:%d (T%llu)",
		 c->analysis, c->kind >= 0 ? kind_names[c->kind] : "?",
		 c->memory, c->first.file, c->first.line,
		 (unsigned long long)c->first.tid, c->second.file,
		 c->second.line, (unsigned long long)c->second.tid);
}

#endif /* VALOR_TESTS_REPORTS_H */
