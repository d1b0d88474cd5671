// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The runtime's side of the LLVM pass (pass_abi.h): the out-of-line
 * paths of the check the pass inlines into the program.  Each is called
 * from the instrumented function itself, so its return address is the
 * access's site.  Built and placed like tsan_access.c (no frame pointer,
 * the access section): a report's frame walk and the signal wrapper
 * treat both alike.
 */
#include "pass_abi.h"
#include "tsan_access.h"

#define PASS_ENTRY RT_EXPORT __attribute__((section(VALOR_ACCESS_SECTION_NAME)))

RT_EXPORT const int VALOR_PASS_ABI_SYMBOL = VALOR_PASS_ABI_VERSION;

PASS_ENTRY void __valor_pass_read_first(uintptr_t addr, uint8_t m, uint64_t w)
{
	on_read_first(addr, m, SITE(), w);
}

PASS_ENTRY void __valor_pass_access_slow(uintptr_t addr, size_t size,
					 enum valor_fast_action a,
					 shadow_word *p, uint64_t w)
{
	on_access_slow(addr, size, SITE(), a, p, w);
}

/*
 * A loop's reads, checked once before it (the pass's loop coalescing):
 * nothing to do when this region has read every byte already (the
 * filter says so without a look at the cells); otherwise what
 * __tsan_read_range does.
 */
PASS_ENTRY void __valor_pass_read_range(void *addr, size_t len)
{
	struct valor_thread *th = rt_cur_vt;

	if (!len)
		return;
	if (th && th->mode == THREAD_FAST &&
	    rfilter_holds_range(th, (uintptr_t)addr, len))
		return;
	on_access(addr, len, false, SITE());
}
