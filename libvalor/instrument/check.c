// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The access check the LLVM pass inlines into the program
 * (libvalor/runtime/pass_abi.h).  Built to LLVM bitcode with the
 * runtime's headers and embedded in the pass plugin: the pass links in
 * the definitions a module calls and inlines every call.  This is the
 * runtime's own inline check (tsan_access.h), so the two cannot drift
 * apart; only its calls out of line differ.
 *
 * Valor's fast path is inlined whole.  A thread on any other path
 * (FastRCD and FastTrack, a thread not analysed yet) costs a call to the
 * ABI entry point of the same size: inlining the happens-before check
 * as well would double the code every access adds.
 */
#define VALOR_CHECK_IN_PROGRAM
#define CALL_READ_FIRST(addr, m, site, w) \
	((void)(site), __valor_pass_read_first(addr, m, w))
#define CALL_ACCESS_SLOW(addr, size, site, a, p, w) \
	((void)(site), __valor_pass_access_slow(addr, size, a, p, w))

#include "pass_abi.h"
#include "tsan_access.h"

/*
 * @abi_entry: the ThreadSanitizer ABI's entry point for the same access
 * (tsan_access.c), for the threads the inline check leaves to the
 * runtime: called straight from the program, it takes the access's site
 * from its return address like the check's own slow paths.
 */
static inline __attribute__((always_inline)) void
check(void *addr, size_t size, bool is_write, void (*abi_entry)(void *))
{
	/* NULL unless the thread runs analysed and is not busy (rt.h). */
	struct valor_thread *th = rt_cur_vt;

	if (unlikely(!th))
		return;
	if (unlikely(th->mode != THREAD_FAST)) {
		if (th->mode == THREAD_ALONE)
			th->st.accesses_alone++;
		else
			abi_entry(addr);
		return;
	}
	/* Two cells, two looks, as on_access() does. */
	if (size == 16 && !((uintptr_t)addr & (CELL_SIZE - 1))) {
		on_access_fast(th, (uintptr_t)addr, 8, is_write, 0);
		if (likely(th->mode == THREAD_FAST))
			on_access_fast(th, (uintptr_t)addr + 8, 8, is_write, 0);
		return;
	}
	on_access_fast(th, (uintptr_t)addr, size, is_write, 0);
}

#define DEFINE_CHECK(size)                                   \
	void __tsan_read##size(void *addr);                  \
	void __tsan_write##size(void *addr);                 \
	void __valor_check_read##size(void *addr)            \
	{                                                    \
		check(addr, size, false, __tsan_read##size); \
	}                                                    \
	void __valor_check_write##size(void *addr)           \
	{                                                    \
		check(addr, size, true, __tsan_write##size); \
	}

DEFINE_CHECK(1)
DEFINE_CHECK(2)
DEFINE_CHECK(4)
DEFINE_CHECK(8)
DEFINE_CHECK(16)
