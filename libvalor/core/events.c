// SPDX-License-Identifier: LGPL-2.1-or-later
/* The access-side entry points: route each event to the context's analysis. */
#include "internal.h"

#include <errno.h>

int valor_access(struct valor_thread *th, uintptr_t addr, size_t size,
		 bool is_write, uint64_t site)
{
	if (unlikely(th->exited || !size || !shadow_addr_ok(addr, size)))
		return 0;
	if (unlikely(th->mode == THREAD_ALONE)) {
		th->st.accesses_alone++;
		return 0;
	}
	switch (th->ctx->p.analysis) {
	case VALOR_ANALYSIS_VALOR:
		return valor_o_access(th, addr, size, is_write, site);
	case VALOR_ANALYSIS_FASTRCD:
		fastrcd_access(th, addr, size, is_write, site);
		break;
	default:
		fasttrack_access(th, addr, size, is_write, site);
		break;
	}
	return conflict_deliver(th);
}

int valor_access_strided(struct valor_thread *th, uintptr_t addr, size_t size,
			 size_t stride, size_t count, bool is_write,
			 uint64_t site)
{
	int conflicts = 0;

	if (unlikely(th->exited || !size || !count))
		return 0;
	if (stride > (SIZE_MAX - size) / count ||
	    !shadow_addr_ok(addr, stride * (count - 1) + size))
		return 0;
	if (stride == size || count == 1)
		return valor_access(th, addr, size * count, is_write, site);
	if (unlikely(th->mode == THREAD_ALONE)) {
		th->st.accesses_alone += count;
		return 0;
	}
	/*
	 * Every other cell written whole (a red-black sweep): runs of a
	 * step of two cells, where each cell would take an entry of the
	 * write log.
	 */
	if (th->ctx->p.analysis == VALOR_ANALYSIS_VALOR && is_write &&
	    size == CELL_SIZE && stride == 2 * CELL_SIZE &&
	    !(addr & (CELL_SIZE - 1)))
		return valor_o_write_cells(th, addr >> CELL_SHIFT, count, 2,
					   site);
	for (size_t i = 0; i < count; i++)
		conflicts += valor_access(th, addr + i * stride, size, is_write,
					  site);
	return conflicts;
}

int valor_free(struct valor_thread *th, uintptr_t addr, size_t size,
	       uint64_t site)
{
	if (unlikely(th->exited || !size || !shadow_addr_ok(addr, size)))
		return 0;
	switch (th->ctx->p.analysis) {
	case VALOR_ANALYSIS_VALOR:
		valor_o_free(th, addr, size, site);
		break;
	case VALOR_ANALYSIS_FASTRCD:
		fastrcd_free(th, addr, size, site);
		break;
	default:
		fasttrack_free(th, addr, size, site);
		break;
	}
	return conflict_deliver(th);
}

void valor_forget(struct valor_thread *th, uintptr_t addr, size_t size)
{
	if (unlikely(th->exited || !size || !shadow_addr_ok(addr, size)))
		return;
	if (th->ctx->p.analysis == VALOR_ANALYSIS_VALOR)
		valor_o_forget(th, addr, size);
	else
		hb_forget(th, addr, size);
}

void valor_hint_dense(struct valor_thread *th, uintptr_t addr, size_t size)
{
	/* Most blocks are small: nothing to look at. */
	if (size < SHADOW_DENSE_MIN || th->exited ||
	    !shadow_addr_ok(addr, size))
		return;
	shadow_advise_dense(&th->ctx->shadow, addr, size);
}

int valor_move(struct valor_thread *th, uintptr_t from, uintptr_t to,
	       size_t size)
{
	if ((from | to | size) & (CELL_SIZE - 1) ||
	    !shadow_addr_ok(from, size) || !shadow_addr_ok(to, size) ||
	    (from < to + size && to < from + size))
		return -EINVAL;
	if (th->exited || !size)
		return 0;
	if (th->ctx->p.analysis == VALOR_ANALYSIS_VALOR)
		valor_o_move(th, from >> CELL_SHIFT, to >> CELL_SHIFT,
			     size >> CELL_SHIFT);
	else
		hb_move(th, from >> CELL_SHIFT, to >> CELL_SHIFT,
			size >> CELL_SHIFT);
	return conflict_deliver(th);
}

int valor_region_end(struct valor_thread *th)
{
	if (th->exited)
		return 0;
	if (th->ctx->p.analysis != VALOR_ANALYSIS_FASTTRACK)
		thread_region_boundary(th);
	return conflict_deliver(th);
}

int valor_validate(struct valor_thread *th)
{
	if (th->exited)
		return 0;
	if (th->ctx->p.analysis == VALOR_ANALYSIS_VALOR)
		valor_o_validate(th, false);
	return conflict_deliver(th);
}

uint64_t valor_shadow_version(struct valor_ctx *ctx, uintptr_t addr)
{
	if (ctx->p.analysis != VALOR_ANALYSIS_VALOR || !shadow_addr_ok(addr, 1))
		return 0;
	return valor_o_version(ctx, addr);
}
