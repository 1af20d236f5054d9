/*
 * model = trace: replay a training step recorded from a real model
 * ([workload] op_trace = FILE, written by tests/workload/record_op_trace.py; the format is
 * in that script and in the README, "Compute model").
 *
 * The trace's parameters become the tensor list (registration order, shapes, gradient
 * dtypes); each backward segment becomes a layer whose backward takes the recorded
 * microseconds and readies the parameters it lists, so buckets fill exactly as in the
 * recorded job. Forward segments are played, in order, by the first layer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/dtype.h"
#include "util/fsbound.h"
#include "util/log.h"
#include "util/strutil.h"
#include "workload/model.h"

#define TRACE_LINE_MAX 4096
#define TRACE_NUMEL_MAX (1ll << 48) /* elements of one parameter: 1 PiB in f32 */
#define TRACE_MAX_FILE (64ull << 20) /* recorded traces are tens of KiB */

struct seg {
	double us;
	char label[TENSOR_NAME_MAX];
	int nparams;
	char params[LAYER_TENSORS_MAX][TENSOR_NAME_MAX];
};

struct trace {
	struct seg *fwd, *bwd;
	int nfwd, nbwd, cap_f, cap_b;
	int batch; /* the recorded step's batch (a "batch N" line); 0 = not recorded */
};

static int push(struct seg **a, int *n, int *cap, const struct seg *s)
{
	if (*n == *cap) {
		int nc = *cap ? *cap * 2 : 256;
		struct seg *p = realloc(*a, (size_t)nc * sizeof(*p));

		if (!p)
			return -ENOMEM;
		*a = p;
		*cap = nc;
	}
	(*a)[(*n)++] = *s;
	return 0;
}

static int parse_dtype(const char *s, int *out)
{
	if (!s || !strcmp(s, "f32"))
		*out = DT_F32;
	else if (!strcmp(s, "bf16"))
		*out = DT_BF16;
	else if (!strcmp(s, "f16"))
		*out = DT_F16;
	else
		return -EINVAL;
	return 0;
}

/* "param NAME D0,D1,... [DTYPE]": registered on layer 0 for now, moved later. */
static int parse_param(struct tensor_list *tl, char *rest)
{
	char *name = strtok(rest, " \t"), *dims = strtok(NULL, " \t"), *dt = strtok(NULL, " \t");
	int64_t shape[TENSOR_NDIM_MAX], numel = 1;
	int nd = 0, dtype, t;
	char *d, *end;

	if (!name || !dims || parse_dtype(dt, &dtype))
		return -EINVAL;
	for (d = strtok(dims, ","); d; d = strtok(NULL, ",")) {
		long long v;

		errno = 0;
		v = strtoll(d, &end, 10);
		/*
		 * The whole tensor bounded, not only each dimension: 99999999999999999999
		 * was read as LLONG_MAX, 65536,65536,65536,65536 wrapped numel to 0, and
		 * folding many dimensions overflowed.
		 */
		if (*end || errno || v <= 0 || v > TRACE_NUMEL_MAX / numel)
			return -EINVAL;
		numel *= v;
		if (nd == TENSOR_NDIM_MAX) /* fold extra dimensions into the last */
			shape[nd - 1] *= v;
		else
			shape[nd++] = v;
	}
	if (!nd)
		return -EINVAL;
	t = tl_param(tl, 0, nd, shape, "%s", name);
	if (t < 0)
		return tl->err ? tl->err : -EINVAL;
	/* tl_param caps a layer at LAYER_TENSORS_MAX: the placeholder layer is reset below */
	tl->layers[0].ntensors = 0;
	tl->t[t].dtype = dtype == DT_F32 ? TENSOR_DTYPE_GRAD : dtype;
	return 0;
}

static int parse_seg(char *rest, struct seg *s)
{
	char *us = strtok(rest, " \t"), *label = strtok(NULL, " \t"), *p, *end;

	memset(s, 0, sizeof(*s));
	if (!us || !label)
		return -EINVAL;
	s->us = strtod(us, &end);
	if (*end || !(s->us >= 0))
		return -EINVAL;
	snprintf(s->label, sizeof(s->label), "%s", label);
	while ((p = strtok(NULL, " \t"))) {
		if (s->nparams == LAYER_TENSORS_MAX)
			return -E2BIG;
		snprintf(s->params[s->nparams++], TENSOR_NAME_MAX, "%s", p);
	}
	return 0;
}

/* "batch N": the recorded step's per-rank batch, within [workload] batch's own range */
static int parse_batch(char *rest, int *batch)
{
	char *v = strtok(rest, " \t"), *end;
	long b;

	if (!v || strtok(NULL, " \t"))
		return -EINVAL;
	errno = 0;
	b = strtol(v, &end, 10);
	if (*end || errno || b < 1 || b > 65536)
		return -EINVAL;
	*batch = (int)b;
	return 0;
}

static int read_trace(const char *path, struct tensor_list *tl, struct trace *tr)
{
	struct fsb_read r = { .path = path, .max = TRACE_MAX_FILE };
	char line[TRACE_LINE_MAX], why[PATH_MAX + 160];
	int lineno = 0, ret = 0;
	FILE *f;

	/* a regular file only (op_trace = /dev/zero or a FIFO hung check, plan and run),
	 * within the bound of an input read while the experiment loads */
	f = fsb_fopen(&r, fsb_timeout_default_ns(), why, sizeof(why));
	if (!f) {
		tl_reject(tl, "op_trace", "op_trace %s: %s", path, why);
		return -ENOENT;
	}
	/* a placeholder layer holds the parameters while they are read */
	tl_layer(tl, 0, 0, "trace.params");
	while (!ret && fgets(line, sizeof(line), f)) {
		char *s, *hash = strchr(line, '#'), *kw;
		struct seg seg;

		lineno++;
		if (hash)
			*hash = '\0';
		s = str_trim(line);
		if (!*s)
			continue;
		kw = strtok(s, " \t");
		/* the rest of the line; a bare keyword has none (not past its end) */
		s = strtok(NULL, "");
		if (!s)
			s = kw + strlen(kw);
		if (lineno == 1 || !strcmp(kw, "gradsync_op_trace")) {
			if (strcmp(kw, "gradsync_op_trace") || atoi(s) != 1) {
				ret = tl_reject(tl, "op_trace", "%s:%d: not a gradsync_op_trace 1 file", path,
						lineno);
			}
			continue;
		}
		if (!strcmp(kw, "param"))
			ret = parse_param(tl, s);
		else if (!strcmp(kw, "batch") && tr->batch) /* a second one: which is the step's? */
			ret = -EINVAL;
		else if (!strcmp(kw, "batch"))
			ret = parse_batch(s, &tr->batch);
		else if (!strcmp(kw, "fwd") || !strcmp(kw, "bwd"))
			ret = parse_seg(s, &seg) ?: (kw[0] == 'f' ?
				push(&tr->fwd, &tr->nfwd, &tr->cap_f, &seg) :
				push(&tr->bwd, &tr->nbwd, &tr->cap_b, &seg));
		else
			ret = -EINVAL;
		if (ret && ret != -ENOMEM)
			tl_reject(tl, "op_trace", "%s:%d: bad %s line (expected one batch N (1..65536), param NAME DIMS [DTYPE], fwd US LABEL or bwd US LABEL [PARAM...]; at most %d parameters a line)",
				path, lineno, kw, LAYER_TENSORS_MAX);
	}
	fclose(f);
	if (!ret && (!tl->n || !tr->nbwd)) {
		ret = tl_reject(tl, "op_trace", "op_trace %s: no parameters or no backward segments", path);
	}
	return ret;
}

int model_build_trace(const struct model_info *m, const struct workload_opts *w,
		      struct tensor_list *tl)
{
	struct trace tr = { 0 };
	uint8_t *seen = NULL;
	int ret, k, j;

	(void)m;
	if (!w->op_trace[0]) {
		return tl_reject(tl, "op_trace", "model trace: set [workload] op_trace = FILE (tests/workload/record_op_trace.py records one)");
	}
	ret = read_trace(w->op_trace, tl, &tr);
	if (ret)
		goto out;
	/*
	 * The batch only turns the replayed step into samples/s: the trace's own, else the
	 * one the user gives; neither leaves it unknown (0), never a default of ours.
	 */
	if (w->batch_set && tr.batch && w->batch != tr.batch) {
		ret = tl_reject(tl, "batch", "model trace: op_trace %s was recorded at batch %d; batch %d would not change its recorded times (leave batch unset)",
				w->op_trace, tr.batch, w->batch);
		goto out;
	}
	tl->batch = tr.batch ? tr.batch : w->batch_set ? w->batch : 0;
	seen = calloc(tl->n, 1);
	if (!seen) {
		ret = -ENOMEM;
		goto out;
	}
	/* backward segment k (in backward order) is layer nbwd - k in forward order: the
	 * placeholder (layer 0) plays forward and, last in backward, nothing */
	for (k = tr.nbwd - 1; k >= 0; k--) {
		const struct seg *s = &tr.bwd[k];
		struct op o = { .cls = OPC_ELEM, .bwd = 1, .kernels = 1, .fixed_s = s->us * 1e-6,
				.what = "trace.bwd" };
		int l = tl_layer(tl, 0, 0, "%s", s->label);

		tl_op(tl, l, &o);
		for (j = 0; l >= 0 && j < s->nparams; j++) {
			int t = tensor_list_find(tl, s->params[j]);

			if (t < 0 || seen[t]) {
				ret = tl_reject(tl, "op_trace", "op_trace %s: bwd %s: parameter %s %s",
						w->op_trace, s->label, s->params[j],
						t < 0 ? "not declared" : "listed twice");
				goto out;
			}
			seen[t] = 1;
			tl->t[t].layer = (uint32_t)l;
			tl->layers[l].tensors[tl->layers[l].ntensors++] = (uint32_t)t;
		}
	}
	for (uint32_t t = 0; t < tl->n; t++) {
		if (!seen[t]) {
			ret = tl_reject(tl, "op_trace", "op_trace %s: parameter %s is in no bwd line (unused parameters cannot be replayed)",
					w->op_trace, tl->t[t].name);
			goto out;
		}
	}
	for (k = 0; k < tr.nfwd; k++) {
		struct op o = { .cls = OPC_ELEM, .kernels = 1, .fixed_s = tr.fwd[k].us * 1e-6,
				.what = "trace.fwd" };

		tl_op(tl, 0, &o);
	}
	ret = tl->err;
out:
	free(seen);
	free(tr.fwd);
	free(tr.bwd);
	return ret;
}
