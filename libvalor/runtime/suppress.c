// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Suppressions: the suppressions=PATH option names a file in TSan's
 * format, one TYPE:PATTERN per line, '#' comments and blank lines
 * ignored.  Types:
 *
 *   race, conflict        any frame of either access's stack (the
 *                         function, the source file or the module), or
 *                         the name of the global variable involved
 *   race_top              only the first frame of either stack
 *   called_from_lib, thread, mutex, signal, deadlock
 *                         accepted so TSan files work; they match nothing
 *
 * Patterns match as TSan's do: a substring unless anchored with ^ at
 * the start or $ at the end, '*' matching any run of characters.
 *
 * The file is read once, before the program runs when rt_init calls
 * rt_suppress_init, else at the first report.  Memory comes from mmap.
 */
#include "report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum supp_type {
	SUPP_RACE,
	SUPP_RACE_TOP,
	SUPP_IGNORED,
};

struct suppression {
	enum supp_type type;
	const char *type_name;
	const char *pattern;
	atomic_ullong hits;
};

static const struct {
	const char *name;
	enum supp_type type;
} supp_types[] = {
	{ "race", SUPP_RACE },	       { "conflict", SUPP_RACE },
	{ "race_top", SUPP_RACE_TOP }, { "called_from_lib", SUPP_IGNORED },
	{ "thread", SUPP_IGNORED },    { "mutex", SUPP_IGNORED },
	{ "signal", SUPP_IGNORED },    { "deadlock", SUPP_IGNORED },
};

static atomic_int loaded; /* 0 no, 1 loading, 2 yes */
static struct suppression *supps;
static unsigned nsupps;

static char *read_file(const char *path, size_t *len)
{
	struct stat st;
	size_t cap, n = 0;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st))
		rt_die("valor: cannot read suppressions file '%s': %s\n", path,
		       strerror(errno));
	/* One spare byte for the final NUL; files in /proc say size 0. */
	cap = (size_t)st.st_size + 4096;
	buf = mmap(NULL, cap, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		rt_die("valor: cannot read suppressions file '%s': %s\n", path,
		       strerror(errno));
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			rt_die("valor: cannot read suppressions file '%s': %s\n",
			       path, strerror(errno));
		if (!r || n + (size_t)r == cap - 1)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	*len = n;
	return buf;
}

static char *trim(char *s, char *end)
{
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	while (end > s &&
	       (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	*end = 0;
	return s;
}

static void parse(const char *path, char *text, size_t len)
{
	unsigned lines = 1, lineno = 0;
	char *p = text, *end = text + len;

	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	supps = mmap(NULL, lines * sizeof(*supps), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (supps == MAP_FAILED)
		rt_die("valor: out of memory reading '%s'\n", path);
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *line_end = nl ? nl : end, *line, *colon, *pattern;
		unsigned t;

		lineno++;
		line = trim(p, line_end);
		p = nl ? nl + 1 : end;
		if (!*line || *line == '#')
			continue;
		colon = strchr(line, ':');
		if (!colon)
			rt_die("valor: %s:%u: expected TYPE:PATTERN, got '%s'\n",
			       path, lineno, line);
		*colon = 0;
		pattern = trim(colon + 1, colon + 1 + strlen(colon + 1));
		line = trim(line, colon);
		for (t = 0; t < sizeof(supp_types) / sizeof(supp_types[0]); t++)
			if (!strcmp(supp_types[t].name, line))
				break;
		if (t == sizeof(supp_types) / sizeof(supp_types[0]))
			rt_die("valor: %s:%u: unknown suppression type '%s' "
			       "(race, race_top or conflict)\n",
			       path, lineno, line);
		if (!*pattern)
			rt_die("valor: %s:%u: empty pattern\n", path, lineno);
		supps[nsupps].type = supp_types[t].type;
		supps[nsupps].type_name = supp_types[t].name;
		supps[nsupps].pattern = pattern;
		nsupps++;
	}
}

void rt_suppress_init(void)
{
	const char *path = rt.opt.suppressions;
	int s = 0;
	size_t len;
	char *text;

	if (!atomic_compare_exchange_strong(&loaded, &s, 1)) {
		while (atomic_load(&loaded) != 2)
			;
		return;
	}
	if (path && *path) {
		text = read_file(path, &len);
		parse(path, text, len);
	}
	atomic_store(&loaded, 2);
}

/*
 * Does @pat match @s?  '*' matches any run of characters; without a
 * leading '^' the match may start anywhere, without a trailing '$' it
 * may end anywhere.  Each '*'-separated piece is matched at its leftmost
 * position, which is always good enough except for an anchored last
 * piece, which must be the suffix.
 */
static bool template_match(const char *pat, const char *s)
{
	size_t plen = strlen(pat), slen;
	bool anchor_start = false, anchor_end = false;
	const char *p, *pend;

	if (!s || !*s)
		return false;
	slen = strlen(s);
	if (plen && pat[0] == '^') {
		anchor_start = true;
		pat++;
		plen--;
	}
	if (plen && pat[plen - 1] == '$') {
		anchor_end = true;
		plen--;
	}
	p = pat;
	pend = pat + plen;
	for (bool first = true; p <= pend; first = false) {
		const char *star = memchr(p, '*', (size_t)(pend - p));
		size_t n = (size_t)((star ? star : pend) - p);
		bool last = !star;

		if (last && anchor_end) {
			if (n > slen || memcmp(s + slen - n, p, n))
				return false;
			return !(first && anchor_start) || n == slen;
		}
		if (n) {
			const char *hit = NULL;

			if (first && anchor_start) {
				if (n <= slen && !memcmp(s, p, n))
					hit = s;
			} else {
				for (const char *q = s; q + n <= s + slen; q++)
					if (!memcmp(q, p, n)) {
						hit = q;
						break;
					}
			}
			if (!hit)
				return false;
			slen -= (size_t)(hit + n - s);
			s = hit + n;
		}
		if (last)
			return true;
		p = star + 1;
	}
	return true;
}

static bool frame_matches(const char *pat, const struct rt_frame *f)
{
	return template_match(pat, f->function) ||
	       template_match(pat, f->file) || template_match(pat, f->module);
}

static bool stack_matches(const struct suppression *sp,
			  const struct rt_stack_view *v)
{
	unsigned n = sp->type == SUPP_RACE_TOP ? (v->n ? 1 : 0) : v->n;

	for (unsigned i = 0; i < n; i++)
		if (frame_matches(sp->pattern, &v->frame[i]))
			return true;
	return false;
}

static bool report_matches(const struct suppression *sp,
			   const struct rt_report *r)
{
	if (sp->type == SUPP_IGNORED)
		return false;
	if (stack_matches(sp, &r->current.stack) ||
	    stack_matches(sp, &r->earlier.stack))
		return true;
	if (sp->type == SUPP_RACE_TOP)
		return false;
	if (stack_matches(sp, &r->validated_at))
		return true;
	return r->mem.type == RT_MEM_GLOBAL &&
	       template_match(sp->pattern, r->mem.name);
}

const char *rt_suppress_match(const struct rt_report *r)
{
	if (atomic_load(&loaded) != 2)
		rt_suppress_init();
	for (unsigned i = 0; i < nsupps; i++) {
		if (report_matches(&supps[i], r)) {
			atomic_fetch_add(&supps[i].hits, 1);
			return supps[i].pattern;
		}
	}
	return NULL;
}

void rt_suppress_for_each_matched(void (*fn)(void *arg, const char *type,
					     const char *pattern,
					     uint64_t hits),
				  void *arg)
{
	if (atomic_load(&loaded) != 2)
		return;
	for (unsigned i = 0; i < nsupps; i++) {
		uint64_t hits = atomic_load(&supps[i].hits);

		if (hits)
			fn(arg, supps[i].type_name, supps[i].pattern, hits);
	}
}
