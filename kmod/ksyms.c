// SPDX-License-Identifier: GPL-2.0
/*
 * The two kernel functions valor.ko needs but the kernel does not export,
 * found through kallsyms_lookup_name(), itself unexported since 5.7 and
 * found as the address of a kprobe placed on it.
 *
 * ptrace_may_access() is mandatory: without it the module cannot apply the
 * ptrace rule to attaching, so it refuses to load.  flush_tlb_mm_range()
 * is preferred for TLB shootdowns after arming (only the CPUs that run the
 * target, only the armed range); without it, or with tlb_flush=all, the
 * module flushes every CPU's whole TLB, which is correct but slower.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <asm/tlbflush.h>

#include "valor_kmod.h"

static bool tlb_flush_all;
module_param(tlb_flush_all, bool, 0444);
MODULE_PARM_DESC(tlb_flush_all,
		 "flush every CPU's whole TLB instead of the armed range");

typedef unsigned long (*kallsyms_lookup_name_fn)(const char *name);
typedef void (*flush_tlb_mm_range_fn)(struct mm_struct *mm, unsigned long start,
				      unsigned long end,
				      unsigned int stride_shift,
				      bool freed_tables);
typedef bool (*ptrace_may_access_fn)(struct task_struct *task,
				     unsigned int mode);

static flush_tlb_mm_range_fn flush_range;
static ptrace_may_access_fn may_access;

static kallsyms_lookup_name_fn find_kallsyms_lookup_name(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	void *addr;

	if (register_kprobe(&kp))
		return NULL;
	addr = kp.addr;
	unregister_kprobe(&kp);
	return (kallsyms_lookup_name_fn)addr;
}

int valor_ksyms_init(void)
{
	kallsyms_lookup_name_fn lookup = find_kallsyms_lookup_name();

	if (!lookup) {
		pr_err("kallsyms_lookup_name not found (CONFIG_KPROBES?)\n");
		return -ENOENT;
	}
	may_access = (ptrace_may_access_fn)lookup("ptrace_may_access");
	if (!may_access) {
		pr_err("ptrace_may_access not found: cannot check attach rights\n");
		return -ENOENT;
	}
	if (!tlb_flush_all) {
		flush_range =
			(flush_tlb_mm_range_fn)lookup("flush_tlb_mm_range");
		if (!flush_range)
			pr_warn("flush_tlb_mm_range not found: flushing all TLBs\n");
	}
	return 0;
}

bool valor_tlb_flush_is_ranged(void)
{
	return flush_range;
}

static void flush_this_cpu(void *unused)
{
	__flush_tlb_all();
}

void valor_flush_tlb_range(struct mm_struct *mm, unsigned long start,
			   unsigned long end)
{
	if (flush_range)
		flush_range(mm, start, end, PAGE_SHIFT, false);
	else
		on_each_cpu(flush_this_cpu, NULL, 1);
}

bool valor_may_ptrace(struct task_struct *task)
{
	return may_access(task, PTRACE_MODE_ATTACH_REALCREDS);
}
