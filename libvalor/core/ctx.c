// SPDX-License-Identifier: LGPL-2.1-or-later
/* Creating and destroying an analysis context; its counters. */
#include "hbcell.h"
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_READ_LOG 65536
#define DEFAULT_WRITE_LOG 16384
#define MAX_LOG (1U << 24)

static int check_params(struct valor_params *p)
{
	if (p->analysis > VALOR_ANALYSIS_FASTTRACK ||
	    p->regions > VALOR_REGIONS_SFR ||
	    p->max_threads > VALOR_MAX_THREADS ||
	    p->read_log_entries > MAX_LOG || p->write_log_entries > MAX_LOG ||
	    p->initial_clock > EPOCH_CLOCK_MASK / 2 ||
	    (p->flags & ~VALOR_ONE_ROOT))
		return -EINVAL;
	if (!p->read_log_entries)
		p->read_log_entries = DEFAULT_READ_LOG;
	if (!p->write_log_entries)
		p->write_log_entries = DEFAULT_WRITE_LOG;
	if (!p->max_threads)
		p->max_threads = VALOR_MAX_THREADS;
	/* Clock 0 is "never", so that a zero epoch is no access at all. */
	if (!p->initial_clock)
		p->initial_clock = 1;
	return 0;
}

struct valor_ctx *valor_ctx_new(const struct valor_params *params)
{
	struct valor_ctx *ctx;
	uint32_t cap;
	int err;

	ctx = eng_calloc(1, sizeof(*ctx));
	if (!ctx) {
		errno = ENOMEM;
		return NULL;
	}
	if (params)
		ctx->p = *params;
	err = check_params(&ctx->p);
	if (err)
		goto err_free;

	/* The write log is a ring indexed with a mask. */
	cap = ctx->p.write_log_entries;
	if (cap & (cap - 1))
		cap = 1U << (32 - __builtin_clz(cap));
	ctx->wlog_cap = cap;
	ctx->cas_pair = eng_has_cas_pair();

	err = -ENOMEM;
	ctx->nslots = ctx->p.max_threads + 1;
	/* calloc, not memalign: the untouched slots stay zero pages. */
	ctx->slots_mem = eng_calloc(1, (ctx->nslots + 1) * sizeof(*ctx->slots));
	ctx->slots = (struct slot *)(((uintptr_t)ctx->slots_mem +
				      sizeof(*ctx->slots) - 1) &
				     ~(uintptr_t)(sizeof(*ctx->slots) - 1));
	ctx->free_slots = eng_calloc(ctx->nslots, sizeof(*ctx->free_slots));
	if (!ctx->slots_mem || !ctx->free_slots)
		goto err_slots;
	ctx->next_unused = 1;
	ctx->next_tid = 1;

	if (ctx->p.analysis == VALOR_ANALYSIS_FASTTRACK) {
		ctx->sync = sync_table_new();
		if (!ctx->sync)
			goto err_slots;
	}
	/*
	 * FastRCD and FastTrack records are 64 bytes a cell: their shadow is
	 * dense where used, and time is what they are measured by, so their
	 * leaves take huge pages (more memory only where accesses are sparse);
	 * Valor's is kept small (32 bits a cell, 4 KiB pages).
	 */
	err = shadow_init(
		&ctx->shadow,
		ctx->p.analysis == VALOR_ANALYSIS_VALOR ? 2 : HB_CELL_SHIFT,
		ctx->p.analysis != VALOR_ANALYSIS_VALOR);
	if (err)
		goto err_sync;
	arena_init(&ctx->arena);
	eng_lock_init(&ctx->lock);
	eng_lock_init(&ctx->zfree_lock);
	return ctx;

err_sync:
	sync_table_free(ctx->sync);
err_slots:
	eng_free(ctx->free_slots);
	eng_free(ctx->slots_mem);
err_free:
	eng_free(ctx);
	errno = -err;
	return NULL;
}

/* A slot's ring and the rings it replaced that readers kept alive. */
static void free_rings(struct wlog_ring *r)
{
	while (r) {
		struct wlog_ring *older = r->older;

		ring_free(r);
		r = older;
	}
}

void valor_ctx_free(struct valor_ctx *ctx)
{
	if (!ctx)
		return;
	while (ctx->threads) {
		struct valor_thread *th = ctx->threads;

		if (!th->exited)
			valor_thread_exit(th);
		valor_thread_forget(th);
	}
	for (uint32_t i = 0; i < ctx->nslots; i++) {
		free_rings(atomic_load(&ctx->slots[i].wlog));
		free_rings(atomic_load(&ctx->slots[i].runs));
		eng_free(ctx->slots[i].occ);
	}
	sync_table_free(ctx->sync);
	arena_fini(&ctx->arena);
	shadow_fini(&ctx->shadow);
	eng_free(ctx->free_slots);
	eng_free(ctx->slots_mem);
	eng_free(ctx);
}

/* Fold a finished thread's counters into @to (ctx->retired). */
void thread_stats_add(struct thread_stats *to, const struct thread_stats *s)
{
	to->conflicts += s->conflicts;
	to->regions += s->regions;
	to->version_bumps += s->version_bumps;
	to->read_log_overflows += s->read_log_overflows;
	to->write_log_overflows += s->write_log_overflows;
	to->validations += s->validations;
	to->reads_logged += s->reads_logged;
	to->cells_refined += s->cells_refined;
	to->accesses_alone += s->accesses_alone;
}

static void add_stats(struct valor_stats *out, const struct thread_stats *s)
{
	out->conflicts += s->conflicts;
	out->regions += s->regions;
	out->version_bumps += s->version_bumps;
	out->read_log_overflows += s->read_log_overflows;
	out->write_log_overflows += s->write_log_overflows;
	out->validations += s->validations;
	out->reads_logged += s->reads_logged;
	out->cells_refined += s->cells_refined;
	out->accesses_alone += s->accesses_alone;
}

void valor_ctx_stats(struct valor_ctx *ctx, struct valor_stats *out)
{
	memset(out, 0, sizeof(*out));
	eng_lock(&ctx->lock);
	add_stats(out, &ctx->retired);
	/* Live threads' counters are read racily: they are statistics. */
	for (struct valor_thread *th = ctx->threads; th; th = th->next_all)
		add_stats(out, &th->st);
	out->threads_created = ctx->threads_created;
	eng_unlock(&ctx->lock);
	out->shadow_bytes =
		atomic_load(&ctx->shadow.mapped_bytes) + ctx->arena.bytes;
	if (ctx->shadow.wide) {
		uint32_t next = atomic_load(&ctx->shadow.wide_next);

		out->cells_wide =
			(next < SHADOW_WIDE_WORDS ? next : SHADOW_WIDE_WORDS) -
			1;
	}
}

const char *valor_analysis_name(enum valor_analysis a)
{
	switch (a) {
	case VALOR_ANALYSIS_VALOR:
		return "valor";
	case VALOR_ANALYSIS_FASTRCD:
		return "fastrcd";
	case VALOR_ANALYSIS_FASTTRACK:
		return "fasttrack";
	}
	return "unknown";
}

const char *valor_conflict_kind_name(enum valor_conflict_kind k)
{
	switch (k) {
	case VALOR_CONFLICT_WW:
		return "write-write";
	case VALOR_CONFLICT_WR:
		return "write-read";
	case VALOR_CONFLICT_RW:
		return "read-write";
	}
	return "unknown";
}
