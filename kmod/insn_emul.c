// SPDX-License-Identifier: GPL-2.0
/*
 * Decoder and emulator of the common x86-64 memory-access instructions
 * (see insn_emul.h for the forms covered and why).
 *
 * The arithmetic flags are not computed in C: each operation is executed
 * natively on the operand values in registers, with the incoming six
 * flags loaded first (adc/sbb read CF, inc/dec keep it, rotates keep
 * SF/ZF/AF/PF, shifts by zero keep everything, and whatever the SDM calls
 * undefined comes out as this CPU makes it), and the resulting flags are
 * captured.  A read-modify-write under lock becomes a compare-and-exchange
 * loop around that computation, which is atomic on the memory operand
 * like the locked instruction itself.
 */
#ifdef __KERNEL__
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/stddef.h>
#endif
#include "insn_emul.h"

/* CF PF AF ZF SF OF: the flags an emulated instruction may change. */
#define EFL_CF 0x001UL
#define EFL_PF 0x004UL
#define EFL_ZF 0x040UL
#define EFL_SF 0x080UL
#define EFL_OF 0x800UL
#define EFL_ARITH 0x8d5UL

#define REX_B 0x01
#define REX_X 0x02
#define REX_R 0x04
#define REX_W 0x08

/* insn->base and insn->index when there is no such register. */
#define NO_REG 0xff
/* insn->base for RIP-relative addressing. */
#define BASE_RIP 0x10

/* insn->attr bits. */
#define ATTR_REX 0x01 /* byte registers 4-7 are SPL BPL SIL DIL, not AH-BH */
#define ATTR_FSGS 0x02 /* FS or GS segment override */
#define ATTR_MOFFS 0x04 /* the address is insn->imm (A0-A3) */
#define ATTR_SRC_IMM 0x08 /* the source operand is insn->imm */
#define ATTR_SRC_CL 0x10 /* the source operand is CL (shift count) */

enum insn_kind {
	KIND_LOAD, /* reg = mem, extended as insn->op says */
	KIND_STORE, /* mem = reg or imm */
	KIND_ALU_TO_REG, /* reg = reg op mem */
	KIND_ALU_TO_MEM, /* mem = mem op (reg, imm, CL or nothing) */
	KIND_XCHG,
	KIND_CMPXCHG,
	KIND_XADD,
	KIND_SETCC, /* insn->op is the condition code */
	KIND_CMOV, /* insn->op is the condition code */
};

/* insn->op of KIND_LOAD. */
enum load_extension {
	LOAD_PLAIN,
	LOAD_ZERO_EXTEND,
	LOAD_SIGN_EXTEND,
};

/*
 * insn->op of the ALU kinds.  The first eight are numbered as bits 5:3
 * of opcodes 00-3B and as ModRM.reg of 80-83; the shifts and rotates as
 * ModRM.reg of C0-D3 (/6 is refused); the bit tests as ModRM.reg - 4 of
 * 0F BA.
 */
enum alu_op {
	OP_ADD,
	OP_OR,
	OP_ADC,
	OP_SBB,
	OP_AND,
	OP_SUB,
	OP_XOR,
	OP_CMP,
	OP_TEST,
	OP_NOT,
	OP_NEG,
	OP_INC,
	OP_DEC,
	OP_ROL,
	OP_ROR,
	OP_RCL,
	OP_RCR,
	OP_SHL,
	OP_SHR,
	OP_SHIFT6_UNUSED,
	OP_SAR,
	OP_BT,
	OP_BTS,
	OP_BTR,
	OP_BTC,
};

/* Byte offsets in struct pt_regs of the registers in encoding order. */
static const u8 gpr_offsets[16] = {
	offsetof(struct pt_regs, ax),  offsetof(struct pt_regs, cx),
	offsetof(struct pt_regs, dx),  offsetof(struct pt_regs, bx),
	offsetof(struct pt_regs, sp),  offsetof(struct pt_regs, bp),
	offsetof(struct pt_regs, si),  offsetof(struct pt_regs, di),
	offsetof(struct pt_regs, r8),  offsetof(struct pt_regs, r9),
	offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
	offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),
	offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),
};

static unsigned long *gpr(struct pt_regs *regs, u8 n)
{
	return (unsigned long *)((char *)regs + gpr_offsets[n]);
}

static unsigned long gpr_value(const struct pt_regs *regs, u8 n)
{
	return *(const unsigned long *)((const char *)regs + gpr_offsets[n]);
}

static u64 size_mask(u8 size)
{
	return size == 8 ? ~0ULL : (1ULL << (size * 8)) - 1;
}

static u64 sign_extend(u64 val, u8 size)
{
	unsigned int shift = 64 - size * 8;

	return (u64)((s64)(val << shift) >> shift);
}

/* Without a REX prefix, byte registers 4-7 are AH CH DH BH. */
static bool is_high_byte(const struct valor_insn *insn, u8 n, u8 size)
{
	return size == 1 && n >= 4 && n < 8 && !(insn->attr & ATTR_REX);
}

static u64 reg_read(const struct valor_insn *insn, const struct pt_regs *regs,
		    u8 n, u8 size)
{
	if (is_high_byte(insn, n, size))
		return (gpr_value(regs, n - 4) >> 8) & 0xff;
	return gpr_value(regs, n) & size_mask(size);
}

/* 32-bit writes zero the upper half; 8- and 16-bit writes merge. */
static void reg_write(const struct valor_insn *insn, struct pt_regs *regs, u8 n,
		      u8 size, u64 val)
{
	unsigned long *r;

	if (is_high_byte(insn, n, size)) {
		r = gpr(regs, n - 4);
		*r = (*r & ~0xff00UL) | ((val & 0xff) << 8);
		return;
	}
	r = gpr(regs, n);
	if (size >= 4)
		*r = val & size_mask(size);
	else
		*r = (*r & ~size_mask(size)) | (val & size_mask(size));
}

/*
 * Single accesses of the operand's size, as the CPU makes them: an
 * aligned operand is read and written in one piece, never torn.
 */
static u64 mem_load(const void *mem, u8 size)
{
	switch (size) {
	case 1:
		return READ_ONCE(*(const u8 *)mem);
	case 2:
		return READ_ONCE(*(const u16 *)mem);
	case 4:
		return READ_ONCE(*(const u32 *)mem);
	default:
		return READ_ONCE(*(const u64 *)mem);
	}
}

static void mem_store(void *mem, u8 size, u64 val)
{
	switch (size) {
	case 1:
		WRITE_ONCE(*(u8 *)mem, val);
		break;
	case 2:
		WRITE_ONCE(*(u16 *)mem, val);
		break;
	case 4:
		WRITE_ONCE(*(u32 *)mem, val);
		break;
	default:
		WRITE_ONCE(*(u64 *)mem, val);
		break;
	}
}

/*
 * lock cmpxchg: store @new if @mem holds *@old.  *@old receives the value
 * found; returns whether the store happened.
 */
static bool mem_cmpxchg(void *mem, u8 size, u64 *old, u64 new)
{
	u64 expected = *old & size_mask(size);
	u64 found = expected;

	switch (size) {
	case 1:
		asm volatile("lock cmpxchgb %b[new], (%[mem])"
			     : "+a"(found)
			     : [new] "r"(new), [mem] "r"(mem)
			     : "memory", "cc");
		break;
	case 2:
		asm volatile("lock cmpxchgw %w[new], (%[mem])"
			     : "+a"(found)
			     : [new] "r"(new), [mem] "r"(mem)
			     : "memory", "cc");
		break;
	case 4:
		asm volatile("lock cmpxchgl %k[new], (%[mem])"
			     : "+a"(found)
			     : [new] "r"(new), [mem] "r"(mem)
			     : "memory", "cc");
		break;
	default:
		asm volatile("lock cmpxchgq %q[new], (%[mem])"
			     : "+a"(found)
			     : [new] "r"(new), [mem] "r"(mem)
			     : "memory", "cc");
		break;
	}
	found &= size_mask(size);
	*old = found;
	return found == expected;
}

/*
 * Loading and capturing the flags goes through the stack (popf, pushf).
 * The kernel has no red zone; user space (the host test) has one below
 * %rsp where the compiler may keep data, so step over it there.
 */
#ifdef __KERNEL__
#define RED_ZONE_SKIP ""
#define RED_ZONE_BACK ""
#else
#define RED_ZONE_SKIP "lea -128(%%rsp), %%rsp\n\t"
#define RED_ZONE_BACK "\n\tlea 128(%%rsp), %%rsp"
#endif

/* Replace the arithmetic flags by %[fin]'s, keep the others (IF, AC...). */
#define FLAGS_LOAD                                \
	RED_ZONE_SKIP "pushfq\n\t"                \
		      "andq $~0x8d5, (%%rsp)\n\t" \
		      "orq %[fin], (%%rsp)\n\t"   \
		      "popfq\n\t"
#define FLAGS_SAVE "\n\tpushfq\n\tpopq %[fout]" RED_ZONE_BACK

/* @mnem with source %[s] (printed with @smod) into %[d] (with @dmod). */
#define ALU_BINARY(mnem, sfx, smod, dmod, scon)                          \
	asm(FLAGS_LOAD mnem sfx " %" smod "[s], %" dmod "[d]" FLAGS_SAVE \
	    : [d] "+r"(d), [fout] "=r"(fout)                             \
	    : [s] scon(s), [fin] "r"(fin)                                \
	    : "cc")

#define ALU_UNARY(mnem, sfx, mod)                         \
	asm(FLAGS_LOAD mnem sfx " %" mod "[d]" FLAGS_SAVE \
	    : [d] "+r"(d), [fout] "=r"(fout)              \
	    : [fin] "r"(fin)                              \
	    : "cc")

#define ALU_BINARY_SIZES(mnem)                                \
	do {                                                  \
		if (size == 1)                                \
			ALU_BINARY(mnem, "b", "b", "b", "r"); \
		else if (size == 2)                           \
			ALU_BINARY(mnem, "w", "w", "w", "r"); \
		else if (size == 4)                           \
			ALU_BINARY(mnem, "l", "k", "k", "r"); \
		else                                          \
			ALU_BINARY(mnem, "q", "q", "q", "r"); \
	} while (0)

/* Shifts and rotates: the count is in CL. */
#define ALU_SHIFT_SIZES(mnem)                                 \
	do {                                                  \
		if (size == 1)                                \
			ALU_BINARY(mnem, "b", "b", "b", "c"); \
		else if (size == 2)                           \
			ALU_BINARY(mnem, "w", "b", "w", "c"); \
		else if (size == 4)                           \
			ALU_BINARY(mnem, "l", "b", "k", "c"); \
		else                                          \
			ALU_BINARY(mnem, "q", "b", "q", "c"); \
	} while (0)

/* The bit tests have no byte form (decode refuses it). */
#define ALU_BIT_SIZES(mnem)                                   \
	do {                                                  \
		if (size == 2)                                \
			ALU_BINARY(mnem, "w", "w", "w", "r"); \
		else if (size == 4)                           \
			ALU_BINARY(mnem, "l", "k", "k", "r"); \
		else                                          \
			ALU_BINARY(mnem, "q", "q", "q", "r"); \
	} while (0)

#define ALU_UNARY_SIZES(mnem)                      \
	do {                                       \
		if (size == 1)                     \
			ALU_UNARY(mnem, "b", "b"); \
		else if (size == 2)                \
			ALU_UNARY(mnem, "w", "w"); \
		else if (size == 4)                \
			ALU_UNARY(mnem, "l", "k"); \
		else                               \
			ALU_UNARY(mnem, "q", "q"); \
	} while (0)

/*
 * Execute @op natively on @dst and @src (@size bytes) with the arithmetic
 * flags of *@flags; return the result and update the six flags in *@flags.
 */
static u64 alu(u8 op, u8 size, u64 dst, u64 src, unsigned long *flags)
{
	unsigned long fin = *flags & EFL_ARITH;
	unsigned long fout = fin;
	u64 d = dst, s = src;

	switch (op) {
	case OP_ADD:
		ALU_BINARY_SIZES("add");
		break;
	case OP_OR:
		ALU_BINARY_SIZES("or");
		break;
	case OP_ADC:
		ALU_BINARY_SIZES("adc");
		break;
	case OP_SBB:
		ALU_BINARY_SIZES("sbb");
		break;
	case OP_AND:
		ALU_BINARY_SIZES("and");
		break;
	case OP_SUB:
		ALU_BINARY_SIZES("sub");
		break;
	case OP_XOR:
		ALU_BINARY_SIZES("xor");
		break;
	case OP_CMP:
		ALU_BINARY_SIZES("cmp");
		break;
	case OP_TEST:
		ALU_BINARY_SIZES("test");
		break;
	case OP_NOT:
		ALU_UNARY_SIZES("not");
		break;
	case OP_NEG:
		ALU_UNARY_SIZES("neg");
		break;
	case OP_INC:
		ALU_UNARY_SIZES("inc");
		break;
	case OP_DEC:
		ALU_UNARY_SIZES("dec");
		break;
	case OP_ROL:
		ALU_SHIFT_SIZES("rol");
		break;
	case OP_ROR:
		ALU_SHIFT_SIZES("ror");
		break;
	case OP_RCL:
		ALU_SHIFT_SIZES("rcl");
		break;
	case OP_RCR:
		ALU_SHIFT_SIZES("rcr");
		break;
	case OP_SHL:
		ALU_SHIFT_SIZES("shl");
		break;
	case OP_SHR:
		ALU_SHIFT_SIZES("shr");
		break;
	case OP_SAR:
		ALU_SHIFT_SIZES("sar");
		break;
	case OP_BT:
		ALU_BIT_SIZES("bt");
		break;
	case OP_BTS:
		ALU_BIT_SIZES("bts");
		break;
	case OP_BTR:
		ALU_BIT_SIZES("btr");
		break;
	case OP_BTC:
		ALU_BIT_SIZES("btc");
		break;
	}
	*flags = (*flags & ~EFL_ARITH) | (fout & EFL_ARITH);
	return d & size_mask(size);
}

/* Whether condition code @cc (the low nibble of Jcc/SETcc/CMOVcc) holds. */
static bool condition(u8 cc, unsigned long flags)
{
	bool cf = flags & EFL_CF, zf = flags & EFL_ZF;
	bool sf = flags & EFL_SF, of = flags & EFL_OF;
	bool holds;

	switch (cc >> 1) {
	case 0:
		holds = of;
		break;
	case 1:
		holds = cf;
		break;
	case 2:
		holds = zf;
		break;
	case 3:
		holds = cf || zf;
		break;
	case 4:
		holds = sf;
		break;
	case 5:
		holds = flags & EFL_PF;
		break;
	case 6:
		holds = sf != of;
		break;
	default:
		holds = zf || sf != of;
		break;
	}
	return holds != (cc & 1);
}

/* The bytes of the instruction, consumed front to back. */
struct cursor {
	const u8 *bytes;
	unsigned int avail;
	unsigned int pos;
};

/* The next @n bytes as a little-endian value, sign-extended. */
static int cursor_take(struct cursor *c, unsigned int n, u64 *val)
{
	u64 v = 0;
	unsigned int i;

	if (c->pos + n > VALOR_INSN_MAX_LEN)
		return -EOPNOTSUPP;
	if (c->pos + n > c->avail)
		return -EINVAL;
	for (i = 0; i < n; i++)
		v |= (u64)c->bytes[c->pos + i] << (8 * i);
	c->pos += n;
	*val = n < 8 ? sign_extend(v, n) : v;
	return 0;
}

static int cursor_byte(struct cursor *c, u8 *byte)
{
	u64 v;
	int err = cursor_take(c, 1, &v);

	*byte = v;
	return err;
}

/* ModRM (mod != 3), SIB and displacement: the operand's address. */
static int decode_address(struct valor_insn *insn, struct cursor *c, u8 modrm,
			  u8 rex)
{
	u8 mod = modrm >> 6, rm = modrm & 7, sib, index;
	unsigned int disp_len = mod == 1 ? 1 : mod == 2 ? 4 : 0;
	u64 disp = 0;
	int err;

	if (rm == 4) {
		err = cursor_byte(c, &sib);
		if (err)
			return err;
		index = ((sib >> 3) & 7) | (rex & REX_X ? 8 : 0);
		if (index != 4) {
			insn->index = index;
			insn->scale = sib >> 6;
		}
		if ((sib & 7) == 5 && mod == 0)
			disp_len = 4;
		else
			insn->base = (sib & 7) | (rex & REX_B ? 8 : 0);
	} else if (rm == 5 && mod == 0) {
		insn->base = BASE_RIP;
		disp_len = 4;
	} else {
		insn->base = rm | (rex & REX_B ? 8 : 0);
	}
	if (disp_len) {
		err = cursor_take(c, disp_len, &disp);
		if (err)
			return err;
	}
	insn->disp = (s32)disp;
	return 0;
}

/* Opcode groups whose operation is ModRM.reg. */
enum opcode_group {
	GROUP_NONE,
	GROUP_ALU_IMM, /* 80 81 83 */
	GROUP_SHIFT, /* C0 C1 D0-D3 */
	GROUP_MOV_IMM, /* C6 C7 */
	GROUP_UNARY, /* F6 F7 */
	GROUP_INC_DEC, /* FE FF */
	GROUP_BIT_IMM, /* 0F BA */
};

/* What the opcode bytes alone say; the group's ModRM.reg says the rest. */
struct opcode_info {
	u8 kind;
	u8 op;
	u8 size;
	u8 regsize;
	u8 group;
	u8 imm_len;
};

static int classify_one_byte(struct opcode_info *o, u8 opcode, u8 rex, u8 full)
{
	u8 size = opcode & 1 ? full : 1;

	if (opcode < 0x40 && (opcode & 7) < 4) {
		o->kind = opcode & 2 ? KIND_ALU_TO_REG : KIND_ALU_TO_MEM;
		o->op = opcode >> 3;
		o->size = size;
		return 0;
	}
	switch (opcode) {
	case 0x63: /* movsxd; without REX.W it is a plain mov, rare */
		if (!(rex & REX_W))
			return -EOPNOTSUPP;
		o->kind = KIND_LOAD;
		o->op = LOAD_SIGN_EXTEND;
		o->size = 4;
		o->regsize = 8;
		return 0;
	case 0x80:
	case 0x81:
	case 0x83:
		o->kind = KIND_ALU_TO_MEM;
		o->group = GROUP_ALU_IMM;
		o->size = size;
		o->imm_len = opcode == 0x81 ? (full == 2 ? 2 : 4) : 1;
		return 0;
	case 0x84:
	case 0x85:
		o->kind = KIND_ALU_TO_MEM;
		o->op = OP_TEST;
		o->size = size;
		return 0;
	case 0x86:
	case 0x87:
		o->kind = KIND_XCHG;
		o->size = size;
		return 0;
	case 0x88:
	case 0x89:
		o->kind = KIND_STORE;
		o->size = size;
		return 0;
	case 0x8a:
	case 0x8b:
		o->kind = KIND_LOAD;
		o->op = LOAD_PLAIN;
		o->size = size;
		return 0;
	case 0xc0:
	case 0xc1:
	case 0xd0:
	case 0xd1:
	case 0xd2:
	case 0xd3:
		o->kind = KIND_ALU_TO_MEM;
		o->group = GROUP_SHIFT;
		o->size = size;
		o->imm_len = opcode < 0xd0 ? 1 : 0;
		return 0;
	case 0xc6:
	case 0xc7:
		o->kind = KIND_STORE;
		o->group = GROUP_MOV_IMM;
		o->size = size;
		o->imm_len = opcode == 0xc7 ? (full == 2 ? 2 : 4) : 1;
		return 0;
	case 0xf6:
	case 0xf7:
		o->kind = KIND_ALU_TO_MEM;
		o->group = GROUP_UNARY;
		o->size = size;
		return 0;
	case 0xfe:
	case 0xff:
		o->kind = KIND_ALU_TO_MEM;
		o->group = GROUP_INC_DEC;
		o->size = size;
		return 0;
	}
	return -EOPNOTSUPP;
}

static int classify_two_byte(struct opcode_info *o, u8 opcode, u8 full)
{
	u8 size = opcode & 1 ? full : 1;

	if ((opcode & 0xf0) == 0x40) {
		o->kind = KIND_CMOV;
		o->op = opcode & 0xf;
		o->size = full;
		return 0;
	}
	if ((opcode & 0xf0) == 0x90) {
		o->kind = KIND_SETCC;
		o->op = opcode & 0xf;
		o->size = 1;
		return 0;
	}
	switch (opcode) {
	case 0xb0:
	case 0xb1:
		o->kind = KIND_CMPXCHG;
		o->size = size;
		return 0;
	case 0xb6:
	case 0xb7:
	case 0xbe:
	case 0xbf:
		o->kind = KIND_LOAD;
		o->op = opcode & 8 ? LOAD_SIGN_EXTEND : LOAD_ZERO_EXTEND;
		o->size = opcode & 1 ? 2 : 1;
		o->regsize = full;
		return 0;
	case 0xba:
		o->kind = KIND_ALU_TO_MEM;
		o->group = GROUP_BIT_IMM;
		o->size = full;
		o->imm_len = 1;
		return 0;
	case 0xc0:
	case 0xc1:
		o->kind = KIND_XADD;
		o->size = size;
		return 0;
	}
	return -EOPNOTSUPP;
}

/* The operation of a group opcode from ModRM.reg (@ext). */
static int classify_group(struct opcode_info *o, u8 ext, u8 full)
{
	switch (o->group) {
	case GROUP_ALU_IMM:
		o->op = ext;
		return 0;
	case GROUP_SHIFT:
		if (ext == 6) /* undocumented alias of shl */
			return -EOPNOTSUPP;
		o->op = OP_ROL + ext;
		return 0;
	case GROUP_MOV_IMM:
		return ext == 0 ? 0 : -EOPNOTSUPP;
	case GROUP_UNARY:
		if (ext == 0) {
			o->op = OP_TEST;
			o->imm_len = o->size == 1 ? 1 : full == 2 ? 2 : 4;
		} else if (ext == 2) {
			o->op = OP_NOT;
		} else if (ext == 3) {
			o->op = OP_NEG;
		} else {
			return -EOPNOTSUPP; /* mul, div; /1 is an alias */
		}
		return 0;
	case GROUP_INC_DEC:
		if (ext > 1) /* call, jmp, push through memory */
			return -EOPNOTSUPP;
		o->op = OP_INC + ext;
		return 0;
	case GROUP_BIT_IMM:
		if (ext < 4)
			return -EOPNOTSUPP;
		o->op = OP_BT + ext - 4;
		return 0;
	}
	return 0;
}

/* The read-modify-writes the CPU accepts a lock prefix on. */
static bool lockable(const struct opcode_info *o)
{
	switch (o->kind) {
	case KIND_XCHG:
	case KIND_CMPXCHG:
	case KIND_XADD:
		return true;
	case KIND_ALU_TO_MEM:
		return o->op <= OP_XOR || o->op == OP_NOT || o->op == OP_NEG ||
		       o->op == OP_INC || o->op == OP_DEC ||
		       (o->op >= OP_BTS && o->op <= OP_BTC);
	}
	return false;
}

int valor_insn_decode(struct valor_insn *insn, const u8 *bytes,
		      unsigned int avail)
{
	struct cursor c = { .bytes = bytes, .avail = avail };
	struct opcode_info o = { 0 };
	bool opsize16 = false, lock = false;
	u8 rex = 0, rep = 0, opcode, modrm, full;
	u64 imm = 0;
	int err;

	*insn = (struct valor_insn){ .base = NO_REG, .index = NO_REG };

	for (;;) {
		err = cursor_byte(&c, &opcode);
		if (err)
			return err;
		if ((opcode & 0xf0) == 0x40) {
			rex = opcode;
			continue;
		}
		if (opcode == 0x66) {
			opsize16 = true;
		} else if (opcode == 0xf0) {
			lock = true;
		} else if (opcode == 0xf2 || opcode == 0xf3) {
			rep = opcode;
		} else if (opcode == 0x64 || opcode == 0x65) {
			insn->attr |= ATTR_FSGS;
		} else if (opcode != 0x26 && opcode != 0x2e && opcode != 0x36 &&
			   opcode != 0x3e) {
			break;
		}
		/* A REX prefix counts only right before the opcode. */
		rex = 0;
	}
	if (rex)
		insn->attr |= ATTR_REX;
	full = rex & REX_W ? 8 : opsize16 ? 2 : 4;

	if (opcode >= 0xa0 && opcode <= 0xa3) {
		/* mov between the accumulator and a 64-bit absolute address */
		if (lock || rep)
			return -EOPNOTSUPP;
		err = cursor_take(&c, 8, &insn->imm);
		if (err)
			return err;
		insn->kind = opcode & 2 ? KIND_STORE : KIND_LOAD;
		insn->op = LOAD_PLAIN;
		insn->opsize = opcode & 1 ? full : 1;
		insn->regsize = insn->opsize;
		insn->reg = 0;
		insn->attr |= ATTR_MOFFS;
		insn->reads = !(opcode & 2);
		insn->writes = opcode & 2;
		insn->len = c.pos;
		return 0;
	}

	if (opcode == 0x0f) {
		err = cursor_byte(&c, &opcode);
		if (err)
			return err;
		err = classify_two_byte(&o, opcode, full);
	} else {
		err = classify_one_byte(&o, opcode, rex, full);
	}
	if (err)
		return err;

	err = cursor_byte(&c, &modrm);
	if (err)
		return err;
	if (modrm >> 6 == 3) /* a register operand: no memory access */
		return -EOPNOTSUPP;
	err = classify_group(&o, (modrm >> 3) & 7, full);
	if (err)
		return err;
	if (lock && !lockable(&o))
		return -EOPNOTSUPP; /* #UD on the CPU: let it raise it */
	/*
	 * F2/F3 are HLE hints on the locked forms and xchg (xacquire,
	 * xrelease) and F3 on mov stores (xrelease); elsewhere they are
	 * reserved or select other instructions (popcnt, tzcnt, ...).
	 */
	if (rep && !lock && o.kind != KIND_XCHG &&
	    !(rep == 0xf3 && o.kind == KIND_STORE))
		return -EOPNOTSUPP;

	err = decode_address(insn, &c, modrm, rex);
	if (err)
		return err;
	if (o.imm_len) {
		err = cursor_take(&c, o.imm_len, &imm);
		if (err)
			return err;
		insn->attr |= ATTR_SRC_IMM;
	} else if (o.group == GROUP_SHIFT) {
		if (opcode & 2) {
			insn->attr |= ATTR_SRC_CL;
		} else {
			imm = 1;
			insn->attr |= ATTR_SRC_IMM;
		}
	}

	insn->len = c.pos;
	insn->opsize = o.size;
	insn->regsize = o.regsize ? o.regsize : o.size;
	insn->kind = o.kind;
	insn->op = o.op;
	insn->reg = ((modrm >> 3) & 7) | (rex & REX_R ? 8 : 0);
	insn->imm = imm;
	insn->atomic = lock || o.kind == KIND_XCHG;
	switch (o.kind) {
	case KIND_STORE:
	case KIND_SETCC:
		insn->writes = true;
		break;
	case KIND_ALU_TO_MEM:
		insn->reads = true;
		insn->writes = o.op != OP_CMP && o.op != OP_TEST &&
			       o.op != OP_BT;
		break;
	case KIND_XCHG:
	case KIND_CMPXCHG:
	case KIND_XADD:
		insn->reads = true;
		insn->writes = true;
		break;
	default:
		insn->reads = true;
		break;
	}
	return 0;
}

int valor_insn_address(const struct valor_insn *insn,
		       const struct pt_regs *regs, unsigned long *addr)
{
	unsigned long ea;

	if (insn->attr & ATTR_FSGS)
		return -EOPNOTSUPP;
	if (insn->attr & ATTR_MOFFS) {
		*addr = insn->imm;
		return 0;
	}
	ea = (long)insn->disp;
	if (insn->base == BASE_RIP)
		ea += regs->ip + insn->len;
	else if (insn->base != NO_REG)
		ea += gpr_value(regs, insn->base);
	if (insn->index != NO_REG)
		ea += gpr_value(regs, insn->index) << insn->scale;
	*addr = ea;
	return 0;
}

/* The source operand of KIND_ALU_TO_MEM. */
static u64 alu_source(const struct valor_insn *insn, const struct pt_regs *regs)
{
	if (insn->attr & ATTR_SRC_IMM)
		return insn->imm;
	if (insn->attr & ATTR_SRC_CL)
		return regs->cx & 0xff;
	return reg_read(insn, regs, insn->reg, insn->opsize);
}

/*
 * mem = mem @op @src, atomically if the instruction is; the flags of the
 * operation that took effect go to *@flags.  Returns the old value.
 */
static u64 read_modify_write(const struct valor_insn *insn, void *mem, u8 op,
			     u64 src, unsigned long *flags)
{
	unsigned long in = *flags;
	u64 old = mem_load(mem, insn->opsize), new;

	if (!insn->atomic) {
		new = alu(op, insn->opsize, old, src, flags);
		if (insn->writes)
			mem_store(mem, insn->opsize, new);
		return old;
	}
	do {
		*flags = in;
		new = alu(op, insn->opsize, old, src, flags);
	} while (!mem_cmpxchg(mem, insn->opsize, &old, new));
	return old;
}

int valor_insn_emulate(const struct valor_insn *insn, struct pt_regs *regs,
		       void *mem)
{
	u8 size = insn->opsize;
	unsigned long flags = regs->flags;
	u64 val, old;

	/*
	 * A locked access split across cache lines is fatal in the kernel
	 * where split lock detection is on: let the CPU do it in user mode.
	 */
	if (insn->atomic && ((unsigned long)mem & 63) + size > 64)
		return -EOPNOTSUPP;

	switch (insn->kind) {
	case KIND_LOAD:
		val = mem_load(mem, size);
		if (insn->op == LOAD_SIGN_EXTEND)
			val = sign_extend(val, size);
		reg_write(insn, regs, insn->reg, insn->regsize, val);
		break;
	case KIND_STORE:
		val = insn->attr & ATTR_SRC_IMM ?
			      insn->imm :
			      reg_read(insn, regs, insn->reg, size);
		mem_store(mem, size, val);
		break;
	case KIND_ALU_TO_REG:
		val = alu(insn->op, size, reg_read(insn, regs, insn->reg, size),
			  mem_load(mem, size), &flags);
		if (insn->op != OP_CMP)
			reg_write(insn, regs, insn->reg, size, val);
		break;
	case KIND_ALU_TO_MEM:
		read_modify_write(insn, mem, insn->op, alu_source(insn, regs),
				  &flags);
		break;
	case KIND_XADD:
		old = read_modify_write(insn, mem, OP_ADD,
					reg_read(insn, regs, insn->reg, size),
					&flags);
		reg_write(insn, regs, insn->reg, size, old);
		break;
	case KIND_XCHG:
		val = reg_read(insn, regs, insn->reg, size);
		old = mem_load(mem, size);
		while (!mem_cmpxchg(mem, size, &old, val))
			;
		reg_write(insn, regs, insn->reg, size, old);
		break;
	case KIND_CMPXCHG:
		val = reg_read(insn, regs, 0, size);
		old = val;
		if (insn->atomic) {
			mem_cmpxchg(mem, size, &old,
				    reg_read(insn, regs, insn->reg, size));
		} else {
			/*
			 * Unlocked, the CPU writes the old value back on a
			 * mismatch; only a racing store could tell, and
			 * losing it would help nobody.
			 */
			old = mem_load(mem, size);
			if (old == val)
				mem_store(mem, size,
					  reg_read(insn, regs, insn->reg,
						   size));
		}
		alu(OP_CMP, size, val, old, &flags);
		if (old != val)
			reg_write(insn, regs, 0, size, old);
		break;
	case KIND_SETCC:
		mem_store(mem, 1, condition(insn->op, flags));
		break;
	case KIND_CMOV:
		val = mem_load(mem, size);
		if (condition(insn->op, flags))
			reg_write(insn, regs, insn->reg, size, val);
		else if (size == 4) /* zero-extends even when not moving */
			reg_write(insn, regs, insn->reg, 4,
				  reg_read(insn, regs, insn->reg, 4));
		break;
	default:
		return -EOPNOTSUPP;
	}
	regs->flags = flags;
	regs->ip += insn->len;
	return 0;
}
