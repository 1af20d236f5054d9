/*
 * Typed values of the key table: parse a user's (or a default's) text into struct cfg,
 * format it back canonically, and print the key reference.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <ctype.h>

#include "config/keys.h"
#include "util/common.h"
#include "util/strutil.h"
#include "util/units.h"

#define EXP_LIST_MAX 256

#define FIELD_PTR(c, k) ((char *)(c) + (k)->offset)

static bool bounded(const struct cfg_key *k)
{
	return k->min <= k->max;
}

static void allowed_text(const struct cfg_key *k, char *buf, size_t len);

static int check_bounds(const struct cfg_key *k, double v, const char *text, char *err,
			size_t errlen)
{
	char allowed[80];

	if (!bounded(k) || (v >= k->min && v <= k->max))
		return 0;
	/* the range as `gradsync keys` prints it: sizes and durations in units, integers whole */
	allowed_text(k, allowed, sizeof(allowed));
	snprintf(err, errlen, "%s is out of range (expected %s)", text, allowed);
	return -ERANGE;
}

/* "auto" stands for -1 in integer keys whose range starts at -1 (gid_index). */
static bool int_has_auto(const struct cfg_key *k)
{
	return k->type == CFG_INT && bounded(k) && k->min == -1;
}

static void store_int(const struct cfg_key *k, void *p, long long v)
{
	if (k->size == sizeof(int64_t))
		*(int64_t *)p = v;
	else
		*(int *)p = (int)v;
}

static long long load_int(const struct cfg_key *k, const void *p)
{
	return k->size == sizeof(int64_t) ? *(const int64_t *)p : *(const int *)p;
}

static void choices_expected(const struct cfg_key *k, char *buf, size_t len)
{
	struct cfg_choice c;
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; cfg_key_choice(k, i, &c); i++)
		if (str_appendf(buf, len, &n, "%s%s", i ? ", " : "", c.name))
			break;
}

static int find_choice(const struct cfg_key *k, const char *v, struct cfg_choice *out)
{
	size_t i;

	for (i = 0; cfg_key_choice(k, i, out); i++)
		if (strcasecmp(out->name, v) == 0)
			return 0;
	/* booleans also take the usual spellings */
	if (k->type == CFG_BOOL) {
		static const char *const yes[] = { "true", "yes", "1" }, *const no[] = { "false", "no", "0" };

		for (i = 0; i < ARRAY_SIZE(yes); i++) {
			if (strcasecmp(v, yes[i]) == 0)
				return cfg_key_choice(k, 0, out) ? 0 : -EINVAL;
			if (strcasecmp(v, no[i]) == 0)
				return cfg_key_choice(k, 1, out) ? 0 : -EINVAL;
		}
	}
	return -EINVAL;
}

/* Copy s without surrounding blanks into buf. */
static void trim_copy(char *buf, size_t len, const char *s, size_t n)
{
	while (n && isspace((unsigned char)*s)) {
		s++;
		n--;
	}
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
}

/* One element of a size list: "64KiB" or a range "4KiB..256MiB x2" / "1MiB..4MiB +1MiB". */
static int sizes_add_item(const struct cfg_key *k, uint64_t *arr, int *n, int cap, const char *item,
			  char *err, size_t errlen)
{
	const char *dots = strstr(item, "..");
	uint64_t a, b, step = 0;
	double factor = 0;
	char lo[64], hi[64], st[64];
	int ret;

	if (!dots) {
		if (units_parse_size(item, &a)) {
			snprintf(err, errlen, "bad size '%s' (expected e.g. 4096, 64KiB, 25MiB, 1GB)", item);
			return -EINVAL;
		}
		ret = check_bounds(k, (double)a, item, err, errlen);
		if (ret)
			return ret;
		if (*n >= cap) {
			snprintf(err, errlen, "too many sizes (at most %d)", cap);
			return -ERANGE;
		}
		arr[(*n)++] = a;
		return 0;
	}
	trim_copy(lo, sizeof(lo), item, dots - item);
	{
		const char *rest = dots + 2, *x = strpbrk(rest, "x+");

		if (!x) {
			snprintf(err, errlen, "range '%s' needs a step (expected A..B x2 or A..B +1MiB)",
				 item);
			return -EINVAL;
		}
		trim_copy(hi, sizeof(hi), rest, x - rest);
		trim_copy(st, sizeof(st), x + 1, strlen(x + 1));
		if (units_parse_size(lo, &a) || units_parse_size(hi, &b)) {
			snprintf(err, errlen, "bad range '%s' (expected e.g. 4KiB..256MiB x2)", item);
			return -EINVAL;
		}
		if (*x == 'x') {
			if (units_parse_double(st, &factor) || factor <= 1.0) {
				snprintf(err, errlen, "bad factor in '%s' (expected a number > 1 after x)",
					 item);
				return -EINVAL;
			}
		} else if (units_parse_size(st, &step) || step == 0) {
			snprintf(err, errlen, "bad step in '%s' (expected a size > 0 after +)", item);
			return -EINVAL;
		}
	}
	if (a > b || a == 0) {
		snprintf(err, errlen, "empty range '%s' (expected 0 < A <= B)", item);
		return -EINVAL;
	}
	while (a <= b) {
		char one[32];

		ret = sizes_add_item(k, arr, n, cap, units_fmt_size(a, one, sizeof(one)), err, errlen);
		if (ret)
			return ret;
		if (factor > 0) {
			uint64_t next = (uint64_t)llround((double)a * factor);

			a = next > a ? next : a + 1;
		} else {
			a += step;
		}
	}
	return 0;
}

/* A comma-separated list of sizes/ranges or integers into the key's array. */
static int list_parse(const struct cfg_key *k, struct cfg *c, const char *value, char *err,
		      size_t errlen)
{
	char *copy = strdup(value), *items[EXP_LIST_MAX];
	int n = 0, cap = (int)(k->size / (k->type == CFG_SIZES ? sizeof(uint64_t) : sizeof(int)));
	size_t i, nitems;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	nitems = *value ? str_split(copy, ',', items, ARRAY_SIZE(items)) : 0;
	if (nitems > ARRAY_SIZE(items)) {
		snprintf(err, errlen, "too many values (at most %d)", cap);
		free(copy);
		return -ERANGE;
	}
	for (i = 0; i < nitems && !ret; i++) {
		const char *item = items[i];
		long long v;

		if (!*item) {
			snprintf(err, errlen, "empty element in list '%s'", value);
			ret = -EINVAL;
		} else if (k->type == CFG_SIZES) {
			ret = sizes_add_item(k, (uint64_t *)FIELD_PTR(c, k), &n, cap, item, err, errlen);
		} else if (units_parse_int(item, &v)) {
			snprintf(err, errlen, "bad integer '%s' in list", item);
			ret = -EINVAL;
		} else if (!(ret = check_bounds(k, (double)v, item, err, errlen))) {
			if (n >= cap) {
				snprintf(err, errlen, "too many values (at most %d)", cap);
				ret = -ERANGE;
			} else {
				((int *)FIELD_PTR(c, k))[n++] = (int)v;
			}
		}
	}
	free(copy);
	/* a value twice was measured twice and shown once (the tables key rows by value) */
	for (int a = 1; a < n && !ret; a++) {
		for (int b = 0; b < a && !ret; b++) {
			char v[32];

			if (k->type == CFG_SIZES ?
				    ((uint64_t *)FIELD_PTR(c, k))[a] != ((uint64_t *)FIELD_PTR(c, k))[b] :
				    ((int *)FIELD_PTR(c, k))[a] != ((int *)FIELD_PTR(c, k))[b])
				continue;
			if (k->type == CFG_SIZES)
				units_fmt_size(((uint64_t *)FIELD_PTR(c, k))[a], v, sizeof(v));
			else
				snprintf(v, sizeof(v), "%d", ((int *)FIELD_PTR(c, k))[a]);
			snprintf(err, errlen, "%s is in the list twice (ranges included)", v);
			ret = -EINVAL;
		}
	}
	if (!ret)
		*(int *)((char *)c + k->count_offset) = n;
	return ret;
}

/* Names of a vocabulary, comma separated, each checked, stored joined with ",". */
static int names_parse(const struct cfg_key *k, struct cfg *c, const char *value, char *err,
		       size_t errlen)
{
	char out[512] = "", item[64], exp[256];
	const char *p = value;
	size_t n = 0;

	while (*p) {
		const char *comma = strchr(p, ',');
		size_t l = comma ? (size_t)(comma - p) : strlen(p);
		struct cfg_choice ch;

		trim_copy(item, sizeof(item), p, l);
		if (!*item || find_choice(k, item, &ch)) {
			choices_expected(k, exp, sizeof(exp));
			snprintf(err, errlen, "unknown value '%s' (expected a list of: %s)", item, exp);
			return -EINVAL;
		}
		str_appendf(out, sizeof(out), &n, "%s%s", n ? "," : "", ch.name);
		p += l;
		if (*p == ',')
			p++;
	}
	if (str_truncated(sizeof(out), n) || n >= k->size) {
		snprintf(err, errlen, "value too long (at most %zu characters)", k->size - 1);
		return -ERANGE;
	}
	memcpy(FIELD_PTR(c, k), out, n + 1);
	return 0;
}

static int value_set(struct cfg *c, const struct cfg_key *k, const char *value, char *err,
		     size_t errlen);

int cfg_value_set(struct cfg *c, const struct cfg_key *k, const char *value, char *err,
		  size_t errlen)
{
	int ret = value_set(c, k, value, err, errlen);

	/* keys whose defaults depend on whether the user gave them record that they did */
	if (!ret && k->set_offset)
		*(bool *)((char *)c + k->set_offset) = true;
	return ret;
}

static int value_set(struct cfg *c, const struct cfg_key *k, const char *value, char *err,
		     size_t errlen)
{
	void *p = FIELD_PTR(c, k);
	char exp[512], home[4096];
	struct cfg_choice ch;
	long long iv;
	uint64_t uv;
	double dv;
	int ret;

	switch (k->type) {
	case CFG_INT:
		if (int_has_auto(k) && strcasecmp(value, "auto") == 0) {
			store_int(k, p, -1);
			return 0;
		}
		if (units_parse_int(value, &iv)) {
			char allowed[80];

			allowed_text(k, allowed, sizeof(allowed));
			snprintf(err, errlen, "'%s' is not an integer (expected %s)", value,
				 allowed[0] ? allowed : "an integer");
			return -EINVAL;
		}
		ret = check_bounds(k, (double)iv, value, err, errlen);
		if (!ret)
			store_int(k, p, iv);
		return ret;
	case CFG_FLOAT:
		if (units_parse_double(value, &dv)) {
			snprintf(err, errlen, "'%s' is not a number (expected %g..%g)", value, k->min,
				 k->max);
			return -EINVAL;
		}
		ret = check_bounds(k, dv, value, err, errlen);
		if (!ret)
			*(double *)p = dv;
		return ret;
	case CFG_SIZE:
		if (k->size_auto && strcasecmp(value, "auto") == 0) {
			*(uint64_t *)p = 0;
			return 0;
		}
		if (units_parse_size(value, &uv)) {
			snprintf(err, errlen, "bad size '%s' (expected %se.g. 4096, 64KiB, 25MiB, 1GB)",
				 value, k->size_auto ? "auto or " : "");
			return -EINVAL;
		}
		ret = check_bounds(k, (double)uv, value, err, errlen);
		if (!ret)
			*(uint64_t *)p = uv;
		return ret;
	case CFG_DURATION:
		if (k->size_auto && strcasecmp(value, "auto") == 0) {
			*(uint64_t *)p = CFG_DURATION_AUTO;
			return 0;
		}
		if (strcmp(value, "0") == 0) { /* no unit needed for nothing */
			uv = 0;
			ret = check_bounds(k, 0, value, err, errlen);
			if (!ret)
				*(uint64_t *)p = 0;
			return ret;
		}
		if (units_parse_duration(value, &uv)) {
			snprintf(err, errlen, "bad duration '%s' (expected e.g. 500us, 2ms, 10s, 5m)",
				 value);
			return -EINVAL;
		}
		ret = check_bounds(k, (double)uv, value, err, errlen);
		if (!ret)
			*(uint64_t *)p = uv;
		return ret;
	case CFG_BOOL:
	case CFG_ENUM:
		if (find_choice(k, value, &ch)) {
			choices_expected(k, exp, sizeof(exp));
			snprintf(err, errlen, "unknown value '%s' (expected one of: %s)", value, exp);
			return -EINVAL;
		}
		if (k->type == CFG_BOOL)
			*(bool *)p = ch.value != 0;
		else if (k->size > sizeof(int)) /* enums stored by name (models) */
			snprintf(p, k->size, "%s", ch.name);
		else
			*(int *)p = ch.value;
		return 0;
	case CFG_STRING:
		/* ~/ as a shell would: output_dir = ~/results made a directory named '~' */
		if (k->path && !strncmp(value, "~/", 2) && getenv("HOME")) {
			snprintf(home, sizeof(home), "%s/%s", getenv("HOME"), value + 2);
			value = home;
		}
		if (strlen(value) >= k->size) {
			snprintf(err, errlen, "value too long (%zu characters, at most %zu)",
				 strlen(value), k->size - 1);
			return -ERANGE;
		}
		/*
		 * Empty is "unset" only where the default is empty (layers, min_busbw); the
		 * other checks judge it: name = "" named the run directory "-<time>".
		 */
		if (k->check && (*value || *k->def)) {
			ret = k->check(value, err, errlen);
			if (ret)
				return ret;
		}
		memcpy(p, value, strlen(value) + 1);
		return 0;
	case CFG_SIZES:
	case CFG_INTS:
		if (!*value && k->type == CFG_SIZES) {
			snprintf(err, errlen, "empty list (expected at least one size)");
			return -EINVAL;
		}
		return list_parse(k, c, value, err, errlen);
	case CFG_LIST:
		return names_parse(k, c, value, err, errlen);
	}
	return -EINVAL;
}

bool cfg_value_redacted(const struct cfg *c, const struct cfg_key *k)
{
	return k->secret && *((const char *)c + k->offset);
}

void cfg_value_format(const struct cfg *c, const struct cfg_key *k, char *buf, size_t len)
{
	const void *p = (const char *)c + k->offset;
	struct cfg_choice ch;
	size_t i, n = 0;
	int cnt;

	buf[0] = '\0';
	switch (k->type) {
	case CFG_INT:
		if (int_has_auto(k) && load_int(k, p) == -1)
			snprintf(buf, len, "auto");
		else
			snprintf(buf, len, "%lld", load_int(k, p));
		break;
	case CFG_FLOAT:
		snprintf(buf, len, "%g", *(const double *)p);
		break;
	case CFG_SIZE:
		if (k->size_auto && !*(const uint64_t *)p)
			snprintf(buf, len, "auto");
		else
			units_fmt_size(*(const uint64_t *)p, buf, len);
		break;
	case CFG_DURATION:
		if (k->size_auto && *(const uint64_t *)p == CFG_DURATION_AUTO)
			snprintf(buf, len, "auto");
		else
			units_fmt_duration(*(const uint64_t *)p, buf, len);
		break;
	case CFG_BOOL:
		snprintf(buf, len, "%s", *(const bool *)p ? "on" : "off");
		break;
	case CFG_ENUM:
		if (k->size > sizeof(int)) {
			snprintf(buf, len, "%s", (const char *)p);
			break;
		}
		for (i = 0; cfg_key_choice(k, i, &ch); i++)
			if (ch.value == *(const int *)p)
				snprintf(buf, len, "%s", ch.name);
		break;
	case CFG_STRING:
	case CFG_LIST:
		/* a secret never leaves the process: reports, echoes and resolved files */
		snprintf(buf, len, "%s", cfg_value_redacted(c, k) ? LAUNCH_REDACTED : (const char *)p);
		break;
	case CFG_SIZES:
	case CFG_INTS:
		cnt = *(const int *)((const char *)c + k->count_offset);
		for (i = 0; i < (size_t)cnt && !str_truncated(len, n); i++) {
			char one[32];

			if (k->type == CFG_SIZES)
				units_fmt_size(((const uint64_t *)p)[i], one, sizeof(one));
			else
				snprintf(one, sizeof(one), "%d", ((const int *)p)[i]);
			str_appendf(buf, len, &n, "%s%s", i ? "," : "", one);
		}
		break;
	}
}

int cfg_defaults(struct cfg *c, char *err, size_t errlen)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < cfg_key_count(); i++) {
		const struct cfg_key *k = cfg_key_at(i);
		char e[256];

		if (k->type == CFG_INTS && !*k->def)
			continue; /* empty list */
		/* value_set: a default is not a value the user gave (set_offset stays false) */
		if (value_set(c, k, k->def, e, sizeof(e))) {
			snprintf(err, errlen, "default of %s.%s: %s", k->section, k->name, e);
			return -EINVAL;
		}
	}
	return 0;
}

static const char *type_name(const struct cfg_key *k)
{
	static const char *const names[] = {
		[CFG_INT] = "integer", [CFG_FLOAT] = "number", [CFG_SIZE] = "size",
		[CFG_DURATION] = "duration", [CFG_BOOL] = "boolean", [CFG_ENUM] = "enum",
		[CFG_STRING] = "string", [CFG_SIZES] = "size list", [CFG_INTS] = "integer list",
		[CFG_LIST] = "list",
	};
	return names[k->type];
}

static void allowed_text(const struct cfg_key *k, char *buf, size_t len)
{
	char a[32], b[32];

	buf[0] = '\0';
	if (cfg_key_nchoices(k)) {
		choices_expected(k, buf, len);
	} else if (bounded(k)) {
		if (k->type == CFG_SIZE || k->type == CFG_SIZES)
			snprintf(buf, len, "%s..%s", units_fmt_size((uint64_t)k->min, a, sizeof(a)),
				 units_fmt_size((uint64_t)k->max, b, sizeof(b)));
		else if (k->type == CFG_DURATION)
			snprintf(buf, len, "%s..%s",
				 units_fmt_duration((uint64_t)k->min, a, sizeof(a)),
				 units_fmt_duration((uint64_t)k->max, b, sizeof(b)));
		else if (k->type == CFG_FLOAT)
			snprintf(buf, len, "%g..%g", k->min, k->max);
		else
			snprintf(buf, len, "%s%.0f..%.0f", int_has_auto(k) ? "auto, " : "", k->min,
				 k->max);
	}
}

/* [matrix] has no keys of its own: what it takes, and the keys it may sweep. */
static void matrix_keys_print(FILE *out)
{
	size_t i, col = 2;

	fprintf(out, "[matrix]\n"
		     "  KEY = V1, V2, ...    sweep a sweepable key (its bare name when unique, else\n"
		     "                       section.key); the cases are the product of the axes\n"
		     "  baseline = K=V,...   the reference case of the speed-ups\n"
		     "  exclude = K=V,...    drop those combinations (';' between rules, repeatable)\n"
		     "  a value holding ',' or ';' (cpus:0,2) writes it $, or $; (cpus:0$,2)\n"
		     "sweepable keys:\n ");
	for (i = 0; i < cfg_key_count(); i++) {
		const struct cfg_key *k = cfg_key_at(i);
		int n;

		if (!k->sweepable)
			continue;
		if (col > 80) {
			fprintf(out, "\n ");
			col = 2;
		}
		n = fprintf(out, " %s.%s", k->section, k->name);
		col += n > 0 ? (size_t)n : 0;
	}
	fprintf(out, "\n");
}

void cfg_keys_print(FILE *out, const char *section, bool markdown)
{
	const char *cur = "";
	size_t i, printed = 0;

	if (section && !strcmp(section, "matrix")) {
		matrix_keys_print(out);
		return;
	}

	for (i = 0; i < cfg_key_count(); i++) {
		const struct cfg_key *k = cfg_key_at(i);
		char allowed[512];

		if (section && strcmp(section, k->section))
			continue;
		allowed_text(k, allowed, sizeof(allowed));
		if (strcmp(cur, k->section)) {
			cur = k->section;
			if (markdown)
				fprintf(out, "\n### [%s]\n\n| key | type | unit | default | allowed | sweep | help |\n|---|---|---|---|---|---|---|\n",
					cur);
			else
				fprintf(out, "%s[%s]\n", printed ? "\n" : "", cur);
			printed++;
		}
		if (markdown)
			fprintf(out, "| `%s` | %s | %s | `%s` | %s | %s | %s |\n", k->name,
				type_name(k), k->unit, k->def, allowed, k->sweepable ? "yes" : "no",
				k->help);
		else
			fprintf(out, "  %-18s %-12s default %-24s%s%s%s\n      %s\n", k->name,
				type_name(k), *k->def ? k->def : "\"\"", *allowed ? " allowed " : "",
				allowed, k->sweepable ? " (sweepable)" : "", k->help);
	}
}
