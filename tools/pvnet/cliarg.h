/* SPDX-License-Identifier: MIT */
/* cliarg.h - pvnet's command line: checked numeric arguments and output paths */
#ifndef PVNET_TOOLS_CLIARG_H
#define PVNET_TOOLS_CLIARG_H

/**
 * cliarg_ulong() - a decimal number within bounds, and nothing else
 * @s: the argument
 * @lo: smallest accepted
 * @hi: largest accepted
 * @out: the number
 *
 * Return: 0, or -EINVAL (not all digits, out of range, or empty)
 */
int cliarg_ulong(const char *s, unsigned long lo, unsigned long hi, unsigned long *out);

/**
 * cliarg_out_file() - can a file be written at @path when the results are ready?
 * @path: the file: written over if it exists, else created
 *
 * Asked before a long run, so that a mistyped path fails at once instead of
 * after the run.  Nothing is created or truncated.
 *
 * Return: 0, or a negative errno (-ENOENT: the directory is missing;
 * -ENOTDIR: a part of the path is not a directory; -EISDIR: @path is one;
 * -EACCES, -EROFS: it cannot be written)
 */
int cliarg_out_file(const char *path);

/**
 * cliarg_out_dir() - can files be written in directory @path (made if absent)?
 * @path: the directory: used if it exists, else made in an existing parent
 *
 * Return: 0, or a negative errno as for cliarg_out_file() (-ENOTDIR when
 * @path exists and is not a directory)
 */
int cliarg_out_dir(const char *path);

#endif
