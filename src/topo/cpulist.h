/* Linux cpulist strings ("0-3,8,10-11") to and from cpu_set_t, as sysfs and taskset write them. */
#ifndef GS_TOPO_CPULIST_H
#define GS_TOPO_CPULIST_H

#include <sched.h> /* cpu_set_t: the including .c defines _GNU_SOURCE first */
#include <stddef.h>

/*
 * Parse a cpulist into *set (cleared first). Accepts "N", "A-B", comma separated, surrounding
 * blanks and a trailing newline; an empty string gives an empty set. 0 or -EINVAL with err
 * naming the offending part ("'3-1': range end below start").
 */
int cpulist_parse(const char *s, cpu_set_t *set, char *err, size_t errlen);
/* Format *set compactly ("0-3,8"); "" for an empty set. Returns buf. */
char *cpulist_format(const cpu_set_t *set, char *buf, size_t len);

#endif
