/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Valor for Linux: the ABI shared by valor.ko, valord and libvalor.
 *
 * Every producer of program events (the in-process runtime, the eBPF
 * probes, the kernel module, a recorded trace) describes them with
 * struct valor_event, and every consumer feeds them to the analysis
 * engine.  The record is fixed-size and versioned:
 *
 *  - VALOR_UAPI_VERSION grows when a field or kind is added.  Fields are
 *    only ever appended inside the reserved space or given meaning where a
 *    record used to carry zero, so an old consumer that ignores unknown
 *    kinds and flags keeps working.
 *  - Streams (files, read() from /dev/valor, ring buffers) start with
 *    struct valor_stream_header, which names the version and the record
 *    size a producer used.
 *
 * The ioctl numbers of /dev/valor will live below, in the block reserved
 * for them (VALOR_IOC_MAGIC); adding them changes no existing layout.
 */
#ifndef _UAPI_LINUX_VALOR_H
#define _UAPI_LINUX_VALOR_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* 2: /dev/valor (ioctls below), PAGE_DISARM and TARGET_EXIT, FIRST_TOUCH,
 * EMULATED and STEPPED flags.  3: the STRIDED flag. */
#define VALOR_UAPI_VERSION 3

/* "VLOR" in a little-endian dump. */
#define VALOR_STREAM_MAGIC 0x524f4c56U

/**
 * enum valor_event_kind - what happened
 * @VALOR_EV_THREAD_CREATE: @tid created the thread @arg (a release by @tid)
 * @VALOR_EV_THREAD_EXIT:   @tid finished (a release; its region ends)
 * @VALOR_EV_THREAD_JOIN:   @tid joined the exited thread @arg (an acquire)
 * @VALOR_EV_ACQUIRE:       @tid acquired the synchronization object @addr
 * @VALOR_EV_RELEASE:       @tid released @addr (a region boundary)
 * @VALOR_EV_ACCESS:        @tid accessed @size bytes at @addr; the access
 *                          is a write when VALOR_EVF_WRITE is set, and
 *                          stands for several elements when
 *                          VALOR_EVF_STRIDED is (see @arg)
 * @VALOR_EV_FREE:          @tid freed the @arg bytes at @addr (history of
 *                          the range is cleared; checked as a write)
 * @VALOR_EV_MUNMAP:        @tid unmapped the @arg bytes at @addr (as FREE)
 * @VALOR_EV_REGION_END:    @tid asks for an explicit region boundary
 * @VALOR_EV_VALIDATE:      @tid asks for its pending reads to be validated
 *                          now, without ending the region
 * @VALOR_EV_LOST:          a producer dropped @arg events before this one
 * @VALOR_EV_PAGE_DISARM:   valor.ko stopped tracking the page at @addr for
 *                          the reason @arg (enum valor_disarm_reason)
 * @VALOR_EV_TARGET_EXIT:   the process valor.ko was attached to released
 *                          its address space; the session has ended and
 *                          this is its last event
 */
enum valor_event_kind {
	VALOR_EV_NONE = 0,
	VALOR_EV_THREAD_CREATE = 1,
	VALOR_EV_THREAD_EXIT = 2,
	VALOR_EV_THREAD_JOIN = 3,
	VALOR_EV_ACQUIRE = 4,
	VALOR_EV_RELEASE = 5,
	VALOR_EV_ACCESS = 6,
	VALOR_EV_FREE = 7,
	VALOR_EV_MUNMAP = 8,
	VALOR_EV_REGION_END = 9,
	VALOR_EV_VALIDATE = 10,
	VALOR_EV_LOST = 11,
	VALOR_EV_PAGE_DISARM = 12,
	VALOR_EV_TARGET_EXIT = 13,
	VALOR_EV_KIND_MAX = VALOR_EV_TARGET_EXIT,
};

/* valor_event.flags */
#define VALOR_EVF_WRITE (1U << 0) /* access is a write */
#define VALOR_EVF_KERNEL (1U << 1) /* access made by the kernel for the task */
#define VALOR_EVF_ATOMIC (1U << 2) /* sync event came from an atomic op */
/* valor.ko: the first touch of a scanned page since it was armed */
#define VALOR_EVF_FIRST_TOUCH (1U << 3)
/* valor.ko: a watched access it performed itself (the page stayed armed) */
#define VALOR_EVF_EMULATED (1U << 4)
/* valor.ko: a watched access it let through by single-stepping */
#define VALOR_EVF_STEPPED (1U << 5)
/*
 * ACCESS: @arg's count elements of @size bytes, the k-th at @addr + k *
 * stride (a loop's accesses checked at once); VALOR_ACCESS_STRIDE() and
 * VALOR_ACCESS_COUNT() take @arg apart, VALOR_ACCESS_STRIDED() makes it.
 */
#define VALOR_EVF_STRIDED (1U << 6)
#define VALOR_EVF_KNOWN                                                   \
	(VALOR_EVF_WRITE | VALOR_EVF_KERNEL | VALOR_EVF_ATOMIC |          \
	 VALOR_EVF_FIRST_TOUCH | VALOR_EVF_EMULATED | VALOR_EVF_STEPPED | \
	 VALOR_EVF_STRIDED)

#define VALOR_ACCESS_STRIDED(stride, count) \
	((__u64)(__u32)(stride) | (__u64)(__u32)(count) << 32)
#define VALOR_ACCESS_STRIDE(arg) ((__u32)(arg))
#define VALOR_ACCESS_COUNT(arg) ((__u32)((arg) >> 32))

/**
 * struct valor_event - one program event, 48 bytes
 * @kind:  enum valor_event_kind
 * @flags: VALOR_EVF_*
 * @size:  bytes accessed (ACCESS); zero otherwise
 * @tid:   the producer's thread id (an OS tid, or a trace's own numbering)
 * @cpu:   the CPU the event was observed on, or 0xffffffff if unknown
 * @addr:  data address (ACCESS, FREE, MUNMAP) or synchronization object
 * @ip:    site: the instruction pointer or another producer-chosen id
 * @ts_ns: CLOCK_MONOTONIC time of the event, 0 if the producer has none
 * @arg:   kind-specific: child tid (CREATE), joined tid (JOIN), range
 *         length (FREE, MUNMAP), number of dropped events (LOST), stride
 *         and count of a VALOR_EVF_STRIDED access (VALOR_ACCESS_STRIDED())
 */
struct valor_event {
	__u16 kind;
	__u16 flags;
	__u32 size;
	__u32 tid;
	__u32 cpu;
	__u64 addr;
	__u64 ip;
	__u64 ts_ns;
	__u64 arg;
};

/**
 * struct valor_stream_header - first bytes of every event stream or file
 * @magic:       VALOR_STREAM_MAGIC
 * @version:     VALOR_UAPI_VERSION of the producer
 * @record_size: sizeof(struct valor_event) of the producer
 * @flags:       reserved, zero
 * @reserved:    zero
 */
struct valor_stream_header {
	__u32 magic;
	__u16 version;
	__u16 record_size;
	__u32 flags;
	__u32 reserved;
};

/*
 * /dev/valor: the kernel module's page-fault tracking (Documentation/kmod.md).
 *
 * One open file is one session.  VALOR_IOC_ATTACH binds it to a process;
 * VALOR_IOC_SCAN and VALOR_IOC_WATCH arm pages of that process's private
 * anonymous memory.  read() returns a struct valor_stream_header first and
 * then whole struct valor_event records (never a partial one; a buffer
 * smaller than one record is EINVAL); it blocks unless O_NONBLOCK, and
 * poll() reports EPOLLIN when records are ready.  After the target exits,
 * read() drains what is left and then returns 0.
 *
 * Events from valor.ko: ACCESS (tid = the faulting thread, addr = the exact
 * faulting address, or the page's for another process's access, which
 * get_user_pages() makes a page at a time; ip = the user instruction
 * pointer; ts_ns = CLOCK_MONOTONIC; cpu; size = the operand size when the
 * access was decoded, else 0; flags WRITE, KERNEL when a system call or
 * another process touched the page on the target's behalf, FIRST_TOUCH
 * for scans, EMULATED or STEPPED for watches), PAGE_DISARM, LOST and
 * TARGET_EXIT.
 */
#define VALOR_IOC_MAGIC 0xB7

/**
 * enum valor_disarm_reason - why a page stopped being tracked
 * @VALOR_DISARM_UNWATCH:  VALOR_IOC_UNWATCH or detach asked for it
 * @VALOR_DISARM_BUDGET:   the session went over its fault rate; the page
 *                         that faulted was given back
 * @VALOR_DISARM_UNMAP:    the target unmapped the page
 * @VALOR_DISARM_PROTECT:  the target changed the page's protection
 *                         (mprotect) or copy-on-write split it (fork)
 * @VALOR_DISARM_CLEAR:    the page's contents were dropped or moved
 *                         (madvise(MADV_DONTNEED), mremap, migration, ...)
 * @VALOR_DISARM_REARM:    watching could not re-arm the page (it changed
 *                         under us: became huge, shared, or went away)
 * @VALOR_DISARM_EXIT:     the target's address space went away
 */
enum valor_disarm_reason {
	VALOR_DISARM_UNWATCH = 1,
	VALOR_DISARM_BUDGET = 2,
	VALOR_DISARM_UNMAP = 3,
	VALOR_DISARM_PROTECT = 4,
	VALOR_DISARM_CLEAR = 5,
	VALOR_DISARM_REARM = 6,
	VALOR_DISARM_EXIT = 7,
};

/**
 * struct valor_attach - VALOR_IOC_ATTACH argument
 * @pid:      the target process (a thread id names its process)
 * @flags:    zero
 * @reserved: zero
 *
 * The caller must be allowed to ptrace the target
 * (PTRACE_MODE_ATTACH_REALCREDS; else EPERM) and have CAP_SYS_ADMIN or be
 * a member of the group given by the module parameter "gid" (else EPERM).
 * ESRCH: no such process.  EINVAL: a kernel thread, or nonzero flags.
 * EBUSY: the session is already attached.
 */
struct valor_attach {
	__u32 pid;
	__u32 flags;
	__u64 reserved;
};

/* valor_range.flags */
#define VALOR_RANGE_ALL (1U << 0) /* every private anonymous mapping */

/**
 * struct valor_range - VALOR_IOC_SCAN / WATCH / UNWATCH argument and result
 * @start:    first byte (rounded down to a page); ignored with RANGE_ALL
 * @len:      bytes (rounded up to whole pages); ignored with RANGE_ALL
 * @flags:    VALOR_RANGE_*
 * @reserved: zero
 * @armed:    out: pages newly armed (SCAN, WATCH) or disarmed (UNWATCH)
 * @skipped:  out: pages not armed because they are not private anonymous
 *            accessible memory, are mapped by a transparent huge page, are
 *            already tracked in the other mode, or are over a limit
 * @huge:     out: of @skipped, pages refused as transparent huge pages
 *
 * A page armed for SCAN reports its first touch (any thread, any access,
 * including a fault that populates it) once and is then forgotten.  A page
 * armed for WATCH reports every access until it is unwatched or disarmed.
 * Pages not yet populated are armed too: their first fault is reported.
 * Scanning a page already scanned re-arms it.  E2BIG: the range holds more
 * pages than the session's armed-page limit allows in total.
 */
struct valor_range {
	__u64 start;
	__u64 len;
	__u32 flags;
	__u32 reserved;
	__u64 armed;
	__u64 skipped;
	__u64 huge;
};

/**
 * struct valor_limits - VALOR_IOC_SET_LIMITS argument (0 keeps a limit)
 * @max_armed_pages:   pages armed at once in this session
 * @max_faults_per_sec: tracked faults per second in this session; above
 *                     it, each page that faults is disarmed (BUDGET)
 * @reserved:          zero
 */
struct valor_limits {
	__u64 max_armed_pages;
	__u64 max_faults_per_sec;
	__u64 reserved[2];
};

/**
 * struct valor_kmod_stats - VALOR_IOC_GET_STATS result (counters since attach)
 * @armed_pages:     pages tracked now (scan and watch)
 * @watched_pages:   of those, watched
 * @faults:          faults on tracked pages
 * @events:          records queued for read()
 * @lost:            records dropped because the buffer was full
 * @emulated:        watched accesses valor.ko performed itself
 * @stepped:         watched accesses let through with a single step
 * @kernel_accesses: faults taken by the kernel on the target's behalf
 * @disarmed:        pages disarmed for any reason but SCAN's first touch
 * @budget_disarms:  of those, over the fault rate
 * @rearms:          pages re-armed after a single step or a kernel access
 * @refused_huge:    pages refused as transparent huge pages
 * @tlb_flush_range: 1 when TLB flushes are ranged (flush_tlb_mm_range),
 *                   0 when they flush every CPU's TLB
 * @reserved:        zero
 */
struct valor_kmod_stats {
	__u64 armed_pages;
	__u64 watched_pages;
	__u64 faults;
	__u64 events;
	__u64 lost;
	__u64 emulated;
	__u64 stepped;
	__u64 kernel_accesses;
	__u64 disarmed;
	__u64 budget_disarms;
	__u64 rearms;
	__u64 refused_huge;
	__u64 tlb_flush_range;
	__u64 reserved[3];
};

/* Returns VALOR_UAPI_VERSION. */
#define VALOR_IOC_VERSION _IO(VALOR_IOC_MAGIC, 0)
#define VALOR_IOC_ATTACH _IOW(VALOR_IOC_MAGIC, 1, struct valor_attach)
#define VALOR_IOC_SCAN _IOWR(VALOR_IOC_MAGIC, 2, struct valor_range)
#define VALOR_IOC_WATCH _IOWR(VALOR_IOC_MAGIC, 3, struct valor_range)
#define VALOR_IOC_UNWATCH _IOWR(VALOR_IOC_MAGIC, 4, struct valor_range)
#define VALOR_IOC_SET_LIMITS _IOW(VALOR_IOC_MAGIC, 5, struct valor_limits)
#define VALOR_IOC_GET_STATS _IOR(VALOR_IOC_MAGIC, 6, struct valor_kmod_stats)
/* Disarms everything; the session can attach again.  EINVAL if detached. */
#define VALOR_IOC_DETACH _IO(VALOR_IOC_MAGIC, 7)

#ifdef __cplusplus
#define VALOR_UAPI_ASSERT(c, m) static_assert(c, m)
#else
#define VALOR_UAPI_ASSERT(c, m) _Static_assert(c, m)
#endif

VALOR_UAPI_ASSERT(sizeof(struct valor_event) == 48, "valor_event is 48 bytes");
VALOR_UAPI_ASSERT(__builtin_offsetof(struct valor_event, addr) == 16,
		  "valor_event.addr is at 16");
VALOR_UAPI_ASSERT(__builtin_offsetof(struct valor_event, ip) == 24,
		  "valor_event.ip is at 24");
VALOR_UAPI_ASSERT(__builtin_offsetof(struct valor_event, ts_ns) == 32,
		  "valor_event.ts_ns is at 32");
VALOR_UAPI_ASSERT(__builtin_offsetof(struct valor_event, arg) == 40,
		  "valor_event.arg is at 40");
VALOR_UAPI_ASSERT(sizeof(struct valor_stream_header) == 16,
		  "valor_stream_header is 16 bytes");
VALOR_UAPI_ASSERT(sizeof(struct valor_attach) == 16, "valor_attach size");
VALOR_UAPI_ASSERT(sizeof(struct valor_range) == 48, "valor_range size");
VALOR_UAPI_ASSERT(sizeof(struct valor_limits) == 32, "valor_limits size");
VALOR_UAPI_ASSERT(sizeof(struct valor_kmod_stats) == 128,
		  "valor_kmod_stats size");

#endif /* _UAPI_LINUX_VALOR_H */
