// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * FastTrack's vector clocks of synchronization objects (locks, atomics'
 * addresses, condition variables...), in a hash table split into stripes
 * that each have their own lock, so that unrelated locks do not contend.
 * An object's clock is the join of every release on it.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

#define STRIPES 64

struct sync_obj {
	uintptr_t addr;
	struct vclock vc;
	struct sync_obj *next;
};

struct stripe {
	struct eng_lock lock;
	struct sync_obj **buckets;
	uint32_t nbuckets;
	uint32_t count;
};

struct sync_table {
	struct stripe s[STRIPES];
};

static uint64_t hash_addr(uintptr_t a)
{
	uint64_t x = a;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

struct sync_table *sync_table_new(void)
{
	struct sync_table *t = eng_calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	for (int i = 0; i < STRIPES; i++)
		eng_lock_init(&t->s[i].lock);
	return t;
}

void sync_table_free(struct sync_table *t)
{
	if (!t)
		return;
	for (int i = 0; i < STRIPES; i++) {
		struct stripe *st = &t->s[i];

		for (uint32_t b = 0; b < st->nbuckets; b++) {
			struct sync_obj *o = st->buckets[b];

			while (o) {
				struct sync_obj *next = o->next;

				vclock_free(&o->vc);
				eng_free(o);
				o = next;
			}
		}
		eng_free(st->buckets);
	}
	eng_free(t);
}

static int grow(struct stripe *st)
{
	uint32_t n = st->nbuckets ? 2 * st->nbuckets : 16;
	struct sync_obj **b = eng_calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (uint32_t i = 0; i < st->nbuckets; i++) {
		struct sync_obj *o = st->buckets[i];

		while (o) {
			struct sync_obj *next = o->next;
			uint32_t j = (hash_addr(o->addr) >> 6) & (n - 1);

			o->next = b[j];
			b[j] = o;
			o = next;
		}
	}
	eng_free(st->buckets);
	st->buckets = b;
	st->nbuckets = n;
	return 0;
}

/* Called with the stripe locked. */
static struct sync_obj *lookup(struct stripe *st, uintptr_t addr, bool create)
{
	uint64_t h = hash_addr(addr) >> 6;
	struct sync_obj *o;

	if (st->nbuckets) {
		for (o = st->buckets[h & (st->nbuckets - 1)]; o; o = o->next)
			if (o->addr == addr)
				return o;
	}
	if (!create)
		return NULL;
	if (st->count >= st->nbuckets && grow(st))
		return NULL;
	o = eng_calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->addr = addr;
	o->next = st->buckets[h & (st->nbuckets - 1)];
	st->buckets[h & (st->nbuckets - 1)] = o;
	st->count++;
	return o;
}

static struct stripe *stripe_of(struct sync_table *t, uintptr_t addr)
{
	return &t->s[hash_addr(addr) & (STRIPES - 1)];
}

int sync_acquire(struct sync_table *t, uintptr_t obj, struct vclock *into)
{
	struct stripe *st = stripe_of(t, obj);
	struct sync_obj *o;
	int ret = 0;

	eng_lock(&st->lock);
	o = lookup(st, obj, false);
	if (o)
		ret = vclock_join(into, &o->vc);
	eng_unlock(&st->lock);
	return ret;
}

int sync_release(struct sync_table *t, uintptr_t obj, const struct vclock *from)
{
	struct stripe *st = stripe_of(t, obj);
	struct sync_obj *o;
	int ret = -ENOMEM;

	eng_lock(&st->lock);
	o = lookup(st, obj, true);
	if (o)
		ret = vclock_join(&o->vc, from);
	eng_unlock(&st->lock);
	return ret;
}
