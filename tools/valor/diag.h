/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Error messages about input, in the form editors and people know:
 * "FILE:LINE:COL: error: WHAT", followed by the offending line and a caret.
 */
#ifndef VALOR_TOOL_DIAG_H
#define VALOR_TOOL_DIAG_H

#include <stddef.h>

/**
 * diag_at() - report an error at a position of a text line
 * @file: file name to show
 * @line: 1-based line number, or 0 for a whole-file error
 * @col:  1-based byte column, or 0 when no column applies
 * @text: the line (need not be NUL-terminated), or NULL to not show it
 * @len:  length of @text
 */
void diag_at(const char *file, size_t line, size_t col, const char *text,
	     size_t len, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* An error about @file as a whole (I/O, binary stream structure). */
void diag_file(const char *file, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* VALOR_TOOL_DIAG_H */
