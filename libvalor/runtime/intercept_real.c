// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The real libc functions behind the interceptors.
 *
 * Resolved with dlsym(RTLD_NEXT) from the executable, which finds libc's
 * definitions (the runtime's own come first in the lookup order, RTLD_NEXT
 * skips them), or with dlvsym where a symbol has several versions.
 *
 * rt_init() calls rt_intercept_init() first thing, but an interceptor
 * can run earlier: shared libraries' constructors run before the
 * program's, and libstdc++'s call memcpy, strlen and pthread_once.  So
 * RT_REAL() resolves on demand; resolution is idempotent and may run on
 * several threads at once (each stores the same values).  dlsym may call
 * malloc or calloc, whose interceptors need nothing resolved; nothing
 * here may call a string function, which would need itself resolved.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "intercept.h"

#include <dlfcn.h>
#include <sys/syscall.h>

#define RT_REAL_DEFINE(var, sym, version, optional) \
	__typeof__(sym) *rt_real_##var;
RT_REAL_FUNCS(RT_REAL_DEFINE)
#undef RT_REAL_DEFINE

struct real_fn {
	void **slot;
	const char *name;
	const char *version;
	bool optional;
};

static const struct real_fn real_fns[] = {
#define RT_REAL_ENTRY(var, sym, ver, opt) \
	{ (void **)&rt_real_##var, #sym, ver, opt },
	RT_REAL_FUNCS(RT_REAL_ENTRY)
#undef RT_REAL_ENTRY
};

static atomic_int resolved;
static __thread bool resolving __attribute__((tls_model("initial-exec")));

/* No stdio, no string functions: they may be what is missing. */
static void say(const char *s)
{
	const volatile char *end = s; /* volatile: never a call to strlen */

	while (*end)
		end++;
	syscall(SYS_write, 2, s, (size_t)(end - s));
}

void rt_intercept_init(void)
{
	if (likely(atomic_load_explicit(&resolved, memory_order_acquire)))
		return;
	/* dlsym calling back into an interceptor on this thread. */
	if (resolving)
		return;
	resolving = true;
	for (size_t i = 0; i < sizeof(real_fns) / sizeof(real_fns[0]); i++) {
		const struct real_fn *f = &real_fns[i];
		void *p = NULL;

		if (f->version)
			p = dlvsym(RTLD_NEXT, f->name, f->version);
		/*
		 * A compat version that is missing stays missing; a default
		 * version that is missing under its expected name (another
		 * architecture) is the default symbol.
		 */
		if (!p && !(f->version && f->optional))
			p = dlsym(RTLD_NEXT, f->name);
		if (!p && !f->optional) {
			say("valor: cannot find libc's ");
			say(f->name);
			say(" (the runtime needs glibc 2.28 or later)\n");
			_exit(2);
		}
		*f->slot = p;
	}
	resolving = false;
	atomic_store_explicit(&resolved, 1, memory_order_release);
}
