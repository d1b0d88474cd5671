// SPDX-License-Identifier: GPL-2.0
/*
 * Finding a program along PATH, as execvp() would: valor run checks the
 * file it will start, valor cc reads a compiler's version off the
 * directory it is installed in.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "path.h"

char *find_program(const char *prog)
{
	const char *path = getenv("PATH");
	struct stat st;

	if (strchr(prog, '/'))
		return strdup(prog);
	if (!path || !*path)
		path = "/usr/local/bin:/bin:/usr/bin";
	for (const char *p = path;;) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		char *full = malloc(n + strlen(prog) + 3);

		if (!full)
			return NULL;
		sprintf(full, "%.*s/%s", (int)n, n ? p : ".", prog);
		if (!stat(full, &st) && S_ISREG(st.st_mode) &&
		    !access(full, X_OK))
			return full;
		free(full);
		if (!colon)
			break;
		p = colon + 1;
	}
	errno = ENOENT;
	return NULL;
}
