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

#include <linux/types.h>

#define VALOR_UAPI_VERSION 1

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
 *                          is a write when VALOR_EVF_WRITE is set
 * @VALOR_EV_FREE:          @tid freed the @arg bytes at @addr (history of
 *                          the range is cleared; checked as a write)
 * @VALOR_EV_MUNMAP:        @tid unmapped the @arg bytes at @addr (as FREE)
 * @VALOR_EV_REGION_END:    @tid asks for an explicit region boundary
 * @VALOR_EV_VALIDATE:      @tid asks for its pending reads to be validated
 *                          now, without ending the region
 * @VALOR_EV_LOST:          a producer dropped @arg events before this one
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
	VALOR_EV_KIND_MAX = VALOR_EV_LOST,
};

/* valor_event.flags */
#define VALOR_EVF_WRITE (1U << 0) /* access is a write */
#define VALOR_EVF_KERNEL (1U << 1) /* access made by the kernel for the task */
#define VALOR_EVF_ATOMIC (1U << 2) /* sync event came from an atomic op */
#define VALOR_EVF_KNOWN (VALOR_EVF_WRITE | VALOR_EVF_KERNEL | VALOR_EVF_ATOMIC)

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
 *         length (FREE, MUNMAP), number of dropped events (LOST)
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

/* /dev/valor ioctls are numbered in this block (added by the kmod work). */
#define VALOR_IOC_MAGIC 0xB7

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

#endif /* _UAPI_LINUX_VALOR_H */
