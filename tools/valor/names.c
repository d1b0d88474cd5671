// SPDX-License-Identifier: GPL-2.0
/* Name -> address table of a text trace (chained hashing, FNV-1a). */
#include "names.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_name(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

void names_init(struct name_table *nt)
{
	memset(nt, 0, sizeof(*nt));
}

void names_destroy(struct name_table *nt)
{
	for (size_t i = 0; i < nt->nbucket; i++) {
		struct name_entry *e = nt->bucket[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e->name);
			free(e);
		}
	}
	free(nt->bucket);
	memset(nt, 0, sizeof(*nt));
}

struct name_entry *names_find(const struct name_table *nt, const char *name,
			      size_t len)
{
	struct name_entry *e;

	if (!nt->nbucket)
		return NULL;
	e = nt->bucket[hash_name(name, len) & (nt->nbucket - 1)];
	for (; e; e = e->next)
		if (!strncmp(e->name, name, len) && e->name[len] == '\0')
			return e;
	return NULL;
}

static int grow(struct name_table *nt)
{
	size_t n = nt->nbucket ? 2 * nt->nbucket : 64;
	struct name_entry **b = calloc(n, sizeof(*b));

	if (!b)
		return -1;
	for (size_t i = 0; i < nt->nbucket; i++) {
		struct name_entry *e = nt->bucket[i], *next;

		for (; e; e = next) {
			size_t k = hash_name(e->name, strlen(e->name)) &
				   (n - 1);

			next = e->next;
			e->next = b[k];
			b[k] = e;
		}
	}
	free(nt->bucket);
	nt->bucket = b;
	nt->nbucket = n;
	return 0;
}

struct name_entry *names_add(struct name_table *nt, const char *name,
			     size_t len, uint64_t addr, uint32_t line,
			     bool automatic)
{
	struct name_entry *e;
	size_t k;

	if (nt->count >= nt->nbucket && grow(nt) < 0)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->name = strndup(name, len);
	if (!e->name) {
		free(e);
		return NULL;
	}
	e->addr = addr;
	e->line = line;
	e->automatic = automatic;
	k = hash_name(name, len) & (nt->nbucket - 1);
	e->next = nt->bucket[k];
	nt->bucket[k] = e;
	nt->count++;
	return e;
}

int names_for_each(const struct name_table *nt,
		   int (*fn)(void *arg, const struct name_entry *e), void *arg)
{
	for (size_t i = 0; i < nt->nbucket; i++)
		for (struct name_entry *e = nt->bucket[i]; e; e = e->next) {
			int r = fn(arg, e);

			if (r)
				return r;
		}
	return 0;
}
