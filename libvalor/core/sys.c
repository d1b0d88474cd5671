// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The per-thread lock count sys.h declares, what runs once it is 0, and
 * eng_zero().
 */
#include "sys.h"

#include <sys/mman.h>

__thread unsigned eng_locks_held __attribute__((tls_model("initial-exec")));
__thread bool eng_after_locks __attribute__((tls_model("initial-exec")));
void (*eng_after_locks_hook)(void);

void eng_zero(void *p, size_t n)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start = (uintptr_t)p, end = start + n;
	uintptr_t from = (start + page - 1) & ~(page - 1);
	uintptr_t to = end & ~(page - 1);

	if (to <= from) {
		memset(p, 0, n);
		return;
	}
	memset(p, 0, from - start);
	madvise((void *)from, to - from, MADV_DONTNEED);
	memset((void *)to, 0, end - to);
}
