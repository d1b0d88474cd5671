// SPDX-License-Identifier: GPL-2.0
/*
 * The pages a session tracks: a hash table under session->lock, and the
 * range operations that arm, re-arm and forget them.
 *
 * A page is entered in the table before its PTE is armed and removed
 * before its PTE is restored, so every fault on an armed PTE finds the
 * page, and a fault that finds no page is the kernel's business alone.
 */
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/mmu_notifier.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "valor_kmod.h"

static struct kmem_cache *page_cache;

int valor_pages_init(void)
{
	page_cache = KMEM_CACHE(valor_page, 0);
	return page_cache ? 0 : -ENOMEM;
}

void valor_pages_exit(void)
{
	kmem_cache_destroy(page_cache);
}

/* Caller holds s->lock. */
struct valor_page *valor_page_find(struct valor_session *s, unsigned long addr)
{
	struct valor_page *p;

	hash_for_each_possible(s->pages, p, node, addr)
		if (p->addr == addr)
			return p;
	return NULL;
}

/* Account for and free a page out of the table; caller holds s->lock. */
static void page_free(struct valor_session *s, struct valor_page *p)
{
	s->nr_pages--;
	if (p->mode == VALOR_MODE_WATCH)
		s->nr_watched--;
	atomic_long_dec(&valor_pages_total);
	kmem_cache_free(page_cache, p);
}

/* Caller holds s->lock. */
void valor_page_forget(struct valor_session *s, struct valor_page *p)
{
	hash_del(&p->node);
	page_free(s, p);
}

/* Free a page out of the table and report why; caller holds s->lock. */
static void page_retire(struct valor_session *s, struct valor_page *p,
			enum valor_disarm_reason why)
{
	s->stats.disarmed++;
	valor_emit_disarm(s, p->addr, why);
	page_free(s, p);
}

/* Caller holds s->lock. */
void valor_page_disarm(struct valor_session *s, struct valor_page *p,
		       enum valor_disarm_reason why)
{
	hash_del(&p->node);
	page_retire(s, p, why);
}

/* Caller holds s->lock; false when a limit is reached. */
static bool page_insert(struct valor_session *s, struct valor_page *p)
{
	if (s->nr_pages >= s->limits.max_armed_pages)
		return false;
	if (atomic_long_inc_return(&valor_pages_total) >
	    valor_max_pages_total) {
		atomic_long_dec(&valor_pages_total);
		return false;
	}
	hash_add(s->pages, &p->node, p->addr);
	s->nr_pages++;
	if (p->mode == VALOR_MODE_WATCH)
		s->nr_watched++;
	return true;
}

/* Pin the target's address space for a page-table walk. */
static struct mm_struct *session_mm_get(struct valor_session *s)
{
	struct mm_struct *mm = NULL;
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	if (s->attached && !s->dead && mmget_not_zero(s->mm))
		mm = s->mm;
	spin_unlock_irqrestore(&s->lock, flags);
	return mm;
}

static int range_bounds(const struct valor_range *r, unsigned long *start,
			unsigned long *end)
{
	u64 last;

	if (r->flags & VALOR_RANGE_ALL) {
		*start = 0;
		*end = TASK_SIZE_MAX;
		return 0;
	}
	if (!r->len || check_add_overflow(r->start, r->len - 1, &last) ||
	    last >= TASK_SIZE_MAX)
		return -EINVAL;
	*start = r->start & PAGE_MASK;
	*end = PAGE_ALIGN(last + 1);
	return 0;
}

struct arm_batch {
	unsigned long lo, hi; /* range of PTEs armed, to flush */
};

/* Arm one page of a trackable VMA; mmap_lock held. */
static void arm_one(struct valor_session *s, struct mm_struct *mm,
		    unsigned long addr, enum valor_page_mode mode,
		    struct valor_range *r, struct arm_batch *b)
{
	struct valor_page *p, *fresh;
	enum valor_pte_result res;
	unsigned long flags;

	fresh = kmem_cache_alloc(page_cache, GFP_KERNEL_ACCOUNT);
	if (!fresh) {
		r->skipped++;
		return;
	}
	fresh->addr = addr;
	fresh->mode = mode;
	fresh->state = VALOR_PAGE_ARMED;

	spin_lock_irqsave(&s->lock, flags);
	p = valor_page_find(s, addr);
	if (p) {
		if (p->mode != mode) {
			spin_unlock_irqrestore(&s->lock, flags);
			kmem_cache_free(page_cache, fresh);
			r->skipped++;
			return;
		}
		p->state = VALOR_PAGE_ARMED;
	} else if (page_insert(s, fresh)) {
		p = fresh;
		fresh = NULL;
	} else {
		spin_unlock_irqrestore(&s->lock, flags);
		kmem_cache_free(page_cache, fresh);
		r->skipped++;
		return;
	}
	spin_unlock_irqrestore(&s->lock, flags);
	if (fresh)
		kmem_cache_free(page_cache, fresh);

	res = valor_pte_arm(mm, addr);
	if (res == VALOR_PTE_HUGE) {
		spin_lock_irqsave(&s->lock, flags);
		p = valor_page_find(s, addr);
		if (p)
			valor_page_forget(s, p);
		s->stats.refused_huge++;
		spin_unlock_irqrestore(&s->lock, flags);
		r->skipped++;
		r->huge++;
		return;
	}
	r->armed++;
	if (res == VALOR_PTE_ARMED) {
		b->lo = min(b->lo, addr);
		b->hi = max(b->hi, addr + PAGE_SIZE);
	}
}

int valor_pages_arm_range(struct valor_session *s, struct valor_range *r,
			  enum valor_page_mode mode)
{
	struct arm_batch b = { .lo = ULONG_MAX, .hi = 0 };
	unsigned long start, end, addr;
	struct vm_area_struct *vma;
	struct mm_struct *mm;
	int err;

	r->armed = 0;
	r->skipped = 0;
	r->huge = 0;
	err = range_bounds(r, &start, &end);
	if (err)
		return err;
	if (!(r->flags & VALOR_RANGE_ALL) &&
	    (end - start) >> PAGE_SHIFT > s->limits.max_armed_pages)
		return -E2BIG;
	mm = session_mm_get(s);
	if (!mm)
		return -ESRCH;
	if (mmap_read_lock_killable(mm)) {
		mmput(mm);
		return -EINTR;
	}
	inc_tlb_flush_pending(mm);
	addr = start;
	while (addr < end) {
		unsigned long vstart, vend;

		vma = find_vma(mm, addr);
		if (!vma || vma->vm_start >= end) {
			if (!(r->flags & VALOR_RANGE_ALL))
				r->skipped += (end - addr) >> PAGE_SHIFT;
			break;
		}
		vstart = max(addr, vma->vm_start);
		vend = min(end, vma->vm_end);
		if (!(r->flags & VALOR_RANGE_ALL))
			r->skipped += (vstart - addr) >> PAGE_SHIFT;
		if (!valor_vma_trackable(vma)) {
			if (!(r->flags & VALOR_RANGE_ALL))
				r->skipped += (vend - vstart) >> PAGE_SHIFT;
		} else {
			for (addr = vstart; addr < vend; addr += PAGE_SIZE) {
				arm_one(s, mm, addr, mode, r, &b);
				if (fatal_signal_pending(current))
					break;
				cond_resched();
			}
		}
		addr = vend;
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
	}
	if (b.lo < b.hi)
		valor_flush_tlb_range(mm, b.lo, b.hi);
	dec_tlb_flush_pending(mm);
	mmap_read_unlock(mm);
	mmput(mm);
	return err;
}

/*
 * Take the tracked pages of [start, end) out of the table onto @out;
 * caller holds s->lock.  Walks whichever is smaller, the range or the
 * table.
 */
static void detach_range(struct valor_session *s, unsigned long start,
			 unsigned long end, struct hlist_head *out)
{
	struct valor_page *p;
	struct hlist_node *tmp;
	unsigned long addr;
	int bkt;

	if ((end - start) >> PAGE_SHIFT <= s->nr_pages) {
		for (addr = start; addr < end; addr += PAGE_SIZE) {
			p = valor_page_find(s, addr);
			if (!p)
				continue;
			hash_del(&p->node);
			hlist_add_head(&p->node, out);
		}
		return;
	}
	hash_for_each_safe(s->pages, bkt, tmp, p, node) {
		if (p->addr < start || p->addr >= end)
			continue;
		hash_del(&p->node);
		hlist_add_head(&p->node, out);
	}
}

/* Account for, report and free pages taken out by detach_range(). */
static u64 release_detached(struct valor_session *s, struct hlist_head *list,
			    struct mm_struct *mm, enum valor_disarm_reason why)
{
	struct valor_page *p;
	struct hlist_node *tmp;
	unsigned long flags;
	u64 n = 0;

	hlist_for_each_entry_safe(p, tmp, list, node) {
		hlist_del(&p->node);
		if (mm && p->state == VALOR_PAGE_ARMED)
			valor_pte_restore(mm, p->addr);
		spin_lock_irqsave(&s->lock, flags);
		page_retire(s, p, why);
		spin_unlock_irqrestore(&s->lock, flags);
		n++;
	}
	return n;
}

int valor_pages_unwatch_range(struct valor_session *s, struct valor_range *r,
			      enum valor_disarm_reason why)
{
	HLIST_HEAD(list);
	unsigned long start, end, flags;
	struct mm_struct *mm;
	int err;

	r->armed = 0;
	r->skipped = 0;
	r->huge = 0;
	err = range_bounds(r, &start, &end);
	if (err)
		return err;
	mm = session_mm_get(s);
	if (mm && mmap_read_lock_killable(mm)) {
		mmput(mm);
		return -EINTR;
	}
	spin_lock_irqsave(&s->lock, flags);
	detach_range(s, start, end, &list);
	spin_unlock_irqrestore(&s->lock, flags);
	r->armed = release_detached(s, &list, mm, why);
	if (mm) {
		mmap_read_unlock(mm);
		mmput(mm);
	}
	return 0;
}

/*
 * Forget every page.  @restore: give armed PTEs back now (detach) rather
 * than leaving them for the kernel to repair on the next touch (exit,
 * where there is nothing to give back to).
 */
void valor_pages_forget_all(struct valor_session *s,
			    enum valor_disarm_reason why, bool restore)
{
	HLIST_HEAD(list);
	struct mm_struct *mm = NULL;
	unsigned long flags;

	if (restore) {
		mm = session_mm_get(s);
		if (mm)
			mmap_read_lock(mm);
	}
	spin_lock_irqsave(&s->lock, flags);
	detach_range(s, 0, TASK_SIZE_MAX, &list);
	spin_unlock_irqrestore(&s->lock, flags);
	release_detached(s, &list, mm, why);
	if (mm) {
		mmap_read_unlock(mm);
		mmput(mm);
	}
}

/*
 * Forget the pages of a range the kernel is changing under us, without
 * sleeping (an MMU notifier may not).  Pages open for a fault in progress
 * survive a CLEAR: that is the copy-on-write of the very access we let
 * through, and the step that follows re-arms the new PTE.
 */
void valor_pages_invalidate(struct valor_session *s, unsigned long start,
			    unsigned long end, enum valor_disarm_reason why)
{
	struct valor_page *p;
	struct hlist_node *tmp;
	HLIST_HEAD(list);
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	if (!s->nr_pages) {
		spin_unlock_irqrestore(&s->lock, flags);
		return;
	}
	detach_range(s, start, end, &list);
	hlist_for_each_entry_safe(p, tmp, &list, node) {
		hlist_del(&p->node);
		if (why == VALOR_DISARM_CLEAR && p->state == VALOR_PAGE_OPEN) {
			hash_add(s->pages, &p->node, p->addr);
			continue;
		}
		page_retire(s, p, why);
	}
	spin_unlock_irqrestore(&s->lock, flags);
}

/*
 * Close a page again after a step or a kernel access let it through.
 * Process context (task work of the target thread, or a worker).
 */
int valor_page_rearm(struct valor_session *s, unsigned long addr)
{
	struct vm_area_struct *vma;
	enum valor_pte_result res;
	struct valor_page *p;
	struct mm_struct *mm;
	unsigned long flags;

	mm = session_mm_get(s);
	if (!mm)
		return -ESRCH;
	mmap_read_lock(mm);
	spin_lock_irqsave(&s->lock, flags);
	p = valor_page_find(s, addr);
	if (!p || p->state != VALOR_PAGE_OPEN) {
		spin_unlock_irqrestore(&s->lock, flags);
		goto out;
	}
	p->state = VALOR_PAGE_ARMED;
	spin_unlock_irqrestore(&s->lock, flags);

	vma = find_vma(mm, addr);
	if (vma && vma->vm_start <= addr && valor_vma_trackable(vma)) {
		inc_tlb_flush_pending(mm);
		res = valor_pte_arm(mm, addr);
		if (res == VALOR_PTE_ARMED)
			valor_flush_tlb_range(mm, addr, addr + PAGE_SIZE);
		dec_tlb_flush_pending(mm);
	} else {
		res = VALOR_PTE_HUGE;
	}
	spin_lock_irqsave(&s->lock, flags);
	s->stats.rearms++;
	if (res == VALOR_PTE_HUGE) {
		p = valor_page_find(s, addr);
		if (p)
			valor_page_disarm(s, p, VALOR_DISARM_REARM);
	}
	spin_unlock_irqrestore(&s->lock, flags);
out:
	mmap_read_unlock(mm);
	mmput(mm);
	return 0;
}

/*
 * Re-arm the open pages nobody else re-arms: those opened for another
 * process or a kernel thread, or for a step that a signal handler
 * delays (re-arming them early only costs the stepped instruction one
 * more fault).
 */
void valor_pages_rearm_work(struct work_struct *work)
{
	struct delayed_work *dwork = to_delayed_work(work);
	struct valor_session *s;
	unsigned long addrs[32], flags;
	struct valor_page *p;
	unsigned int n = 0, i;
	bool more = false;
	int bkt;

	s = container_of(dwork, struct valor_session, rearm_work);
	spin_lock_irqsave(&s->lock, flags);
	hash_for_each(s->pages, bkt, p, node) {
		if (p->state != VALOR_PAGE_OPEN)
			continue;
		if (n == ARRAY_SIZE(addrs)) {
			more = true;
			break;
		}
		addrs[n++] = p->addr;
	}
	spin_unlock_irqrestore(&s->lock, flags);
	for (i = 0; i < n; i++)
		valor_page_rearm(s, addrs[i]);
	if (more)
		schedule_delayed_work(&s->rearm_work, 0);
}
