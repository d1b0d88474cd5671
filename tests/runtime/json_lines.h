/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small JSON reader for the runtime tests: parses one JSON value (a
 * report line of `json=1`) into a tree the tests query by key.  Strict
 * enough to reject a malformed line -- a report that is not valid JSON is
 * a test failure -- and no more: numbers are kept as doubles (lines and
 * thread ids fit), strings are unescaped (\uXXXX as UTF-8).
 *
 * Included by the runtime test programs only (static inline throughout,
 * so a program that uses part of it builds with -Werror).
 */
#ifndef VALOR_TESTS_JSON_LINES_H
#define VALOR_TESTS_JSON_LINES_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum json_type {
	JSON_NULL,
	JSON_BOOL,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT
};

struct json {
	enum json_type type;
	bool boolean;
	double number;
	char *string; /* JSON_STRING */
	struct json **items; /* JSON_ARRAY values, JSON_OBJECT values */
	char **keys; /* JSON_OBJECT keys, parallel to items */
	size_t n;
};

static inline void json_free(struct json *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->n; i++) {
		json_free(v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->string);
	free(v);
}

struct json_parser {
	const char *p, *end;
	int depth;
};

static inline void json_skip_space(struct json_parser *jp)
{
	while (jp->p < jp->end && (*jp->p == ' ' || *jp->p == '\t' ||
				   *jp->p == '\n' || *jp->p == '\r'))
		jp->p++;
}

static inline bool json_literal(struct json_parser *jp, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(jp->end - jp->p) < n || memcmp(jp->p, word, n))
		return false;
	jp->p += n;
	return true;
}

static inline int json_hex4(const char *s)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/* Parses a string at jp->p (at the opening quote); NULL if malformed. */
static inline char *json_parse_string(struct json_parser *jp)
{
	size_t cap = 16, len = 0;
	char *s;

	if (jp->p >= jp->end || *jp->p != '"')
		return NULL;
	jp->p++;
	s = malloc(cap);
	if (!s)
		return NULL;
	while (jp->p < jp->end && *jp->p != '"') {
		unsigned int c = (unsigned char)*jp->p++;
		char utf8[4];
		size_t k = 0;

		if (c < 0x20)
			goto bad;
		if (c == '\\') {
			if (jp->p >= jp->end)
				goto bad;
			c = (unsigned char)*jp->p++;
			switch (c) {
			case '"':
			case '\\':
			case '/':
				break;
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case 'n':
				c = '\n';
				break;
			case 'r':
				c = '\r';
				break;
			case 't':
				c = '\t';
				break;
			case 'u': {
				int u;

				if (jp->end - jp->p < 4)
					goto bad;
				u = json_hex4(jp->p);
				if (u < 0)
					goto bad;
				jp->p += 4;
				c = (unsigned int)u;
				break;
			}
			default:
				goto bad;
			}
		}
		if (c < 0x80) {
			utf8[k++] = (char)c;
		} else if (c < 0x800) {
			utf8[k++] = (char)(0xc0 | (c >> 6));
			utf8[k++] = (char)(0x80 | (c & 0x3f));
		} else {
			utf8[k++] = (char)(0xe0 | (c >> 12));
			utf8[k++] = (char)(0x80 | ((c >> 6) & 0x3f));
			utf8[k++] = (char)(0x80 | (c & 0x3f));
		}
		if (len + k + 1 > cap) {
			char *bigger = realloc(s, cap * 2);

			if (!bigger)
				goto bad;
			s = bigger;
			cap *= 2;
		}
		memcpy(s + len, utf8, k);
		len += k;
	}
	if (jp->p >= jp->end)
		goto bad;
	jp->p++; /* closing quote */
	s[len] = 0;
	return s;
bad:
	free(s);
	return NULL;
}

static inline struct json *json_parse_value(struct json_parser *jp);

static inline bool json_append(struct json *v, char *key, struct json *item)
{
	struct json **items = realloc(v->items, (v->n + 1) * sizeof(*items));

	if (!items)
		return false;
	v->items = items;
	if (v->type == JSON_OBJECT) {
		char **keys = realloc(v->keys, (v->n + 1) * sizeof(*keys));

		if (!keys)
			return false;
		v->keys = keys;
		v->keys[v->n] = key;
	}
	v->items[v->n++] = item;
	return true;
}

/* An array or object; jp->p is at its opening bracket. */
static inline struct json *json_parse_container(struct json_parser *jp,
						struct json *v)
{
	char close = v->type == JSON_OBJECT ? '}' : ']';

	jp->p++;
	json_skip_space(jp);
	if (jp->p < jp->end && *jp->p == close) {
		jp->p++;
		return v;
	}
	for (;;) {
		char *key = NULL;
		struct json *item;

		json_skip_space(jp);
		if (v->type == JSON_OBJECT) {
			key = json_parse_string(jp);
			if (!key)
				goto bad;
			json_skip_space(jp);
			if (jp->p >= jp->end || *jp->p != ':') {
				free(key);
				goto bad;
			}
			jp->p++;
		}
		item = json_parse_value(jp);
		if (!item || !json_append(v, key, item)) {
			free(key);
			json_free(item);
			goto bad;
		}
		json_skip_space(jp);
		if (jp->p < jp->end && *jp->p == ',') {
			jp->p++;
			continue;
		}
		if (jp->p < jp->end && *jp->p == close) {
			jp->p++;
			return v;
		}
		goto bad;
	}
bad:
	json_free(v);
	return NULL;
}

static inline struct json *json_parse_value(struct json_parser *jp)
{
	struct json *v;
	char *end;

	json_skip_space(jp);
	if (jp->p >= jp->end || ++jp->depth > 64)
		return NULL;
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	switch (*jp->p) {
	case '{':
		v->type = JSON_OBJECT;
		v = json_parse_container(jp, v);
		break;
	case '[':
		v->type = JSON_ARRAY;
		v = json_parse_container(jp, v);
		break;
	case '"':
		v->type = JSON_STRING;
		v->string = json_parse_string(jp);
		if (!v->string) {
			free(v);
			v = NULL;
		}
		break;
	case 't':
	case 'f':
		v->type = JSON_BOOL;
		v->boolean = *jp->p == 't';
		if (!json_literal(jp, v->boolean ? "true" : "false")) {
			free(v);
			v = NULL;
		}
		break;
	case 'n':
		v->type = JSON_NULL;
		if (!json_literal(jp, "null")) {
			free(v);
			v = NULL;
		}
		break;
	default:
		v->type = JSON_NUMBER;
		if (*jp->p != '-' && (*jp->p < '0' || *jp->p > '9')) {
			free(v);
			v = NULL;
			break;
		}
		v->number = strtod(jp->p, &end);
		if (end == jp->p || end > jp->end) {
			free(v);
			v = NULL;
			break;
		}
		jp->p = end;
		break;
	}
	jp->depth--;
	return v;
}

/* Parse @len bytes holding exactly one JSON value; NULL if malformed. */
static inline struct json *json_parse(const char *text, size_t len)
{
	struct json_parser jp = { .p = text, .end = text + len };
	struct json *v = json_parse_value(&jp);

	if (!v)
		return NULL;
	json_skip_space(&jp);
	if (jp.p != jp.end) {
		json_free(v);
		return NULL;
	}
	return v;
}

/* The member @key of object @v, or NULL. */
static inline const struct json *json_get(const struct json *v, const char *key)
{
	if (!v || v->type != JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->keys[i], key))
			return v->items[i];
	return NULL;
}

/* Element @i of array @v, or NULL. */
static inline const struct json *json_at(const struct json *v, size_t i)
{
	if (!v || v->type != JSON_ARRAY || i >= v->n)
		return NULL;
	return v->items[i];
}

/* The string @v, or NULL if @v is not one. */
static inline const char *json_str(const struct json *v)
{
	return v && v->type == JSON_STRING ? v->string : NULL;
}

/* The number @v, or @otherwise if @v is not one. */
static inline double json_num(const struct json *v, double otherwise)
{
	return v && v->type == JSON_NUMBER ? v->number : otherwise;
}

#endif /* VALOR_TESTS_JSON_LINES_H */
