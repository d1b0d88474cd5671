/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel definitions kmod/insn_emul.c needs, so that the host
 * test can build it unchanged in user space.  struct pt_regs has the
 * x86_64 kernel's field names and order (arch/x86/include/asm/ptrace.h),
 * not the uapi ones (rax, rbx, ...): the emulator is written against the
 * kernel's.  Never include <asm/ptrace.h> next to this header.
 */
#ifndef VALOR_TESTS_KSHIM_H
#define VALOR_TESTS_KSHIM_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

/* One access of the object's size, never torn nor merged, as in the kernel. */
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val) (*(volatile __typeof__(x) *)&(x) = (val))

struct pt_regs {
	unsigned long r15;
	unsigned long r14;
	unsigned long r13;
	unsigned long r12;
	unsigned long bp;
	unsigned long bx;
	unsigned long r11;
	unsigned long r10;
	unsigned long r9;
	unsigned long r8;
	unsigned long ax;
	unsigned long cx;
	unsigned long dx;
	unsigned long si;
	unsigned long di;
	unsigned long orig_ax;
	unsigned long ip;
	unsigned long cs;
	unsigned long flags;
	unsigned long sp;
	unsigned long ss;
};

#endif /* VALOR_TESTS_KSHIM_H */
