// SPDX-License-Identifier: GPL-2.0
/*
 * Arming one page: its PTE becomes a NUMA-hinting "protnone" PTE.
 *
 * That is the one kind of inaccessible-but-present PTE the kernel's own
 * fault path repairs by itself (handle_pte_fault() -> do_numa_page(),
 * whether NUMA balancing is on or not), so a page armed here and then
 * forgotten by us costs the target one minor fault and nothing else.
 * The write bit is kept: do_numa_page() makes the page writable again
 * when the protnone PTE carries it.
 *
 * pte_modify() would do the transformation but needs cc_mask, which 6.1
 * does not export; the bits are simple enough to change here: clear
 * _PAGE_PRESENT, set _PAGE_PROTNONE, and invert the PFN the way the L1TF
 * mitigation stores it in non-present PTEs (flip_protnone_guard()).
 *
 * The caller holds the target's mmap_lock and flushes the TLB after a
 * batch, bracketed by inc/dec_tlb_flush_pending() so that the kernel's
 * own page-table walkers know a flush is due.
 */
#include <linux/mm.h>
#include <linux/pgtable.h>

#include "valor_kmod.h"

bool valor_vma_trackable(struct vm_area_struct *vma)
{
	const unsigned long refused = VM_SHARED | VM_IO | VM_PFNMAP |
				      VM_MIXEDMAP | VM_HUGETLB;

	return vma_is_anonymous(vma) && !(vma->vm_flags & refused) &&
	       vma_is_accessible(vma);
}

static pteval_t protnone_of(pteval_t val)
{
	pteval_t armed = (val & ~_PAGE_PRESENT) | _PAGE_PROTNONE;

	return flip_protnone_guard(val, armed, PTE_PFN_MASK);
}

static pteval_t present_of(pteval_t val)
{
	pteval_t open = (val & ~_PAGE_PROTNONE) | _PAGE_PRESENT;

	return flip_protnone_guard(val, open, PTE_PFN_MASK);
}

/*
 * The PMD for @addr, or NULL when nothing is mapped there; *huge when it
 * maps a transparent huge page (follow_pte() would just fail on it, and
 * we want to tell the caller why).
 */
static pmd_t *walk_to_pmd(struct mm_struct *mm, unsigned long addr, bool *huge)
{
	pgd_t *pgd;
	p4d_t *p4d;
	pud_t *pud;
	pmd_t *pmd, val;

	*huge = false;
	pgd = pgd_offset(mm, addr);
	if (pgd_none(*pgd) || pgd_bad(*pgd))
		return NULL;
	p4d = p4d_offset(pgd, addr);
	if (p4d_none(*p4d) || p4d_bad(*p4d))
		return NULL;
	pud = pud_offset(p4d, addr);
	if (pud_none(*pud))
		return NULL;
	if (pud_trans_huge(*pud) || pud_devmap(*pud) || pud_bad(*pud)) {
		*huge = true;
		return NULL;
	}
	pmd = pmd_offset(pud, addr);
	val = READ_ONCE(*pmd);
	if (pmd_none(val))
		return NULL;
	if (pmd_trans_huge(val) || pmd_devmap(val) || !pmd_present(val) ||
	    pmd_bad(val)) {
		*huge = pmd_trans_huge(val) || pmd_devmap(val);
		return NULL;
	}
	return pmd;
}

enum valor_pte_result valor_pte_arm(struct mm_struct *mm, unsigned long addr)
{
	spinlock_t *ptl; /* the PTE lock */
	pte_t *ptep, old;
	bool huge;

	if (!walk_to_pmd(mm, addr, &huge))
		return huge ? VALOR_PTE_HUGE : VALOR_PTE_EMPTY;
	/* Not present (none, swap): the next access faults anyway. */
	if (follow_pte(mm, addr, &ptep, &ptl))
		return VALOR_PTE_EMPTY;
	old = ptep_get(ptep);
	if (!pte_protnone(old)) {
		old = ptep_get_and_clear(mm, addr, ptep);
		set_pte_at(mm, addr, ptep, __pte(protnone_of(pte_val(old))));
	}
	pte_unmap_unlock(ptep, ptl);
	return VALOR_PTE_ARMED;
}

/*
 * Give the page back before the kernel would have to: only a PTE that is
 * still protnone is touched, so one the kernel changed since is left to it.
 */
void valor_pte_restore(struct mm_struct *mm, unsigned long addr)
{
	struct vm_area_struct *vma = find_vma(mm, addr);
	spinlock_t *ptl; /* the PTE lock */
	pte_t *ptep, old;
	bool huge;

	/* A PROT_NONE mapping's PTEs are protnone by right: leave them. */
	if (!vma || vma->vm_start > addr || !valor_vma_trackable(vma))
		return;
	if (!walk_to_pmd(mm, addr, &huge))
		return;
	if (follow_pte(mm, addr, &ptep, &ptl))
		return;
	old = ptep_get(ptep);
	if (pte_protnone(old)) {
		old = ptep_get_and_clear(mm, addr, ptep);
		set_pte_at(mm, addr, ptep, __pte(present_of(pte_val(old))));
	}
	pte_unmap_unlock(ptep, ptl);
}
