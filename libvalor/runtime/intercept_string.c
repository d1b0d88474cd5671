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
 * Each interceptor takes its caller's return address (RT_CALLER_RET() is
 * only valid in the interceptor's own body) and hands it to a helper
 * that enters, reports and leaves; the helpers are shared by a family of
 * functions (strcpy and stpcpy, the plain and the fortified ones, ...).
 *
 * Nothing here calls a string function by name: the runtime defines
 * them, so that would be this file again.  RT_REAL(name) is libc's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "intercept.h"

/*
 * On the entered thread @t, for the call whose caller returns to @ret:
 * reads of @rn bytes at @r1 and, unless NULL, at @r2, then a write of
 * @wn bytes at @w.  Empty ranges report nothing.
 */
static inline __attribute__((always_inline)) void
accesses(struct rt_thread *t, uintptr_t ret, const void *r1, const void *r2,
	 size_t rn, const void *w, size_t wn)
{
	rt_icpt_access(t, r1, rn, false, ret - 1);
	if (r2)
		rt_icpt_access(t, r2, rn, false, ret - 1);
	rt_icpt_access(t, w, wn, true, ret - 1);
}

/* accesses(), entering and leaving, if the call is analysed. */
static inline __attribute__((always_inline)) void
report(uintptr_t ret, const void *r1, const void *r2, size_t rn, const void *w,
       size_t wn)
{
	struct rt_thread *t = rt_icpt_enter_mem(ret);

	if (t) {
		accesses(t, ret, r1, r2, rn, w, wn);
		rt_leave(t);
	}
}

/* Inside an interceptor: the caller's accesses, if its call is analysed. */
#define REPORT_READ(p, n) report(RT_CALLER_RET(), p, NULL, n, NULL, 0)
#define REPORT_READ2(a, b, n) report(RT_CALLER_RET(), a, b, n, NULL, 0)
#define REPORT_WRITE(p, n) report(RT_CALLER_RET(), NULL, NULL, 0, p, n)
#define REPORT_COPY(dst, src, n) report(RT_CALLER_RET(), src, NULL, n, dst, n)

/*
 * For the searches whose ranges cost a strlen, computed only when the
 * call is analysed: the caller's thread, then its accesses.
 */
#define ENTER() rt_icpt_enter_mem(RT_CALLER_RET())
#define READ(t, p, n) rt_icpt_access(t, p, n, false, RT_CALLER_PC())

/* strnlen, or strlen when @max is SIZE_MAX (strcat, strdup: no limit). */
static size_t bounded_len(const char *s, size_t max)
{
	return max == SIZE_MAX ? RT_REAL(strlen)(s) : RT_REAL(strnlen)(s, max);
}

/* ---- memory ---- */

/* name(dst, src, n): reads n objects of type @unit at src, writes n at dst. */
#define COPY_INTERCEPTOR(name, type, unit)                              \
	RT_INTERCEPTOR type *name(type *dst, const type *src, size_t n) \
	{                                                               \
		REPORT_COPY(dst, src, n * sizeof(unit));                \
		return RT_REAL(name)(dst, src, n);                      \
	}

COPY_INTERCEPTOR(memcpy, void, char)
COPY_INTERCEPTOR(memmove, void, char)
COPY_INTERCEPTOR(mempcpy, void, char)

RT_INTERCEPTOR void *memset(void *dst, int c, size_t n)
{
	REPORT_WRITE(dst, n);
	return RT_REAL(memset)(dst, c, n);
}

RT_INTERCEPTOR void bzero(void *dst, size_t n)
{
	REPORT_WRITE(dst, n);
	RT_REAL(bzero)(dst, n);
}

RT_INTERCEPTOR void explicit_bzero(void *dst, size_t n)
{
	REPORT_WRITE(dst, n);
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
	REPORT_READ2(a, b, n);
	return RT_REAL(memcmp)(a, b, n);
}

RT_INTERCEPTOR int bcmp(const void *a, const void *b, size_t n)
{
	REPORT_READ2(a, b, n);
	return RT_REAL(bcmp)(a, b, n);
}

RT_INTERCEPTOR void *memchr(const void *s, int c, size_t n)
{
	void *r = RT_REAL(memchr)(s, c, n);

	REPORT_READ(s, r ? (size_t)((const char *)r - (const char *)s) + 1 : n);
	return r;
}

RT_INTERCEPTOR void *memrchr(const void *s, int c, size_t n)
{
	void *r = RT_REAL(memrchr)(s, c, n);
	/* Searched from the end down to the match. */
	const char *from = r ? r : s;

	REPORT_READ(from, (size_t)((const char *)s + n - from));
	return r;
}

/* ---- strings: lengths and searches ---- */

RT_INTERCEPTOR size_t strlen(const char *s)
{
	size_t n = RT_REAL(strlen)(s);

	REPORT_READ(s, n + 1);
	return n;
}

RT_INTERCEPTOR size_t strnlen(const char *s, size_t max)
{
	size_t n = RT_REAL(strnlen)(s, max);

	REPORT_READ(s, n < max ? n + 1 : n);
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
	char *r = RT_REAL(strchrnul)(s, c);

	REPORT_READ(s, (size_t)(r - s) + 1);
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

/*
 * strncmp (strcmp: @max SIZE_MAX) when the call is analysed: compares in
 * the runtime, to know where the comparison stopped, reports both
 * strings up to there, and returns true with the result in *@res.
 */
static bool analysed_strncmp(uintptr_t ret, const char *a, const char *b,
			     size_t max, int *res)
{
	struct rt_thread *t = rt_icpt_enter_mem(ret);

	if (!t)
		return false;
	accesses(t, ret, a, b, compared(a, b, max, res), NULL, 0);
	rt_leave(t);
	return true;
}

RT_INTERCEPTOR int strcmp(const char *a, const char *b)
{
	int res;

	if (analysed_strncmp(RT_CALLER_RET(), a, b, SIZE_MAX, &res))
		return res;
	return RT_REAL(strcmp)(a, b);
}

RT_INTERCEPTOR int strncmp(const char *a, const char *b, size_t max)
{
	int res;

	if (analysed_strncmp(RT_CALLER_RET(), a, b, max, &res))
		return res;
	return RT_REAL(strncmp)(a, b, max);
}

/* ---- strings: copies ---- */

/*
 * strcpy's ranges on the entered thread @t: src and its terminator read,
 * as many bytes of dst written, unless they overflow @dstlen (SIZE_MAX
 * but for the fortified entry points).  Returns that count.
 */
static size_t strcpy_ranges(struct rt_thread *t, uintptr_t ret, char *dst,
			    const char *src, size_t dstlen)
{
	size_t n = RT_REAL(strlen)(src) + 1;

	if (n <= dstlen)
		accesses(t, ret, src, NULL, n, dst, n);
	return n;
}

/*
 * strcpy and stpcpy when the call is analysed: report, copy, and return
 * the bytes copied, terminator included; 0 (nothing copied) when not.
 */
static size_t analysed_strcpy(uintptr_t ret, char *dst, const char *src)
{
	struct rt_thread *t = rt_icpt_enter_mem(ret);
	size_t n;

	if (!t)
		return 0;
	n = strcpy_ranges(t, ret, dst, src, SIZE_MAX);
	rt_leave(t);
	RT_REAL(memcpy)(dst, src, n);
	return n;
}

RT_INTERCEPTOR char *strcpy(char *restrict dst, const char *restrict src)
{
	size_t n = analysed_strcpy(RT_CALLER_RET(), dst, src);

	return n ? dst : RT_REAL(strcpy)(dst, src);
}

RT_INTERCEPTOR char *stpcpy(char *restrict dst, const char *restrict src)
{
	size_t n = analysed_strcpy(RT_CALLER_RET(), dst, src);

	return n ? dst + n - 1 : RT_REAL(stpcpy)(dst, src);
}

/* strncpy and stpncpy read up to n bytes of src and write all n of dst. */
static void report_strncpy(uintptr_t ret, char *dst, const char *src, size_t n)
{
	struct rt_thread *t = rt_icpt_enter_mem(ret);

	if (t) {
		size_t sl = RT_REAL(strnlen)(src, n);

		accesses(t, ret, src, NULL, sl < n ? sl + 1 : n, dst, n);
		rt_leave(t);
	}
}

RT_INTERCEPTOR char *strncpy(char *restrict dst, const char *restrict src,
			     size_t n)
{
	report_strncpy(RT_CALLER_RET(), dst, src, n);
	return RT_REAL(strncpy)(dst, src, n);
}

RT_INTERCEPTOR char *stpncpy(char *restrict dst, const char *restrict src,
			     size_t n)
{
	report_strncpy(RT_CALLER_RET(), dst, src, n);
	return RT_REAL(stpncpy)(dst, src, n);
}

/*
 * strncat's ranges (strcat's with @max SIZE_MAX) on the entered thread
 * @t: dst's string and terminator and at most @max bytes of src read,
 * the appended bytes and the new terminator written, unless that
 * overflows @dstlen (SIZE_MAX but for the fortified entry points).
 * Returns how many bytes of src are appended; *@dl gets dst's length.
 */
static size_t append_ranges(struct rt_thread *t, uintptr_t ret, char *dst,
			    const char *src, size_t max, size_t dstlen,
			    size_t *dl)
{
	size_t sl;

	*dl = RT_REAL(strlen)(dst);
	sl = bounded_len(src, max);
	if (*dl + sl + 1 <= dstlen) {
		accesses(t, ret, dst, NULL, *dl + 1, NULL, 0);
		accesses(t, ret, src, NULL, sl < max ? sl + 1 : sl, dst + *dl,
			 sl + 1);
	}
	return sl;
}

/*
 * strncat (strcat: @max SIZE_MAX) when the call is analysed: report,
 * append at most @max bytes of src and a terminator, and return true.
 */
static bool analysed_strncat(uintptr_t ret, char *dst, const char *src,
			     size_t max)
{
	struct rt_thread *t = rt_icpt_enter_mem(ret);
	size_t dl, sl;

	if (!t)
		return false;
	sl = append_ranges(t, ret, dst, src, max, SIZE_MAX, &dl);
	rt_leave(t);
	RT_REAL(memcpy)(dst + dl, src, sl);
	dst[dl + sl] = 0;
	return true;
}

RT_INTERCEPTOR char *strcat(char *restrict dst, const char *restrict src)
{
	if (analysed_strncat(RT_CALLER_RET(), dst, src, SIZE_MAX))
		return dst;
	return RT_REAL(strcat)(dst, src);
}

/* Appends at most n bytes of src, then a terminator. */
RT_INTERCEPTOR char *strncat(char *restrict dst, const char *restrict src,
			     size_t n)
{
	if (analysed_strncat(RT_CALLER_RET(), dst, src, n))
		return dst;
	return RT_REAL(strncat)(dst, src, n);
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

/*
 * strndup (strdup: @max SIZE_MAX) when the thread may analyse: the copy
 * in *@p (NULL when out of memory), and true.
 */
static bool analysed_strndup(uintptr_t ret, const char *s, size_t max, char **p)
{
	struct rt_thread *t = rt_icpt_enter();
	size_t len;

	if (!t)
		return false;
	len = bounded_len(s, max);
	if (caller_checked(ret))
		accesses(t, ret, s, NULL, len < max ? len + 1 : len, NULL, 0);
	*p = dup_block(t, s, len, ret - 1);
	rt_leave(t);
	return true;
}

RT_INTERCEPTOR char *strdup(const char *s)
{
	char *p;

	if (analysed_strndup(RT_CALLER_RET(), s, SIZE_MAX, &p))
		return p;
	return RT_REAL(strdup)(s);
}

RT_INTERCEPTOR char *strndup(const char *s, size_t n)
{
	char *p;

	if (analysed_strndup(RT_CALLER_RET(), s, n, &p))
		return p;
	return RT_REAL(strndup)(s, n);
}

/* ---- wide characters ---- */

COPY_INTERCEPTOR(wmemcpy, wchar_t, wchar_t)
COPY_INTERCEPTOR(wmemmove, wchar_t, wchar_t)

RT_INTERCEPTOR wchar_t *wmemset(wchar_t *dst, wchar_t c, size_t n)
{
	REPORT_WRITE(dst, n * sizeof(wchar_t));
	return RT_REAL(wmemset)(dst, c, n);
}

RT_INTERCEPTOR size_t wcslen(const wchar_t *s)
{
	size_t n = RT_REAL(wcslen)(s);

	REPORT_READ(s, (n + 1) * sizeof(wchar_t));
	return n;
}

/* ---- -D_FORTIFY_SOURCE entry points ---- */

/*
 * The same ranges as the plain functions, then the real checking
 * function.  A call that overflows its destination goes straight to the
 * real one, which aborts the program, without a report of the overflow.
 */
#define COPY_CHK_INTERCEPTOR(name)                                      \
	RT_INTERCEPTOR void *name(void *dst, const void *src, size_t n, \
				  size_t dstlen)                        \
	{                                                               \
		if (n <= dstlen)                                        \
			REPORT_COPY(dst, src, n);                       \
		return RT_REAL(name)(dst, src, n, dstlen);              \
	}

COPY_CHK_INTERCEPTOR(__memcpy_chk)
COPY_CHK_INTERCEPTOR(__memmove_chk)
COPY_CHK_INTERCEPTOR(__mempcpy_chk)

RT_INTERCEPTOR void *__memset_chk(void *dst, int c, size_t n, size_t dstlen)
{
	if (n <= dstlen)
		REPORT_WRITE(dst, n);
	return RT_REAL(__memset_chk)(dst, c, n, dstlen);
}

/* __strcpy_chk and __stpcpy_chk: strcpy's ranges if the copy fits. */
static void report_strcpy_chk(uintptr_t ret, char *dst, const char *src,
			      size_t dstlen)
{
	struct rt_thread *t = rt_icpt_enter_mem(ret);

	if (t) {
		strcpy_ranges(t, ret, dst, src, dstlen);
		rt_leave(t);
	}
}

RT_INTERCEPTOR char *__strcpy_chk(char *dst, const char *src, size_t dstlen)
{
	report_strcpy_chk(RT_CALLER_RET(), dst, src, dstlen);
	return RT_REAL(__strcpy_chk)(dst, src, dstlen);
}

RT_INTERCEPTOR char *__stpcpy_chk(char *dst, const char *src, size_t dstlen)
{
	report_strcpy_chk(RT_CALLER_RET(), dst, src, dstlen);
	return RT_REAL(__stpcpy_chk)(dst, src, dstlen);
}

RT_INTERCEPTOR char *__strncpy_chk(char *dst, const char *src, size_t n,
				   size_t dstlen)
{
	if (n <= dstlen)
		report_strncpy(RT_CALLER_RET(), dst, src, n);
	return RT_REAL(__strncpy_chk)(dst, src, n, dstlen);
}

/* __strcat_chk and __strncat_chk: strncat's ranges if the result fits. */
static void report_strncat_chk(uintptr_t ret, char *dst, const char *src,
			       size_t max, size_t dstlen)
{
	struct rt_thread *t = rt_icpt_enter_mem(ret);
	size_t dl;

	if (t) {
		append_ranges(t, ret, dst, src, max, dstlen, &dl);
		rt_leave(t);
	}
}

RT_INTERCEPTOR char *__strcat_chk(char *dst, const char *src, size_t dstlen)
{
	report_strncat_chk(RT_CALLER_RET(), dst, src, SIZE_MAX, dstlen);
	return RT_REAL(__strcat_chk)(dst, src, dstlen);
}

RT_INTERCEPTOR char *__strncat_chk(char *dst, const char *src, size_t n,
				   size_t dstlen)
{
	report_strncat_chk(RT_CALLER_RET(), dst, src, n, dstlen);
	return RT_REAL(__strncat_chk)(dst, src, n, dstlen);
}
