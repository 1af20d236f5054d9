/* `gradsync plan --model NAME ...`: print a model's tensors and DDP bucket plan. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "config/experiment.h"
#include "config/keys.h"
#include "util/common.h"
#include "util/dtype.h"
#include "util/units.h"
#include "workload/model.h"
#include "workload/plan_print.h"
#include "workload/workload.h"


/*
 * Every value flag is a key of the table (config/keys.c), parsed and bounded by it:
 * --bucket-cap 25MiB is [workload] bucket_cap = 25MiB, --gpu-profile is [gpu] profile.
 */
struct plan_flag {
	const char *flag;
	const char *section;
	const char *key;
};

static const struct plan_flag plan_flags[] = {
	{ "model", "workload", "model" },
	{ "bucket-cap", "workload", "bucket_cap" },
	{ "first-bucket-cap", "workload", "first_bucket_cap" },
	{ "grad-dtype", "workload", "grad_dtype" },
	{ "batch", "workload", "batch" },
	{ "seq-len", "workload", "seq_len" },
	{ "image-size", "workload", "image_size" },
	{ "hidden-size", "workload", "hidden_size" },
	{ "num-layers", "workload", "num_layers" },
	{ "num-heads", "workload", "num_heads" },
	{ "num-kv-heads", "workload", "num_kv_heads" },
	{ "ffn-size", "workload", "ffn_size" },
	{ "vocab-size", "workload", "vocab_size" },
	{ "layers", "workload", "layers" },
	{ "op-trace", "workload", "op_trace" },
	{ "gpu-tflops", "workload", "gpu_tflops" },
	{ "precision", "workload", "precision" },
	{ "launch-gap", "workload", "launch_gap" },
	{ "gpu-profile", "gpu", "profile" },
};

enum { OPT_JSON = 256, OPT_TENSORS, OPT_OPS, OPT_LIST, OPT_HELP, OPT_CASE, OPT_FLAG0 };

#define NFLAGS ARRAY_SIZE(plan_flags)

static void plan_options(struct option *o)
{
	size_t i;

	for (i = 0; i < NFLAGS; i++)
		o[i] = (struct option){ plan_flags[i].flag, required_argument, NULL,
					(int)(OPT_FLAG0 + i) };
	o[i++] = (struct option){ "json", no_argument, NULL, OPT_JSON };
	o[i++] = (struct option){ "tensors", no_argument, NULL, OPT_TENSORS };
	o[i++] = (struct option){ "ops", no_argument, NULL, OPT_OPS };
	o[i++] = (struct option){ "list", no_argument, NULL, OPT_LIST };
	o[i++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	o[i++] = (struct option){ "case", required_argument, NULL, OPT_CASE };
	o[i] = (struct option){ NULL, 0, NULL, 0 };
}

static void plan_usage(FILE *f)
{
	fputs("usage: gradsync plan [FILE.ini [--case N]] [--model NAME] [--KEY VALUE ...] [--json]\n"
	      "         [--tensors] [--ops]\n"
	      "       gradsync plan --list\n"
	      "FILE.ini with a [matrix]: case N (1-based, as 'gradsync check' numbers them), else\n"
	      "the first case with a model (said on stderr).\n"
	      "Prints the model's parameter tensors, PyTorch DDP's bucket plan (as rebuilt\n"
	      "after the first iteration) and the modelled step: forward and backward time,\n"
	      "gradient-ready order and each bucket's ready time (--ops: every operator).\n"
	      "Flags are [workload] / [gpu] keys, with the key table's bounds and help:\n", f);
	for (size_t i = 0; i < NFLAGS; i++) {
		const struct cfg_key *k = cfg_key_find(plan_flags[i].section, plan_flags[i].key);

		fprintf(f, "  --%-17s %s.%s: %s\n", plan_flags[i].flag, plan_flags[i].section,
			plan_flags[i].key, k ? k->help : "");
	}
}

/* The model table, as text or (json) [{"name", "family", "help"}]. */
static int plan_list(FILE *f, bool json)
{
	json_t *arr = json ? json_array() : NULL;
	int err = json && !arr;
	size_t i;

	for (i = 0; i < model_count() && !err; i++) {
		const struct model_info *m = model_at(i);

		if (json)
			err = json_array_append_new(arr, json_pack("{s:s, s:s, s:s}", "name",
								   m->name, "family", m->family,
								   "help", m->help));
		else
			fprintf(f, "%-12s %-7s %s\n", m->name, m->family, m->help);
	}
	if (json && !err) {
		err = json_dumpf(arr, f, JSON_COMPACT);
		fputc('\n', f);
	}
	json_decref(arr);
	return err ? GS_EXIT_FAIL : GS_EXIT_OK;
}

/* One flag into c through the key table; 0 or an exit code. */
static int plan_opt(size_t i, const char *arg, struct cfg *c)
{
	const struct plan_flag *pf = &plan_flags[i];
	const struct cfg_key *k = cfg_key_find(pf->section, pf->key);
	char err[256];

	if (!k || cfg_value_set(c, k, arg, err, sizeof(err))) {
		fprintf(stderr, "gradsync plan: --%s '%s': %s\n", pf->flag, arg,
			k ? err : "no such key");
		return GS_EXIT_USAGE;
	}
	return 0;
}

struct plan_over {
	int opt;
	char *arg;
};

/*
 * The configuration before the command-line overrides: with no file, the key table's
 * defaults; else FILE.ini's case `which` (0-based, -1: the first case with a model, the
 * choice said on stderr when the matrix has more).
 */
static int plan_base(const char *path, int which, struct cfg *c)
{
	struct experiment *exp;
	char err[EXP_ERR_MAX];
	size_t i = 0;

	if (!path)
		return cfg_defaults(c, err, sizeof(err)) ? GS_EXIT_FAIL : 0;
	exp = experiment_open(path);
	if (!exp)
		return GS_EXIT_USAGE;
	if (which >= 0 && (size_t)which >= exp->ncases) {
		fprintf(stderr, "gradsync plan: --case %d: %s has %zu case%s\n", which + 1, path,
			exp->ncases, exp->ncases == 1 ? "" : "s");
		experiment_delete(exp);
		return GS_EXIT_USAGE;
	}
	if (which >= 0)
		i = (size_t)which;
	else
		while (i < exp->ncases && !workload_has_model(&exp->cases[i].cfg.workload))
			i++;
	if (i == exp->ncases) /* no case has a model: plan_run says so */
		i = 0;
	if (which < 0 && exp->ncases > 1)
		fprintf(stderr, "gradsync plan: %s has %zu cases: case %zu (%s); --case N plans "
			"another\n", path, exp->ncases, i + 1, exp->cases[i].name);
	*c = exp->cases[i].cfg;
	experiment_delete(exp);
	return 0;
}

/* A flag the model does not read (--seq-len for a ResNet) is said, not dropped unsaid. */
static void plan_unread(const struct workload_opts *w, const struct plan_over *over, int nover)
{
	char fam[96];
	int i;

	for (i = 0; i < nover; i++) {
		const struct plan_flag *pf = &plan_flags[over[i].opt - OPT_FLAG0];

		if (strcmp(pf->section, "workload") || model_reads_key(w->model, pf->key))
			continue;
		model_key_families(pf->key, fam, sizeof(fam));
		fprintf(stderr, "gradsync plan: warning: --%s: model %s does not read it "
			"(families that do: %s)\n", pf->flag, w->model, fam);
	}
}

static int plan_run(const struct workload_opts *wp, bool list, bool json, bool tensors,
		    bool ops);

/*
 * A model that refuses its shape is named by the flag that gave the refused value
 * ("--seq-len '2048': ..."), else by its key (FILE.ini's, or a default's); 0 or an exit code.
 */
static int plan_check_model(const struct workload_opts *w, const struct plan_over *over,
			    int nover)
{
	const char *key;
	char e[512];
	int i;

	if (!w->model[0] || !workload_has_model(w) || !model_check(w, &key, e, sizeof(e)))
		return 0;
	for (i = nover; key && i-- > 0;) {
		const struct plan_flag *pf = &plan_flags[over[i].opt - OPT_FLAG0];

		if (!strcmp(pf->section, "workload") && !strcmp(pf->key, key)) {
			fprintf(stderr, "gradsync plan: --%s '%s': %s\n", pf->flag, over[i].arg, e);
			return GS_EXIT_USAGE;
		}
	}
	if (key)
		fprintf(stderr, "gradsync plan: workload.%s: %s\n", key, e);
	else
		fprintf(stderr, "gradsync plan: %s\n", e);
	return GS_EXIT_USAGE;
}

int cmd_plan(int argc, char **argv)
{
	bool json = false, tensors = false, ops = false, list = false;
	struct option options[NFLAGS + 7];
	struct cfg *cfg;
	struct plan_over over[64];
	struct cmd_once once = { .n = 0 };
	int c, i, nover = 0, ret, which = -1;
	long v;
	char *end;

	/* one getopt pass: options are kept, then applied over FILE.ini or the defaults */
	optind = 0; /* glibc: restart scanning, main() may have used getopt already */
	opterr = 0;
	plan_options(options);
	while ((c = getopt_long(argc, argv, "h", options, NULL)) != -1) {
		if (cmd_once_getopt("plan", &once, options, c))
			return GS_EXIT_USAGE;
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_TENSORS:
			tensors = true;
			break;
		case OPT_OPS:
			ops = true;
			break;
		case OPT_LIST:
			list = true;
			break;
		case OPT_CASE:
			v = strtol(optarg, &end, 10);
			if (*end || end == optarg || v < 1 || v > INT_MAX) {
				fprintf(stderr, "gradsync plan: --case '%s': expected a case number "
					"from 1 (see gradsync check)\n", optarg);
				return GS_EXIT_USAGE;
			}
			which = (int)v - 1;
			break;
		case 'h':
		case OPT_HELP:
			plan_usage(stdout);
			return GS_EXIT_OK;
		case '?':
		case ':':
			fprintf(stderr,
				"gradsync plan: bad or incomplete option '%s' (see --help)\n",
				argv[optind - 1]);
			return GS_EXIT_USAGE;
		default:
			if (nover == (int)ARRAY_SIZE(over)) {
				fprintf(stderr, "gradsync plan: too many options\n");
				return GS_EXIT_USAGE;
			}
			over[nover].opt = c;
			over[nover++].arg = optarg;
		}
	}
	/* getopt_long moved the operands last: at most one, the experiment file */
	if (optind < argc - 1) {
		fprintf(stderr, "gradsync plan: unexpected argument '%s' (see --help)\n",
			argv[optind + 1]);
		return GS_EXIT_USAGE;
	}
	if (list && (nover || which >= 0 || optind < argc || tensors || ops)) {
		fprintf(stderr, "gradsync plan: --list lists the models and takes only --json\n");
		return GS_EXIT_USAGE;
	}
	cfg = malloc(sizeof(*cfg));
	if (!cfg)
		return GS_EXIT_FAIL;
	if (which >= 0 && optind >= argc) {
		fprintf(stderr, "gradsync plan: --case goes with FILE.ini\n");
		free(cfg);
		return GS_EXIT_USAGE;
	}
	ret = plan_base(optind < argc ? argv[optind] : NULL, which, cfg);
	for (i = 0; !ret && i < nover; i++)
		ret = plan_opt((size_t)(over[i].opt - OPT_FLAG0), over[i].arg, cfg);
	if (!ret && !list)
		ret = plan_check_model(&cfg->workload, over, nover);
	if (!ret && !list)
		plan_unread(&cfg->workload, over, nover);
	if (!ret)
		ret = plan_run(&cfg->workload, list, json, tensors, ops);
	free(cfg);
	return ret;
}

static int plan_run(const struct workload_opts *wp, bool list, bool json, bool tensors, bool ops)
{
	struct workload_opts w = *wp;
	int ret;

	if (list)
		return plan_list(stdout, json);
	if (!w.model[0] || !workload_has_model(&w)) {
		fprintf(stderr, "gradsync plan: give FILE.ini with a [workload] model, or --model NAME (see --list)\n");
		return GS_EXIT_USAGE;
	}
	ret = plan_print(stdout, &w, json, tensors, ops);
	if (ret == -EINVAL || ret == -ENOENT || ret == -ERANGE)
		return GS_EXIT_USAGE; /* the model's builder or its timeline logged the reason */
	if (ret) {
		fprintf(stderr, "gradsync plan: %s\n", strerror(-ret));
		return GS_EXIT_FAIL;
	}
	return fflush(stdout) ? GS_EXIT_FAIL : GS_EXIT_OK;
}
