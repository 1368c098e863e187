/* SPDX-License-Identifier: MIT */
/* fd_count.h - for tests of what code leaves open: the process's open file descriptors */
#ifndef PVNET_TESTS_COMMON_FD_COUNT_H
#define PVNET_TESTS_COMMON_FD_COUNT_H

/*
 * Entries of /proc/self/fd now (the directory's own descriptor among them):
 * compare two counts, not a count with a number.  Asserts it can read it.
 */
unsigned int fd_count(void);

#endif
