// SPDX-License-Identifier: LGPL-2.1-or-later
/* Vector clock operations (see vclock.h). */
#include "sys.h"
#include "vclock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int vclock_reserve(struct vclock *v, uint32_t n)
{
	uint64_t *c;
	uint32_t cap;

	if (n <= v->n)
		return 0;
	/* Round up so that a growing program does not realloc per thread. */
	cap = n < 8 ? 8 : n;
	if (cap & (cap - 1))
		cap = 1U << (32 - __builtin_clz(cap));
	c = eng_realloc(v->c, (size_t)cap * sizeof(*c));
	if (!c)
		return -ENOMEM;
	memset(c + v->n, 0, (size_t)(cap - v->n) * sizeof(*c));
	v->c = c;
	v->n = cap;
	return 0;
}

int vclock_join(struct vclock *dst, const struct vclock *src)
{
	uint32_t n = src->n;

	/* Trailing zero entries of @src need no room in @dst. */
	while (n && !src->c[n - 1])
		n--;
	if (vclock_reserve(dst, n))
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		if (src->c[i] > dst->c[i])
			dst->c[i] = src->c[i];
	return 0;
}

int vclock_copy(struct vclock *dst, const struct vclock *src)
{
	if (vclock_reserve(dst, src->n))
		return -ENOMEM;
	memcpy(dst->c, src->c, (size_t)src->n * sizeof(*dst->c));
	memset(dst->c + src->n, 0, (size_t)(dst->n - src->n) * sizeof(*dst->c));
	return 0;
}

int vclock_set(struct vclock *v, uint32_t slot, uint64_t clock)
{
	if (vclock_reserve(v, slot + 1))
		return -ENOMEM;
	v->c[slot] = clock;
	return 0;
}

void vclock_free(struct vclock *v)
{
	eng_free(v->c);
	v->c = NULL;
	v->n = 0;
}
