/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Vector clocks for FastTrack, indexed by thread slot.  A clock grows to
 * the highest slot it has heard of; missing entries are zero.
 */
#ifndef VALOR_CORE_VCLOCK_H
#define VALOR_CORE_VCLOCK_H

#include <stdint.h>

struct vclock {
	uint64_t *c;
	uint32_t n;
};

int vclock_reserve(struct vclock *v, uint32_t n);
int vclock_join(struct vclock *dst, const struct vclock *src);
int vclock_copy(struct vclock *dst, const struct vclock *src);
int vclock_set(struct vclock *v, uint32_t slot, uint64_t clock);
void vclock_free(struct vclock *v);

static inline uint64_t vclock_get(const struct vclock *v, uint32_t slot)
{
	return slot < v->n ? v->c[slot] : 0;
}

#endif /* VALOR_CORE_VCLOCK_H */
