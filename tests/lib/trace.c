// SPDX-License-Identifier: GPL-2.0
/* Replays hand-written traces into the engine and collects conflicts. */
#include "trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <valor/replay.h>

struct run_state {
	struct trace_result *out;
	size_t current;
};

static void collect(void *arg, const struct valor_conflict *c)
{
	struct run_state *st = arg;
	struct trace_result *r = st->out;

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 16;
		struct trace_conflict *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			abort();
		r->v = v;
		r->cap = cap;
	}
	memset(&r->v[r->n], 0, sizeof(r->v[r->n]));
	r->v[r->n].c = *c;
	r->v[r->n].reported_at = st->current;
	r->n++;
}

static size_t site_to_event(uint64_t site, size_t n)
{
	if (site == 0 || site > n)
		return TRACE_NO_EVENT;
	return (size_t)(site - 1);
}

int trace_run(const struct valor_params *params, const struct valor_event *ev,
	      size_t n, struct trace_result *out)
{
	struct valor_params p = params ? *params : (struct valor_params){ 0 };
	struct run_state st = { .out = out, .current = 0 };
	struct valor_replay *rp;
	struct valor_ctx *ctx;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	p.on_conflict = collect;
	p.arg = &st;
	ctx = valor_ctx_new(&p);
	if (!ctx) {
		out->err = -errno;
		return -1;
	}
	rp = valor_replay_new(ctx);
	if (!rp) {
		out->err = -errno;
		valor_ctx_free(ctx);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct valor_event e = ev[i];
		int r;

		if (!e.ip)
			e.ip = i + 1;
		st.current = i;
		r = valor_replay_event(rp, &e);
		if (r < 0 && !out->err) {
			out->err = r;
			out->err_event = i;
			ret = -1;
		}
	}
	st.current = TRACE_AT_FINISH;
	valor_replay_finish(rp);

	for (size_t i = 0; i < out->n; i++) {
		struct trace_conflict *tc = &out->v[i];

		tc->first_tid = valor_replay_source_tid(rp, tc->c.first.tid);
		tc->second_tid = valor_replay_source_tid(rp, tc->c.second.tid);
		tc->first_event = site_to_event(tc->c.first.site, n);
		tc->second_event = site_to_event(tc->c.second.site, n);
	}
	valor_ctx_stats(ctx, &out->stats);
	valor_replay_free(rp);
	valor_ctx_free(ctx);
	return ret;
}

void trace_result_free(struct trace_result *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

size_t trace_count(const struct trace_result *r, int kind)
{
	size_t k = 0;

	for (size_t i = 0; i < r->n; i++)
		if (kind < 0 || r->v[i].c.kind == (uint32_t)kind)
			k++;
	return k;
}

size_t trace_count_at(const struct trace_result *r, int kind, uint64_t addr,
		      uint32_t a, uint32_t b)
{
	size_t k = 0;

	for (size_t i = 0; i < r->n; i++) {
		const struct trace_conflict *tc = &r->v[i];

		if (kind >= 0 && tc->c.kind != (uint32_t)kind)
			continue;
		if (addr < tc->c.addr || addr >= tc->c.addr + tc->c.size)
			continue;
		if ((tc->first_tid == a && tc->second_tid == b) ||
		    (tc->first_tid == b && tc->second_tid == a))
			k++;
	}
	return k;
}

void trace_dump(const struct trace_result *r, const char *title)
{
	printf("# %s: %zu conflict(s)%s\n", title, r->n,
	       r->err ? " (an event was rejected)" : "");
	for (size_t i = 0; i < r->n; i++) {
		const struct trace_conflict *tc = &r->v[i];

		printf("#   %s %s at 0x%llx+%u: T%u ev%zd -> T%u ev%zd%s\n",
		       valor_analysis_name(tc->c.analysis),
		       valor_conflict_kind_name(tc->c.kind),
		       (unsigned long long)tc->c.addr, tc->c.size,
		       tc->first_tid, (ssize_t)tc->first_event, tc->second_tid,
		       (ssize_t)tc->second_event, tc->c.lazy ? " (lazy)" : "");
	}
}
