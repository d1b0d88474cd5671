// SPDX-License-Identifier: GPL-2.0
/*
 * Observing the target: a kprobe on handle_mm_fault(), the one function
 * every page fault on user memory goes through (the CPU's own faults,
 * the kernel's uaccess faults and get_user_pages() of other processes).
 *
 * The handler runs before the fault is handled, with the faulting task's
 * mmap_lock held and preemption disabled.  It finds the session by one
 * compare of the VMA's mm per session, looks the page up, and then:
 *
 *  - scan: reports the first touch and forgets the page; the kernel then
 *    repairs the protnone PTE as it would a NUMA hinting fault;
 *  - watch, a user access it can decode: performs the access itself on
 *    a kernel mapping of the page, advances the instruction pointer and
 *    makes handle_mm_fault() return 0 without running (the page stays
 *    armed, so other threads cannot slip through while it is open);
 *  - watch, anything else: lets the fault repair the page, single-steps
 *    the instruction (step.c) and re-arms the page on the way back to
 *    user mode; a kernel access re-arms when the system call returns.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pkeys.h>
#include <linux/rculist.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>

#include "insn_emul.h"
#include "valor_kmod.h"

static bool emulate = true;
module_param(emulate, bool, 0644);
MODULE_PARM_DESC(emulate, "perform decodable watched accesses (0: step)");

/*
 * Where a skipped handle_mm_fault() "returns" from: the kprobe sets the
 * probed function's ip here, and this returns to its caller with the
 * registers the handler left, ax = 0 (no error, nothing to retry).
 */
static noinline notrace void skip_fault(void)
{
	barrier();
}

static bool over_budget(struct valor_session *s)
{
	u64 now = ktime_get_ns();

	if (now - s->window_start_ns >= NSEC_PER_SEC) {
		s->window_start_ns = now;
		s->window_faults = 0;
	}
	return ++s->window_faults > s->limits.max_faults_per_sec;
}

static unsigned int fetch_insn(const struct pt_regs *uregs, u8 *bytes)
{
	unsigned long ip = uregs->ip;
	unsigned int n = VALOR_INSN_MAX_LEN;

	if (!copy_from_user_nofault(bytes, (const void __user *)ip, n))
		return n;
	/* The instruction may end just before an unmapped page. */
	n = min_t(unsigned long, n, PAGE_SIZE - offset_in_page(ip));
	if (!copy_from_user_nofault(bytes, (const void __user *)ip, n))
		return n;
	return 0;
}

/*
 * The faulting user instruction, decoded: its operand must be the
 * faulting address, within the page.  A read-modify-write faults as a
 * read on a protnone page; the decoded form says it also writes.
 */
static bool decode_access(unsigned long address, struct pt_regs *uregs,
			  struct valor_insn *insn)
{
	u8 bytes[VALOR_INSN_MAX_LEN];
	unsigned int avail;
	unsigned long ea;

	/* In compat mode 40-4f are inc/dec, not REX: not ours to decode. */
	if (!user_64bit_mode(uregs))
		return false;
	avail = fetch_insn(uregs, bytes);
	if (!avail || valor_insn_decode(insn, bytes, avail))
		return false;
	if (valor_insn_address(insn, uregs, &ea) || ea != address)
		return false;
	return offset_in_page(address) + insn->opsize <= PAGE_SIZE;
}

/*
 * Do the decoded access ourselves; true if done.  The PTE lock is held
 * across it, so the page cannot be unmapped, migrated or restored
 * meanwhile; the PTE must still be the protnone one we installed.
 */
static bool emulate_access(struct vm_area_struct *vma, unsigned long address,
			   struct pt_regs *uregs, const struct valor_insn *insn)
{
	struct mm_struct *mm = vma->vm_mm;
	spinlock_t *ptl; /* the PTE lock */
	pte_t *ptep, pte;
	bool done = false;
	void *kaddr;

	/*
	 * A debugger's (or the program's) single step would skip a whole
	 * instruction; a protection key is checked only after the PTE
	 * allows the access, so doing it ourselves would bypass PKRU.
	 */
	if ((uregs->flags & X86_EFLAGS_TF) || vma_pkey(vma))
		return false;
	if (follow_pte(mm, address, &ptep, &ptl))
		return false;
	pte = ptep_get(ptep);
	/* Copy-on-write and the zero page are the kernel's to resolve. */
	if (!pte_protnone(pte) || (insn->writes && !pte_write(pte)) ||
	    !pfn_valid(pte_pfn(pte)))
		goto unlock;
	kaddr = kmap_local_page(pfn_to_page(pte_pfn(pte)));
	done = !valor_insn_emulate(insn, uregs,
				   kaddr + offset_in_page(address));
	kunmap_local(kaddr);
	/* The CPU would have set these bits; reclaim relies on them. */
	if (done && (!pte_young(pte) || (insn->writes && !pte_dirty(pte)))) {
		pte = pte_mkyoung(pte);
		if (insn->writes)
			pte = pte_mkdirty(pte);
		set_pte_at(mm, address, ptep, pte);
	}
unlock:
	pte_unmap_unlock(ptep, ptl);
	return done;
}

enum fault_action {
	FAULT_IGNORE, /* not ours: the kernel handles it */
	FAULT_SKIP, /* emulated: handle_mm_fault() must not run */
};

/* Watch mode, a user access by a thread of the target. */
static enum fault_action watch_user_fault(struct valor_session *s,
					  struct vm_area_struct *vma,
					  unsigned long address,
					  struct pt_regs *uregs, u16 evf)
{
	unsigned long page = address & PAGE_MASK, ip = uregs->ip, flags;
	struct valor_insn insn;
	struct valor_page *p;
	u32 size = 0;

	if (decode_access(address, uregs, &insn)) {
		if (insn.writes)
			evf |= VALOR_EVF_WRITE;
		size = insn.opsize;
		if (READ_ONCE(emulate) &&
		    emulate_access(vma, address, uregs, &insn)) {
			spin_lock_irqsave(&s->lock, flags);
			s->stats.emulated++;
			valor_emit(s, VALOR_EV_ACCESS, evf | VALOR_EVF_EMULATED,
				   size, address, ip, 0);
			spin_unlock_irqrestore(&s->lock, flags);
			return FAULT_SKIP;
		}
	}

	spin_lock_irqsave(&s->lock, flags);
	p = valor_page_find(s, page);
	if (!p || p->state != VALOR_PAGE_ARMED) {
		spin_unlock_irqrestore(&s->lock, flags);
		return FAULT_IGNORE;
	}
	p->state = VALOR_PAGE_OPEN;
	spin_unlock_irqrestore(&s->lock, flags);

	/* Reported when the step has happened: a signal may delay it. */
	if (valor_step_begin(s, uregs, address, evf | VALOR_EVF_STEPPED, size))
		return FAULT_IGNORE;
	spin_lock_irqsave(&s->lock, flags);
	s->stats.stepped++;
	valor_emit(s, VALOR_EV_ACCESS, evf | VALOR_EVF_STEPPED, size, address,
		   ip, 0);
	spin_unlock_irqrestore(&s->lock, flags);
	schedule_delayed_work(&s->rearm_work, 1);
	return FAULT_IGNORE;
}

static enum fault_action session_fault(struct valor_session *s,
				       struct vm_area_struct *vma,
				       unsigned long address,
				       unsigned int fault_flags,
				       struct pt_regs *uregs)
{
	unsigned long page = address & PAGE_MASK, ip = 0, flags;
	bool own = current->mm == s->mm;
	bool user = (fault_flags & FAULT_FLAG_USER) && uregs &&
		    user_mode(uregs);
	u16 evf = (fault_flags & FAULT_FLAG_WRITE) ? VALOR_EVF_WRITE : 0;
	struct valor_page *p;
	bool rearm_here = false;

	if (user)
		ip = uregs->ip;
	else if (own)
		ip = task_pt_regs(current)->ip;

	spin_lock_irqsave(&s->lock, flags);
	p = valor_page_find(s, page);
	if (!p || p->state != VALOR_PAGE_ARMED) {
		spin_unlock_irqrestore(&s->lock, flags);
		return FAULT_IGNORE;
	}
	s->stats.faults++;
	if (!user) {
		evf |= VALOR_EVF_KERNEL;
		s->stats.kernel_accesses++;
	}
	if (over_budget(s)) {
		valor_emit(s, VALOR_EV_ACCESS, evf, 0, address, ip, 0);
		s->stats.budget_disarms++;
		valor_page_disarm(s, p, VALOR_DISARM_BUDGET);
		spin_unlock_irqrestore(&s->lock, flags);
		return FAULT_IGNORE;
	}
	if (p->mode == VALOR_MODE_SCAN) {
		valor_emit(s, VALOR_EV_ACCESS, evf | VALOR_EVF_FIRST_TOUCH, 0,
			   address, ip, 0);
		valor_page_forget(s, p);
		spin_unlock_irqrestore(&s->lock, flags);
		return FAULT_IGNORE;
	}
	/*
	 * Code run from a watched page (a JIT's) is not a data access: let
	 * it run; the page closes again a tick later.
	 */
	if (fault_flags & FAULT_FLAG_INSTRUCTION) {
		p->state = VALOR_PAGE_OPEN;
		spin_unlock_irqrestore(&s->lock, flags);
		schedule_delayed_work(&s->rearm_work, 1);
		return FAULT_IGNORE;
	}
	if (user && own) {
		spin_unlock_irqrestore(&s->lock, flags);
		return watch_user_fault(s, vma, address, uregs, evf);
	}
	/* A system call's or another process's access: open until it ends. */
	valor_emit(s, VALOR_EV_ACCESS, evf, 0, address, ip, 0);
	p->state = VALOR_PAGE_OPEN;
	rearm_here = own && !(current->flags & PF_KTHREAD);
	spin_unlock_irqrestore(&s->lock, flags);

	if (!rearm_here || !valor_rearm_on_return(s, page))
		schedule_delayed_work(&s->rearm_work, 1);
	return FAULT_IGNORE;
}

static int on_handle_mm_fault(struct kprobe *kp, struct pt_regs *regs)
{
	struct vm_area_struct *vma = (struct vm_area_struct *)regs->di;
	unsigned long address = regs->si;
	unsigned int fault_flags = regs->dx;
	struct pt_regs *uregs = (struct pt_regs *)regs->cx;
	enum fault_action action = FAULT_IGNORE;
	struct valor_session *s;

	rcu_read_lock();
	list_for_each_entry_rcu(s, &valor_sessions, node) {
		if (s->mm == vma->vm_mm) {
			action = session_fault(s, vma, address, fault_flags,
					       uregs);
			break;
		}
	}
	rcu_read_unlock();
	if (action != FAULT_SKIP)
		return 0;
	regs->ax = 0;
	instruction_pointer_set(regs, (unsigned long)skip_fault);
	return 1;
}

/*
 * Unused but for its presence: a kprobe with a post handler is armed
 * through ftrace with FTRACE_OPS_FL_IPMODIFY, which is what declares
 * (and reserves) the right to change the probed function's ip.
 */
static void after_handle_mm_fault(struct kprobe *kp, struct pt_regs *regs,
				  unsigned long flags)
{
}

static struct kprobe fault_probe = {
	.symbol_name = "handle_mm_fault",
	.pre_handler = on_handle_mm_fault,
	.post_handler = after_handle_mm_fault,
};

int valor_fault_init(void)
{
	int err = register_kprobe(&fault_probe);

	if (err)
		pr_err("cannot probe handle_mm_fault: %d\n", err);
	return err;
}

void valor_fault_exit(void)
{
	unregister_kprobe(&fault_probe);
}
