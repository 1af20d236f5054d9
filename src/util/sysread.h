/*
 * Small reads from a sysfs-like tree under a root: the live /sys, or a captured fixture
 * directory that tests point at. Paths are printf formats relative to the root.
 */
#ifndef GS_UTIL_SYSREAD_H
#define GS_UTIL_SYSREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/common.h"

/* The root is the live /sys (its facts outside sysfs come from /proc, getrlimit, ...). */
bool sys_is_live(const char *root);
/* <root>/<rel> into buf, trailing newlines and spaces cut: 0 or -errno. */
int sys_read_str(const char *root, char *buf, size_t len, const char *fmt, ...) GS_PRINTF(4, 5);
/* A number (strtol base 0: "0x10de" and "42" both parse), dflt when absent or unparsable. */
long sys_read_long(const char *root, long dflt, const char *fmt, ...) GS_PRINTF(3, 4);
bool sys_exists(const char *root, const char *fmt, ...) GS_PRINTF(2, 3);
/* Up to len raw bytes: how many were read, or -errno. */
ssize_t sys_read_bin(const char *root, void *buf, size_t len, const char *fmt, ...)
    GS_PRINTF(4, 5);
/* Entries of the directory <root>/<rel> passing keep() (NULL = all but dot files), sorted in
 * version order ("cpu2" before "cpu10"); *out is malloc'ed (free it). Count or -errno. */
int sys_list(const char *root, bool (*keep)(const char *name), char (**out)[64],
	     const char *fmt, ...) GS_PRINTF(4, 5);

#endif
