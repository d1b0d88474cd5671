// SPDX-License-Identifier: GPL-2.0
/*
 * The text trace format (Documentation/trace-format.md): one event per
 * line, "#" comments, names for addresses.  The parser stops at the first
 * error and reports it as FILE:LINE:COL with the line and a caret.
 */
#include "trace.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "names.h"

/* Names used without a "let" get addresses from here on, one cache line each. */
#define AUTO_BASE 0x10000ULL
#define AUTO_STRIDE 64ULL

#define MAX_TOKENS 16

struct token {
	const char *s;
	size_t len;
};

struct parser {
	struct trace *t;
	struct name_table names;
	uint64_t next_auto;

	uint32_t lineno;
	const char *line; /* the whole line, without its newline */
	size_t len;
	struct token tok[MAX_TOKENS];
	size_t ntok;
};

/* Report an error at token or position @at (NULL: end of the line). */
static int fail(struct parser *p, const char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct parser *p, const char *at, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	size_t col = at ? (size_t)(at - p->line) + 1 : p->len + 1;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	diag_at(p->t->display, p->lineno, col, p->line, p->len, "%s", msg);
	return -1;
}

/* Quote a token for a message, shortened so hostile input stays readable. */
static const char *quote(const struct token *tk, char *buf, size_t size)
{
	int n = tk->len > 40 ? 40 : (int)tk->len;

	snprintf(buf, size, "'%.*s%s'", n, tk->s, tk->len > 40 ? "..." : "");
	return buf;
}

static bool tok_is(const struct token *tk, const char *word)
{
	return tk->len == strlen(word) && !memcmp(tk->s, word, tk->len);
}

/*
 * Numbers are decimal or 0x-hexadecimal.  A leading 0 does not mean
 * octal: traces are written by people who expect 010 to be ten.
 */
static int parse_number(struct parser *p, const char *s, size_t len,
			uint64_t *out)
{
	unsigned int base = 10;
	const char *start = s;
	uint64_t v = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		len -= 2;
	}
	if (len == 0)
		return fail(p, start, "expected a number");
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (base == 16 && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (base == 16 && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return fail(
				p, s + i,
				"'%c' in a number (numbers are decimal or 0x-hexadecimal)",
				c >= 0x21 && c < 0x7f ? c : '?');
		if (v > (UINT64_MAX - d) / base)
			return fail(p, start,
				    "number too large (more than 64 bits)");
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static bool is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9') || c == '.';
}

static int check_name(struct parser *p, const char *s, size_t len)
{
	if (len == 0)
		return fail(p, s, "expected a name");
	if (!is_name_start(s[0]))
		return fail(
			p, s,
			"a name starts with a letter or '_' (numbers are addresses)");
	for (size_t i = 1; i < len; i++)
		if (!is_name_char(s[i]))
			return fail(
				p, s + i,
				"'%c' cannot appear in a name (letters, digits, '_' and '.')",
				s[i] >= 0x21 && s[i] < 0x7f ? s[i] : '?');
	return 0;
}

/* Look a name up, giving it the next automatic address on first use. */
static int resolve_name(struct parser *p, const char *s, size_t len,
			uint64_t *out)
{
	struct name_entry *e = names_find(&p->names, s, len);

	if (!e) {
		if (p->next_auto > UINT64_MAX - AUTO_STRIDE)
			return fail(p, s, "out of automatic addresses");
		e = names_add(&p->names, s, len, p->next_auto, p->lineno, true);
		if (!e)
			return fail(p, s, "out of memory");
		p->next_auto += AUTO_STRIDE;
	}
	*out = e->addr;
	return 0;
}

/* ADDRESS := (NAME | NUMBER) [ ('+' | '-') NUMBER ] */
static int parse_address(struct parser *p, const char *s, size_t len,
			 uint64_t *out)
{
	size_t base_len = 0;
	uint64_t base, off = 0;

	while (base_len < len && s[base_len] != '+' && s[base_len] != '-')
		base_len++;
	if (base_len == 0)
		return fail(
			p, s,
			"expected an address (a name or a number) before '%c'",
			s[0]);
	if (s[0] >= '0' && s[0] <= '9') {
		if (parse_number(p, s, base_len, &base) < 0)
			return -1;
	} else {
		if (check_name(p, s, base_len) < 0 ||
		    resolve_name(p, s, base_len, &base) < 0)
			return -1;
	}
	if (base_len == len) {
		*out = base;
		return 0;
	}
	if (parse_number(p, s + base_len + 1, len - base_len - 1, &off) < 0)
		return -1;
	if (s[base_len] == '+') {
		if (base + off < base)
			return fail(
				p, s,
				"address past the end of the address space");
		*out = base + off;
	} else {
		if (off > base)
			return fail(p, s, "address below 0");
		*out = base - off;
	}
	return 0;
}

/* T<decimal>; UINT32_MAX is reserved for "unknown thread". */
static int parse_thread(struct parser *p, const struct token *tk, uint32_t *out)
{
	char q[64];
	uint64_t v;

	if (tk->len < 2 || tk->s[0] != 'T' || tk->s[1] < '0' || tk->s[1] > '9')
		return fail(p, tk->s, "expected a thread like T1, got %s",
			    quote(tk, q, sizeof(q)));
	if (parse_number(p, tk->s + 1, tk->len - 1, &v) < 0)
		return -1;
	if (v >= UINT32_MAX)
		return fail(p, tk->s, "thread number too large (at most %u)",
			    UINT32_MAX - 1);
	*out = (uint32_t)v;
	return 0;
}

enum operand {
	OP_NONE,
	OP_THREAD, /* T2 */
	OP_ADDR, /* sync object */
	OP_ACCESS, /* address, size of up to 32 bits */
	OP_RANGE, /* address, length of up to 64 bits */
};

static const struct op {
	const char *name;
	uint16_t kind;
	uint16_t flags;
	enum operand operand;
	const char *usage;
} ops[] = {
	{ "create", VALOR_EV_THREAD_CREATE, 0, OP_THREAD, "T1 create T2" },
	{ "exit", VALOR_EV_THREAD_EXIT, 0, OP_NONE, "T2 exit" },
	{ "join", VALOR_EV_THREAD_JOIN, 0, OP_THREAD, "T1 join T2" },
	{ "acquire", VALOR_EV_ACQUIRE, 0, OP_ADDR, "T1 acquire LOCK" },
	{ "release", VALOR_EV_RELEASE, 0, OP_ADDR, "T1 release LOCK" },
	{ "read", VALOR_EV_ACCESS, 0, OP_ACCESS,
	  "T1 read ADDRESS SIZE [count=N [stride=BYTES]]" },
	{ "write", VALOR_EV_ACCESS, VALOR_EVF_WRITE, OP_ACCESS,
	  "T1 write ADDRESS SIZE [count=N [stride=BYTES]]" },
	{ "free", VALOR_EV_FREE, 0, OP_RANGE, "T1 free ADDRESS SIZE" },
	{ "munmap", VALOR_EV_MUNMAP, 0, OP_RANGE, "T1 munmap ADDRESS SIZE" },
	{ "region-end", VALOR_EV_REGION_END, 0, OP_NONE, "T1 region-end" },
	{ "validate", VALOR_EV_VALIDATE, 0, OP_NONE, "T1 validate" },
};

#define NR_OPS (sizeof(ops) / sizeof(ops[0]))

static const struct op *find_op(const struct token *tk)
{
	for (size_t i = 0; i < NR_OPS; i++)
		if (tok_is(tk, ops[i].name))
			return &ops[i];
	return NULL;
}

static size_t operand_count(enum operand o)
{
	switch (o) {
	case OP_NONE:
		return 0;
	case OP_THREAD:
	case OP_ADDR:
		return 1;
	default:
		return 2;
	}
}

static const char *operand_words(enum operand o)
{
	switch (o) {
	case OP_THREAD:
		return "a thread";
	case OP_ADDR:
		return "a synchronization object (a name or an address)";
	case OP_ACCESS:
	case OP_RANGE:
		return "an address and a size";
	default:
		return "nothing";
	}
}

/*
 * Trailing attributes: ip=N (or @N), ts=N, cpu=N; on a read or write
 * also count=N and stride=N (a strided access: count elements of the
 * size, stride bytes apart; the stride defaults to the size).
 */
static int parse_attributes(struct parser *p, size_t first,
			    struct valor_event *ev, bool *explicit_ip)
{
	bool seen_ts = false, seen_cpu = false, seen_count = false;
	bool seen_stride = false;
	uint64_t count = 1, stride = ev->size;

	for (size_t i = first; i < p->ntok; i++) {
		const struct token *tk = &p->tok[i];
		const char *val;
		size_t klen, vlen;
		uint64_t v;
		char q[64];

		if (tk->s[0] == '@') {
			klen = 0;
			val = tk->s + 1;
			vlen = tk->len - 1;
		} else {
			const char *eq = memchr(tk->s, '=', tk->len);

			if (!eq)
				return fail(
					p, tk->s,
					"unexpected %s after the event (attributes are ip=, @, ts=, cpu=; comments start with #)",
					quote(tk, q, sizeof(q)));
			klen = (size_t)(eq - tk->s);
			val = eq + 1;
			vlen = tk->len - klen - 1;
		}
		if (parse_number(p, val, vlen, &v) < 0)
			return -1;
		if (klen == 0 || (klen == 2 && !memcmp(tk->s, "ip", 2))) {
			if (*explicit_ip)
				return fail(p, tk->s,
					    "the site is given twice");
			*explicit_ip = true;
			ev->ip = v;
		} else if (klen == 2 && !memcmp(tk->s, "ts", 2)) {
			if (seen_ts)
				return fail(p, tk->s, "ts= is given twice");
			seen_ts = true;
			ev->ts_ns = v;
		} else if (klen == 3 && !memcmp(tk->s, "cpu", 3)) {
			if (seen_cpu)
				return fail(p, tk->s, "cpu= is given twice");
			if (v > UINT32_MAX)
				return fail(p, val, "cpu number too large");
			seen_cpu = true;
			ev->cpu = (uint32_t)v;
		} else if (ev->kind == VALOR_EV_ACCESS && klen == 5 &&
			   !memcmp(tk->s, "count", 5)) {
			if (seen_count)
				return fail(p, tk->s, "count= is given twice");
			if (v == 0 || v > UINT32_MAX)
				return fail(p, val,
					    "count must be 1 to %u elements",
					    UINT32_MAX);
			seen_count = true;
			count = v;
		} else if (ev->kind == VALOR_EV_ACCESS && klen == 6 &&
			   !memcmp(tk->s, "stride", 6)) {
			if (seen_stride)
				return fail(p, tk->s, "stride= is given twice");
			if (v > UINT32_MAX)
				return fail(
					p, val,
					"stride too large (at most %u bytes)",
					UINT32_MAX);
			seen_stride = true;
			stride = v;
		} else {
			return fail(
				p, tk->s,
				ev->kind == VALOR_EV_ACCESS ?
					"unknown attribute '%.*s=' (known: ip=, @, ts=, cpu=, count=, stride=)" :
					"unknown attribute '%.*s=' (known: ip=, @, ts=, cpu=)",
				(int)(klen > 40 ? 40 : klen), tk->s);
		}
	}
	if (seen_stride && !seen_count)
		return fail(p, NULL,
			    "stride= needs count= (how many elements)");
	if (seen_count) {
		ev->flags |= VALOR_EVF_STRIDED;
		ev->arg = VALOR_ACCESS_STRIDED(stride, count);
		if (trace_access_wraps(ev))
			return fail(
				p, NULL,
				"the %llu elements from 0x%llx run past the end of the address space",
				(unsigned long long)count,
				(unsigned long long)ev->addr);
	}
	return 0;
}

static int parse_event(struct parser *p)
{
	struct valor_event ev = { .cpu = UINT32_MAX };
	const struct token *tk = p->tok;
	bool explicit_ip = false;
	const struct op *op;
	uint64_t v, addr;
	size_t nargs;
	char q[64];

	if (parse_thread(p, &tk[0], &ev.tid) < 0)
		return -1;
	if (p->ntok < 2)
		return fail(
			p, NULL,
			"expected an operation after the thread (create, exit, join, acquire, release, read, write, free, munmap, region-end, validate)");
	op = find_op(&tk[1]);
	if (!op)
		return fail(
			p, tk[1].s,
			"unknown operation %s (expected create, exit, join, acquire, release, read, write, free, munmap, region-end or validate)",
			quote(&tk[1], q, sizeof(q)));
	ev.kind = op->kind;
	ev.flags = op->flags;
	nargs = operand_count(op->operand);
	for (size_t i = 0; i < nargs; i++) {
		/* An attribute where an operand belongs means it is missing. */
		if (2 + i >= p->ntok || tk[2 + i].s[0] == '@' ||
		    memchr(tk[2 + i].s, '=', tk[2 + i].len))
			return fail(p, 2 + i < p->ntok ? tk[2 + i].s : NULL,
				    "'%s' is missing %s (usage: %s)", op->name,
				    operand_words(op->operand), op->usage);
	}

	switch (op->operand) {
	case OP_NONE:
		break;
	case OP_THREAD: {
		uint32_t other;

		if (parse_thread(p, &tk[2], &other) < 0)
			return -1;
		if (other == ev.tid)
			return fail(p, tk[2].s, "a thread cannot %s itself",
				    op->name);
		ev.arg = other;
		break;
	}
	case OP_ADDR:
		if (parse_address(p, tk[2].s, tk[2].len, &addr) < 0)
			return -1;
		ev.addr = addr;
		break;
	case OP_ACCESS:
	case OP_RANGE:
		if (parse_address(p, tk[2].s, tk[2].len, &addr) < 0 ||
		    parse_number(p, tk[3].s, tk[3].len, &v) < 0)
			return -1;
		ev.addr = addr;
		if (v == 0)
			return fail(p, tk[3].s, "size must be at least 1 byte");
		if (op->operand == OP_ACCESS && v > UINT32_MAX)
			return fail(p, tk[3].s,
				    "access size too large (at most %u bytes)",
				    UINT32_MAX);
		if (ev.addr + (v - 1) < ev.addr)
			return fail(
				p, tk[3].s,
				"the %llu bytes at 0x%llx run past the end of the address space",
				(unsigned long long)v,
				(unsigned long long)ev.addr);
		if (op->operand == OP_ACCESS)
			ev.size = (uint32_t)v;
		else
			ev.arg = v;
		break;
	}

	ev.ip = p->lineno;
	if (parse_attributes(p, 2 + nargs, &ev, &explicit_ip) < 0)
		return -1;
	if (trace_append(p->t, &ev, p->lineno, !explicit_ip) < 0)
		return fail(p, tk[0].s, "out of memory");
	return 0;
}

/* let NAME = ADDRESS  (spaces around '=' optional) */
static int parse_let(struct parser *p, const char *end)
{
	const char *s = p->tok[0].s + 3, *eq, *name, *val;
	size_t name_len, val_len;
	struct name_entry *e;
	uint64_t addr;

	eq = memchr(s, '=', (size_t)(end - s));
	if (!eq)
		return fail(p, NULL, "expected 'let NAME = ADDRESS'");
	name = s;
	while (name < eq && (*name == ' ' || *name == '\t'))
		name++;
	name_len = 0;
	while (name + name_len < eq && name[name_len] != ' ' &&
	       name[name_len] != '\t')
		name_len++;
	for (const char *c = name + name_len; c < eq; c++)
		if (*c != ' ' && *c != '\t')
			return fail(p, c, "expected '=' after the name");
	if (name_len == 0)
		return fail(p, eq, "expected a name before '='");
	if (check_name(p, name, name_len) < 0)
		return -1;

	val = eq + 1;
	while (val < end && (*val == ' ' || *val == '\t'))
		val++;
	val_len = 0;
	while (val + val_len < end && val[val_len] != ' ' &&
	       val[val_len] != '\t')
		val_len++;
	if (val_len == 0)
		return fail(p, NULL, "expected an address after '='");
	for (const char *c = val + val_len; c < end; c++)
		if (*c != ' ' && *c != '\t')
			return fail(
				p, c,
				"unexpected text after the address (write it as NAME+OFFSET, no spaces)");

	e = names_find(&p->names, name, name_len);
	if (e)
		return fail(
			p, name,
			e->automatic ?
				"'%s' already has an address: it was given one automatically at its first use on line %u; put the let before that line" :
				"'%s' is already defined on line %u",
			e->name, e->line);
	if (parse_address(p, val, val_len, &addr) < 0)
		return -1;
	if (!names_add(&p->names, name, name_len, addr, p->lineno, false))
		return fail(p, name, "out of memory");
	return 0;
}

/* Split the current line into tokens, up to a '#' comment. */
static int tokenize(struct parser *p, const char **end)
{
	const char *s = p->line, *e = p->line + p->len;

	p->ntok = 0;
	for (const char *c = s; c < e; c++) {
		unsigned char b = (unsigned char)*c;

		if ((b < 0x20 && b != '\t') || b == 0x7f)
			return fail(
				p, c,
				"unexpected control byte 0x%02x (a text trace is plain text; binary traces start with the stream header)",
				b);
	}
	while (s < e) {
		const char *start;

		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		if (s == e || *s == '#')
			break;
		start = s;
		while (s < e && *s != ' ' && *s != '\t' && *s != '#')
			s++;
		if (p->ntok == MAX_TOKENS)
			return fail(p, start, "too many words on one line");
		p->tok[p->ntok].s = start;
		p->tok[p->ntok].len = (size_t)(s - start);
		p->ntok++;
	}
	*end = s;
	return 0;
}

static int parse_line(struct parser *p)
{
	const char *end = p->line + p->len;

	if (tokenize(p, &end) < 0)
		return -1;
	if (p->ntok == 0)
		return 0;
	if (tok_is(&p->tok[0], "let") ||
	    (p->tok[0].len > 3 && !memcmp(p->tok[0].s, "let", 3) &&
	     !is_name_char(p->tok[0].s[3])))
		return parse_let(p, end);
	if (p->tok[0].s[0] != 'T' || p->tok[0].len < 2 ||
	    p->tok[0].s[1] < '0' || p->tok[0].s[1] > '9')
		return fail(p, p->tok[0].s,
			    "a line starts with a thread (T1 ...) or 'let'");
	return parse_event(p);
}

static int export_symbol(void *arg, const struct name_entry *e)
{
	struct trace *t = arg;
	char *name = strdup(e->name);

	if (!name || trace_add_symbol(t, e->addr, name) < 0) {
		free(name);
		return -1;
	}
	return 0;
}

int trace_parse_text(struct trace *t, const char *buf, size_t len)
{
	struct parser p = { .t = t, .next_auto = AUTO_BASE };
	const char *s = buf, *e = buf + len;
	int ret = 0;

	names_init(&p.names);
	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		const char *line_end = nl ? nl : e;

		if (p.lineno == UINT32_MAX - 1) {
			diag_file(t->display, "more than %u lines", p.lineno);
			ret = -1;
			break;
		}
		p.lineno++;
		p.line = s;
		p.len = (size_t)(line_end - s);
		if (p.len && s[p.len - 1] == '\r')
			p.len--;
		if (parse_line(&p) < 0) {
			ret = -1;
			break;
		}
		s = nl ? nl + 1 : e;
	}
	if (ret == 0 && names_for_each(&p.names, export_symbol, t)) {
		diag_file(t->display, "out of memory");
		ret = -1;
	}
	names_destroy(&p.names);
	if (ret == 0)
		trace_sort_symbols(t);
	return ret;
}
