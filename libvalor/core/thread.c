// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Thread handles and slots: creation, exit, join, and the synchronization
 * events that move a thread's clock (acquire, release, region ends).
 *
 * Slot recycling is where wraparound and identity bugs would hide, so the
 * rules are explicit:
 *  - a slot's clock only grows, across occupants, so an epoch of an
 *    earlier occupant can never equal a current region (FastRCD) and
 *    Valor's owner field is cleared by the region end every exit performs;
 *  - FastTrack hands a recycled slot only to a creator whose vector clock
 *    already covers the previous occupant's final clock (it joined it,
 *    directly or transitively), so that every old epoch of the slot
 *    happens before everything the new occupant does.  Other creators
 *    get a never-used slot.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool is_fasttrack(const struct valor_ctx *ctx)
{
	return ctx->p.analysis == VALOR_ANALYSIS_FASTTRACK;
}

/* Called with ctx->lock held.  Returns a slot index or 0 if none is free. */
static uint32_t slot_alloc(struct valor_ctx *ctx, struct valor_thread *parent)
{
	for (uint32_t i = ctx->nfree; i-- > 0;) {
		uint32_t s = ctx->free_slots[i];

		if (is_fasttrack(ctx) &&
		    (!parent ||
		     vclock_get(&parent->vc, s) < ctx->slots[s].final_clock))
			continue;
		ctx->free_slots[i] = ctx->free_slots[--ctx->nfree];
		return s;
	}
	if (ctx->next_unused < ctx->nslots)
		return ctx->next_unused++;
	return 0;
}

static void set_clock(struct valor_thread *th, uint64_t clock)
{
	th->clock = clock;
	atomic_store_explicit(&th->ctx->slots[th->slot].clock, clock,
			      memory_order_release);
}

void thread_region_boundary(struct valor_thread *th)
{
	if (th->ctx->p.analysis == VALOR_ANALYSIS_VALOR)
		valor_o_region_end(th);
	th->st.regions++;
	set_clock(th, th->clock + 1);
	thread_update_mode(th);
}

/*
 * A thread of a VALOR_ONE_ROOT context runs alone when every other
 * thread has exited.  A region conflict needs another thread's region
 * to be ongoing, so no access it makes now can be the later side of one;
 * nor the earlier side, since another region could only start after a
 * thread it creates, and creating one ends its region.  Valor and FastRCD
 * skip such accesses (semantics.md, "Threads that run alone").
 *
 * FastTrack needs more: an exited thread that was not joined still races
 * with them.  Once every other thread has been joined, though (a joiner
 * other than @th was itself joined, so the joins lead to @th), all that
 * any other thread did happens before @th's accesses, and all that any
 * thread will do happens after them (a new thread comes from @th), so
 * they race with nothing either way.
 *
 * Only @th calls this, at its region boundaries, creations and joins,
 * and its creator before it runs.  Under VALOR_ONE_ROOT only a live
 * thread creates threads, so once @th sees itself alone no other thread
 * can appear but by @th's own valor_thread_create(), which calls this
 * again.
 */
void thread_update_mode(struct valor_thread *th)
{
	struct valor_ctx *ctx = th->ctx;
	bool alone = (ctx->p.flags & VALOR_ONE_ROOT) &&
		     atomic_load_explicit(&ctx->nlive, memory_order_acquire) ==
			     1;

	if (th->exited)
		return;
	/* With one thread live, no other creates or joins: no lock needed. */
	if (alone && is_fasttrack(ctx))
		alone = atomic_load_explicit(&ctx->njoined,
					     memory_order_acquire) +
				1 ==
			ctx->threads_created;
	if (alone)
		th->mode = THREAD_ALONE;
	else
		th->mode = ctx->p.analysis == VALOR_ANALYSIS_VALOR ?
				   THREAD_FAST :
				   THREAD_FULL;
}

/* FastTrack's release: the thread's own entry advances. */
static void fasttrack_tick(struct valor_thread *th)
{
	set_clock(th, th->clock + 1);
	th->vc.c[th->slot] = th->clock;
	th->st.regions++;
}

static void link_thread(struct valor_ctx *ctx, struct valor_thread *th)
{
	th->next_all = ctx->threads;
	if (ctx->threads)
		ctx->threads->prev_all = th;
	ctx->threads = th;
}

static void unlink_thread(struct valor_ctx *ctx, struct valor_thread *th)
{
	if (th->prev_all)
		th->prev_all->next_all = th->next_all;
	else
		ctx->threads = th->next_all;
	if (th->next_all)
		th->next_all->prev_all = th->prev_all;
}

static int init_slot(struct valor_ctx *ctx, struct slot *s)
{
	if (s->used)
		return 0;
	if (ctx->p.analysis == VALOR_ANALYSIS_VALOR) {
		uint64_t cap = ctx->wlog_cap < WLOG_FIRST_ENTRIES ?
				       ctx->wlog_cap :
				       WLOG_FIRST_ENTRIES;
		struct wlog_ring *r = ring_alloc(cap);
		struct wlog_ring *runs = ring_alloc(WSPILL_RUNS);

		if (!r || !runs) {
			ring_free(r);
			ring_free(runs);
			return -ENOMEM;
		}
		atomic_store_explicit(&s->runs, runs, memory_order_release);
		s->wlog_mask = cap - 1;
		s->wlog_room = wlog_room(ctx, cap);
		atomic_store_explicit(&s->wlog, r, memory_order_release);
	}
	atomic_store(&s->clock, ctx->p.initial_clock);
	atomic_store(&s->zfree_need, ZFREE_NONE);
	s->used = true;
	return 0;
}

/* ctx->lock held */
static int slot_add_occupant(struct slot *s, uint64_t clock, uint64_t tid)
{
	if (s->nocc == s->occ_cap) {
		uint32_t cap = s->occ_cap ? 2 * s->occ_cap : 4;
		struct slot_occupant *v = eng_realloc(s->occ, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->occ = v;
		s->occ_cap = cap;
	}
	s->occ[s->nocc++] = (struct slot_occupant){ clock, tid };
	return 0;
}

/*
 * The logical id of the thread whose epoch @epoch is: the slot's last
 * occupant that started at or before its clock.  Only reports ask.
 */
uint64_t slot_tid_at(struct valor_ctx *ctx, uint64_t epoch)
{
	const struct slot *s = &ctx->slots[epoch_slot(epoch)];
	uint64_t tid = 0;

	eng_lock(&ctx->lock);
	for (uint32_t i = s->nocc; i-- > 0;) {
		if (s->occ[i].first_clock <= epoch_clock(epoch)) {
			tid = s->occ[i].tid;
			break;
		}
	}
	eng_unlock(&ctx->lock);
	return tid;
}

struct valor_thread *valor_thread_create(struct valor_ctx *ctx,
					 struct valor_thread *parent)
{
	struct valor_thread *th;
	uint32_t slot;
	int err;

	if (parent && (parent->exited || parent->ctx != ctx)) {
		errno = EINVAL;
		return NULL;
	}
	th = eng_calloc(1,
			sizeof(*th) + (ctx->p.analysis == VALOR_ANALYSIS_VALOR ?
					       sizeof(th->rfilter[0]) :
					       0));
	if (!th) {
		errno = ENOMEM;
		return NULL;
	}
	th->ctx = ctx;

	eng_lock(&ctx->lock);
	if (!parent && (ctx->p.flags & VALOR_ONE_ROOT) && ctx->nroots) {
		err = EINVAL;
		goto err_unlock;
	}
	slot = slot_alloc(ctx, parent);
	if (!slot) {
		err = EAGAIN;
		goto err_unlock;
	}
	if (init_slot(ctx, &ctx->slots[slot])) {
		/* Give the slot back untouched. */
		ctx->free_slots[ctx->nfree++] = slot;
		err = ENOMEM;
		goto err_unlock;
	}
	th->clock = atomic_load(&ctx->slots[slot].clock);
	if (ctx->p.analysis != VALOR_ANALYSIS_VALOR &&
	    slot_add_occupant(&ctx->slots[slot], th->clock, ctx->next_tid)) {
		ctx->free_slots[ctx->nfree++] = slot;
		err = ENOMEM;
		goto err_unlock;
	}
	th->slot = slot;
	th->tid = ctx->next_tid++;
	ctx->slots[slot].live = true;
	atomic_store(&ctx->slots[slot].tid, th->tid);
	th->region_start = atomic_load(&ctx->slots[slot].wlog_head);
	th->runs_start = atomic_load(&ctx->slots[slot].runs_head);
	link_thread(ctx, th);
	ctx->threads_created++;
	atomic_fetch_add(&ctx->nlive, 1);
	if (!parent)
		ctx->nroots++;
	eng_unlock(&ctx->lock);

	if (ctx->p.analysis == VALOR_ANALYSIS_VALOR) {
		if (valor_o_thread_init(th))
			goto err_undo;
	} else if (is_fasttrack(ctx)) {
		if ((parent && vclock_copy(&th->vc, &parent->vc)) ||
		    vclock_set(&th->vc, slot, th->clock))
			goto err_undo;
	}

	/* Creating a thread is a release of the parent. */
	if (parent) {
		if (is_fasttrack(ctx)) {
			fasttrack_tick(parent);
			thread_update_mode(parent);
		} else {
			thread_region_boundary(parent);
		}
		conflict_deliver(parent);
	}
	thread_update_mode(th);
	return th;

err_undo:
	th->exited = true;
	eng_lock(&ctx->lock);
	atomic_fetch_sub(&ctx->nlive, 1);
	if (!parent)
		ctx->nroots--;
	ctx->slots[slot].live = false;
	ctx->slots[slot].final_clock = th->clock;
	atomic_store(&ctx->slots[slot].clock, th->clock + 1);
	ctx->free_slots[ctx->nfree++] = slot;
	unlink_thread(ctx, th);
	eng_unlock(&ctx->lock);
	valor_o_thread_fini(th);
	vclock_free(&th->vc);
	eng_free(th);
	errno = ENOMEM;
	return NULL;

err_unlock:
	eng_unlock(&ctx->lock);
	eng_free(th);
	errno = err;
	return NULL;
}

uint64_t valor_thread_id(const struct valor_thread *th)
{
	return th->tid;
}

void valor_thread_exit(struct valor_thread *th)
{
	struct valor_ctx *ctx = th->ctx;
	struct slot *s = &ctx->slots[th->slot];

	if (th->exited)
		return;
	/* The exit is a release: the last region ends and is validated. */
	if (!is_fasttrack(ctx))
		thread_region_boundary(th);
	conflict_deliver(th);

	eng_lock(&ctx->lock);
	th->exited = true;
	th->mode = THREAD_FULL;
	atomic_fetch_sub(&ctx->nlive, 1);
	s->final_clock = th->clock;
	atomic_store_explicit(&s->clock, th->clock + 1, memory_order_release);
	s->live = false;
	ctx->free_slots[ctx->nfree++] = th->slot;
	eng_unlock(&ctx->lock);
	valor_o_thread_fini(th);
}

int valor_thread_join(struct valor_thread *joiner, struct valor_thread *joinee)
{
	struct valor_ctx *ctx = joiner->ctx;

	if (!joinee->exited || joiner == joinee || joiner->exited ||
	    joinee->ctx != ctx)
		return -EINVAL;
	if (is_fasttrack(ctx))
		vclock_join(&joiner->vc, &joinee->vc);
	else if (ctx->p.regions == VALOR_REGIONS_SFR)
		thread_region_boundary(joiner);
	valor_thread_forget(joinee);
	atomic_fetch_add(&ctx->njoined, 1);
	thread_update_mode(joiner);
	conflict_deliver(joiner);
	return 0;
}

void valor_thread_forget(struct valor_thread *th)
{
	struct valor_ctx *ctx = th->ctx;

	if (!th->exited)
		valor_thread_exit(th);
	eng_lock(&ctx->lock);
	unlink_thread(ctx, th);
	thread_stats_add(&ctx->retired, &th->st);
	eng_unlock(&ctx->lock);
	vclock_free(&th->vc);
	conflict_queue_free(&th->lazy);
	conflict_queue_free(&th->eager);
	eng_free(th);
}

void valor_acquire(struct valor_thread *th, uintptr_t sync)
{
	struct valor_ctx *ctx = th->ctx;

	if (is_fasttrack(ctx))
		sync_acquire(ctx->sync, sync, &th->vc);
	else if (ctx->p.regions == VALOR_REGIONS_SFR)
		thread_region_boundary(th);
	conflict_deliver(th);
}

void valor_release(struct valor_thread *th, uintptr_t sync)
{
	struct valor_ctx *ctx = th->ctx;

	if (is_fasttrack(ctx)) {
		sync_release(ctx->sync, sync, &th->vc);
		fasttrack_tick(th);
	} else {
		thread_region_boundary(th);
	}
	conflict_deliver(th);
}
