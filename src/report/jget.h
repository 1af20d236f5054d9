/* Read-only accessors for report.json documents: dotted paths, defaults for absent fields. */
#ifndef GS_REPORT_JGET_H
#define GS_REPORT_JGET_H

#include <jansson.h>

/* Member at a dotted path of nested objects ("bound.Bps"), NULL if absent. */
json_t *jget(const json_t *o, const char *path);
/* Number at path (integer or real), NAN when absent, null or not a number. */
double jget_num(const json_t *o, const char *path);
/* String at path, "" when absent or not a string. Numbers are not converted. */
const char *jget_str(const json_t *o, const char *path);
/* Any scalar at path as text ("" when absent, null, object or array); returns buf. */
const char *jget_text(const json_t *o, const char *path, char *buf, size_t len);

/* A scalar as text, as jget_text without the path lookup (keys that hold dots). */
const char *jtext(const json_t *v, char *buf, size_t len);

#endif
