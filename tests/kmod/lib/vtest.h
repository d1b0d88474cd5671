/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the valor.ko guest tests: the device, its ioctls, reading
 * events, and a target process that the tests drive one access at a
 * time, from threads whose ids and instruction addresses they know.
 */
#ifndef VTEST_H
#define VTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/valor.h>

#define VT_DEV "/dev/valor"
#define VT_PAGE 4096UL
#define VT_MAX_THREADS 4

/* ---- the device ---- */

int vt_open(void); /* O_RDWR|O_CLOEXEC, -1 on error */
int vt_attach(int fd, pid_t pid); /* ioctl result, -1/errno */
int vt_range(int fd, unsigned long cmd, uint64_t start, uint64_t len,
	     struct valor_range *out);
int vt_stats(int fd, struct valor_kmod_stats *st);
int vt_set_limits(int fd, uint64_t max_pages, uint64_t max_rate);
/* Read the stream header; 0 if it is the one this tree expects. */
int vt_read_header(int fd);
/*
 * Collect events until none arrives for @settle_ms (or @max are in);
 * returns the number read, -1 on a read error.
 */
int vt_read_events(int fd, struct valor_event *ev, int max, int settle_ms);
/* Count events of @kind whose address is within [lo, hi). */
int vt_count(const struct valor_event *ev, int n, unsigned int kind,
	     uint64_t lo, uint64_t hi);
/* Write a module parameter under /sys/module/valor/parameters. */
int vt_set_param(const char *name, const char *value);
/* Lines of dmesg since boot containing a kernel warning. */
int vt_kernel_warnings(void);
const char *vt_kind_name(unsigned int kind);

/* ---- the target process ---- */

enum vt_op {
	VT_TID, /* -> val = the thread's tid */
	VT_MMAP, /* n bytes of private anonymous memory, small pages -> val */
	VT_MMAP_HUGE, /* n bytes, 2 MiB aligned, MADV_HUGEPAGE -> val */
	VT_LOAD, /* n bytes (1,2,4,8) at addr -> val, ip */
	VT_STORE, /* n bytes of val at addr -> ip */
	VT_ADD, /* add val to the u64 at addr (one RMW insn) -> ip */
	VT_LOCK_ADD, /* lock add val to the u64 at addr -> ip */
	VT_XCHG, /* xchg val with the u64 at addr -> val (old), ip */
	VT_SSE_LOAD, /* movdqu of 16 bytes at addr -> val (low 8), ip */
	VT_LOOP_LOCK_ADD, /* n times lock add 1 to the u64 at addr -> ip */
	VT_LOOP_STORE, /* n stores of i to the u64 at addr -> ip */
	VT_SYSREAD, /* read() n bytes of 0x5a from a pipe into addr */
	VT_FILL, /* n bytes at addr = byte pattern seeded by val */
	VT_SUM, /* FNV-1a of n bytes at addr -> val */
	VT_WORK, /* atomic adds over n bytes at addr, seed val */
	VT_MIXED, /* libc-style work over n bytes at addr: memset,
			 * memcpy, qsort, strlen, struct updates */
	VT_SIGNALED_STORES, /* n stores to the u64 at addr while a 100 us
			 * interval timer's handler loads it -> val =
			 * handler runs, ip = the store's */
	VT_MADVISE, /* madvise(addr, n, val) */
	VT_EXEC, /* execve("/bin/sleep", "sleep", "1000") */
	VT_MUNMAP, /* n bytes at addr */
	VT_MPROTECT, /* n bytes at addr to prot val */
	VT_FORK, /* child writes val at addr and exits; parent reads
			 * addr -> val = (child status << 32) | parent's
			 * value after */
	VT_EXIT, /* the whole target exits with status val */
};

struct vt_cmd {
	int op;
	uint64_t addr;
	uint64_t val;
	uint64_t n;
};

struct vt_res {
	int64_t ret; /* 0 or -errno */
	uint64_t val;
	uint64_t ip; /* address of the accessing instruction */
};

struct vt_target {
	pid_t pid;
	int nthreads;
	int cmd[VT_MAX_THREADS];
	int res[VT_MAX_THREADS];
	pid_t tid[VT_MAX_THREADS];
};

/* Fork a target with @nthreads worker threads; 0 or -1. */
int vt_target_start(struct vt_target *t, int nthreads);
/* Send a command to a thread without waiting. */
int vt_send(struct vt_target *t, int thread, int op, uint64_t addr,
	    uint64_t val, uint64_t n);
/* Wait for that thread's result. */
int vt_wait(struct vt_target *t, int thread, struct vt_res *res);
/* Send and wait; returns res->ret, or -EPIPE if the target is gone. */
int64_t vt_do(struct vt_target *t, int thread, int op, uint64_t addr,
	      uint64_t val, uint64_t n, struct vt_res *res);
/* Kill (if needed) and reap the target; its exit status or -1. */
int vt_target_stop(struct vt_target *t);

#endif /* VTEST_H */
