// SPDX-License-Identifier: MIT
/* path.c - pure helpers: xenstored's path rules and permission lists (no store state) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"

static const char path_chars[] =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-/_@";

/* Length xenstored allows past /local/domain/<id>/ (its quota-path-max default). */
static bool path_len_ok(const char *p, size_t len)
{
	unsigned int domid;
	int off = 0;

	if (len > XENSTORE_ABS_PATH_MAX)
		return false;
	if (sscanf(p, "/local/domain/%5u/%n", &domid, &off) != 1)
		off = 0;
	return len <= (size_t)off + XENSTORE_REL_PATH_MAX;
}

/**
 * store_path_canon() - make @in absolute for @domid and check it like xenstored
 * @domid: relative paths resolve under /local/domain/<domid>
 * @in: path from the client, NUL-terminated
 * @out: buffer for the canonical path
 * @size: bytes in @out, at least XENSTORE_ABS_PATH_MAX + 1
 *
 * Special paths ("@...") are copied unchanged if short enough.
 *
 * Return: 0, or -EINVAL for a path xenstored rejects
 */
int store_path_canon(domid_t domid, const char *in, char *out, size_t size)
{
	size_t len = strlen(in);
	int n;

	if (in[0] == '@') {
		if (len > XENSTORE_REL_PATH_MAX || len >= size)
			return -EINVAL;
		memcpy(out, in, len + 1);
		return 0;
	}
	if (in[0] == '/') {
		if (len > XENSTORE_ABS_PATH_MAX || len >= size)
			return -EINVAL;
		memcpy(out, in, len + 1);
	} else {
		if (len > XENSTORE_REL_PATH_MAX)
			return -EINVAL;
		n = snprintf(out, size, "/local/domain/%u/%s", domid, in);
		if (n < 0 || (size_t)n >= size)
			return -EINVAL;
		len = (size_t)n;
	}
	if (len > 1 && out[len - 1] == '/')
		return -EINVAL;
	if (strstr(out, "//"))
		return -EINVAL;
	if (strspn(out, path_chars) != len)
		return -EINVAL;
	if (!path_len_ok(out, len))
		return -EINVAL;
	return 0;
}

/**
 * store_path_is_child() - is @child equal to @parent or below it?
 * @child: absolute or special path
 * @parent: absolute or special path; "/" is the parent of everything, as in xenstored
 *
 * Return: true if so
 */
bool store_path_is_child(const char *child, const char *parent)
{
	size_t len = strlen(parent);

	if (strcmp(parent, "/") == 0)
		return true;
	if (strncmp(child, parent, len) != 0)
		return false;
	return child[len] == '/' || child[len] == '\0';
}

/**
 * store_perm_for() - the access @domid has to a node with permission list @p
 * @domid: the accessing domain
 * @p: the node's list; p[0] is the owner and the default
 * @n: entries in @p (>= 1)
 *
 * Entries marked STORE_PERM_IGNORE do not name anyone; the owner's entry
 * still gives everyone else its default.
 *
 * Return: STORE_PERM_* bits, plus STORE_PERM_OWNER for dom0 and the owner
 */
unsigned int store_perm_for(domid_t domid, const struct store_perm *p, unsigned int n)
{
	unsigned int i;

	if (domid == 0 || (p[0].id == domid && !(p[0].perm & STORE_PERM_IGNORE)))
		return STORE_PERM_BOTH | STORE_PERM_OWNER;
	for (i = 1; i < n; i++)
		if (p[i].id == domid && !(p[i].perm & STORE_PERM_IGNORE))
			return p[i].perm & STORE_PERM_BOTH;
	return p[0].perm & STORE_PERM_BOTH;
}

/**
 * store_perms_parse() - parse xenstored's permission strings ("r0\0" "w1\0" ...)
 * @strs: the strings, each NUL-terminated
 * @len: bytes in @strs; must end with a NUL
 * @out: set to a malloc()ed list
 * @n: set to its length (>= 1)
 *
 * Return: 0, -EINVAL for a malformed list, or -ENOMEM
 */
int store_perms_parse(const char *strs, size_t len, struct store_perm **out, unsigned int *n)
{
	struct store_perm *p;
	unsigned int count = 0, i = 0;
	size_t off;

	if (len == 0 || strs[len - 1] != '\0')
		return -EINVAL;
	for (off = 0; off < len; off++)
		if (strs[off] == '\0')
			count++;
	p = calloc(count, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (off = 0; off < len; off += strlen(strs + off) + 1, i++) {
		const char *e = strs + off;
		unsigned long id = 0;
		size_t digits = strlen(e + 1);
		size_t k;

		switch (e[0]) {
		case 'n':
			p[i].perm = STORE_PERM_NONE;
			break;
		case 'r':
			p[i].perm = STORE_PERM_READ;
			break;
		case 'w':
			p[i].perm = STORE_PERM_WRITE;
			break;
		case 'b':
			p[i].perm = STORE_PERM_BOTH;
			break;
		default:
			goto err_inval;
		}
		/* 1..5 decimal digits: any valid domid fits, and no overflow is possible */
		if (digits == 0 || digits > 5 || strspn(e + 1, "0123456789") != digits)
			goto err_inval;
		for (k = 1; k <= digits; k++)
			id = id * 10 + (unsigned long)(e[k] - '0');
		if (id >= DOMID_FIRST_RESERVED)
			goto err_inval;
		p[i].id = (domid_t)id;
	}
	*out = p;
	*n = count;
	return 0;

err_inval:
	free(p);
	return -EINVAL;
}

/**
 * store_perms_format() - render a permission list as xenstored's strings
 * @p: the list
 * @n: entries
 * @buf: output
 * @size: bytes in @buf
 *
 * Return: bytes written (each string NUL-terminated), or -E2BIG
 */
int store_perms_format(const struct store_perm *p, unsigned int n, char *buf, size_t size)
{
	static const char letters[] = "nrwb";
	size_t off = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		int w = snprintf(buf + off, size - off, "%c%u", letters[p[i].perm & 3], p[i].id);

		if (w < 0 || (size_t)w + 1 > size - off)
			return -E2BIG;
		off += (size_t)w + 1;
	}
	return (int)off;
}
