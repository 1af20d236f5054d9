/*
 * The '$' escapes of the experiment language: $$, $;, $# and $, are a literal $, ;, # and ,
 * (README, "The experiment language"). A [matrix] line is split at its separators
 * (',' between values and terms, ';' between exclude rules) before its pieces are
 * un-escaped, so an escaped separator stays inside its value; writing a value back
 * escapes what the reader would take for a separator or a comment.
 */
#ifndef GS_CONFIG_ESCAPE_H
#define GS_CONFIG_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether c is one of the characters $c stands for. */
bool esc_char(char c);
/*
 * Split s in place at each sep that no '$' escapes into at most max trimmed items (empty
 * ones kept, escapes left in them). Returns the number of items, or max + 1 when there
 * are more.
 */
size_t esc_split(char *s, char sep, char **items, size_t max);
/* Replace each escape of s by its character, in place; a '$' before anything else stays. */
void esc_unescape(char *s);
/*
 * v written so that the reader gives v back: a '$' the reader would take for an escape
 * or ${ENV} doubled, and a ';' or '#' that would start a comment (first, or after a
 * blank) escaped. item: v is one value of a [matrix] list or rule, so every ',' and ';'
 * is escaped too, and a '$' that ends it doubled. 0, or -ENOSPC with out cut short.
 */
int esc_quote(const char *v, bool item, char *out, size_t len);

#endif
