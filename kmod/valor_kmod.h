/* SPDX-License-Identifier: GPL-2.0 */
/*
 * valor.ko internals: one session per open /dev/valor, attached to one
 * target address space, tracking a set of its pages.
 *
 * Locking, outermost first:
 *   session->ioctl_lock (mutex)   serialises the control ioctls
 *   mm->mmap_lock (read)          held while page tables are walked
 *   PTE lock                      held while one PTE is changed
 *   session->lock (spinlock)      the page table, counters and the ring
 *   valor_steps_lock (raw)        the global single-step registry
 * The fault path (a kprobe on handle_mm_fault) runs with preemption off,
 * with the target's mmap_lock held by the faulting task and may take
 * the PTE lock and session->lock; it never sleeps.
 */
#ifndef VALOR_KMOD_H
#define VALOR_KMOD_H

#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/mm_types.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/valor.h>

struct pt_regs;
struct vm_area_struct;

enum valor_page_mode {
	VALOR_MODE_SCAN = 1,
	VALOR_MODE_WATCH = 2,
};

enum valor_page_state {
	VALOR_PAGE_ARMED = 1, /* its PTE faults (or is not populated) */
	VALOR_PAGE_OPEN = 2, /* let through for a step or a kernel access */
};

/* One tracked page of the target. */
struct valor_page {
	struct hlist_node node;
	unsigned long addr;
	u8 mode;
	u8 state;
};

/* Records waiting for read(); a power-of-two ring under session->lock. */
struct valor_ring {
	struct valor_event *rec;
	u32 mask;
	u64 head; /* next record to write */
	u64 tail; /* next record to read */
	u64 lost_pending; /* dropped since the last LOST record */
	bool header_sent;
	wait_queue_head_t wait;
	struct mutex read_lock; /* one reader copies out at a time */
};

#define VALOR_PAGE_HASH_BITS 12

struct valor_session {
	struct list_head node; /* valor_sessions, RCU */
	struct kref ref;
	struct mutex ioctl_lock; /* control ioctls, one at a time */
	spinlock_t lock; /* pages, counters, ring, state */

	/* Set at attach, constant until detach. */
	struct mm_struct *mm; /* mmgrab()bed */
	pid_t tgid;
	struct pid_namespace *pid_ns; /* the attacher's: event tids */
	struct mmu_notifier notifier;
	bool attached;
	bool detaching; /* our own unregister, not an exit */
	bool dead; /* the target's address space is gone */

	DECLARE_HASHTABLE(pages, VALOR_PAGE_HASH_BITS);
	u64 nr_pages;
	u64 nr_watched;

	struct valor_limits limits;
	struct valor_kmod_stats stats;
	u64 window_start_ns;
	u64 window_faults;

	struct delayed_work rearm_work; /* OPEN pages nobody else re-arms */
	struct valor_ring ring;
};

/* main.c: module parameters */
extern unsigned long valor_default_max_pages;
extern unsigned long valor_default_max_fault_rate;
extern unsigned long valor_max_pages_total;
extern atomic_long_t valor_pages_total;

/* ksyms.c: what the kernel does not export, found through kallsyms */
int valor_ksyms_init(void);
bool valor_tlb_flush_is_ranged(void);
void valor_flush_tlb_range(struct mm_struct *mm, unsigned long start,
			   unsigned long end);
bool valor_may_ptrace(struct task_struct *task);

/* ring.c */
int valor_ring_init(struct valor_ring *ring, unsigned int records);
void valor_ring_free(struct valor_ring *ring);
void valor_ring_push(struct valor_session *s, const struct valor_event *ev);
ssize_t valor_ring_read(struct valor_session *s, char __user *buf, size_t count,
			bool nonblock);
__poll_t valor_ring_poll(struct valor_session *s, struct file *file,
			 poll_table *wait);

/* session.c */
struct valor_session *valor_session_new(void);
void valor_session_put(struct valor_session *s);
void valor_session_get(struct valor_session *s);
int valor_session_attach(struct valor_session *s, pid_t pid);
int valor_session_detach(struct valor_session *s);
void valor_session_close(struct valor_session *s);
int valor_session_set_limits(struct valor_session *s,
			     const struct valor_limits *lim);
void valor_session_stats(struct valor_session *s, struct valor_kmod_stats *out);
void valor_emit(struct valor_session *s, u16 kind, u16 flags, u32 size,
		unsigned long addr, unsigned long ip, u64 arg);
void valor_emit_disarm(struct valor_session *s, unsigned long addr,
		       enum valor_disarm_reason why);
struct valor_session *valor_session_of_mm(struct mm_struct *mm);
extern struct list_head valor_sessions;

/* pages.c */
int valor_pages_init(void);
void valor_pages_exit(void);
struct valor_page *valor_page_find(struct valor_session *s, unsigned long addr);
void valor_page_forget(struct valor_session *s, struct valor_page *p);
void valor_page_disarm(struct valor_session *s, struct valor_page *p,
		       enum valor_disarm_reason why);
int valor_pages_arm_range(struct valor_session *s, struct valor_range *r,
			  enum valor_page_mode mode);
int valor_pages_unwatch_range(struct valor_session *s, struct valor_range *r,
			      enum valor_disarm_reason why);
void valor_pages_forget_all(struct valor_session *s,
			    enum valor_disarm_reason why, bool restore);
void valor_pages_invalidate(struct valor_session *s, unsigned long start,
			    unsigned long end, enum valor_disarm_reason why);
int valor_page_rearm(struct valor_session *s, unsigned long addr);
void valor_pages_rearm_work(struct work_struct *work);

/* pte.c: one PTE at a time, mmap_lock held */
enum valor_pte_result {
	VALOR_PTE_ARMED, /* the PTE now faults on any access */
	VALOR_PTE_EMPTY, /* nothing mapped: the first access faults */
	VALOR_PTE_HUGE, /* mapped by a huge page: refused */
};

enum valor_pte_result valor_pte_arm(struct mm_struct *mm, unsigned long addr);
void valor_pte_restore(struct mm_struct *mm, unsigned long addr);
bool valor_vma_trackable(struct vm_area_struct *vma);

/* fault.c */
int valor_fault_init(void);
void valor_fault_exit(void);

/* step.c */
int valor_step_init(void);
void valor_step_exit(void);
bool valor_step_begin(struct valor_session *s, struct pt_regs *uregs,
		      unsigned long address, u16 evf, u32 size);
bool valor_rearm_on_return(struct valor_session *s, unsigned long page);
void valor_step_reap(struct valor_session *s);

#endif /* VALOR_KMOD_H */
