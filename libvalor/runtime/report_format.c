// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Printing reports: the human text (in the spirit of TSan's, so its
 * users can read it at once) and JSON lines, one object per conflict and
 * one for the exit summary.  Documentation/runtime-reports.md describes
 * both; change them together.
 *
 * Output goes through a buffer to rt_log_write (the log_path option): no
 * malloc, no stdio streams.  report.c's lock is held while a report is
 * printed, so the one static buffer is enough.
 */
#include "report.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ---- the buffered writer ---- */

void rt_out_flush(struct rt_out *o)
{
	if (o->len)
		rt_log_write(o->buf, o->len);
	o->len = 0;
}

static void out_write(struct rt_out *o, const char *s, size_t n)
{
	while (n) {
		size_t room = sizeof(o->buf) - o->len, k = n < room ? n : room;

		memcpy(o->buf + o->len, s, k);
		o->len += k;
		s += k;
		n -= k;
		if (o->len == sizeof(o->buf))
			rt_out_flush(o);
	}
}

void rt_out_puts(struct rt_out *o, const char *s)
{
	out_write(o, s, strlen(s));
}

void rt_out_printf(struct rt_out *o, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	out_write(o, tmp,
		  (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

void rt_out_json_string(struct rt_out *o, const char *s)
{
	if (!s) {
		rt_out_puts(o, "null");
		return;
	}
	out_write(o, "\"", 1);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };

			out_write(o, esc, 2);
		} else if (c < 0x20 || c == 0x7f) {
			rt_out_printf(o, "\\u%04x", c);
		} else {
			out_write(o, (const char *)&c, 1);
		}
	}
	out_write(o, "\"", 1);
}

static struct rt_out report_out;

/* ---- shared pieces ---- */

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

static bool is_fasttrack(const struct valor_conflict *c)
{
	return c->analysis == VALOR_ANALYSIS_FASTTRACK;
}

/* "write-read conflict", or "write-read data race" for FastTrack. */
static void put_title(struct rt_out *o, const struct valor_conflict *c)
{
	rt_out_printf(
		o, "%s %s",
		valor_conflict_kind_name((enum valor_conflict_kind)c->kind),
		is_fasttrack(c) ? "data race" : "conflict");
}

static const struct rt_report_thread *find_thread(const struct rt_report *r,
						  uint64_t tid)
{
	for (unsigned i = 0; i < r->nthreads; i++)
		if (r->thread[i].tid == tid)
			return &r->thread[i];
	return NULL;
}

/* ---- human text ---- */

static void put_thread_name(struct rt_out *o, const struct rt_report *r,
			    uint64_t tid, bool is_main)
{
	const struct rt_report_thread *t = find_thread(r, tid);

	/* Ids start at 1: 0 is a writer no write log names any more. */
	if (!tid) {
		rt_out_puts(o, "another thread");
		return;
	}
	if ((t && t->is_main) || is_main)
		rt_out_printf(o, "main thread T%" PRIu64, tid);
	else
		rt_out_printf(o, "thread T%" PRIu64, tid);
}

static void put_frame(struct rt_out *o, unsigned i, const struct rt_frame *f)
{
	rt_out_printf(o, "    #%u %s", i, f->function ? f->function : "??");
	/* The runtime's own source is no help to the reader. */
	if (f->runtime)
		;
	else if (f->file && f->line)
		rt_out_printf(o, " %s:%u", f->file, f->line);
	else if (f->file)
		rt_out_printf(o, " %s", f->file);
	if (f->module)
		rt_out_printf(o, " (%s+0x%" PRIxPTR ")", base_name(f->module),
			      f->pc - f->module_base);
	else
		rt_out_printf(o, " (0x%" PRIxPTR ")", f->pc);
	rt_out_puts(o, "\n");
}

static void put_stack(struct rt_out *o, const struct rt_stack_view *v)
{
	if (!v->n) {
		rt_out_puts(o, "    (unknown)\n");
		return;
	}
	for (unsigned i = 0; i < v->n; i++)
		put_frame(o, i, &v->frame[i]);
}

/* "Read", "Write", "Free" ... */
static void put_op(struct rt_out *o, const char *op, bool capital)
{
	char first = op[0];

	if (capital && first >= 'a' && first <= 'z')
		first = (char)(first - 'a' + 'A');
	rt_out_printf(o, "%c%s", first, op + 1);
}

static void human_access(struct rt_out *o, const struct rt_report *r,
			 const struct rt_report_access *a, const char *prefix,
			 const char *suffix)
{
	const struct valor_conflict *c = r->c;

	rt_out_puts(o, "  ");
	if (prefix) {
		rt_out_printf(o, "%s ", prefix);
		put_op(o, a->op, false);
	} else {
		put_op(o, a->op, true);
	}
	rt_out_printf(o, " of size %" PRIu32 " at 0x%" PRIx64 " by ", c->size,
		      c->addr);
	put_thread_name(o, r, a->tid, false);
	rt_out_printf(o, "%s:\n", suffix ? suffix : "");
	/*
	 * Another thread's write is known by its write-log entry, and its
	 * ring keeps a bounded number of them: a thread that went on
	 * writing while this one was busy (reporting, for one) overwrote it.
	 */
	if (!a->stack.n && a->site_only && a->is_write) {
		if (a->tid) {
			rt_out_puts(o,
				    "    (site not found: the write log of ");
			put_thread_name(o, r, a->tid, false);
			rt_out_puts(o, " no longer holds this write)\n");
		} else {
			rt_out_puts(o,
				    "    (site and thread not found: no write "
				    "log holds this write any more)\n");
		}
		return;
	}
	put_stack(o, &a->stack);
}

static void human_memory(struct rt_out *o, const struct rt_report *r)
{
	const struct rt_report_mem *m = &r->mem;
	uint64_t addr = r->c->addr;

	switch (m->type) {
	case RT_MEM_HEAP:
		rt_out_printf(
			o,
			"  Location is heap block of size %zu at 0x%" PRIxPTR
			" (0x%" PRIx64 " is %" PRIu64 " bytes inside)"
			", allocated by ",
			m->size, m->start, addr, addr - m->start);
		put_thread_name(o, r, m->tid, m->tid_is_main);
		rt_out_puts(o, " at:\n");
		put_stack(o, &m->alloc_stack);
		break;
	case RT_MEM_GLOBAL:
		if (m->name)
			rt_out_printf(
				o,
				"  Location is global '%s' of size %zu at 0x%" PRIxPTR,
				m->name, m->size, m->start);
		else
			rt_out_printf(o,
				      "  Location is global data at 0x%" PRIx64,
				      addr);
		if (m->module)
			rt_out_printf(
				o, " (%s+0x%" PRIxPTR ")", base_name(m->module),
				(m->name ? m->start : addr) - m->module_base);
		rt_out_puts(o, "\n");
		break;
	case RT_MEM_STACK:
	case RT_MEM_TLS:
		rt_out_printf(o, "  Location is %s of ",
			      m->type == RT_MEM_STACK ? "the stack" :
							"thread-local storage");
		put_thread_name(o, r, m->tid, m->tid_is_main);
		rt_out_puts(o, "\n");
		break;
	default:
		rt_out_puts(o, "  Location is not a live heap block, a global "
			       "or a thread's stack\n");
		break;
	}
}

static void human_thread(struct rt_out *o, const struct rt_report *r,
			 const struct rt_report_thread *t)
{
	rt_out_printf(o, "  Thread T%" PRIu64, t->tid);
	if (!t->known) {
		rt_out_puts(o, " (finished; where it was created is no "
			       "longer known)\n");
		return;
	}
	rt_out_printf(o, " (tid=%d, %s)", (int)t->os_tid,
		      t->finished ? "finished" : "running");
	if (t->is_main) {
		rt_out_puts(o, " is the main thread\n");
		return;
	}
	rt_out_puts(o, " created by ");
	put_thread_name(o, r, t->parent, t->parent_is_main);
	rt_out_puts(o, " at:\n");
	put_stack(o, &t->created_at);
}

/* "file.c:12 in fn" for the SUMMARY line. */
static void put_short_site(struct rt_out *o, const struct rt_frame *f)
{
	if (!f) {
		rt_out_puts(o, "(unknown site)");
		return;
	}
	if (f->file && f->line)
		rt_out_printf(o, "%s:%u", base_name(f->file), f->line);
	else if (f->module)
		rt_out_printf(o, "(%s+0x%" PRIxPTR ")", base_name(f->module),
			      f->pc - f->module_base);
	else
		rt_out_printf(o, "(0x%" PRIxPTR ")", f->pc);
	rt_out_printf(o, " in %s", f->function ? f->function : "??");
}

static void human_report(struct rt_out *o, const struct rt_report *r)
{
	const struct valor_conflict *c = r->c;
	const char *earlier_suffix = NULL;

	rt_out_puts(o, "==================\nWARNING: valor: ");
	put_title(o, c);
	rt_out_printf(o, " (pid=%d)\n", (int)getpid());

	if (c->lazy) {
		human_access(o, r, &r->current, NULL, NULL);
		if (r->validated_at_exit &&
		    !strcmp(r->validated_at_exit, "thread")) {
			rt_out_puts(o, "  Found when the reading thread "
				       "finished and its reads were "
				       "validated\n");
		} else if (r->validated_at_exit) {
			rt_out_puts(o, "  Found at program exit, when the "
				       "reading thread's reads were "
				       "validated\n");
		} else {
			rt_out_puts(o, "  Found when the reading thread "
				       "validated its reads, at:\n");
			put_stack(o, &r->validated_at);
		}
		rt_out_puts(o, "\n");
		human_access(o, r, &r->earlier, "Conflicting",
			     ", before the reading region ended");
	} else {
		if (!is_fasttrack(c))
			earlier_suffix = ", whose region was still going";
		human_access(o, r, &r->current, NULL, NULL);
		rt_out_puts(o, "\n");
		human_access(o, r, &r->earlier, "Previous", earlier_suffix);
	}
	rt_out_puts(o, "\n");
	human_memory(o, r);
	for (unsigned i = 0; i < r->nthreads; i++) {
		rt_out_puts(o, "\n");
		human_thread(o, r, &r->thread[i]);
	}
	rt_out_puts(o, "\nSUMMARY: valor: ");
	put_title(o, c);
	rt_out_puts(o, " ");
	put_short_site(o, r->first_top);
	rt_out_puts(o, " / ");
	put_short_site(o, r->second_top);
	rt_out_puts(o, "\n==================\n");
}

/* ---- JSON ---- */

static void json_hex(struct rt_out *o, const char *key, uint64_t v)
{
	rt_out_printf(o, "\"%s\":\"0x%" PRIx64 "\"", key, v);
}

static void json_stack(struct rt_out *o, const struct rt_stack_view *v)
{
	rt_out_puts(o, "[");
	for (unsigned i = 0; i < v->n; i++) {
		const struct rt_frame *f = &v->frame[i];

		rt_out_puts(o, i ? ",{" : "{");
		json_hex(o, "pc", f->pc);
		rt_out_puts(o, ",\"function\":");
		rt_out_json_string(o, f->function);
		rt_out_puts(o, ",\"file\":");
		rt_out_json_string(o, f->file);
		if (f->line)
			rt_out_printf(o, ",\"line\":%u", f->line);
		else
			rt_out_puts(o, ",\"line\":null");
		if (f->column)
			rt_out_printf(o, ",\"column\":%u", f->column);
		else
			rt_out_puts(o, ",\"column\":null");
		rt_out_puts(o, ",\"module\":");
		rt_out_json_string(o, f->module);
		if (f->module) {
			rt_out_puts(o, ",");
			json_hex(o, "offset", f->pc - f->module_base);
		} else {
			rt_out_puts(o, ",\"offset\":null");
		}
		rt_out_printf(o, ",\"inlined\":%s}",
			      f->inlined ? "true" : "false");
	}
	rt_out_puts(o, "]");
}

static void json_access(struct rt_out *o, const struct rt_report *r,
			const char *key, const struct rt_report_access *a,
			bool with_validation)
{
	rt_out_printf(o,
		      "\"%s\":{\"tid\":%" PRIu64 ",\"write\":%s,\"op\":\"%s\",",
		      key, a->tid, a->is_write ? "true" : "false", a->op);
	json_hex(o, "site", a->site);
	rt_out_printf(o, ",\"site_only\":%s,\"stack\":",
		      a->site_only ? "true" : "false");
	json_stack(o, &a->stack);
	if (with_validation && r->c->lazy) {
		rt_out_puts(o, ",\"validated_at\":");
		json_stack(o, &r->validated_at);
		rt_out_puts(o, ",\"validated_at_exit\":");
		rt_out_json_string(o, r->validated_at_exit);
	} else if (with_validation) {
		rt_out_puts(o, ",\"validated_at\":null,"
			       "\"validated_at_exit\":null");
	}
	rt_out_puts(o, "}");
}

static void json_memory(struct rt_out *o, const struct rt_report *r)
{
	const struct rt_report_mem *m = &r->mem;
	static const char *const types[] = {
		[RT_MEM_UNKNOWN] = "unknown", [RT_MEM_HEAP] = "heap",
		[RT_MEM_GLOBAL] = "global",   [RT_MEM_STACK] = "stack",
		[RT_MEM_TLS] = "tls",
	};

	rt_out_printf(o, "\"memory\":{\"type\":\"%s\"", types[m->type]);
	switch (m->type) {
	case RT_MEM_HEAP:
		rt_out_puts(o, ",");
		json_hex(o, "start", m->start);
		rt_out_printf(o,
			      ",\"size\":%zu,\"offset\":%" PRIu64
			      ",\"tid\":%" PRIu64 ",\"stack\":",
			      m->size, r->c->addr - m->start, m->tid);
		json_stack(o, &m->alloc_stack);
		break;
	case RT_MEM_GLOBAL:
		rt_out_puts(o, ",\"name\":");
		rt_out_json_string(o, m->name);
		if (m->name) {
			rt_out_puts(o, ",");
			json_hex(o, "start", m->start);
			rt_out_printf(o, ",\"size\":%zu", m->size);
		} else {
			rt_out_puts(o, ",\"start\":null,\"size\":null");
		}
		rt_out_puts(o, ",\"module\":");
		rt_out_json_string(o, m->module);
		break;
	case RT_MEM_STACK:
	case RT_MEM_TLS:
		rt_out_printf(o, ",\"tid\":%" PRIu64, m->tid);
		break;
	default:
		break;
	}
	rt_out_puts(o, "}");
}

static void json_thread(struct rt_out *o, const struct rt_report_thread *t)
{
	rt_out_printf(o, "{\"tid\":%" PRIu64 ",\"known\":%s", t->tid,
		      t->known ? "true" : "false");
	if (!t->known) {
		rt_out_puts(o, ",\"main\":null,\"os_tid\":null,"
			       "\"finished\":true,\"created_by\":null,"
			       "\"created_at\":null}");
		return;
	}
	rt_out_printf(o, ",\"main\":%s,\"os_tid\":%d,\"finished\":%s",
		      t->is_main ? "true" : "false", (int)t->os_tid,
		      t->finished ? "true" : "false");
	if (t->is_main) {
		rt_out_puts(o, ",\"created_by\":null,\"created_at\":null}");
		return;
	}
	rt_out_printf(o,
		      ",\"created_by\":%" PRIu64 ",\"created_at\":", t->parent);
	json_stack(o, &t->created_at);
	rt_out_puts(o, "}");
}

static void json_report(struct rt_out *o, const struct rt_report *r)
{
	const struct valor_conflict *c = r->c;

	rt_out_printf(
		o,
		"{\"type\":\"conflict\",\"kind\":\"%s\","
		"\"analysis\":\"%s\",\"lazy\":%s,\"pid\":%d,",
		valor_conflict_kind_name((enum valor_conflict_kind)c->kind),
		valor_analysis_name((enum valor_analysis)c->analysis),
		c->lazy ? "true" : "false", (int)getpid());
	json_hex(o, "addr", c->addr);
	rt_out_printf(o, ",\"size\":%" PRIu32 ",\"detected_by\":%" PRIu64 ",",
		      c->size, c->detected_by);
	json_memory(o, r);
	rt_out_puts(o, ",");
	json_access(o, r, "current", &r->current, true);
	rt_out_puts(o, ",");
	json_access(o, r, "earlier", &r->earlier, false);
	rt_out_puts(o, ",\"threads\":[");
	for (unsigned i = 0; i < r->nthreads; i++) {
		if (i)
			rt_out_puts(o, ",");
		json_thread(o, &r->thread[i]);
	}
	rt_out_puts(o, "]}\n");
}

void rt_format_report(const struct rt_report *r)
{
	if (rt.opt.json)
		json_report(&report_out, r);
	else
		human_report(&report_out, r);
	rt_out_flush(&report_out);
}

/* ---- the exit summary ---- */

struct supp_print {
	struct rt_out *o;
	unsigned n;
};

static void human_supp(void *arg, const char *type, const char *pattern,
		       uint64_t hits)
{
	struct supp_print *p = arg;

	if (!p->n++)
		rt_out_printf(p->o, "valor: matched suppressions (pid=%d):\n",
			      (int)getpid());
	rt_out_printf(p->o, "  %6" PRIu64 " %s:%s\n", hits, type, pattern);
}

static void json_supp(void *arg, const char *type, const char *pattern,
		      uint64_t hits)
{
	struct supp_print *p = arg;

	rt_out_printf(p->o,
		      "%s{\"type\":\"%s\",\"pattern\":", p->n++ ? "," : "",
		      type);
	rt_out_json_string(p->o, pattern);
	rt_out_printf(p->o, ",\"hits\":%" PRIu64 "}", hits);
}

/* What the analysis did, for tuning (verbosity=2). */
static void print_engine_stats(struct rt_out *o)
{
	struct valor_stats s;

	valor_ctx_stats(rt.ctx, &s);
	rt_out_printf(o,
		      "valor: stats: threads %" PRIu64 ", regions %" PRIu64
		      ", version bumps %" PRIu64 ", reads logged %" PRIu64
		      ", validations %" PRIu64 ", read-log overflows %" PRIu64
		      ", write-log overflows %" PRIu64
		      ", cells refined %" PRIu64 ", cells wide %" PRIu64
		      ", accesses alone %" PRIu64 ", shadow %" PRIu64 " KiB\n",
		      s.threads_created, s.regions, s.version_bumps,
		      s.reads_logged, s.validations, s.read_log_overflows,
		      s.write_log_overflows, s.cells_refined, s.cells_wide,
		      s.accesses_alone, s.shadow_bytes >> 10);
}

void rt_format_summary(uint64_t conflicts, uint64_t suppressed,
		       uint64_t repeated, bool halted)
{
	/* Not report_out: at exit the report lock may not be ours. */
	static struct rt_out out;
	struct rt_out *o = halted ? &report_out : &out;
	struct supp_print p = { .o = o };

	if (rt.opt.json) {
		rt_out_printf(o,
			      "{\"type\":\"summary\",\"pid\":%d,"
			      "\"analysis\":\"%s\",\"conflicts\":%" PRIu64
			      ",\"suppressed\":%" PRIu64
			      ",\"repeated\":%" PRIu64
			      ",\"halted\":%s,\"suppressions\":[",
			      (int)getpid(),
			      valor_analysis_name(
				      (enum valor_analysis)rt.opt.analysis),
			      conflicts, suppressed, repeated,
			      halted ? "true" : "false");
		rt_suppress_for_each_matched(json_supp, &p);
		rt_out_puts(o, "]}\n");
		rt_out_flush(o);
		return;
	}
	if (halted)
		rt_out_puts(o, "valor: halting at the first conflict "
			       "(halt_on_conflict=1)\n");
	else
		rt_out_printf(o,
			      "valor: %" PRIu64 " conflict%s reported (%" PRIu64
			      " suppressed)\n",
			      conflicts, conflicts == 1 ? "" : "s", suppressed);
	if (repeated && rt.opt.verbosity)
		rt_out_printf(o,
			      "valor: %" PRIu64 " repeated conflict%s of the "
			      "same site pairs not shown\n",
			      repeated, repeated == 1 ? "" : "s");
	if (rt.opt.print_suppressions)
		rt_suppress_for_each_matched(human_supp, &p);
	if (rt.opt.verbosity >= 2 && rt.ctx)
		print_engine_stats(o);
	rt_out_flush(o);
}
