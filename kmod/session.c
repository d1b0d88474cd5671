// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions: attaching to a target, its limits and statistics, and the MMU
 * notifier that tells us when the target's memory changes under us.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/rculist.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "valor_kmod.h"

static int gid = -1;
module_param(gid, int, 0644);
MODULE_PARM_DESC(gid, "group whose members may attach without CAP_SYS_ADMIN");

static unsigned int ring_records = 16384;
module_param(ring_records, uint, 0444);
MODULE_PARM_DESC(ring_records,
		 "records a session buffers for read() (a power of two)");

LIST_HEAD(valor_sessions);
static DEFINE_MUTEX(sessions_lock);

struct valor_session *valor_session_new(void)
{
	struct valor_session *s = kzalloc(sizeof(*s), GFP_KERNEL);
	unsigned int records =
		roundup_pow_of_two(clamp(ring_records, 64U, 1U << 22));

	if (!s)
		return NULL;
	if (valor_ring_init(&s->ring, records)) {
		kfree(s);
		return NULL;
	}
	s->limits.max_armed_pages = valor_default_max_pages;
	s->limits.max_faults_per_sec = valor_default_max_fault_rate;
	kref_init(&s->ref);
	mutex_init(&s->ioctl_lock);
	spin_lock_init(&s->lock);
	hash_init(s->pages);
	INIT_LIST_HEAD(&s->node);
	INIT_DELAYED_WORK(&s->rearm_work, valor_pages_rearm_work);
	return s;
}

static void session_free(struct kref *ref)
{
	struct valor_session *s = container_of(ref, struct valor_session, ref);

	valor_ring_free(&s->ring);
	kfree(s);
}

void valor_session_get(struct valor_session *s)
{
	kref_get(&s->ref);
}

void valor_session_put(struct valor_session *s)
{
	kref_put(&s->ref, session_free);
}

/* Caller holds s->lock. */
void valor_emit(struct valor_session *s, u16 kind, u16 flags, u32 size,
		unsigned long addr, unsigned long ip, u64 arg)
{
	struct valor_event ev = {
		.kind = kind,
		.flags = flags,
		.size = size,
		.tid = s->pid_ns ? __task_pid_nr_ns(current, PIDTYPE_PID,
						    s->pid_ns) :
				   0,
		.cpu = raw_smp_processor_id(),
		.addr = addr,
		.ip = ip,
		.ts_ns = ktime_get_ns(),
		.arg = arg,
	};

	valor_ring_push(s, &ev);
}

/* Caller holds s->lock. */
void valor_emit_disarm(struct valor_session *s, unsigned long addr,
		       enum valor_disarm_reason why)
{
	valor_emit(s, VALOR_EV_PAGE_DISARM, 0, 0, addr, 0, why);
}

static enum valor_disarm_reason reason_of(enum mmu_notifier_event event)
{
	switch (event) {
	case MMU_NOTIFY_UNMAP:
		return VALOR_DISARM_UNMAP;
	case MMU_NOTIFY_PROTECTION_VMA:
	case MMU_NOTIFY_PROTECTION_PAGE:
		return VALOR_DISARM_PROTECT;
	default:
		return VALOR_DISARM_CLEAR;
	}
}

static int notify_invalidate(struct mmu_notifier *mn,
			     const struct mmu_notifier_range *range)
{
	struct valor_session *s =
		container_of(mn, struct valor_session, notifier);

	if (!READ_ONCE(s->detaching))
		valor_pages_invalidate(s, range->start, range->end,
				       reason_of(range->event));
	return 0;
}

/* The target's address space is going away (exit, or exec). */
static void notify_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct valor_session *s =
		container_of(mn, struct valor_session, notifier);
	unsigned long flags;

	if (READ_ONCE(s->detaching))
		return;
	valor_pages_invalidate(s, 0, TASK_SIZE_MAX, VALOR_DISARM_EXIT);
	valor_step_reap(s);
	spin_lock_irqsave(&s->lock, flags);
	s->dead = true;
	valor_emit(s, VALOR_EV_TARGET_EXIT, 0, 0, 0, 0, 0);
	spin_unlock_irqrestore(&s->lock, flags);
	wake_up_interruptible(&s->ring.wait);
}

static const struct mmu_notifier_ops notifier_ops = {
	.release = notify_release,
	.invalidate_range_start = notify_invalidate,
};

static bool may_use_valor(void)
{
	kgid_t group = make_kgid(&init_user_ns, gid);

	if (capable(CAP_SYS_ADMIN))
		return true;
	return gid >= 0 && gid_valid(group) && in_group_p(group);
}

static struct task_struct *target_task(pid_t nr)
{
	struct task_struct *task;
	struct pid *pid;

	pid = find_get_pid(nr);
	if (!pid)
		return NULL;
	task = get_pid_task(pid, PIDTYPE_PID);
	put_pid(pid);
	return task;
}

int valor_session_attach(struct valor_session *s, pid_t nr)
{
	struct task_struct *task;
	struct valor_session *other;
	struct mm_struct *mm;
	int err;

	if (s->attached || s->dead)
		return -EBUSY;
	if (!may_use_valor())
		return -EPERM;
	if (nr <= 0)
		return -ESRCH;
	task = target_task(nr);
	if (!task)
		return -ESRCH;
	if (task->flags & PF_KTHREAD) {
		put_task_struct(task);
		return -EINVAL;
	}
	if (!valor_may_ptrace(task)) {
		put_task_struct(task);
		return -EPERM;
	}
	mm = get_task_mm(task);
	s->tgid = task_tgid_nr(task);
	put_task_struct(task);
	if (!mm)
		return -ESRCH;

	mutex_lock(&sessions_lock);
	list_for_each_entry(other, &valor_sessions, node) {
		if (other->mm == mm) {
			err = -EBUSY;
			goto unlock;
		}
	}
	s->notifier.ops = &notifier_ops;
	s->detaching = false;
	err = mmu_notifier_register(&s->notifier, mm);
	if (err)
		goto unlock;
	mmgrab(mm);
	s->pid_ns = get_pid_ns(task_active_pid_ns(current));
	s->mm = mm;
	memset(&s->stats, 0, sizeof(s->stats));
	s->window_start_ns = ktime_get_ns();
	s->window_faults = 0;
	s->attached = true;
	list_add_rcu(&s->node, &valor_sessions);
unlock:
	mutex_unlock(&sessions_lock);
	mmput(mm);
	return err;
}

int valor_session_detach(struct valor_session *s)
{
	struct mm_struct *mm = s->mm;
	unsigned long flags;

	if (!s->attached)
		return -EINVAL;
	mutex_lock(&sessions_lock);
	list_del_rcu(&s->node);
	mutex_unlock(&sessions_lock);
	/* No fault handler is looking at the session after this. */
	synchronize_rcu();

	valor_pages_forget_all(s, VALOR_DISARM_UNWATCH, true);
	WRITE_ONCE(s->detaching, true);
	mmu_notifier_unregister(&s->notifier, mm);
	cancel_delayed_work_sync(&s->rearm_work);

	spin_lock_irqsave(&s->lock, flags);
	s->attached = false;
	s->dead = false;
	s->mm = NULL;
	spin_unlock_irqrestore(&s->lock, flags);
	put_pid_ns(s->pid_ns);
	s->pid_ns = NULL;
	mmdrop(mm);
	wake_up_interruptible(&s->ring.wait);
	return 0;
}

void valor_session_close(struct valor_session *s)
{
	mutex_lock(&s->ioctl_lock);
	if (s->attached)
		valor_session_detach(s);
	mutex_unlock(&s->ioctl_lock);
	valor_session_put(s);
}

int valor_session_set_limits(struct valor_session *s,
			     const struct valor_limits *lim)
{
	unsigned long flags;

	if (lim->reserved[0] || lim->reserved[1])
		return -EINVAL;
	if (lim->max_armed_pages > valor_max_pages_total)
		return -EINVAL;
	spin_lock_irqsave(&s->lock, flags);
	if (lim->max_armed_pages)
		s->limits.max_armed_pages = lim->max_armed_pages;
	if (lim->max_faults_per_sec)
		s->limits.max_faults_per_sec = lim->max_faults_per_sec;
	spin_unlock_irqrestore(&s->lock, flags);
	return 0;
}

void valor_session_stats(struct valor_session *s, struct valor_kmod_stats *out)
{
	unsigned long flags;

	spin_lock_irqsave(&s->lock, flags);
	*out = s->stats;
	out->armed_pages = s->nr_pages;
	out->watched_pages = s->nr_watched;
	spin_unlock_irqrestore(&s->lock, flags);
	out->tlb_flush_range = valor_tlb_flush_is_ranged();
}
