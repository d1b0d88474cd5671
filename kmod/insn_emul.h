/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Decoding and emulation of the common x86-64 user-mode memory accesses.
 *
 * When a thread of a watched process faults on an armed page, opening the
 * page for its single step lets the other threads through unobserved.
 * Instead the module decodes the faulting instruction and, for the forms
 * covered here, performs the access itself on a kernel mapping of the
 * page and advances the user's instruction pointer, so that the page
 * never opens.  Anything not covered is refused with -EOPNOTSUPP and the
 * caller falls back to single-stepping.
 *
 * Covered (64-bit mode, memory operand only, ModRM/SIB/disp/RIP-relative
 * addressing, prefixes 66, F0, REX, segment 2E/3E/26/36; 64/65 decode but
 * their address is refused; F2/F3 only as HLE hints: on locked forms and
 * xchg, and F3 on the mov stores 88 89 C6 C7):
 *   mov 88 89 8A 8B C6/0 C7/0 A0-A3, movzx/movsx 0F B6 B7 BE BF,
 *   movsxd REX.W 63, add/or/adc/sbb/and/sub/xor/cmp 00-3B 80 81 83,
 *   test 84 85 F6/0 F7/0, not/neg F6 F7 /2 /3, inc/dec FE FF /0 /1,
 *   shifts and rotates C0 C1 D0-D3 (not /6), xchg 86 87,
 *   cmpxchg 0F B0 B1, xadd 0F C0 C1, setcc 0F 90-9F, cmovcc 0F 40-4F,
 *   bt/bts/btr/btc with an immediate 0F BA /4-7;
 *   lock on every form the CPU allows it on.
 *
 * The functions use no locks, no allocation and no global state: they are
 * safe with preemption and interrupts disabled.
 */
#ifndef VALOR_KMOD_INSN_EMUL_H
#define VALOR_KMOD_INSN_EMUL_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <asm/ptrace.h>
#else
#include "../tests/kmod-host/kshim.h"
#endif

/* The longest x86 instruction: decode never looks further. */
#define VALOR_INSN_MAX_LEN 15

struct valor_insn {
	u8 len; /* bytes of the whole instruction */
	u8 opsize; /* bytes of the memory operand: 1, 2, 4 or 8 */
	bool reads; /* the instruction reads the memory operand */
	bool writes; /* ... writes it (also cmpxchg that fails, as the CPU) */
	bool atomic; /* lock prefix, or xchg with memory */

	/* Private to insn_emul.c. */
	u8 kind;
	u8 op;
	u8 regsize;
	u8 reg;
	u8 base;
	u8 index;
	u8 scale;
	u8 attr;
	s32 disp;
	u64 imm;
};

/*
 * Decode the instruction at @bytes (@avail of them are valid; pass up to
 * VALOR_INSN_MAX_LEN) as 64-bit code: the caller checks
 * user_64bit_mode() first, compat code decodes differently.  Returns 0,
 * -EINVAL when the instruction continues past @avail (never when
 * @avail >= VALOR_INSN_MAX_LEN), or -EOPNOTSUPP
 * for anything not covered, register operands (ModRM mod 3), the 67
 * address-size prefix, lock where the CPU would raise #UD, and
 * instructions longer than VALOR_INSN_MAX_LEN.
 */
int valor_insn_decode(struct valor_insn *insn, const u8 *bytes,
		      unsigned int avail);

/*
 * The effective (linear) address of the memory operand under @regs, whose
 * ip must be the instruction's address.  -EOPNOTSUPP for FS/GS-prefixed
 * operands, whose segment base the caller cannot know.
 */
int valor_insn_address(const struct valor_insn *insn,
		       const struct pt_regs *regs, unsigned long *addr);

/*
 * Perform the instruction with its memory operand at @mem (a kernel
 * mapping of the operand's bytes; the caller checks that the operand does
 * not cross a page and that the VMA allows the access): update the
 * registers and the arithmetic flags (CF PF AF ZF SF OF) of @regs exactly
 * as the CPU would and advance regs->ip by the length.  Atomic forms are
 * done with lock-prefixed instructions on @mem.  Returns 0, or
 * -EOPNOTSUPP with @regs and @mem untouched for an atomic operand that
 * crosses a cache line (a split lock in the kernel is fatal where split
 * lock detection is on).
 */
int valor_insn_emulate(const struct valor_insn *insn, struct pt_regs *regs,
		       void *mem);

#endif /* VALOR_KMOD_INSN_EMUL_H */
