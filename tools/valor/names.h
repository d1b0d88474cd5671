/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The names a text trace gives to addresses (variables and locks alike):
 * a hash table from name to address and to the line that defined it.
 */
#ifndef VALOR_TOOL_NAMES_H
#define VALOR_TOOL_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct name_entry {
	char *name; /* NUL-terminated copy */
	uint64_t addr;
	uint32_t line; /* where it was defined or first used */
	bool automatic; /* address assigned at first use */
	struct name_entry *next;
};

struct name_table {
	struct name_entry **bucket;
	size_t nbucket;
	size_t count;
};

void names_init(struct name_table *nt);
void names_destroy(struct name_table *nt);

/* The entry for @name[0..len), or NULL. */
struct name_entry *names_find(const struct name_table *nt, const char *name,
			      size_t len);

/* Add a name that is not in the table yet; NULL on ENOMEM. */
struct name_entry *names_add(struct name_table *nt, const char *name,
			     size_t len, uint64_t addr, uint32_t line,
			     bool automatic);

/* Call @fn for every entry; stops at and returns the first nonzero. */
int names_for_each(const struct name_table *nt,
		   int (*fn)(void *arg, const struct name_entry *e), void *arg);

#endif /* VALOR_TOOL_NAMES_H */
