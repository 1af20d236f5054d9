/*
 * The verbs of the command line. Each verb is one function taking the arguments
 * after the verb name (argv[0] is the verb) and returning an exit code (enum gs_exit).
 * Adding a verb is one row in main.c's table plus its file here.
 */
#ifndef GS_CMD_CMD_H
#define GS_CMD_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>

int cmd_version(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_keys(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_topo(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_rendezvous(int argc, char **argv);
int cmd_gpu(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_doctor(int argc, char **argv);

/* cmd_args.c: the argv steps verbs share. */
/* The GDR level names in buf, joined by sep, the last by last ("LOC|PIX|...|SYS"). */
void cmd_gdr_levels(char *buf, size_t len, const char *sep, const char *last);
/* --gdr-level ARG of verb: 0 and *level set, or -EINVAL after one line naming the verb. */
int cmd_gdr_level_arg(const char *verb, const char *arg, int *level);

/* An integer option of verb, the whole of arg in min..max (no trailing text, no
 * truncation to int): 0 and *out set, or -EINVAL after one line naming the option. */
int cmd_int_arg(const char *verb, const char *opt, const char *arg, long long min,
		long long max, int *out);

/* A duration option of verb held to the bounds of the INI key section.key whose meaning
 * it has (rendezvous --timeout: [launch] timeout's): 0 and *ns set, or -EINVAL after one
 * line naming the option and the bounds. */
int cmd_duration_arg(const char *verb, const char *opt, const char *arg, const char *section,
		     const char *key, uint64_t *ns);
/* --timeout of a verb whose bound is an input's, a file's or a library probe's
 * (FSB_TIMEOUT_DEFAULT): cmd_duration_arg with [report] write_timeout's bounds. */
int cmd_timeout_arg(const char *verb, const char *arg, uint64_t *ns);

/* The node options of doctor and topo; the caller sets the defaults (root "/sys", timeout
 * fsb_timeout_default_ns()). */
struct cmd_node_args {
	const char *root;     /* --sysfs-root DIR */
	int gdr_level;        /* --gdr-level L */
	bool json;            /* --json */
	uint64_t timeout_ns;  /* --timeout DURATION: each sysfs walk, file and library probe */
};
/* getopt's c: 1 when it was one of the node options (a set), 0 when not, -1 after the
 * error line. Their short letters are j, r:, g: and t:. */
int cmd_node_opt(const char *verb, int c, const char *arg, struct cmd_node_args *a);
/* The value options of one verb seen so far: each is taken once, since the last of
 * two silently replaced the first. */
struct cmd_once {
	const char *names[32];
	int n;
};
/* name is the long option without its dashes: 0 the first time, -EINVAL after the line
 * "gradsync VERB: --NAME given twice" the second. */
int cmd_once(const char *verb, struct cmd_once *once, const char *name);
/* cmd_once for getopt's c when its option takes a value (0 for flags, -h and '?'). */
int cmd_once_getopt(const char *verb, struct cmd_once *once, const struct option *lo, int c);
/* -h (usage on stdout, GS_EXIT_OK) or an option getopt refused (usage on stderr,
 * GS_EXIT_USAGE): the exit code. */
int cmd_opt_other(int c, void (*usage)(FILE *f));
/* 0 when argv has no operand from first on, else -EINVAL after a line naming the first
 * and the usage on stderr. */
int cmd_no_operands(const char *verb, int argc, char **argv, int first,
		    void (*usage)(FILE *f));

#endif
