/* SPDX-License-Identifier: MIT */
/* cliarg.h - pvnet's command line: checked numeric arguments */
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

#endif
