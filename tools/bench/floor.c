// SPDX-License-Identifier: GPL-2.0
/*
 * The instrumentation floor: a stub ThreadSanitizer runtime for `make
 * bench`.  It defines every __tsan_* entry point that Valor's runtime
 * defines (libvalor/runtime/tsan_abi.c, tsan_atomic.c, annotate.c; the
 * list gcc 12 and clang 14 can emit is in Documentation/runtime-abi.md),
 * and each does nothing -- except what the program's own result depends
 * on: the atomics perform the real atomic operation and return the real
 * value, __tsan_memcpy and friends copy, and the few calls that return
 * something return what the program expects.
 *
 * A program compiled with `valor cc`'s flags and linked statically with
 * this archive (build/bench/lib/libvalor-floor.a) costs what the
 * compiler's instrumentation costs by itself: the calls, the spilled
 * registers around them, the optimizations they prevent.  That is the
 * floor no runtime can go below; the harness reports each analysis as a
 * ratio to it.  It is linked statically because `valor cc` links its
 * runtime statically: through the PLT the same empty calls cost about
 * 1.7x more (issue 5), which would flatter every runtime compared with it.
 *
 * Never instrumented itself (-fno-sanitize=all), compiled -O2 -fPIC, and
 * with -mcx16 so the 128-bit compare-and-swap is one lock cmpxchg16b.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define FLOOR_API __attribute__((visibility("default")))

typedef char a8;
typedef short a16;
typedef int a32;
typedef long a64;
__extension__ typedef __int128 a128;

/* ---- start-up ---- */

FLOOR_API void __tsan_init(void)
{
}

/* ---- plain accesses: nothing at all ---- */

#define DEFINE_NOP1(name)               \
	FLOOR_API void name(void *addr) \
	{                               \
		(void)addr;             \
	}

#define DEFINE_NOP_PC(name)                       \
	FLOOR_API void name(void *addr, void *pc) \
	{                                         \
		(void)addr;                       \
		(void)pc;                         \
	}

#define DEFINE_NOP_SIZES(prefix) \
	DEFINE_NOP1(prefix##1)   \
	DEFINE_NOP1(prefix##2)   \
	DEFINE_NOP1(prefix##4)   \
	DEFINE_NOP1(prefix##8)   \
	DEFINE_NOP1(prefix##16)

#define DEFINE_NOP_UNALIGNED_SIZES(prefix) \
	DEFINE_NOP1(prefix##2)             \
	DEFINE_NOP1(prefix##4)             \
	DEFINE_NOP1(prefix##8)             \
	DEFINE_NOP1(prefix##16)

#define DEFINE_NOP_PC_SIZES(prefix)   \
	DEFINE_NOP_PC(prefix##1##_pc) \
	DEFINE_NOP_PC(prefix##2##_pc) \
	DEFINE_NOP_PC(prefix##4##_pc) \
	DEFINE_NOP_PC(prefix##8##_pc) \
	DEFINE_NOP_PC(prefix##16##_pc)

/* gcc and clang */
DEFINE_NOP_SIZES(__tsan_read)
DEFINE_NOP_SIZES(__tsan_write)
/* clang */
DEFINE_NOP_UNALIGNED_SIZES(__tsan_unaligned_read)
DEFINE_NOP_UNALIGNED_SIZES(__tsan_unaligned_write)
/* with tsan-distinguish-volatile */
DEFINE_NOP_SIZES(__tsan_volatile_read)
DEFINE_NOP_SIZES(__tsan_volatile_write)
DEFINE_NOP_UNALIGNED_SIZES(__tsan_unaligned_volatile_read)
DEFINE_NOP_UNALIGNED_SIZES(__tsan_unaligned_volatile_write)
/* clang, with tsan-compound-read-before-write */
DEFINE_NOP_SIZES(__tsan_read_write)
DEFINE_NOP_UNALIGNED_SIZES(__tsan_unaligned_read_write)
/* hand-written instrumentation */
DEFINE_NOP_PC_SIZES(__tsan_read)
DEFINE_NOP_PC_SIZES(__tsan_write)

/* gcc: block copies, unaligned and bit-field accesses */
FLOOR_API void __tsan_read_range(void *addr, unsigned long size)
{
	(void)addr;
	(void)size;
}

FLOOR_API void __tsan_write_range(void *addr, unsigned long size)
{
	(void)addr;
	(void)size;
}

FLOOR_API void __tsan_read_range_pc(void *addr, unsigned long size, void *pc)
{
	(void)addr;
	(void)size;
	(void)pc;
}

FLOOR_API void __tsan_write_range_pc(void *addr, unsigned long size, void *pc)
{
	(void)addr;
	(void)size;
	(void)pc;
}

/* C++ vtable pointers */
FLOOR_API void __tsan_vptr_update(void **vptr_p, void *new_val)
{
	(void)vptr_p;
	(void)new_val;
}

DEFINE_NOP1(__tsan_vptr_read)

/* function entry and exit (valor cc compiles them out unless --stacks=full) */
DEFINE_NOP1(__tsan_func_entry)

FLOOR_API void __tsan_func_exit(void)
{
}

FLOOR_API void __tsan_ignore_thread_begin(void)
{
}

FLOOR_API void __tsan_ignore_thread_end(void)
{
}

/*
 * Emitted by neither gcc 12 nor clang 14, but they are operations: the
 * program's memory must change.  This archive is not an interceptor, so
 * calling libc's memcpy is fine here.
 */
FLOOR_API void *__tsan_memcpy(void *dst, const void *src, unsigned long n)
{
	return memcpy(dst, src, n);
}

FLOOR_API void *__tsan_memmove(void *dst, const void *src, unsigned long n)
{
	return memmove(dst, src, n);
}

FLOOR_API void *__tsan_memset(void *dst, int c, unsigned long n)
{
	return memset(dst, c, n);
}

/* ---- annotations (<sanitizer/tsan_interface.h>) ---- */

DEFINE_NOP1(__tsan_acquire)
DEFINE_NOP1(__tsan_release)

#define DEFINE_NOP_MUTEX(name)                              \
	FLOOR_API void name(void *addr, unsigned int flags) \
	{                                                   \
		(void)addr;                                 \
		(void)flags;                                \
	}

DEFINE_NOP_MUTEX(__tsan_mutex_create)
DEFINE_NOP_MUTEX(__tsan_mutex_destroy)
DEFINE_NOP_MUTEX(__tsan_mutex_pre_lock)
DEFINE_NOP_MUTEX(__tsan_mutex_post_unlock)
DEFINE_NOP_MUTEX(__tsan_mutex_pre_signal)
DEFINE_NOP_MUTEX(__tsan_mutex_post_signal)
DEFINE_NOP_MUTEX(__tsan_mutex_pre_divert)
DEFINE_NOP_MUTEX(__tsan_mutex_post_divert)

FLOOR_API void __tsan_mutex_post_lock(void *addr, unsigned int flags,
				      int recursion)
{
	(void)addr;
	(void)flags;
	(void)recursion;
}

/* The recursion count TSan's runtime returns; 0 for a plain unlock. */
FLOOR_API int __tsan_mutex_pre_unlock(void *addr, unsigned int flags)
{
	(void)addr;
	(void)flags;
	return 0;
}

/* Tags must be distinct and non-null, as from the real runtime. */
FLOOR_API void *__tsan_external_register_tag(const char *object_type)
{
	static uintptr_t last;

	(void)object_type;
	return (void *)__atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}

FLOOR_API void __tsan_external_register_header(void *tag, const char *header)
{
	(void)tag;
	(void)header;
}

FLOOR_API void __tsan_external_assign_tag(void *addr, void *tag)
{
	(void)addr;
	(void)tag;
}

FLOOR_API void __tsan_external_read(void *addr, void *caller_pc, void *tag)
{
	(void)addr;
	(void)caller_pc;
	(void)tag;
}

FLOOR_API void __tsan_external_write(void *addr, void *caller_pc, void *tag)
{
	(void)addr;
	(void)caller_pc;
	(void)tag;
}

FLOOR_API void __tsan_flush_memory(void)
{
}

/* ---- atomics: the real operation, nothing else ---- */

/*
 * The orders are C11's, relaxed 0 ... seq_cst 5; gcc may add its
 * internal bits above them (__sync builtins, HLE hints).  As in Valor's
 * runtime (tsan_atomic.c), the operation itself is done seq_cst except a
 * store that was not asked to be seq_cst, which is a release store: a
 * stronger order than asked is always correct, and on x86-64 only the
 * seq_cst store costs more (an xchg).  So the floor pays for the real
 * operation exactly what Valor's runtime pays.
 */
static inline bool mo_is_seq_cst(int mo)
{
	return (mo & 0x7fff) >= 5;
}

#define DEFINE_ATOMIC_RMW(N, T, op, builtin)                            \
	FLOOR_API T __tsan_atomic##N##_##op(volatile T *a, T v, int mo) \
	{                                                               \
		(void)mo;                                               \
		return builtin(a, v, __ATOMIC_SEQ_CST);                 \
	}

#define DEFINE_ATOMIC_OPS(N, T)                                                \
	FLOOR_API T __tsan_atomic##N##_load(const volatile T *a, int mo)       \
	{                                                                      \
		(void)mo;                                                      \
		return __atomic_load_n(a, __ATOMIC_SEQ_CST);                   \
	}                                                                      \
                                                                               \
	FLOOR_API void __tsan_atomic##N##_store(volatile T *a, T v, int mo)    \
	{                                                                      \
		if (mo_is_seq_cst(mo))                                         \
			__atomic_store_n(a, v, __ATOMIC_SEQ_CST);              \
		else                                                           \
			__atomic_store_n(a, v, __ATOMIC_RELEASE);              \
	}                                                                      \
                                                                               \
	DEFINE_ATOMIC_RMW(N, T, exchange, __atomic_exchange_n)                 \
	DEFINE_ATOMIC_RMW(N, T, fetch_add, __atomic_fetch_add)                 \
	DEFINE_ATOMIC_RMW(N, T, fetch_sub, __atomic_fetch_sub)                 \
	DEFINE_ATOMIC_RMW(N, T, fetch_and, __atomic_fetch_and)                 \
	DEFINE_ATOMIC_RMW(N, T, fetch_or, __atomic_fetch_or)                   \
	DEFINE_ATOMIC_RMW(N, T, fetch_xor, __atomic_fetch_xor)                 \
	DEFINE_ATOMIC_RMW(N, T, fetch_nand, __atomic_fetch_nand)               \
                                                                               \
	/* A weak CAS never fails spuriously here: it is a strong one. */      \
	FLOOR_API int __tsan_atomic##N##_compare_exchange_strong(              \
		volatile T *a, T *c, T v, int mo, int fmo)                     \
	{                                                                      \
		(void)mo;                                                      \
		(void)fmo;                                                     \
		return __atomic_compare_exchange_n(                            \
			a, c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);   \
	}                                                                      \
                                                                               \
	FLOOR_API int __tsan_atomic##N##_compare_exchange_weak(                \
		volatile T *a, T *c, T v, int mo, int fmo)                     \
	{                                                                      \
		return __tsan_atomic##N##_compare_exchange_strong(a, c, v, mo, \
								  fmo);        \
	}                                                                      \
                                                                               \
	/* clang's form: returns the value found (the old one). */             \
	FLOOR_API T __tsan_atomic##N##_compare_exchange_val(                   \
		volatile T *a, T c, T v, int mo, int fmo)                      \
	{                                                                      \
		(void)mo;                                                      \
		(void)fmo;                                                     \
		__atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, \
					    __ATOMIC_SEQ_CST);                 \
		return c;                                                      \
	}

DEFINE_ATOMIC_OPS(8, a8)
DEFINE_ATOMIC_OPS(16, a16)
DEFINE_ATOMIC_OPS(32, a32)
DEFINE_ATOMIC_OPS(64, a64)

/* ---- 128-bit atomics ---- */

/*
 * gcc turns 16-byte __atomic builtins into libatomic calls even with
 * -mcx16, but the __sync builtins into an inline lock cmpxchg16b: that
 * is what libatomic itself uses on a CPU that has it, so the floor stays
 * atomic with uninstrumented code on the same object and needs no
 * libatomic.  A misaligned object (cmpxchg16b would fault), a CPU
 * without it, or another architecture: a striped spin lock, as Valor's
 * runtime does.
 */
#define LOCK128_STRIPES 64
static char lock128[LOCK128_STRIPES];

#if defined(__x86_64__)
#define cpu_relax() __builtin_ia32_pause()
#else
#define cpu_relax() ((void)0)
#endif

static char *lock128_of(const volatile void *a)
{
	return &lock128[((uintptr_t)a >> 4) % LOCK128_STRIPES];
}

static void lock128_take(char *l)
{
	while (__atomic_test_and_set(l, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(l, __ATOMIC_RELAXED))
			cpu_relax();
}

static void lock128_drop(char *l)
{
	__atomic_clear(l, __ATOMIC_RELEASE);
}

#if defined(__x86_64__)
static bool have_cx16(void)
{
	static int state; /* 0 unknown, 1 yes, -1 no */
	int s = __atomic_load_n(&state, __ATOMIC_RELAXED);
	unsigned int eax, ebx, ecx, edx;

	if (__builtin_expect(s != 0, 1))
		return s > 0;
	s = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_CMPXCHG16B) ?
		    1 :
		    -1;
	__atomic_store_n(&state, s, __ATOMIC_RELAXED);
	return s > 0;
}

static inline bool use_cx16(const volatile void *a)
{
	return !((uintptr_t)a & 15) && have_cx16();
}

/* The value found; the store happened iff it equals @c. */
static inline a128 cas128_val(volatile a128 *a, a128 c, a128 v)
{
	return __sync_val_compare_and_swap(a, c, v);
}
#else
static inline bool use_cx16(const volatile void *a)
{
	(void)a;
	return false;
}

static inline a128 cas128_val(volatile a128 *a, a128 c, a128 v)
{
	(void)a;
	(void)v;
	__builtin_trap();
	return c;
}
#endif

/* The old value; @a now holds op(old, v). */
#define OP128_exchange(old, v) (v)
#define OP128_fetch_add(old, v) \
	((a128)((unsigned __int128)(old) + (unsigned __int128)(v)))
#define OP128_fetch_sub(old, v) \
	((a128)((unsigned __int128)(old) - (unsigned __int128)(v)))
#define OP128_fetch_and(old, v) ((old) & (v))
#define OP128_fetch_or(old, v) ((old) | (v))
#define OP128_fetch_xor(old, v) ((old) ^ (v))
#define OP128_fetch_nand(old, v) (~((old) & (v)))

FLOOR_API a128 __tsan_atomic128_load(const volatile a128 *a, int mo)
{
	a128 v;

	(void)mo;
	if (use_cx16(a)) /* stores 0 over 0, or nothing: either way a read */
		return cas128_val((volatile a128 *)a, 0, 0);
	lock128_take(lock128_of(a));
	v = *a;
	lock128_drop(lock128_of(a));
	return v;
}

#define DEFINE_ATOMIC128_RMW(op)                                               \
	FLOOR_API a128 __tsan_atomic128_##op(volatile a128 *a, a128 v, int mo) \
	{                                                                      \
		a128 old, seen;                                                \
                                                                               \
		(void)mo;                                                      \
		if (use_cx16(a)) {                                             \
			old = cas128_val(a, 0, 0);                             \
			while ((seen = cas128_val(a, old,                      \
						  OP128_##op(old, v))) != old) \
				old = seen;                                    \
			return old;                                            \
		}                                                              \
		lock128_take(lock128_of(a));                                   \
		old = *a;                                                      \
		*a = OP128_##op(old, v);                                       \
		lock128_drop(lock128_of(a));                                   \
		return old;                                                    \
	}

DEFINE_ATOMIC128_RMW(exchange)
DEFINE_ATOMIC128_RMW(fetch_add)
DEFINE_ATOMIC128_RMW(fetch_sub)
DEFINE_ATOMIC128_RMW(fetch_and)
DEFINE_ATOMIC128_RMW(fetch_or)
DEFINE_ATOMIC128_RMW(fetch_xor)
DEFINE_ATOMIC128_RMW(fetch_nand)

FLOOR_API void __tsan_atomic128_store(volatile a128 *a, a128 v, int mo)
{
	a128 old, seen;

	(void)mo;
	if (use_cx16(a)) {
		old = cas128_val(a, 0, 0);
		while ((seen = cas128_val(a, old, v)) != old)
			old = seen;
		return;
	}
	lock128_take(lock128_of(a));
	*a = v;
	lock128_drop(lock128_of(a));
}

/* The value found at @a; @v was stored iff it equals @c. */
static a128 cas128(volatile a128 *a, a128 c, a128 v)
{
	a128 seen;

	if (use_cx16(a))
		return cas128_val(a, c, v);
	lock128_take(lock128_of(a));
	seen = *a;
	if (seen == c)
		*a = v;
	lock128_drop(lock128_of(a));
	return seen;
}

FLOOR_API int __tsan_atomic128_compare_exchange_strong(volatile a128 *a,
						       a128 *c, a128 v, int mo,
						       int fmo)
{
	a128 seen = cas128(a, *c, v);

	(void)mo;
	(void)fmo;
	if (seen == *c)
		return 1;
	*c = seen;
	return 0;
}

FLOOR_API int __tsan_atomic128_compare_exchange_weak(volatile a128 *a, a128 *c,
						     a128 v, int mo, int fmo)
{
	return __tsan_atomic128_compare_exchange_strong(a, c, v, mo, fmo);
}

FLOOR_API a128 __tsan_atomic128_compare_exchange_val(volatile a128 *a, a128 c,
						     a128 v, int mo, int fmo)
{
	(void)mo;
	(void)fmo;
	return cas128(a, c, v);
}

/* ---- fences: the real fence ---- */

FLOOR_API void __tsan_atomic_thread_fence(int mo)
{
	if (mo & 0x7fff)
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

FLOOR_API void __tsan_atomic_signal_fence(int mo)
{
	(void)mo;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}
