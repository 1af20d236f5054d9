/*
 * Vocabularies of enum keys that belong to lower layers, and the syntax checks of
 * string keys. The names come from the owning layer's table so they never drift.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>

#include "config/keys.h"
#include "config/vocab.h"
#include "util/common.h"
#include "util/dtype.h"
#include "util/units.h"
#include "util/threshold.h"
#include "workload/costmodel.h"
#include "workload/gpu_profile.h"
#include "workload/model.h"
#include "workload/workload.h"
#include "coll/coll.h"
#include "coll/schedule.h"
#include "launch/launch.h"
#include "topo/gdr.h"

/* Transport names: the transport layer's table of enum transport_kind (transport.c). */
bool vocab_transport_at(size_t i, struct cfg_choice *out)
{
	const struct transport_kind_row *k = transport_kind_at(i);

	if (!k)
		return false;
	*out = (struct cfg_choice){ k->name, k->kind, k->help };
	return true;
}

int vocab_check_name(const char *value, char *err, size_t errlen)
{
	const char *p;

	if (!*value)
		goto bad;
	for (p = value; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
			goto bad;
	return 0;
bad:
	snprintf(err, errlen, "bad name '%s' (expected letters, digits, '_', '.', '-')", value);
	return -EINVAL;
}

/* A directory to write into: not empty, which joined to "/name" meant the root. */
int vocab_check_dir(const char *value, char *err, size_t errlen)
{
	if (*value)
		return 0;
	snprintf(err, errlen, "empty directory (expected a path; '.' for the working directory)");
	return -EINVAL;
}

/* [launch] rendezvous: empty (rank 0 picks) or HOST:PORT, checked when the file is read
 * (a bad port failed every rank at start, naming GRADSYNC_RENDEZVOUS). */
int vocab_check_rendezvous(const char *value, char *err, size_t errlen)
{
	if (!*value || launch_rendezvous_valid(value))
		return 0;
	snprintf(err, errlen, "'%s': expected HOST:PORT, PORT 1..65535", value);
	return -EINVAL;
}

/* "auto", "mlx5_0" or "mlx5_0:1". */
int vocab_check_ibdev(const char *value, char *err, size_t errlen)
{
	const char *colon = strchr(value, ':');
	const char *p;

	if (strcmp(value, "auto") == 0)
		return 0;
	if (!*value || colon == value)
		goto bad;
	for (p = value; *p && p != colon; p++)
		if (!isalnum((unsigned char)*p) && !strchr("_-.", *p))
			goto bad;
	if (colon) {
		char *end;
		long port = strtol(colon + 1, &end, 10);

		if (end == colon + 1 || *end || port < 1 || port > 255)
			goto bad;
	}
	return 0;
bad:
	snprintf(err, errlen, "bad device '%s' (expected auto, DEVICE or DEVICE:PORT like mlx5_0:1)",
		 value);
	return -EINVAL;
}

int vocab_check_gpu_device(const char *value, char *err, size_t errlen)
{
	const char *p = value;

	if (strcmp(value, "auto") == 0 || strcmp(value, "none") == 0)
		return 0;
	if (!*p)
		goto bad;
	while (*p) {
		if (!isdigit((unsigned char)*p))
			goto bad;
		while (isdigit((unsigned char)*p))
			p++;
		while (*p == ' ')
			p++;
		if (*p == ',') {
			p++;
			while (*p == ' ')
				p++;
			if (!*p)
				goto bad;
		} else if (*p) {
			goto bad;
		}
	}
	return 0;
bad:
	snprintf(err, errlen, "bad GPU list '%s' (expected auto, none, or indices like 0,1,2,3)",
		 value);
	return -EINVAL;
}

/* "" (none), a rate like 20GB/s, or a share of the bound like 80%. */
int vocab_check_threshold(const char *value, char *err, size_t errlen)
{
	struct threshold t;

	if (!*value)
		return 0;
	return threshold_parse(value, &t, err, errlen);
}

/* Models: "none" (collective benchmark), then the model zoo's table. */
bool vocab_model_at(size_t i, struct cfg_choice *out)
{
	const struct model_info *m;

	if (i == 0) {
		*out = (struct cfg_choice){ "none", 0, "no workload: benchmark [collective] sizes" };
		return true;
	}
	m = model_at(i - 1);
	if (!m)
		return false;
	*out = (struct cfg_choice){ m->name, (int)i, m->help };
	return true;
}

bool vocab_algo_at(size_t i, struct cfg_choice *out)
{
	if (i >= ALGO_COUNT)
		return false;
	*out = (struct cfg_choice){ sched_algo_name((int)i), (int)i, sched_algo_help((int)i) };
	return true;
}

bool vocab_compute_at(size_t i, struct cfg_choice *out)
{
	if (i >= COMPUTE_COUNT)
		return false;
	*out = (struct cfg_choice){ compute_mode_name((int)i), (int)i, compute_mode_row((int)i)->help };
	return true;
}

bool vocab_dtype_at(size_t i, struct cfg_choice *out)
{
	if (i >= DT_COUNT)
		return false;
	*out = (struct cfg_choice){ dtype_name((enum dtype)i), (int)i, dtype_row((enum dtype)i)->help };
	return true;
}

bool vocab_redop_at(size_t i, struct cfg_choice *out)
{
	if (i >= REDOP_COUNT)
		return false;
	*out = (struct cfg_choice){ redop_name((enum redop)i), (int)i, redop_row((enum redop)i)->help };
	return true;
}

bool vocab_op_at(size_t i, struct cfg_choice *out)
{
	if (i >= COLL_OP_COUNT)
		return false;
	*out = (struct cfg_choice){ coll_op_name((int)i), (int)i, coll_op_help((int)i) };
	return true;
}

bool vocab_precision_at(size_t i, struct cfg_choice *out)
{
	if (i >= PREC_COUNT)
		return false;
	*out = (struct cfg_choice){ precision_name((int)i), (int)i, precision_help((int)i) };
	return true;
}

bool vocab_gdr_level_at(size_t i, struct cfg_choice *out)
{
	const struct gdr_name_row *r = gdr_level_at(i);

	if (!r)
		return false;
	*out = (struct cfg_choice){ r->name, (int)i, r->help };
	return true;
}

bool vocab_gdr_mode_at(size_t i, struct cfg_choice *out)
{
	const struct gdr_name_row *r = gdr_mode_at(i);

	if (!r)
		return false;
	*out = (struct cfg_choice){ r->name, (int)i, r->help };
	return true;
}

int vocab_check_layers(const char *value, char *err, size_t errlen)
{
	struct workload_opts *w = calloc(1, sizeof(*w));
	int ret;

	if (!w)
		return -ENOMEM;
	snprintf(w->model, sizeof(w->model), "custom");
	snprintf(w->layers, sizeof(w->layers), "%s", value);
	ret = model_check(w, NULL, err, errlen);
	free(w);
	return ret;
}

/* A built-in row or a profile file that reads whole: check refuses what run would. */
int vocab_check_gpu_profile(const char *value, char *err, size_t errlen)
{
	struct gpu_profile g;

	return gpu_profile_load(value, &g, err, errlen);
}
