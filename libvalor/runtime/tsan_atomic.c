// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * __tsan_atomic*: what gcc 12 and clang 14 emit for every C11, C++ and
 * __atomic / __sync operation under -fsanitize=thread.  Each call does
 * the real atomic operation and turns its memory order into
 * synchronization on the atomic object's address:
 *
 *   load    acquire, consume, acq_rel, seq_cst   acquire after the load
 *   store   release, acq_rel, seq_cst            release before the store
 *   RMW     release before if the order releases, acquire after if it
 *           acquires
 *   CAS     success: as an RMW with the success order; failure: a load
 *           with the failure order
 *
 * Releases are joins (the engine's valor_release), so a release sequence
 * (relaxed RMWs after a release store) is modelled for free; a release
 * store does not replace the object's clock as TSan's does, which can
 * only add happens-before, never invent a race.
 *
 * Fences (see Documentation/runtime-abi.md): a release fence makes every
 * later atomic store or RMW of the thread a release of its object; an
 * acquire fence acquires the objects the thread read with non-acquiring
 * operations since its previous acquire fence (a small per-thread set).
 *
 * Atomic accesses are never data accesses: nothing here calls
 * valor_access().
 */
#include "rt.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

typedef char a8;
typedef short a16;
typedef int a32;
typedef long a64;
__extension__ typedef __int128 a128;

/* __tsan_memory_order: the order of libc++'s (and C11's) memory_order. */
enum {
	MO_RELAXED,
	MO_CONSUME,
	MO_ACQUIRE,
	MO_RELEASE,
	MO_ACQ_REL,
	MO_SEQ_CST,
};

/*
 * gcc may pass its internal bits along: MEMMODEL_SYNC (1 << 15, __sync
 * builtins) and the HLE hints (1 << 16, 1 << 17).  None changes what
 * synchronizes; an order we do not know is taken as seq_cst.
 */
static inline int mo_norm(int mo)
{
	mo &= 0x7fff;
	return mo > MO_SEQ_CST ? MO_SEQ_CST : mo;
}

static inline bool mo_acquires(int mo)
{
	return mo != MO_RELAXED && mo != MO_RELEASE;
}

static inline bool mo_releases(int mo)
{
	return mo >= MO_RELEASE;
}

/* ---- per-thread fence state ---- */

/*
 * Objects read with a non-acquiring order since the thread's last
 * acquire fence: a direct-mapped set, so a spin loop on one flag costs
 * two thread-local stores per load and evicts nothing else.  Two objects that
 * map to one slot keep only the later one: an acquire fence after reads
 * of more than a few objects may miss one (a possible false report, never
 * a hidden one).
 */
#define FENCE_SLOTS 32

struct fence_state {
	bool released; /* a release fence has run: stores release */
	bool pending; /* loads[] is not empty */
	uintptr_t loads[FENCE_SLOTS];
};

static __thread struct fence_state fence
	__attribute__((tls_model("initial-exec")));

static inline void note_plain_load(const volatile void *a)
{
	uintptr_t x = (uintptr_t)a;

	fence.loads[(x * 0x9e3779b97f4a7c15ull) >> 59] = x;
	fence.pending = true;
}

/* Called with the thread entered (rt_enter). */
static void fence_acquire_loads(struct rt_thread *t)
{
	for (unsigned i = 0; i < FENCE_SLOTS; i++) {
		if (fence.loads[i]) {
			valor_acquire(t->vt, fence.loads[i]);
			fence.loads[i] = 0;
		}
	}
	fence.pending = false;
}

/* ---- synchronization around an operation ---- */

/* Before a store or RMW with order @mo. */
static inline void sync_before(const volatile void *a, int mo)
{
	if (mo_releases(mo) || unlikely(fence.released))
		rt_release((uintptr_t)a);
}

/* After a load or RMW with order @mo. */
static inline void sync_after(const volatile void *a, int mo)
{
	if (mo_acquires(mo))
		rt_acquire((uintptr_t)a);
	else
		note_plain_load(a);
}

/* Whether a CAS with success order @mo must release first. */
static inline bool cas_releases(int mo)
{
	return mo_releases(mo) || unlikely(fence.released);
}

/* ---- 8- to 64-bit operations ---- */

/*
 * The real operation uses seq_cst except for plain stores, where a
 * seq_cst store costs an xchg on x86-64: those use release unless asked
 * for seq_cst.  A stronger order than requested is always correct.
 *
 * CAS with a releasing order: the release must come before the store
 * (an acquirer that reads the new value must find it), but a CAS that
 * fails stores nothing and must not release.  So the current value is
 * read first; if it already differs from the expected one the CAS fails
 * right there (a legal outcome: that is the value it read), and only
 * otherwise do we release and try.  The rare CAS that still fails after
 * the release (another thread changed the value in between) releases
 * spuriously: extra happens-before, never a false report.
 */
#define DEFINE_ATOMIC_OPS(N, T)                                              \
	RT_EXPORT T __tsan_atomic##N##_load(const volatile T *a, int mo)     \
	{                                                                    \
		T v = __atomic_load_n(a, __ATOMIC_SEQ_CST);                  \
		sync_after(a, mo_norm(mo));                                  \
		return v;                                                    \
	}                                                                    \
                                                                             \
	RT_EXPORT void __tsan_atomic##N##_store(volatile T *a, T v, int mo)  \
	{                                                                    \
		mo = mo_norm(mo);                                            \
		sync_before(a, mo);                                          \
		if (mo == MO_SEQ_CST)                                        \
			__atomic_store_n(a, v, __ATOMIC_SEQ_CST);            \
		else                                                         \
			__atomic_store_n(a, v, __ATOMIC_RELEASE);            \
	}                                                                    \
                                                                             \
	DEFINE_ATOMIC_RMW(N, T, exchange, __atomic_exchange_n)               \
	DEFINE_ATOMIC_RMW(N, T, fetch_add, __atomic_fetch_add)               \
	DEFINE_ATOMIC_RMW(N, T, fetch_sub, __atomic_fetch_sub)               \
	DEFINE_ATOMIC_RMW(N, T, fetch_and, __atomic_fetch_and)               \
	DEFINE_ATOMIC_RMW(N, T, fetch_or, __atomic_fetch_or)                 \
	DEFINE_ATOMIC_RMW(N, T, fetch_xor, __atomic_fetch_xor)               \
	DEFINE_ATOMIC_RMW(N, T, fetch_nand, __atomic_fetch_nand)             \
                                                                             \
	static inline bool cas##N(volatile T *a, T *c, T v, int mo, int fmo) \
	{                                                                    \
		mo = mo_norm(mo);                                            \
		fmo = mo_norm(fmo);                                          \
		if (cas_releases(mo)) {                                      \
			T cur = __atomic_load_n(a, __ATOMIC_SEQ_CST);        \
			if (cur != *c) {                                     \
				*c = cur;                                    \
				sync_after(a, fmo);                          \
				return false;                                \
			}                                                    \
			rt_release((uintptr_t)a);                            \
		}                                                            \
		if (__atomic_compare_exchange_n(a, c, v, false,              \
						__ATOMIC_SEQ_CST,            \
						__ATOMIC_SEQ_CST)) {         \
			sync_after(a, mo);                                   \
			return true;                                         \
		}                                                            \
		sync_after(a, fmo);                                          \
		return false;                                                \
	}                                                                    \
                                                                             \
	RT_EXPORT int __tsan_atomic##N##_compare_exchange_strong(            \
		volatile T *a, T *c, T v, int mo, int fmo)                   \
	{                                                                    \
		return cas##N(a, c, v, mo, fmo);                             \
	}                                                                    \
                                                                             \
	RT_EXPORT int __tsan_atomic##N##_compare_exchange_weak(              \
		volatile T *a, T *c, T v, int mo, int fmo)                   \
	{                                                                    \
		return cas##N(a, c, v, mo, fmo);                             \
	}                                                                    \
                                                                             \
	RT_EXPORT T __tsan_atomic##N##_compare_exchange_val(                 \
		volatile T *a, T c, T v, int mo, int fmo)                    \
	{                                                                    \
		cas##N(a, &c, v, mo, fmo);                                   \
		return c;                                                    \
	}

#define DEFINE_ATOMIC_RMW(N, T, op, builtin)                            \
	RT_EXPORT T __tsan_atomic##N##_##op(volatile T *a, T v, int mo) \
	{                                                               \
		T old;                                                  \
                                                                        \
		mo = mo_norm(mo);                                       \
		sync_before(a, mo);                                     \
		old = builtin(a, v, __ATOMIC_SEQ_CST);                  \
		sync_after(a, mo);                                      \
		return old;                                             \
	}

DEFINE_ATOMIC_OPS(8, a8)
DEFINE_ATOMIC_OPS(16, a16)
DEFINE_ATOMIC_OPS(32, a32)
DEFINE_ATOMIC_OPS(64, a64)

/* ---- 128-bit operations ---- */

/*
 * gcc implements 16-byte __atomic builtins by calls into libatomic, even
 * with -mcx16, and the runtime must not need libatomic.  On x86-64 we use
 * cmpxchg16b directly, as libatomic does on every CPU that has it, so
 * uninstrumented code using libatomic on the same object stays atomic
 * with us.  Without cmpxchg16b (the very first x86-64 CPUs), on other
 * architectures, and for a misaligned object, a striped runtime lock
 * (never a pthread mutex) serializes the operations that come through
 * here.
 */
#define LOCK128_STRIPES 64
static atomic_int lock128[LOCK128_STRIPES];

static inline atomic_int *lock128_of(const volatile void *a)
{
	return &lock128[((uintptr_t)a >> 4) % LOCK128_STRIPES];
}

#if defined(__x86_64__)
static bool have_cx16(void)
{
	static int state; /* 0 unknown, 1 yes, -1 no */
	int s = __atomic_load_n(&state, __ATOMIC_RELAXED);
	unsigned int eax, ebx, ecx, edx;

	if (likely(s))
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

/* lock cmpxchg16b: a full barrier, like every locked instruction. */
static inline bool cx16_cas(volatile a128 *a, a128 *c, a128 v)
{
	uint64_t lo = (uint64_t)*c,
		 hi = (uint64_t)((unsigned __int128)*c >> 64);
	bool ok;

	__asm__ __volatile__("lock cmpxchg16b %1"
			     : "=@ccz"(ok), "+m"(*a), "+a"(lo), "+d"(hi)
			     : "b"((uint64_t)v),
			       "c"((uint64_t)((unsigned __int128)v >> 64))
			     : "memory");
	*c = (a128)(((unsigned __int128)hi << 64) | lo);
	return ok;
}
#else
static inline bool use_cx16(const volatile void *a)
{
	(void)a;
	return false;
}

static inline bool cx16_cas(volatile a128 *a, a128 *c, a128 v)
{
	(void)a;
	(void)c;
	(void)v;
	__builtin_trap();
}
#endif

static a128 load128(const volatile a128 *a)
{
	a128 v = 0;

	if (use_cx16(a)) {
		/* Compare with 0 and store 0 if equal: either way we read. */
		cx16_cas((volatile a128 *)a, &v, 0);
		return v;
	}
	rt_lock(lock128_of(a));
	v = *a;
	rt_unlock(lock128_of(a));
	return v;
}

static bool cas128_raw(volatile a128 *a, a128 *c, a128 v)
{
	bool ok;

	if (use_cx16(a))
		return cx16_cas(a, c, v);
	rt_lock(lock128_of(a));
	ok = *a == *c;
	if (ok)
		*a = v;
	else
		*c = *a;
	rt_unlock(lock128_of(a));
	return ok;
}

/* The new value from the old one, for each read-modify-write. */
#define OP128_exchange(old, v) (v)
#define OP128_fetch_add(old, v) \
	((a128)((unsigned __int128)(old) + (unsigned __int128)(v)))
#define OP128_fetch_sub(old, v) \
	((a128)((unsigned __int128)(old) - (unsigned __int128)(v)))
#define OP128_fetch_and(old, v) ((old) & (v))
#define OP128_fetch_or(old, v) ((old) | (v))
#define OP128_fetch_xor(old, v) ((old) ^ (v))
#define OP128_fetch_nand(old, v) (~((old) & (v)))

#define DEFINE_ATOMIC128_RMW(op)                                               \
	RT_EXPORT a128 __tsan_atomic128_##op(volatile a128 *a, a128 v, int mo) \
	{                                                                      \
		a128 old;                                                      \
                                                                               \
		mo = mo_norm(mo);                                              \
		sync_before(a, mo);                                            \
		if (use_cx16(a)) {                                             \
			old = load128(a);                                      \
			while (!cx16_cas(a, &old, OP128_##op(old, v)))         \
				;                                              \
		} else {                                                       \
			rt_lock(lock128_of(a));                                \
			old = *a;                                              \
			*a = OP128_##op(old, v);                               \
			rt_unlock(lock128_of(a));                              \
		}                                                              \
		sync_after(a, mo);                                             \
		return old;                                                    \
	}

RT_EXPORT a128 __tsan_atomic128_load(const volatile a128 *a, int mo)
{
	a128 v = load128(a);

	sync_after(a, mo_norm(mo));
	return v;
}

DEFINE_ATOMIC128_RMW(exchange)
DEFINE_ATOMIC128_RMW(fetch_add)
DEFINE_ATOMIC128_RMW(fetch_sub)
DEFINE_ATOMIC128_RMW(fetch_and)
DEFINE_ATOMIC128_RMW(fetch_or)
DEFINE_ATOMIC128_RMW(fetch_xor)
DEFINE_ATOMIC128_RMW(fetch_nand)

RT_EXPORT void __tsan_atomic128_store(volatile a128 *a, a128 v, int mo)
{
	a128 old;

	sync_before(a, mo_norm(mo));
	if (use_cx16(a)) {
		old = load128(a);
		while (!cx16_cas(a, &old, v))
			;
	} else {
		rt_lock(lock128_of(a));
		*a = v;
		rt_unlock(lock128_of(a));
	}
}

/* As cas##N above, with the 128-bit primitives. */
static bool cas128(volatile a128 *a, a128 *c, a128 v, int mo, int fmo)
{
	mo = mo_norm(mo);
	fmo = mo_norm(fmo);
	if (cas_releases(mo)) {
		a128 cur = load128(a);

		if (cur != *c) {
			*c = cur;
			sync_after(a, fmo);
			return false;
		}
		rt_release((uintptr_t)a);
	}
	if (cas128_raw(a, c, v)) {
		sync_after(a, mo);
		return true;
	}
	sync_after(a, fmo);
	return false;
}

RT_EXPORT int __tsan_atomic128_compare_exchange_strong(volatile a128 *a,
						       a128 *c, a128 v, int mo,
						       int fmo)
{
	return cas128(a, c, v, mo, fmo);
}

RT_EXPORT int __tsan_atomic128_compare_exchange_weak(volatile a128 *a, a128 *c,
						     a128 v, int mo, int fmo)
{
	return cas128(a, c, v, mo, fmo);
}

RT_EXPORT a128 __tsan_atomic128_compare_exchange_val(volatile a128 *a, a128 c,
						     a128 v, int mo, int fmo)
{
	cas128(a, &c, v, mo, fmo);
	return c;
}

/* ---- fences ---- */

RT_EXPORT void __tsan_atomic_thread_fence(int mo)
{
	struct rt_thread *t;

	mo = mo_norm(mo);
	if (mo == MO_RELAXED)
		return;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (mo_acquires(mo) && fence.pending) {
		t = rt_enter();
		if (t) {
			fence_acquire_loads(t);
			rt_leave(t);
		}
	}
	if (mo_releases(mo))
		fence.released = true;
}

/* Orders the thread against its own signal handlers: no other thread. */
RT_EXPORT void __tsan_atomic_signal_fence(int mo)
{
	(void)mo;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}
