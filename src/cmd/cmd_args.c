/*
 * The argv steps several verbs share: the node options of doctor and topo (--json,
 * --sysfs-root, --gdr-level, --timeout), integer and duration values, -h and unknown options,
 * options given twice and stray operands. One error line each, naming the verb.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "config/keys.h"
#include "topo/gdr.h"
#include "util/common.h"
#include "util/strutil.h"
#include "util/units.h"

void cmd_gdr_levels(char *buf, size_t len, const char *sep, const char *last)
{
	const struct gdr_name_row *r;
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; (r = gdr_level_at(i)); i++)
		str_appendf(buf, len, &off, "%s%s", !i ? "" : gdr_level_at(i + 1) ? sep : last,
			    r->name);
}

int cmd_gdr_level_arg(const char *verb, const char *arg, int *level)
{
	char names[64];

	if (!gdr_level_parse(arg, level))
		return 0;
	cmd_gdr_levels(names, sizeof(names), ", ", " or ");
	fprintf(stderr, "gradsync %s: --gdr-level '%s': expected %s\n", verb, arg, names);
	return -EINVAL;
}

int cmd_int_arg(const char *verb, const char *opt, const char *arg, long long min,
		long long max, int *out)
{
	long long v;

	if (units_parse_int(arg, &v) || v < min || v > max) {
		fprintf(stderr, "gradsync %s: %s '%s': expected an integer %lld..%lld\n", verb, opt,
			arg, min, max);
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

int cmd_duration_arg(const char *verb, const char *opt, const char *arg, const char *section,
		     const char *key, uint64_t *ns)
{
	const struct cfg_key *k = cfg_key_find(section, key);
	char lo[32], hi[32];

	if (!units_parse_duration(arg, ns) && (double)*ns >= k->min && (double)*ns <= k->max)
		return 0;
	fprintf(stderr, "gradsync %s: %s '%s': expected a duration %s..%s such as %s\n", verb, opt,
		arg, units_fmt_duration((uint64_t)k->min, lo, sizeof(lo)),
		units_fmt_duration((uint64_t)k->max, hi, sizeof(hi)), k->def);
	return -EINVAL;
}

int cmd_timeout_arg(const char *verb, const char *arg, uint64_t *ns)
{
	/* FSB_TIMEOUT_DEFAULT is write_timeout's default: the bound it is, its bounds */
	return cmd_duration_arg(verb, "--timeout", arg, "report", "write_timeout", ns);
}

int cmd_node_opt(const char *verb, int c, const char *arg, struct cmd_node_args *a)
{
	switch (c) {
	case 't':
		return cmd_timeout_arg(verb, arg, &a->timeout_ns) ? -1 : 1;
	case 'j':
		a->json = true;
		return 1;
	case 'r':
		a->root = arg;
		return 1;
	case 'g':
		return cmd_gdr_level_arg(verb, arg, &a->gdr_level) ? -1 : 1;
	default:
		return 0;
	}
}

int cmd_opt_other(int c, void (*usage)(FILE *f))
{
	if (c == 'h') {
		usage(stdout);
		return GS_EXIT_OK;
	}
	usage(stderr); /* getopt named the option */
	return GS_EXIT_USAGE;
}

int cmd_no_operands(const char *verb, int argc, char **argv, int first,
		    void (*usage)(FILE *f))
{
	if (first >= argc)
		return 0;
	fprintf(stderr, "gradsync %s: unexpected argument '%s'\n", verb, argv[first]);
	usage(stderr);
	return -EINVAL;
}

int cmd_once(const char *verb, struct cmd_once *once, const char *name)
{
	for (int i = 0; i < once->n; i++) {
		if (strcmp(once->names[i], name))
			continue;
		fprintf(stderr, "gradsync %s: --%s given twice: give it once\n", verb, name);
		return -EINVAL;
	}
	if (once->n < (int)ARRAY_SIZE(once->names))
		once->names[once->n++] = name;
	return 0;
}

int cmd_once_getopt(const char *verb, struct cmd_once *once, const struct option *lo, int c)
{
	for (; lo->name; lo++)
		if (lo->val == c && lo->has_arg != no_argument)
			return cmd_once(verb, once, lo->name);
	return 0;
}
