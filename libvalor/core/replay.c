// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Replaying struct valor_event streams into a context (see replay.h).
 * Every event is checked completely before anything changes, so that a
 * malformed event from a hostile or broken producer is refused whole.
 */
#include <valor/replay.h>

#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct rp_thread {
	uint32_t src;
	bool used;
	bool exited;
	struct valor_thread *th; /* NULL once joined */
};

struct valor_replay {
	struct valor_ctx *ctx;
	struct rp_thread *tab; /* open addressing on src tid */
	uint32_t cap, count;
	uint32_t *src_of; /* logical tid -> src tid */
	uint64_t nsrc_of;
};

static uint32_t hash_tid(uint32_t t)
{
	return t * 2654435761U;
}

struct valor_replay *valor_replay_new(struct valor_ctx *ctx)
{
	struct valor_replay *r = eng_calloc(1, sizeof(*r));

	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	r->ctx = ctx;
	r->cap = 64;
	r->tab = eng_calloc(r->cap, sizeof(*r->tab));
	if (!r->tab) {
		eng_free(r);
		errno = ENOMEM;
		return NULL;
	}
	return r;
}

void valor_replay_free(struct valor_replay *r)
{
	if (!r)
		return;
	for (uint32_t i = 0; i < r->cap; i++)
		if (r->tab[i].used && r->tab[i].th)
			valor_thread_forget(r->tab[i].th);
	eng_free(r->tab);
	eng_free(r->src_of);
	eng_free(r);
}

static struct rp_thread *find(struct valor_replay *r, uint32_t src)
{
	for (uint32_t i = hash_tid(src) & (r->cap - 1);;
	     i = (i + 1) & (r->cap - 1)) {
		if (!r->tab[i].used)
			return NULL;
		if (r->tab[i].src == src)
			return &r->tab[i];
	}
}

static int grow(struct valor_replay *r)
{
	struct rp_thread *old = r->tab;
	uint32_t oldcap = r->cap;

	r->tab = eng_calloc(2 * oldcap, sizeof(*r->tab));
	if (!r->tab) {
		r->tab = old;
		return -ENOMEM;
	}
	r->cap = 2 * oldcap;
	for (uint32_t i = 0; i < oldcap; i++) {
		if (!old[i].used)
			continue;
		uint32_t j = hash_tid(old[i].src) & (r->cap - 1);

		while (r->tab[j].used)
			j = (j + 1) & (r->cap - 1);
		r->tab[j] = old[i];
	}
	eng_free(old);
	return 0;
}

/* An entry for @src, new and unused if there was none. */
static struct rp_thread *slot_for(struct valor_replay *r, uint32_t src)
{
	struct rp_thread *t = find(r, src);
	uint32_t i;

	if (t)
		return t;
	if (2 * (r->count + 1) > r->cap && grow(r))
		return NULL;
	for (i = hash_tid(src) & (r->cap - 1); r->tab[i].used;
	     i = (i + 1) & (r->cap - 1))
		;
	return &r->tab[i];
}

static int remember_src(struct valor_replay *r, struct valor_thread *th,
			uint32_t src)
{
	uint64_t id = valor_thread_id(th);

	if (id >= r->nsrc_of) {
		uint64_t n = r->nsrc_of ? r->nsrc_of : 64;
		uint32_t *v;

		while (n <= id)
			n *= 2;
		v = eng_realloc(r->src_of, n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + r->nsrc_of, 0xff, (n - r->nsrc_of) * sizeof(*v));
		r->src_of = v;
		r->nsrc_of = n;
	}
	r->src_of[id] = src;
	return 0;
}

/* Bind @src to a fresh thread created by @parent (NULL: a root). */
static int start_thread(struct valor_replay *r, uint32_t src,
			struct valor_thread *parent, struct valor_thread **out)
{
	struct rp_thread *t = slot_for(r, src);
	struct valor_thread *th;

	if (!t)
		return -ENOMEM;
	th = valor_thread_create(r->ctx, parent);
	if (!th)
		return -errno;
	if (remember_src(r, th, src)) {
		valor_thread_exit(th);
		valor_thread_forget(th);
		return -ENOMEM;
	}
	/* An id reused after its thread exited starts a new logical thread. */
	if (t->used && t->th)
		valor_thread_forget(t->th);
	if (!t->used)
		r->count++;
	*t = (struct rp_thread){ .src = src, .used = true, .th = th };
	*out = th;
	return 0;
}

/* The live thread making an event; a never-seen id becomes a root. */
static int actor(struct valor_replay *r, uint32_t src,
		 struct valor_thread **out)
{
	struct rp_thread *t = find(r, src);

	if (t) {
		if (t->exited || !t->th)
			return -EINVAL;
		*out = t->th;
		return 0;
	}
	return start_thread(r, src, NULL, out);
}

static uint64_t conflicts_of(const struct valor_thread *th)
{
	return th->st.conflicts;
}

/* Bytes from an access's first to past its last element; fits 64 bits. */
static uint64_t access_span(const struct valor_event *ev)
{
	if (!(ev->flags & VALOR_EVF_STRIDED) || !VALOR_ACCESS_COUNT(ev->arg))
		return ev->size;
	return (uint64_t)VALOR_ACCESS_STRIDE(ev->arg) *
		       (VALOR_ACCESS_COUNT(ev->arg) - 1) +
	       ev->size;
}

static int check(const struct valor_event *ev)
{
	if (ev->kind == VALOR_EV_NONE || ev->kind > VALOR_EV_KIND_MAX ||
	    (ev->flags & ~VALOR_EVF_KNOWN))
		return -EINVAL;
	switch (ev->kind) {
	case VALOR_EV_ACCESS:
		if (!ev->size || !shadow_addr_ok(ev->addr, access_span(ev)))
			return -EINVAL;
		if ((ev->flags & VALOR_EVF_STRIDED) &&
		    !VALOR_ACCESS_COUNT(ev->arg))
			return -EINVAL;
		break;
	case VALOR_EV_FREE:
	case VALOR_EV_MUNMAP:
		if (!ev->arg || !shadow_addr_ok(ev->addr, ev->arg))
			return -EINVAL;
		break;
	case VALOR_EV_THREAD_CREATE:
	case VALOR_EV_THREAD_JOIN:
		if (ev->arg > UINT32_MAX || ev->arg == ev->tid)
			return -EINVAL;
		break;
	}
	return 0;
}

int valor_replay_event(struct valor_replay *r, const struct valor_event *ev)
{
	struct valor_thread *th, *child;
	struct rp_thread *other;
	uint64_t before;
	int err = check(ev);

	if (err)
		return err;
	/* Bookkeeping of the producer, not program behaviour. */
	if (ev->kind == VALOR_EV_LOST || ev->kind == VALOR_EV_PAGE_DISARM ||
	    ev->kind == VALOR_EV_TARGET_EXIT)
		return 0;

	/* Refuse what would fail before the actor is (maybe) created. */
	other = NULL;
	if (ev->kind == VALOR_EV_THREAD_CREATE) {
		other = find(r, (uint32_t)ev->arg);
		if (other && other->th && !other->exited)
			return -EEXIST;
	} else if (ev->kind == VALOR_EV_THREAD_JOIN) {
		other = find(r, (uint32_t)ev->arg);
		if (!other || !other->th || !other->exited)
			return -EINVAL;
	}
	err = actor(r, ev->tid, &th);
	if (err)
		return err;
	before = conflicts_of(th);

	switch (ev->kind) {
	case VALOR_EV_THREAD_CREATE:
		err = start_thread(r, (uint32_t)ev->arg, th, &child);
		if (err)
			return err;
		break;
	case VALOR_EV_THREAD_EXIT: {
		struct rp_thread *t = find(r, ev->tid);

		valor_thread_exit(th);
		t->exited = true;
		break;
	}
	case VALOR_EV_THREAD_JOIN:
		/* @other may have moved if the actor was just created. */
		other = find(r, (uint32_t)ev->arg);
		valor_thread_join(th, other->th);
		other->th = NULL;
		break;
	case VALOR_EV_ACQUIRE:
		valor_acquire(th, ev->addr);
		break;
	case VALOR_EV_RELEASE:
		valor_release(th, ev->addr);
		break;
	case VALOR_EV_ACCESS:
		if (ev->flags & VALOR_EVF_STRIDED)
			valor_access_strided(th, ev->addr, ev->size,
					     VALOR_ACCESS_STRIDE(ev->arg),
					     VALOR_ACCESS_COUNT(ev->arg),
					     ev->flags & VALOR_EVF_WRITE,
					     ev->ip);
		else
			valor_access(th, ev->addr, ev->size,
				     ev->flags & VALOR_EVF_WRITE, ev->ip);
		break;
	case VALOR_EV_FREE:
	case VALOR_EV_MUNMAP:
		valor_free(th, ev->addr, ev->arg, ev->ip);
		break;
	case VALOR_EV_REGION_END:
		valor_region_end(th);
		break;
	case VALOR_EV_VALIDATE:
		valor_validate(th);
		break;
	}
	return (int)(conflicts_of(th) - before);
}

int valor_replay_finish(struct valor_replay *r)
{
	int n = 0;

	for (uint32_t i = 0; i < r->cap; i++) {
		struct rp_thread *t = &r->tab[i];

		if (t->used && t->th && !t->exited)
			n += valor_region_end(t->th);
	}
	return n;
}

uint32_t valor_replay_source_tid(const struct valor_replay *r,
				 uint64_t logical_tid)
{
	if (logical_tid >= r->nsrc_of)
		return UINT32_MAX;
	return r->src_of[logical_tid];
}
