// SPDX-License-Identifier: GPL-2.0
/* The in-memory trace: events, their lines, and the names of addresses. */
#include "trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How far past a symbol an address is still named after it. */
#define SYMBOL_REACH 4096

int trace_append(struct trace *t, const struct valor_event *ev, uint32_t line,
		 bool site_is_line)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct valor_event *ev2;

		ev2 = realloc(t->ev, cap * sizeof(*ev2));
		if (!ev2)
			return -1;
		t->ev = ev2;
		if (t->format == TRACE_TEXT) {
			uint32_t *l2 = realloc(t->line, cap * sizeof(*l2));

			if (!l2)
				return -1;
			t->line = l2;
			bool *s2 = realloc(t->site_is_line, cap * sizeof(*s2));

			if (!s2)
				return -1;
			t->site_is_line = s2;
		}
		t->cap = cap;
	}
	t->ev[t->n] = *ev;
	if (t->format == TRACE_TEXT) {
		t->line[t->n] = line;
		t->site_is_line[t->n] = site_is_line;
	}
	t->n++;
	return 0;
}

int trace_add_symbol(struct trace *t, uint64_t addr, char *name)
{
	struct trace_symbol *s = realloc(t->sym, (t->nsym + 1) * sizeof(*s));

	if (!s)
		return -1;
	t->sym = s;
	t->sym[t->nsym].addr = addr;
	t->sym[t->nsym].name = name;
	t->nsym++;
	return 0;
}

static int symbol_cmp(const void *a, const void *b)
{
	const struct trace_symbol *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Aliases: the shorter (usually the base) name wins the lookup. */
	return strcmp(x->name, y->name);
}

void trace_sort_symbols(struct trace *t)
{
	if (t->nsym)
		qsort(t->sym, t->nsym, sizeof(*t->sym), symbol_cmp);
}

bool trace_symbolize(const struct trace *t, uint64_t addr, char *buf,
		     size_t len)
{
	size_t lo = 0, hi = t->nsym;
	const struct trace_symbol *s;

	if (len)
		buf[0] = '\0';
	/* Find the first symbol above @addr; the one before it is ours. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->sym[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	s = &t->sym[lo - 1];
	/* Among aliases at the same address, take the first in sort order. */
	while (s > t->sym && s[-1].addr == s->addr)
		s--;
	if (addr - s->addr >= SYMBOL_REACH)
		return false;
	if (addr == s->addr)
		snprintf(buf, len, "%s", s->name);
	else
		snprintf(buf, len, "%s+%llu", s->name,
			 (unsigned long long)(addr - s->addr));
	return true;
}

long trace_site_event(const struct trace *t, uint64_t site)
{
	size_t lo = 0, hi = t->n;

	if (t->format != TRACE_TEXT || site == 0 || site > UINT32_MAX)
		return -1;
	/* Lines grow with the event index: binary search. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->line[mid] < site)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->n && t->line[lo] == site && t->site_is_line[lo])
		return (long)lo;
	return -1;
}

void trace_free(struct trace *t)
{
	for (size_t i = 0; i < t->nsym; i++)
		free(t->sym[i].name);
	free(t->sym);
	free(t->ev);
	free(t->line);
	free(t->site_is_line);
	memset(t, 0, sizeof(*t));
}

bool trace_access_wraps(const struct valor_event *ev)
{
	uint64_t last = 0;

	/* Both at most 2^32 - 1: the product fits 64 bits. */
	if (ev->flags & VALOR_EVF_STRIDED)
		last = (uint64_t)VALOR_ACCESS_STRIDE(ev->arg) *
		       (VALOR_ACCESS_COUNT(ev->arg) - 1);
	return ev->addr + last < ev->addr ||
	       ev->addr + last + (ev->size - 1) < ev->addr + last;
}
