/*
 * Numbers with units, as the experiment language and the command line write them:
 * sizes (4KiB, 25MiB, 1GB, 1.5GiB, 4096), durations (500us, 2ms, 10s, 1m),
 * rates (200Gbps, 25GB/s, 12.5GiB/s). Parsers return 0 or -EINVAL / -ERANGE.
 */
#ifndef GS_UTIL_UNITS_H
#define GS_UTIL_UNITS_H

#include <stddef.h>
#include <stdint.h>

int units_parse_size(const char *s, uint64_t *bytes);
int units_parse_duration(const char *s, uint64_t *ns);
int units_parse_rate(const char *s, double *bytes_per_s);
int units_parse_int(const char *s, long long *v);
int units_parse_double(const char *s, double *v);

/* Shortest exact binary form: 65536 -> "64KiB", 1000 -> "1000B"; returns buf. */
char *units_fmt_size(uint64_t bytes, char *buf, size_t len);
/* A size to read, 3 significant digits: 24819712000 -> "23.1GiB", 1000 -> "1000B". */
char *units_fmt_size_approx(uint64_t bytes, char *buf, size_t len);
/* Human form with 3 significant digits: "1.50ms", "250us". */
char *units_fmt_duration(uint64_t ns, char *buf, size_t len);

#endif
