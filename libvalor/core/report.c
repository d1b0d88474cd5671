// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Queueing conflicts on the detecting thread and delivering them once the
 * engine call is done.  Adjacent reports of the same access pair are
 * merged, so a memset over a region another thread owns is one report,
 * not one per cell.
 */
#include "internal.h"

#include <stdlib.h>

static bool same_pair(const struct valor_conflict *a,
		      const struct valor_conflict *b)
{
	return a->kind == b->kind && a->lazy == b->lazy &&
	       a->first.tid == b->first.tid && a->first.site == b->first.site &&
	       a->second.tid == b->second.tid &&
	       a->second.site == b->second.site &&
	       a->first.region == b->first.region;
}

void conflict_push(struct valor_thread *th, struct conflict_queue *q,
		   const struct valor_conflict *c)
{
	/*
	 * A few entries back: per-byte analyses interleave the kinds of
	 * one access's conflicts (WW, RW, WW, RW, ...).
	 */
	for (uint32_t i = q->n, k = 0; i-- > 0 && k < 4; k++) {
		struct valor_conflict *prev = &q->v[i];

		if (same_pair(prev, c) && prev->addr + prev->size == c->addr) {
			prev->size += c->size;
			return;
		}
	}
	if (q->n == q->cap) {
		uint32_t cap = q->cap ? 2 * q->cap : 8;
		struct valor_conflict *v = eng_realloc(q->v, cap * sizeof(*v));

		/*
		 * Out of memory while reporting: the conflict is still
		 * counted, only its details are lost.
		 */
		if (!v) {
			th->st.conflicts++;
			return;
		}
		q->v = v;
		q->cap = cap;
	}
	q->v[q->n] = *c;
	q->v[q->n].analysis = th->ctx->p.analysis;
	q->v[q->n].detected_by = th->tid;
	q->n++;
}

static int deliver_queue(struct valor_thread *th, struct conflict_queue *q)
{
	const struct valor_params *p = &th->ctx->p;
	int n = (int)q->n;

	/* The callback may not return (a conflict exception): empty first. */
	q->n = 0;
	th->st.conflicts += n;
	for (int i = 0; i < n; i++)
		if (p->on_conflict)
			p->on_conflict(p->arg, &q->v[i]);
	return n;
}

int conflict_deliver_queued(struct valor_thread *th)
{
	int n;

	/* Valor's ordering rule: pending read-write conflicts come first. */
	n = deliver_queue(th, &th->lazy);
	return n + deliver_queue(th, &th->eager);
}

void conflict_queue_free(struct conflict_queue *q)
{
	eng_free(q->v);
	q->v = NULL;
	q->n = q->cap = 0;
}
