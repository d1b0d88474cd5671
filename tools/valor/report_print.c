// SPDX-License-Identifier: GPL-2.0
/* Human and JSON-lines output of conflicts and replay summaries. */
#include "report_print.h"

#include <inttypes.h>

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* The 1-based line of a text trace's event, or 0 (binary, end of trace). */
static uint32_t event_line(const struct trace *t, size_t event)
{
	if (t->format != TRACE_TEXT || event == REPLAY_AT_END || event >= t->n)
		return 0;
	return t->line[event];
}

static const char *access_word(const struct trace *t,
			       const struct valor_access_info *a)
{
	long ev = trace_site_event(t, a->site);

	/* The engine checks frees as writes; the trace knows better. */
	if (ev >= 0 && (t->ev[ev].kind == VALOR_EV_FREE ||
			t->ev[ev].kind == VALOR_EV_MUNMAP))
		return t->ev[ev].kind == VALOR_EV_FREE ? "free" : "munmap";
	return a->is_write ? "write" : "read";
}

static void human_side(const struct report_printer *rp, const char *label,
		       uint32_t tid, const struct valor_access_info *a)
{
	FILE *out = rp->out;
	long ev = trace_site_event(rp->trace, a->site);

	fprintf(out, "    %-8s T%" PRIu32 " %s", label, tid,
		access_word(rp->trace, a));
	if (ev >= 0)
		fprintf(out, " at line %" PRIu64, a->site);
	else if (a->site)
		fprintf(out, " at ip 0x%" PRIx64, a->site);
	else
		fputs(" at an unknown site", out);
	if (rp->analysis == VALOR_ANALYSIS_FASTTRACK)
		fprintf(out, ", clock %" PRIu64 "\n", a->region);
	else
		fprintf(out, ", region %" PRIu64 "\n", a->region);
}

static void human_conflict(const struct report_printer *rp,
			   const struct replay_conflict *rc)
{
	const struct trace *t = rp->trace;
	const struct valor_conflict *c = &rc->c;
	FILE *out = rp->out;
	char sym[160];

	if (rc->event == REPLAY_AT_END)
		fprintf(out, "%s: end of trace: ", t->display);
	else if (t->format == TRACE_TEXT)
		fprintf(out, "%s:%" PRIu32 ": ", t->display,
			event_line(t, rc->event));
	else
		fprintf(out, "%s: event %zu: ", t->display, rc->event + 1);

	fprintf(out, "%s: %s %s on %" PRIu32 " byte%s at ",
		valor_analysis_name(rp->analysis),
		valor_conflict_kind_name(c->kind),
		rp->analysis == VALOR_ANALYSIS_FASTTRACK ? "race" : "conflict",
		c->size, c->size == 1 ? "" : "s");
	if (trace_symbolize(t, c->addr, sym, sizeof(sym)))
		fprintf(out, "%s (0x%" PRIx64 ")", sym, c->addr);
	else
		fprintf(out, "0x%" PRIx64, c->addr);
	if (c->lazy)
		fprintf(out,
			", found lazily by T%" PRIu32 "'s read validation\n",
			rc->detector_tid);
	else
		fprintf(out, ", found eagerly by T%" PRIu32 "\n",
			rc->detector_tid);
	human_side(rp, "earlier:", rc->first_tid, &c->first);
	human_side(rp, "later:", rc->second_tid, &c->second);
}

static void json_side(const struct report_printer *rp, const char *key,
		      uint32_t tid, const struct valor_access_info *a)
{
	FILE *out = rp->out;
	long ev = trace_site_event(rp->trace, a->site);

	fprintf(out,
		"\"%s\":{\"tid\":%" PRIu32 ",\"access\":\"%s\","
		"\"site\":\"0x%" PRIx64 "\",",
		key, tid, a->is_write ? "write" : "read", a->site);
	if (ev >= 0)
		fprintf(out, "\"line\":%" PRIu64 ",", a->site);
	else
		fputs("\"line\":null,", out);
	fprintf(out, "\"region\":%" PRIu64 "}", a->region);
}

static void json_conflict(const struct report_printer *rp,
			  const struct replay_conflict *rc)
{
	const struct trace *t = rp->trace;
	const struct valor_conflict *c = &rc->c;
	uint32_t line = event_line(t, rc->event);
	FILE *out = rp->out;
	char sym[160];

	fputs("{\"type\":\"conflict\",\"file\":", out);
	json_string(out, t->display);
	fprintf(out,
		",\"analysis\":\"%s\",\"kind\":\"%s\","
		"\"addr\":\"0x%" PRIx64 "\",\"size\":%" PRIu32 ",\"symbol\":",
		valor_analysis_name(rp->analysis),
		valor_conflict_kind_name(c->kind), c->addr, c->size);
	if (trace_symbolize(t, c->addr, sym, sizeof(sym)))
		json_string(out, sym);
	else
		fputs("null", out);
	fprintf(out, ",\"lazy\":%s,", c->lazy ? "true" : "false");
	if (rc->event == REPLAY_AT_END)
		fputs("\"event\":null,", out);
	else
		fprintf(out, "\"event\":%zu,", rc->event + 1);
	if (line)
		fprintf(out, "\"line\":%" PRIu32 ",", line);
	else
		fputs("\"line\":null,", out);
	fprintf(out, "\"detected_by\":%" PRIu32 ",", rc->detector_tid);
	json_side(rp, "first", rc->first_tid, &c->first);
	fputc(',', out);
	json_side(rp, "second", rc->second_tid, &c->second);
	fputs("}\n", out);
}

void report_conflict(const struct report_printer *rp,
		     const struct replay_conflict *rc)
{
	if (rp->json)
		json_conflict(rp, rc);
	else
		human_conflict(rp, rc);
}

void report_summary(const struct report_printer *rp, size_t conflicts)
{
	const struct trace *t = rp->trace;
	FILE *out = rp->out;

	if (rp->json) {
		fputs("{\"type\":\"summary\",\"file\":", out);
		json_string(out, t->display);
		fprintf(out,
			",\"analysis\":\"%s\",\"region_mode\":\"%s\","
			"\"conflicts\":%zu,\"events\":%zu}\n",
			valor_analysis_name(rp->analysis),
			rp->regions == VALOR_REGIONS_SFR ? "sfr" : "rfr",
			conflicts, t->n);
		return;
	}
	if (rp->name_files)
		fprintf(out, "%s: ", t->display);
	fprintf(out, "%s: %zu %s%s in %zu event%s\n",
		valor_analysis_name(rp->analysis), conflicts,
		rp->analysis == VALOR_ANALYSIS_FASTTRACK ? "race" : "conflict",
		conflicts == 1 ? "" : "s", t->n, t->n == 1 ? "" : "s");
}
