// SPDX-License-Identifier: GPL-2.0
/* Error messages about input files, with position and context. */
#include "diag.h"

#include <stdarg.h>
#include <stdio.h>

/*
 * Lines are echoed at most this long, so that a 1 MB line does not flood
 * the terminal; the caret is shown only when it falls inside the echo.
 */
#define ECHO_MAX 160

static void echo_line(const char *text, size_t len, size_t col)
{
	size_t shown = len < ECHO_MAX ? len : ECHO_MAX;

	fputs("    ", stderr);
	for (size_t i = 0; i < shown; i++) {
		unsigned char c = (unsigned char)text[i];

		/* Keep the caret aligned: tabs stay, other controls become '?'. */
		fputc(c == '\t' || (c >= 0x20 && c != 0x7f) ? c : '?', stderr);
	}
	if (shown < len)
		fputs(" ...", stderr);
	fputc('\n', stderr);
	if (col == 0 || col > shown + 1)
		return;
	fputs("    ", stderr);
	for (size_t i = 0; i + 1 < col; i++)
		fputc(text[i] == '\t' ? '\t' : ' ', stderr);
	fputs("^\n", stderr);
}

void diag_at(const char *file, size_t line, size_t col, const char *text,
	     size_t len, const char *fmt, ...)
{
	va_list ap;

	if (line && col)
		fprintf(stderr, "%s:%zu:%zu: error: ", file, line, col);
	else if (line)
		fprintf(stderr, "%s:%zu: error: ", file, line);
	else
		fprintf(stderr, "%s: error: ", file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (text)
		echo_line(text, len, col);
}

void diag_file(const char *file, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: error: ", file);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
