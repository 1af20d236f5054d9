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
#include "util/units.h"

/* Transport names: the config vocabulary of enum transport_kind, one row per kind. */
static const struct cfg_choice transport_choices[] = {
	{ "auto", TP_AUTO, "per peer: shm on the same host, else verbs if a port is up, else tcp" },
	{ "tcp", TP_TCP, "TCP sockets, several streams per peer" },
	{ "shm", TP_SHM, "POSIX shared-memory rings between ranks of one host" },
	{ "ib", TP_IB, "RDMA verbs over InfiniBand (LID routing)" },
	{ "roce", TP_ROCE, "RDMA verbs over Ethernet (RoCEv2, GID routing)" },
	{ "cudaipc", TP_CUDAIPC, "CUDA IPC between GPUs of one host (NVLink/PCIe P2P)" },
	{ "nccl", TP_NCCL, "reference: hand each bucket to libnccl.so.2 (loaded at run time)" },
};

bool vocab_transport_at(size_t i, struct cfg_choice *out)
{
	if (i >= ARRAY_SIZE(transport_choices))
		return false;
	*out = transport_choices[i];
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
	size_t n = strlen(value);
	double v;

	if (!n)
		return 0;
	if (value[n - 1] == '%') {
		char num[32];

		if (n >= sizeof(num))
			goto bad;
		memcpy(num, value, n - 1);
		num[n - 1] = '\0';
		if (units_parse_double(num, &v) == 0 && v > 0 && v <= 100)
			return 0;
		goto bad;
	}
	if (units_parse_rate(value, &v) == 0 && v > 0)
		return 0;
bad:
	snprintf(err, errlen, "bad threshold '%s' (expected a rate like 20GB/s or a percentage like 80%%)",
		 value);
	return -EINVAL;
}

/* Interim lists until the workload and coll tables are merged (replaced this session). */
static const struct cfg_choice model_choices_interim[] = {
	{ "none", 0, "no workload: collective benchmark" },
	{ "resnet50", 1, "torchvision ResNet-50" },
};

bool vocab_model_at(size_t i, struct cfg_choice *out)
{
	if (i >= ARRAY_SIZE(model_choices_interim))
		return false;
	*out = model_choices_interim[i];
	return true;
}

static const struct cfg_choice algo_choices_interim[] = {
	{ "auto", ALGO_AUTO, "pick by ranks and size" },
	{ "ring", ALGO_RING, "ring" },
	{ "tree", ALGO_TREE, "double binary tree" },
	{ "rhd", ALGO_RHD, "recursive halving-doubling" },
	{ "hierarchical", ALGO_HIERARCHICAL, "intra-node then inter-node" },
};

bool vocab_algo_at(size_t i, struct cfg_choice *out)
{
	if (i >= ARRAY_SIZE(algo_choices_interim))
		return false;
	*out = algo_choices_interim[i];
	return true;
}
