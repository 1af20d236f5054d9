/* `gradsync plan --model NAME ...`: print a model's tensors and DDP bucket plan. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "config/experiment.h"
#include "util/common.h"
#include "util/dtype.h"
#include "util/units.h"
#include "workload/model.h"
#include "workload/plan_print.h"
#include "workload/workload.h"


enum {
	OPT_MODEL = 256,
	OPT_BUCKET_CAP,
	OPT_FIRST_BUCKET_CAP,
	OPT_GRAD_DTYPE,
	OPT_BATCH,
	OPT_SEQ_LEN,
	OPT_IMAGE_SIZE,
	OPT_HIDDEN,
	OPT_LAYERS_N,
	OPT_HEADS,
	OPT_KV_HEADS,
	OPT_FFN,
	OPT_VOCAB,
	OPT_LAYERS,
	OPT_TFLOPS,
	OPT_JSON,
	OPT_TENSORS,
	OPT_LIST,
	OPT_HELP,
};

static const struct option plan_options[] = {
	{ "model", required_argument, NULL, OPT_MODEL },
	{ "bucket-cap", required_argument, NULL, OPT_BUCKET_CAP },
	{ "first-bucket-cap", required_argument, NULL, OPT_FIRST_BUCKET_CAP },
	{ "grad-dtype", required_argument, NULL, OPT_GRAD_DTYPE },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "seq-len", required_argument, NULL, OPT_SEQ_LEN },
	{ "image-size", required_argument, NULL, OPT_IMAGE_SIZE },
	{ "hidden-size", required_argument, NULL, OPT_HIDDEN },
	{ "num-layers", required_argument, NULL, OPT_LAYERS_N },
	{ "num-heads", required_argument, NULL, OPT_HEADS },
	{ "num-kv-heads", required_argument, NULL, OPT_KV_HEADS },
	{ "ffn-size", required_argument, NULL, OPT_FFN },
	{ "vocab-size", required_argument, NULL, OPT_VOCAB },
	{ "layers", required_argument, NULL, OPT_LAYERS },
	{ "gpu-tflops", required_argument, NULL, OPT_TFLOPS },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "tensors", no_argument, NULL, OPT_TENSORS },
	{ "list", no_argument, NULL, OPT_LIST },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static void plan_usage(FILE *f)
{
	fputs("usage: gradsync plan --model NAME [--bucket-cap 25MiB] [--first-bucket-cap 1MiB]\n"
	      "         [--grad-dtype f32|bf16|f16|f64] [--batch N] [--seq-len N]\n"
	      "         [--image-size N]\n"
	      "         [--hidden-size N --num-layers N --num-heads N --num-kv-heads N\n"
	      "          --ffn-size N --vocab-size N] [--layers \"name:params[:gflops],...\"]\n"
	      "         [--gpu-tflops X] [--json] [--tensors]\n"
	      "       gradsync plan --list\n"
	      "Prints the model's parameter tensors and PyTorch DDP's bucket plan (as rebuilt\n"
	      "after the first iteration). Zero or absent shape options mean the model's own.\n",
	      f);
}

static void plan_list(FILE *f)
{
	size_t i;

	for (i = 0; i < model_count(); i++) {
		const struct model_info *m = model_at(i);

		fprintf(f, "%-12s %-7s %s\n", m->name, m->family, m->help);
	}
}

static int bad(const char *opt, const char *val, const char *what)
{
	fprintf(stderr, "gradsync plan: --%s '%s': %s\n", opt, val, what);
	return GS_EXIT_USAGE;
}

static int parse_pos_int(const char *opt, const char *val, int *out)
{
	long long v;

	if (units_parse_int(val, &v) || v < 0 || v > INT_MAX)
		return bad(opt, val, "expected a non-negative integer");
	*out = (int)v;
	return 0;
}

static int parse_dtype(const char *val, int *out)
{
	int d;

	for (d = 0; d < DT_COUNT; d++) {
		if (strcmp(dtype_name((enum dtype)d), val) == 0) {
			*out = d;
			return 0;
		}
	}
	return bad("grad-dtype", val, "expected f32, bf16, f16 or f64");
}

/* One option into w; 0 or an exit code. */
static int plan_opt(int c, const char *arg, struct workload_opts *w)
{
	const char *name = plan_options[c - OPT_MODEL].name;
	double tf;

	switch (c) {
	case OPT_MODEL:
		if (strlen(arg) >= sizeof(w->model) || !model_find(arg))
			return bad(name, arg, "unknown model (gradsync plan --list)");
		snprintf(w->model, sizeof(w->model), "%s", arg);
		return 0;
	case OPT_BUCKET_CAP:
		if (units_parse_size(arg, &w->bucket_cap))
			return bad(name, arg, "expected a size");
		return 0;
	case OPT_FIRST_BUCKET_CAP:
		if (units_parse_size(arg, &w->first_bucket_cap))
			return bad(name, arg, "expected a size");
		return 0;
	case OPT_GRAD_DTYPE:
		return parse_dtype(arg, &w->grad_dtype);
	case OPT_BATCH:
		return parse_pos_int(name, arg, &w->batch);
	case OPT_SEQ_LEN:
		return parse_pos_int(name, arg, &w->seq_len);
	case OPT_IMAGE_SIZE:
		return parse_pos_int(name, arg, &w->image_size);
	case OPT_HIDDEN:
		return parse_pos_int(name, arg, &w->hidden_size);
	case OPT_LAYERS_N:
		return parse_pos_int(name, arg, &w->num_layers);
	case OPT_HEADS:
		return parse_pos_int(name, arg, &w->num_heads);
	case OPT_KV_HEADS:
		return parse_pos_int(name, arg, &w->num_kv_heads);
	case OPT_FFN:
		return parse_pos_int(name, arg, &w->ffn_size);
	case OPT_VOCAB:
		return parse_pos_int(name, arg, &w->vocab_size);
	case OPT_LAYERS:
		if (strlen(arg) >= sizeof(w->layers))
			return bad(name, arg, "too long");
		snprintf(w->layers, sizeof(w->layers), "%s", arg);
		return 0;
	case OPT_TFLOPS:
		if (units_parse_double(arg, &tf) || tf <= 0)
			return bad(name, arg, "expected a positive number");
		w->gpu_tflops = tf;
		return 0;
	default:
		return GS_EXIT_USAGE;
	}
}

/* The workload options before the command-line overrides: FILE.ini's first case or, with
 * no file, the key table's defaults. */
static int plan_base(const char *path, struct workload_opts *w)
{
	struct experiment *exp;
	char err[EXP_ERR_MAX];
	struct cfg *c;

	if (!path) {
		c = malloc(sizeof(*c));
		if (!c || cfg_defaults(c, err, sizeof(err))) {
			free(c);
			return GS_EXIT_FAIL;
		}
		*w = c->workload;
		free(c);
		return 0;
	}
	exp = experiment_open(path);
	if (!exp)
		return GS_EXIT_USAGE;
	/* the plan of the first case; a swept model or cap shows with --model/--bucket-cap */
	*w = exp->cases[0].cfg.workload;
	experiment_delete(exp);
	return 0;
}

int cmd_plan(int argc, char **argv)
{
	bool json = false, tensors = false, list = false;
	struct workload_opts w;
	struct {
		int opt;
		char *arg;
	} over[64];
	int c, i, nover = 0, ret;

	/* one getopt pass: options are kept, then applied over FILE.ini or the defaults */
	optind = 0; /* glibc: restart scanning, main() may have used getopt already */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", plan_options, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_TENSORS:
			tensors = true;
			break;
		case OPT_LIST:
			list = true;
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
	ret = plan_base(optind < argc ? argv[optind] : NULL, &w);
	for (i = 0; !ret && i < nover; i++)
		ret = plan_opt(over[i].opt, over[i].arg, &w);
	if (ret)
		return ret;
	if (list) {
		plan_list(stdout);
		return GS_EXIT_OK;
	}
	if (!w.model[0] || !strcmp(w.model, "none")) {
		fprintf(stderr, "gradsync plan: give FILE.ini with a [workload] model, or --model NAME (see --list)\n");
		return GS_EXIT_USAGE;
	}
	ret = plan_print(stdout, &w, json, tensors);
	if (ret == -EINVAL || ret == -ENOENT)
		return GS_EXIT_USAGE; /* the model's builder logged the one-line reason */
	if (ret) {
		fprintf(stderr, "gradsync plan: %s\n", strerror(-ret));
		return GS_EXIT_FAIL;
	}
	return fflush(stdout) ? GS_EXIT_FAIL : GS_EXIT_OK;
}
