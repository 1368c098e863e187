// SPDX-License-Identifier: MIT
/* cliarg.c - pvnet's command line: checked numeric arguments and output paths */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cliarg.h"

int cliarg_ulong(const char *s, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Can an entry be created in the directory that would hold @path? */
static int parent_writable(const char *path)
{
	char copy[PATH_MAX];
	struct stat st;
	const char *dir;

	if ((size_t)snprintf(copy, sizeof(copy), "%s", path) >= sizeof(copy))
		return -ENAMETOOLONG;
	dir = dirname(copy);
	if (stat(dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return access(dir, W_OK | X_OK) < 0 ? -errno : 0;
}

/* @path to be written as a file, or as a directory if @dir. */
static int out_path(const char *path, bool dir)
{
	struct stat st;

	if (!*path)
		return -ENOENT;
	if (stat(path, &st) < 0)
		return errno == ENOENT ? parent_writable(path) : -errno;
	if (dir != !!S_ISDIR(st.st_mode))
		return dir ? -ENOTDIR : -EISDIR;
	return access(path, dir ? W_OK | X_OK : W_OK) < 0 ? -errno : 0;
}

int cliarg_out_file(const char *path)
{
	return out_path(path, false);
}

int cliarg_out_dir(const char *path)
{
	return out_path(path, true);
}
