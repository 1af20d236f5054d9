/*
 * model = custom: layers listed in forward order as "name:params[:gflops], ...".
 * Each entry is one layer holding one 1-D tensor of `params` elements (an integer,
 * optionally with k, M or G: powers of 1000) and `gflops` forward GFLOPs per
 * iteration (default 0; backward = 2x). Gradients become ready in reverse order.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/common.h"
#include "util/log.h"
#include "workload/layers.h"
#include "workload/model.h"

/* Trim [*s, *e) of blanks. */
static void trim(const char **s, const char **e)
{
	while (*s < *e && isspace((unsigned char)**s))
		(*s)++;
	while (*e > *s && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

/* The trimmed span [s, e) as a string in buf: its length, or -EINVAL (empty, too long). */
static int span_str(const char *s, const char *e, char *buf, size_t len)
{
	size_t n;

	trim(&s, &e);
	n = (size_t)(e - s);
	if (!n || n >= len)
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return (int)n;
}

static int parse_count(const char *s, const char *e, int64_t *out)
{
	char buf[32], *end;
	double mult = 1, v;
	int len = span_str(s, e, buf, sizeof(buf));
	size_t n;

	if (len < 0)
		return len;
	n = (size_t)len;
	switch (buf[n - 1]) {
	case 'k': case 'K': mult = 1e3; buf[--n] = '\0'; break;
	case 'M': mult = 1e6; buf[--n] = '\0'; break;
	case 'G': mult = 1e9; buf[--n] = '\0'; break;
	default: break;
	}
	if (!n || !isdigit((unsigned char)buf[0]))
		return -EINVAL;
	errno = 0;
	v = strtod(buf, &end) * mult;
	if (*end || errno || v < 1 || v > 1e15 || v != floor(v))
		return -EINVAL;
	*out = (int64_t)v;
	return 0;
}

static int parse_gflops(const char *s, const char *e, double *out)
{
	char buf[32], *end;

	if (span_str(s, e, buf, sizeof(buf)) < 0)
		return -EINVAL;
	errno = 0;
	*out = strtod(buf, &end);
	if (*end || errno || !isfinite(*out) || *out < 0)
		return -EINVAL;
	return 0;
}

/* One "name:params[:gflops]" entry in [s, e). */
static int custom_entry(struct tensor_list *tl, const char *s, const char *e)
{
	const char *c1 = memchr(s, ':', (size_t)(e - s)), *c2, *ns = s, *ne;
	char name[TENSOR_NAME_MAX];
	double gflops = 0;
	int64_t count;
	int l;

	if (!c1)
		return -EINVAL;
	ne = c1;
	trim(&ns, &ne);
	if (ns == ne || (size_t)(ne - ns) >= sizeof(name))
		return -EINVAL;
	memcpy(name, ns, (size_t)(ne - ns));
	name[ne - ns] = '\0';
	c2 = memchr(c1 + 1, ':', (size_t)(e - c1 - 1));
	if (parse_count(c1 + 1, c2 ? c2 : e, &count))
		return -EINVAL;
	if (c2 && parse_gflops(c2 + 1, e, &gflops))
		return -EINVAL;
	l = ly_compute(tl, name, gflops * 1e9);
	tl_param(tl, l, 1, &count, "%s", name);
	return tl->err;
}

int model_build_custom(const struct model_info *m, const struct workload_opts *w,
		       struct tensor_list *tl)
{
	const char *s = w->layers, *end = w->layers + strnlen(w->layers, sizeof(w->layers));
	int idx = 0, ret;

	(void)m;
	tl->batch = w->batch;
	tl->seq_len = w->seq_len;
	tl->image_size = w->image_size;
	while (s < end) {
		const char *e = memchr(s, ',', (size_t)(end - s));

		if (!e)
			e = end;
		ret = custom_entry(tl, s, e);
		if (ret == -EINVAL) {
			const char *ts = s, *te = e;

			trim(&ts, &te);
			return tl_reject(tl, "layers",
					 "model custom: layers entry %d '%.*s': expected name:params[:gflops] (params a whole number >= 1, k/M/G allowed; gflops >= 0)",
					 idx + 1, (int)GS_MIN(te - ts, 64), ts);
		}
		if (ret)
			return ret;
		idx++;
		s = e + 1;
	}
	if (!idx)
		return tl_reject(tl, "layers", "model custom: layers is empty");
	if (tensor_list_has_duplicates(tl))
		return tl_reject(tl, "layers", "model custom: layer names must be unique");
	return 0;
}
