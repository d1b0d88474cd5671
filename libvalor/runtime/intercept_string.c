// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * String and memory function interceptors: each reports the ranges the
 * function really reads and writes, computed with the real functions
 * (strlen of the source, where a search stopped, ...), then does the
 * work with the real function.
 *
 * A call is analysed only when the thread may analyse and, with the
 * ignore_uninstrumented option (the default), when the caller lies in an
 * instrumented module (rt_icpt_enter_mem): libstdc++'s or libc's own
 * copies are not the program's accesses.  Calls inside libc never come
 * here at all.
 *
 * Nothing here calls a string function by name: the runtime defines
 * them, so that would be this file again.  RT_REAL(name) is libc's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "intercept.h"

#include <errno.h>

/* Inside an interceptor: the caller's thread if the call is analysed. */
#define ENTER() rt_icpt_enter_mem(RT_CALLER_RET())
#define READ(t, p, n) rt_icpt_access(t, p, n, false, RT_CALLER_PC())
#define WRITE(t, p, n) rt_icpt_access(t, p, n, true, RT_CALLER_PC())

/* ---- memory ---- */

RT_INTERCEPTOR void *memcpy(void *restrict dst, const void *restrict src,
			    size_t n)
{
	struct rt_thread *t = ENTER();

	if (t) {
		READ(t, src, n);
		WRITE(t, dst, n);
		rt_leave(t);
	}
	return RT_REAL(memcpy)(dst, src, n);
}

RT_INTERCEPTOR void *memmove(void *dst, const void *src, size_t n)
{
	struct rt_thread *t = ENTER();

	if (t) {
		READ(t, src, n);
		WRITE(t, dst, n);
		rt_leave(t);
	}
	return RT_REAL(memmove)(dst, src, n);
}

RT_INTERCEPTOR void *mempcpy(void *restrict dst, const void *restrict src,
			     size_t n)
{
	struct rt_thread *t = ENTER();

	if (t) {
		READ(t, src, n);
		WRITE(t, dst, n);
		rt_leave(t);
	}
	return RT_REAL(mempcpy)(dst, src, n);
}

RT_INTERCEPTOR void *memset(void *dst, int c, size_t n)
{
	struct rt_thread *t = ENTER();

	if (t) {
		WRITE(t, dst, n);
		rt_leave(t);
	}
	return RT_REAL(memset)(dst, c, n);
}

RT_INTERCEPTOR void bzero(void *dst, size_t n)
{
	struct rt_thread *t = ENTER();

	if (t) {
		WRITE(t, dst, n);
		rt_leave(t);
	}
	RT_REAL(bzero)(dst, n);
}

RT_INTERCEPTOR void explicit_bzero(void *dst, size_t n)
{
	struct rt_thread *t = ENTER();

	if (t) {
		WRITE(t, dst, n);
		rt_leave(t);
	}
	if (RT_REAL(explicit_bzero)) {
		rt_real_explicit_bzero(dst, n);
		return;
	}
	RT_REAL(memset)(dst, 0, n);
	__asm__ volatile("" : : "r"(dst) : "memory");
}

/*
 * memcmp may read all n bytes, whatever it finds (the standard lets it,
 * and vectorized versions do), so all n are read, as TSan's default
 * strict_memcmp has it.
 */
RT_INTERCEPTOR int memcmp(const void *a, const void *b, size_t n)
{
	struct rt_thread *t = ENTER();

	if (t) {
		READ(t, a, n);
		READ(t, b, n);
		rt_leave(t);
	}
	return RT_REAL(memcmp)(a, b, n);
}

RT_INTERCEPTOR int bcmp(const void *a, const void *b, size_t n)
{
	struct rt_thread *t = ENTER();

	if (t) {
		READ(t, a, n);
		READ(t, b, n);
		rt_leave(t);
	}
	return RT_REAL(bcmp)(a, b, n);
}

RT_INTERCEPTOR void *memchr(const void *s, int c, size_t n)
{
	struct rt_thread *t = ENTER();
	void *r = RT_REAL(memchr)(s, c, n);

	if (t) {
		READ(t, s,
		     r ? (size_t)((const char *)r - (const char *)s) + 1 : n);
		rt_leave(t);
	}
	return r;
}

RT_INTERCEPTOR void *memrchr(const void *s, int c, size_t n)
{
	struct rt_thread *t = ENTER();
	void *r = RT_REAL(memrchr)(s, c, n);

	if (t) {
		/* Searched from the end down to the match. */
		const char *from = r ? r : s;

		READ(t, from, (size_t)((const char *)s + n - from));
		rt_leave(t);
	}
	return r;
}

/* ---- strings: lengths and searches ---- */

RT_INTERCEPTOR size_t strlen(const char *s)
{
	struct rt_thread *t = ENTER();
	size_t n = RT_REAL(strlen)(s);

	if (t) {
		READ(t, s, n + 1);
		rt_leave(t);
	}
	return n;
}

RT_INTERCEPTOR size_t strnlen(const char *s, size_t max)
{
	struct rt_thread *t = ENTER();
	size_t n = RT_REAL(strnlen)(s, max);

	if (t) {
		READ(t, s, n < max ? n + 1 : n);
		rt_leave(t);
	}
	return n;
}

RT_INTERCEPTOR char *strchr(const char *s, int c)
{
	struct rt_thread *t = ENTER();
	char *r = RT_REAL(strchr)(s, c);

	if (t) {
		READ(t, s, r ? (size_t)(r - s) + 1 : RT_REAL(strlen)(s) + 1);
		rt_leave(t);
	}
	return r;
}

RT_INTERCEPTOR char *strchrnul(const char *s, int c)
{
	struct rt_thread *t = ENTER();
	char *r = RT_REAL(strchrnul)(s, c);

	if (t) {
		READ(t, s, (size_t)(r - s) + 1);
		rt_leave(t);
	}
	return r;
}

RT_INTERCEPTOR char *strrchr(const char *s, int c)
{
	struct rt_thread *t = ENTER();

	if (t) {
		READ(t, s, RT_REAL(strlen)(s) + 1);
		rt_leave(t);
	}
	return RT_REAL(strrchr)(s, c);
}

RT_INTERCEPTOR char *strstr(const char *hay, const char *needle)
{
	struct rt_thread *t = ENTER();
	char *r = RT_REAL(strstr)(hay, needle);

	if (t) {
		size_t nl = RT_REAL(strlen)(needle);

		READ(t, needle, nl + 1);
		READ(t, hay,
		     r ? (size_t)(r - hay) + nl : RT_REAL(strlen)(hay) + 1);
		rt_leave(t);
	}
	return r;
}

/*
 * Bytes compared by strcmp/strncmp up to and including the first
 * difference or terminator (at most @max); *@res gets the result, the
 * difference of the first differing bytes as glibc returns it.
 */
static size_t compared(const char *a, const char *b, size_t max, int *res)
{
	for (size_t i = 0; i < max; i++) {
		unsigned char ca = (unsigned char)a[i];
		unsigned char cb = (unsigned char)b[i];

		if (ca != cb || !ca) {
			*res = ca - cb;
			return i + 1;
		}
	}
	*res = 0;
	return max;
}

RT_INTERCEPTOR int strcmp(const char *a, const char *b)
{
	struct rt_thread *t = ENTER();
	size_t n;
	int res;

	if (!t)
		return RT_REAL(strcmp)(a, b);
	n = compared(a, b, SIZE_MAX, &res);
	READ(t, a, n);
	READ(t, b, n);
	rt_leave(t);
	return res;
}

RT_INTERCEPTOR int strncmp(const char *a, const char *b, size_t max)
{
	struct rt_thread *t = ENTER();
	size_t n;
	int res;

	if (!t)
		return RT_REAL(strncmp)(a, b, max);
	n = compared(a, b, max, &res);
	READ(t, a, n);
	READ(t, b, n);
	rt_leave(t);
	return res;
}

/* ---- strings: copies ---- */

RT_INTERCEPTOR char *strcpy(char *restrict dst, const char *restrict src)
{
	struct rt_thread *t = ENTER();
	size_t n;

	if (!t)
		return RT_REAL(strcpy)(dst, src);
	n = RT_REAL(strlen)(src) + 1;
	READ(t, src, n);
	WRITE(t, dst, n);
	rt_leave(t);
	RT_REAL(memcpy)(dst, src, n);
	return dst;
}

RT_INTERCEPTOR char *stpcpy(char *restrict dst, const char *restrict src)
{
	struct rt_thread *t = ENTER();
	size_t n;

	if (!t)
		return RT_REAL(stpcpy)(dst, src);
	n = RT_REAL(strlen)(src) + 1;
	READ(t, src, n);
	WRITE(t, dst, n);
	rt_leave(t);
	RT_REAL(memcpy)(dst, src, n);
	return dst + n - 1;
}

/* strncpy and stpncpy read up to n bytes of src and write all n of dst. */
RT_INTERCEPTOR char *strncpy(char *restrict dst, const char *restrict src,
			     size_t n)
{
	struct rt_thread *t = ENTER();

	if (t) {
		size_t sl = RT_REAL(strnlen)(src, n);

		READ(t, src, sl < n ? sl + 1 : n);
		WRITE(t, dst, n);
		rt_leave(t);
	}
	return RT_REAL(strncpy)(dst, src, n);
}

RT_INTERCEPTOR char *stpncpy(char *restrict dst, const char *restrict src,
			     size_t n)
{
	struct rt_thread *t = ENTER();

	if (t) {
		size_t sl = RT_REAL(strnlen)(src, n);

		READ(t, src, sl < n ? sl + 1 : n);
		WRITE(t, dst, n);
		rt_leave(t);
	}
	return RT_REAL(stpncpy)(dst, src, n);
}

RT_INTERCEPTOR char *strcat(char *restrict dst, const char *restrict src)
{
	struct rt_thread *t = ENTER();
	size_t dl, sl;

	if (!t)
		return RT_REAL(strcat)(dst, src);
	dl = RT_REAL(strlen)(dst);
	sl = RT_REAL(strlen)(src);
	READ(t, dst, dl + 1);
	READ(t, src, sl + 1);
	WRITE(t, dst + dl, sl + 1);
	rt_leave(t);
	RT_REAL(memcpy)(dst + dl, src, sl + 1);
	return dst;
}

/* Appends at most n bytes of src, then a terminator. */
RT_INTERCEPTOR char *strncat(char *restrict dst, const char *restrict src,
			     size_t n)
{
	struct rt_thread *t = ENTER();
	size_t dl, sl;

	if (!t)
		return RT_REAL(strncat)(dst, src, n);
	dl = RT_REAL(strlen)(dst);
	sl = RT_REAL(strnlen)(src, n);
	READ(t, dst, dl + 1);
	READ(t, src, sl < n ? sl + 1 : sl);
	WRITE(t, dst + dl, sl + 1);
	rt_leave(t);
	RT_REAL(memcpy)(dst + dl, src, sl);
	dst[dl + sl] = 0;
	return dst;
}

/*
 * strdup and strndup allocate: the block is recorded as malloc does
 * (fresh history, heap record) whenever the thread may analyse; the read
 * of the source only when the caller is instrumented.  The copy into the
 * new block is the allocator's, like calloc's zeroing.
 */
static bool caller_checked(uintptr_t ret)
{
	return !rt.opt.ignore_uninstrumented || rt_pc_instrumented(ret);
}

static char *dup_block(struct rt_thread *t, const char *s, size_t len,
		       uintptr_t pc)
{
	char *p = __libc_malloc(len + 1);

	if (!p)
		return NULL;
	RT_REAL(memcpy)(p, s, len);
	p[len] = 0;
	valor_forget(t->vt, (uintptr_t)p, len + 1);
	rt_heap_record((uintptr_t)p, len + 1, rt_stack_capture(pc, 0), t->id);
	return p;
}

RT_INTERCEPTOR char *strdup(const char *s)
{
	struct rt_thread *t = rt_icpt_enter();
	size_t len;
	char *p;

	if (!t)
		return RT_REAL(strdup)(s);
	len = RT_REAL(strlen)(s);
	if (caller_checked(RT_CALLER_RET()))
		READ(t, s, len + 1);
	p = dup_block(t, s, len, RT_CALLER_PC());
	rt_leave(t);
	return p;
}

RT_INTERCEPTOR char *strndup(const char *s, size_t n)
{
	struct rt_thread *t = rt_icpt_enter();
	size_t len;
	char *p;

	if (!t)
		return RT_REAL(strndup)(s, n);
	len = RT_REAL(strnlen)(s, n);
	if (caller_checked(RT_CALLER_RET()))
		READ(t, s, len < n ? len + 1 : len);
	p = dup_block(t, s, len, RT_CALLER_PC());
	rt_leave(t);
	return p;
}

/* ---- wide characters ---- */

RT_INTERCEPTOR wchar_t *wmemcpy(wchar_t *restrict dst,
				const wchar_t *restrict src, size_t n)
{
	struct rt_thread *t = ENTER();

	if (t) {
		READ(t, src, n * sizeof(wchar_t));
		WRITE(t, dst, n * sizeof(wchar_t));
		rt_leave(t);
	}
	return RT_REAL(wmemcpy)(dst, src, n);
}

RT_INTERCEPTOR wchar_t *wmemmove(wchar_t *dst, const wchar_t *src, size_t n)
{
	struct rt_thread *t = ENTER();

	if (t) {
		READ(t, src, n * sizeof(wchar_t));
		WRITE(t, dst, n * sizeof(wchar_t));
		rt_leave(t);
	}
	return RT_REAL(wmemmove)(dst, src, n);
}

RT_INTERCEPTOR wchar_t *wmemset(wchar_t *dst, wchar_t c, size_t n)
{
	struct rt_thread *t = ENTER();

	if (t) {
		WRITE(t, dst, n * sizeof(wchar_t));
		rt_leave(t);
	}
	return RT_REAL(wmemset)(dst, c, n);
}

RT_INTERCEPTOR size_t wcslen(const wchar_t *s)
{
	struct rt_thread *t = ENTER();
	size_t n = RT_REAL(wcslen)(s);

	if (t) {
		READ(t, s, (n + 1) * sizeof(wchar_t));
		rt_leave(t);
	}
	return n;
}

/* ---- -D_FORTIFY_SOURCE entry points ---- */

/*
 * The same ranges as the plain functions, then the real checking
 * function.  A call that overflows its destination goes straight to the
 * real one, which aborts the program, without a report of the overflow.
 */
RT_INTERCEPTOR void *__memcpy_chk(void *dst, const void *src, size_t n,
				  size_t dstlen)
{
	struct rt_thread *t = n <= dstlen ? ENTER() : NULL;

	if (t) {
		READ(t, src, n);
		WRITE(t, dst, n);
		rt_leave(t);
	}
	return RT_REAL(__memcpy_chk)(dst, src, n, dstlen);
}

RT_INTERCEPTOR void *__memmove_chk(void *dst, const void *src, size_t n,
				   size_t dstlen)
{
	struct rt_thread *t = n <= dstlen ? ENTER() : NULL;

	if (t) {
		READ(t, src, n);
		WRITE(t, dst, n);
		rt_leave(t);
	}
	return RT_REAL(__memmove_chk)(dst, src, n, dstlen);
}

RT_INTERCEPTOR void *__mempcpy_chk(void *dst, const void *src, size_t n,
				   size_t dstlen)
{
	struct rt_thread *t = n <= dstlen ? ENTER() : NULL;

	if (t) {
		READ(t, src, n);
		WRITE(t, dst, n);
		rt_leave(t);
	}
	return RT_REAL(__mempcpy_chk)(dst, src, n, dstlen);
}

RT_INTERCEPTOR void *__memset_chk(void *dst, int c, size_t n, size_t dstlen)
{
	struct rt_thread *t = n <= dstlen ? ENTER() : NULL;

	if (t) {
		WRITE(t, dst, n);
		rt_leave(t);
	}
	return RT_REAL(__memset_chk)(dst, c, n, dstlen);
}

RT_INTERCEPTOR char *__strcpy_chk(char *dst, const char *src, size_t dstlen)
{
	struct rt_thread *t = ENTER();

	if (t) {
		size_t n = RT_REAL(strlen)(src) + 1;

		if (n <= dstlen) {
			READ(t, src, n);
			WRITE(t, dst, n);
		}
		rt_leave(t);
	}
	return RT_REAL(__strcpy_chk)(dst, src, dstlen);
}

RT_INTERCEPTOR char *__stpcpy_chk(char *dst, const char *src, size_t dstlen)
{
	struct rt_thread *t = ENTER();

	if (t) {
		size_t n = RT_REAL(strlen)(src) + 1;

		if (n <= dstlen) {
			READ(t, src, n);
			WRITE(t, dst, n);
		}
		rt_leave(t);
	}
	return RT_REAL(__stpcpy_chk)(dst, src, dstlen);
}

RT_INTERCEPTOR char *__strncpy_chk(char *dst, const char *src, size_t n,
				   size_t dstlen)
{
	struct rt_thread *t = n <= dstlen ? ENTER() : NULL;

	if (t) {
		size_t sl = RT_REAL(strnlen)(src, n);

		READ(t, src, sl < n ? sl + 1 : n);
		WRITE(t, dst, n);
		rt_leave(t);
	}
	return RT_REAL(__strncpy_chk)(dst, src, n, dstlen);
}

RT_INTERCEPTOR char *__strcat_chk(char *dst, const char *src, size_t dstlen)
{
	struct rt_thread *t = ENTER();

	if (t) {
		size_t dl = RT_REAL(strlen)(dst);
		size_t sl = RT_REAL(strlen)(src);

		if (dl + sl + 1 <= dstlen) {
			READ(t, dst, dl + 1);
			READ(t, src, sl + 1);
			WRITE(t, dst + dl, sl + 1);
		}
		rt_leave(t);
	}
	return RT_REAL(__strcat_chk)(dst, src, dstlen);
}

RT_INTERCEPTOR char *__strncat_chk(char *dst, const char *src, size_t n,
				   size_t dstlen)
{
	struct rt_thread *t = ENTER();

	if (t) {
		size_t dl = RT_REAL(strlen)(dst);
		size_t sl = RT_REAL(strnlen)(src, n);

		if (dl + sl + 1 <= dstlen) {
			READ(t, dst, dl + 1);
			READ(t, src, sl < n ? sl + 1 : sl);
			WRITE(t, dst + dl, sl + 1);
		}
		rt_leave(t);
	}
	return RT_REAL(__strncat_chk)(dst, src, n, dstlen);
}
