// SPDX-License-Identifier: GPL-2.0
/* The golden tests' verdict checker; see golden.h. */
#include "golden.h"

#include <stdio.h>
#include <sys/types.h>

static bool matches(const struct trace_conflict *tc,
		    const struct golden_want *w)
{
	return tc->c.kind == w->kind && tc->c.addr == w->addr &&
	       tc->c.size == w->size && tc->first_tid == w->first_tid &&
	       tc->first_event == w->first_event &&
	       tc->second_tid == w->second_tid &&
	       tc->second_event == w->second_event && tc->c.lazy == w->lazy &&
	       tc->reported_at == w->at;
}

static void print_wants(const struct golden_want *w, size_t n)
{
	printf("# expected %zu conflict(s)\n", n);
	for (size_t i = 0; i < n; i++)
		printf("#   %s at 0x%llx+%u: T%u ev%zd -> T%u ev%zd%s, at ev%zd\n",
		       valor_conflict_kind_name(w[i].kind),
		       (unsigned long long)w[i].addr, w[i].size, w[i].first_tid,
		       (ssize_t)w[i].first_event, w[i].second_tid,
		       (ssize_t)w[i].second_event, w[i].lazy ? " (lazy)" : "",
		       (ssize_t)w[i].at);
}

/* Like trace_dump(), with the reporting event, to compare with wants. */
static void print_result(const struct trace_result *r, const char *title)
{
	printf("# %s: %zu conflict(s)\n", title, r->n);
	for (size_t i = 0; i < r->n; i++) {
		const struct trace_conflict *tc = &r->v[i];

		printf("#   %s at 0x%llx+%u: T%u ev%zd -> T%u ev%zd%s, at ev%zd\n",
		       valor_conflict_kind_name(tc->c.kind),
		       (unsigned long long)tc->c.addr, tc->c.size,
		       tc->first_tid, (ssize_t)tc->first_event, tc->second_tid,
		       (ssize_t)tc->second_event, tc->c.lazy ? " (lazy)" : "",
		       (ssize_t)tc->reported_at);
	}
}

/*
 * Consistency every conflict record must have whatever the trace: the
 * analysis that was asked for, is_write flags that fit the kind, and the
 * detecting thread (the reader for a lazy read-write conflict, the thread
 * making the later access otherwise).
 */
static bool record_consistent(const struct trace_conflict *tc, uint32_t a)
{
	const struct valor_conflict *c = &tc->c;
	bool first_w = c->kind != VALOR_CONFLICT_RW;
	bool second_w = c->kind != VALOR_CONFLICT_WR;
	uint64_t detector = c->lazy ? c->first.tid : c->second.tid;

	return c->analysis == a && c->first.is_write == first_w &&
	       c->second.is_write == second_w && c->detected_by == detector &&
	       c->size > 0 && (!c->lazy || a == VALOR_ANALYSIS_VALOR);
}

bool golden_verdict_holds(const char *what, const struct valor_event *ev,
			  size_t n, const struct valor_params *p,
			  const struct golden_want *want, size_t nwant)
{
	struct trace_result r;
	bool used[GOLDEN_MAX_WANTS] = { false };
	bool ok;
	char title[160];

	snprintf(title, sizeof(title), "%s, %s, %s", what,
		 valor_analysis_name(p->analysis),
		 p->regions == VALOR_REGIONS_SFR ? "SFR" : "RFR");
	if (trace_run(p, ev, n, &r)) {
		printf("# %s: event %zu rejected: %d\n", title, r.err_event,
		       r.err);
		ok = false;
	} else if (nwant > GOLDEN_MAX_WANTS) {
		printf("# %s: more than %d conflicts expected\n", title,
		       GOLDEN_MAX_WANTS);
		ok = false;
	} else {
		ok = r.n == nwant;
	}

	/* Each wanted conflict takes a reported one of its own. */
	for (size_t i = 0; ok && i < nwant; i++) {
		size_t j;

		for (j = 0; j < r.n; j++)
			if (!used[j] && matches(&r.v[j], &want[i]))
				break;
		if (j == r.n)
			ok = false;
		else
			used[j] = true;
	}
	for (size_t j = 0; j < r.n; j++)
		if (!record_consistent(&r.v[j], p->analysis)) {
			printf("# conflict %zu: inconsistent record\n", j);
			ok = false;
		}
	if (!ok) {
		print_result(&r, title);
		print_wants(want, nwant);
		/* A failed ASSERT aborts: flush what explains it first. */
		fflush(stdout);
	}
	trace_result_free(&r);
	return ok;
}

struct valor_ctx *golden_valor_ctx_two_threads(struct valor_thread **t1,
					       struct valor_thread **t2)
{
	struct valor_params p = { .analysis = VALOR_ANALYSIS_VALOR };
	struct valor_ctx *ctx = valor_ctx_new(&p);

	if (!ctx)
		return NULL;
	*t1 = valor_thread_create(ctx, NULL);
	*t2 = valor_thread_create(ctx, NULL);
	if (!*t1 || !*t2) {
		valor_ctx_free(ctx);
		return NULL;
	}
	return ctx;
}
