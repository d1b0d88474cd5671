// SPDX-License-Identifier: GPL-2.0
/*
 * Letting one watched access through: the faulting thread returns to user
 * mode with the trap flag set, executes the instruction on the repaired
 * page, and traps; the die notifier swallows that trap (the program never
 * sees a SIGTRAP it did not ask for), reports the access, and queues task
 * work that re-arms the page before the thread is back in user mode.  A
 * kernel access made by a system call re-arms the same way when the call
 * returns.
 *
 * One record per thread with something pending, in a small global table
 * (the die notifier runs with interrupts off and cannot allocate).  A
 * record pins its session, the thread's struct pid and this module, so
 * none of them goes away while a trap or a task work is still due.
 *
 * Signals: if one is delivered between the fault and the step, the
 * kernel clears TF for the handler and saves it in the signal frame; the
 * step happens after sigreturn, and the record waits for it.  A fault of
 * the handler itself is not stepped (it is reported at once and its page
 * re-armed by the session's worker), so the pending record stays the
 * outer instruction's.  Re-arming a page while its step is pending is
 * harmless: the instruction faults again, finds the record, and the
 * access is not counted twice.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kdebug.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/ptrace.h>
#include <linux/sched/task_stack.h>
#include <linux/task_work.h>
#include <asm/debugreg.h>

#include "valor_kmod.h"

#define VALOR_STEP_SLOTS 256
#define VALOR_STEP_PAGES 4

enum step_state {
	STEP_FREE = 0,
	STEP_PENDING, /* TF set by us; the trap is still to come */
	STEP_REARM, /* nothing to wait for: re-arm and release */
};

struct step_access {
	unsigned long addr;
	u32 size;
	u16 evf;
};

struct valor_step {
	struct task_struct *task; /* identity only, never dereferenced */
	struct pid *pid;
	struct valor_session *session;
	enum step_state state;
	bool own_tf; /* the program had TF set itself */
	bool queued; /* work is queued on the task */
	unsigned long ip; /* of the stepped instruction */
	unsigned int npages;
	unsigned long pages[VALOR_STEP_PAGES];
	/* The accesses of the step, reported once it has happened. */
	unsigned int naccesses;
	struct step_access accesses[VALOR_STEP_PAGES];
	struct callback_head work;
};

static struct valor_step steps[VALOR_STEP_SLOTS];
static DEFINE_RAW_SPINLOCK(steps_lock);
static atomic_t steps_pending = ATOMIC_INIT(0);

/* Caller holds steps_lock. */
static struct valor_step *step_of(struct task_struct *task)
{
	unsigned int i;

	for (i = 0; i < VALOR_STEP_SLOTS; i++)
		if (steps[i].state != STEP_FREE && steps[i].task == task)
			return &steps[i];
	return NULL;
}

/* Caller holds steps_lock. */
static struct valor_step *step_new(struct valor_session *s,
				   enum step_state state)
{
	struct valor_step *st;
	unsigned int i;

	for (i = 0; i < VALOR_STEP_SLOTS; i++) {
		st = &steps[i];
		if (st->state != STEP_FREE)
			continue;
		st->state = state;
		st->task = current;
		st->pid = get_pid(task_pid(current));
		st->session = s;
		valor_session_get(s);
		__module_get(THIS_MODULE);
		atomic_inc(&steps_pending);
		st->npages = 0;
		st->naccesses = 0;
		st->queued = false;
		st->own_tf = false;
		st->ip = 0;
		return st;
	}
	return NULL;
}

/*
 * Unlink a record; caller holds steps_lock and drops the references the
 * record held afterwards, with drop_refs(), outside the lock.
 */
static void step_unlink(struct valor_step *st)
{
	st->task = NULL;
	st->state = STEP_FREE;
	atomic_dec(&steps_pending);
}

static void drop_refs(struct pid *pid, struct valor_session *s)
{
	put_pid(pid);
	valor_session_put(s);
	module_put(THIS_MODULE);
}

static bool step_add_page(struct valor_step *st, unsigned long page)
{
	unsigned int i;

	for (i = 0; i < st->npages; i++)
		if (st->pages[i] == page)
			return true;
	if (st->npages == VALOR_STEP_PAGES)
		return false;
	st->pages[st->npages++] = page;
	return true;
}

/* Caller holds steps_lock.  An access already recorded is not repeated. */
static bool step_add_access(struct valor_step *st, unsigned long address,
			    u16 evf, u32 size)
{
	unsigned int i;

	for (i = 0; i < st->naccesses; i++)
		if (st->accesses[i].addr == address)
			return true;
	if (i == VALOR_STEP_PAGES || !step_add_page(st, address & PAGE_MASK))
		return false;
	st->accesses[i].addr = address;
	st->accesses[i].evf = evf;
	st->accesses[i].size = size;
	st->naccesses++;
	return true;
}

/* Task work: re-arm what the record holds, then free it. */
static void step_work(struct callback_head *work)
{
	struct valor_step *st = container_of(work, struct valor_step, work);
	unsigned long pages[VALOR_STEP_PAGES], flags;
	struct valor_session *s;
	unsigned int i, npages;
	struct pid *pid;

	raw_spin_lock_irqsave(&steps_lock, flags);
	st->queued = false;
	if (st->state == STEP_PENDING && !(current->flags & PF_EXITING)) {
		/* A step began after this work was queued: its trap requeues. */
		raw_spin_unlock_irqrestore(&steps_lock, flags);
		return;
	}
	s = st->session;
	pid = st->pid;
	npages = st->npages;
	memcpy(pages, st->pages, sizeof(pages));
	step_unlink(st);
	raw_spin_unlock_irqrestore(&steps_lock, flags);

	for (i = 0; i < npages; i++)
		valor_page_rearm(s, pages[i]);
	drop_refs(pid, s);
}

/* Caller holds steps_lock; false if the work cannot be queued. */
static bool step_queue(struct valor_step *st)
{
	if (st->queued)
		return true;
	init_task_work(&st->work, step_work);
	if (task_work_add(current, &st->work, TWA_RESUME))
		return false;
	st->queued = true;
	return true;
}

/*
 * Fault path of a watched page by the current thread: single-step the
 * faulting instruction and report its access (@address, event flags
 * @evf, @size bytes) after the step.  False if that cannot be done (no
 * record free, too many pages for one instruction, or a signal handler
 * running over a pending step); the caller reports and re-arms then.
 */
bool valor_step_begin(struct valor_session *s, struct pt_regs *uregs,
		      unsigned long address, u16 evf, u32 size)
{
	bool tf = uregs->flags & X86_EFLAGS_TF;
	struct valor_step *st;
	unsigned long flags;
	bool ok = false;

	raw_spin_lock_irqsave(&steps_lock, flags);
	st = step_of(current);
	if (st) {
		if (st->session != s)
			goto out;
		if (st->state == STEP_PENDING) {
			/*
			 * With TF still set this is the stepped instruction
			 * faulting again (a second page, or a page re-armed
			 * meanwhile); without, a signal handler.
			 */
			ok = tf && uregs->ip == st->ip &&
			     step_add_access(st, address, evf, size);
			goto out;
		}
		/* Re-arming after a system call is queued: step as well. */
		if (!step_add_access(st, address, evf, size))
			goto out;
		st->state = STEP_PENDING;
		st->own_tf = tf;
		st->ip = uregs->ip;
		uregs->flags |= X86_EFLAGS_TF;
		ok = true;
		goto out;
	}
	st = step_new(s, STEP_PENDING);
	if (!st)
		goto out;
	st->own_tf = tf;
	st->ip = uregs->ip;
	step_add_access(st, address, evf, size);
	uregs->flags |= X86_EFLAGS_TF;
	ok = true;
out:
	raw_spin_unlock_irqrestore(&steps_lock, flags);
	return ok;
}

/* Fault path, a system call of the current thread touched a page. */
bool valor_rearm_on_return(struct valor_session *s, unsigned long page)
{
	struct valor_session *put_s = NULL;
	struct pid *put_pid_ref = NULL;
	struct valor_step *st;
	unsigned long flags;
	bool ok = false;

	raw_spin_lock_irqsave(&steps_lock, flags);
	st = step_of(current);
	if (st) {
		ok = st->session == s && st->state == STEP_REARM &&
		     step_add_page(st, page) && step_queue(st);
		goto out;
	}
	st = step_new(s, STEP_REARM);
	if (!st)
		goto out;
	step_add_page(st, page);
	ok = step_queue(st);
	if (!ok) {
		put_s = st->session;
		put_pid_ref = st->pid;
		step_unlink(st);
	}
out:
	raw_spin_unlock_irqrestore(&steps_lock, flags);
	/* Not the last references: the file and the thread hold them. */
	if (put_s)
		drop_refs(put_pid_ref, put_s);
	return ok;
}

/*
 * The target's address space is going away: no thread of it returns to
 * user mode again, so steps still pending will never trap.  Records with
 * work queued are freed by that work (exit runs it).
 */
void valor_step_reap(struct valor_session *s)
{
	struct valor_session *owner;
	unsigned long flags;
	struct pid *pid;
	unsigned int i;

	for (i = 0; i < VALOR_STEP_SLOTS; i++) {
		struct valor_step *st = &steps[i];

		raw_spin_lock_irqsave(&steps_lock, flags);
		if (st->state == STEP_FREE || st->session != s || st->queued) {
			raw_spin_unlock_irqrestore(&steps_lock, flags);
			continue;
		}
		owner = st->session;
		pid = st->pid;
		step_unlink(st);
		raw_spin_unlock_irqrestore(&steps_lock, flags);
		drop_refs(pid, owner);
	}
}

static int on_die(struct notifier_block *nb, unsigned long val, void *data)
{
	struct step_access done[VALOR_STEP_PAGES];
	struct die_args *args = data;
	unsigned long *dr6 = (unsigned long *)args->err;
	struct valor_session *s;
	struct valor_step *st;
	unsigned long flags, ip;
	unsigned int i, n;
	bool own_tf;

	if (val != DIE_DEBUG || !atomic_read(&steps_pending) ||
	    !user_mode(args->regs) || !(*dr6 & DR_STEP))
		return NOTIFY_DONE;

	raw_spin_lock_irqsave(&steps_lock, flags);
	st = step_of(current);
	if (!st || st->state != STEP_PENDING) {
		raw_spin_unlock_irqrestore(&steps_lock, flags);
		return NOTIFY_DONE;
	}
	st->state = STEP_REARM;
	own_tf = st->own_tf;
	s = st->session;
	ip = st->ip;
	n = st->naccesses;
	memcpy(done, st->accesses, n * sizeof(done[0]));
	st->naccesses = 0;
	/* Cannot fail: the thread is on its way back to user mode. */
	WARN_ON_ONCE(!step_queue(st));
	raw_spin_unlock_irqrestore(&steps_lock, flags);

	/* The record's reference keeps the session until its work ran. */
	spin_lock_irqsave(&s->lock, flags);
	for (i = 0; i < n; i++) {
		s->stats.stepped++;
		valor_emit(s, VALOR_EV_ACCESS, done[i].evf, done[i].size,
			   done[i].addr, ip, 0);
	}
	spin_unlock_irqrestore(&s->lock, flags);

	if (own_tf)
		return NOTIFY_DONE; /* the program's own trap: deliver it */
	args->regs->flags &= ~X86_EFLAGS_TF;
	*dr6 &= ~DR_STEP;
	return (*dr6 & DR_TRAP_BITS) ? NOTIFY_DONE : NOTIFY_STOP;
}

static struct notifier_block die_nb = {
	.notifier_call = on_die,
	/* Before kgdb and the kernel's own handlers see a stray step. */
	.priority = INT_MAX,
};

int valor_step_init(void)
{
	return register_die_notifier(&die_nb);
}

void valor_step_exit(void)
{
	unregister_die_notifier(&die_nb);
}
