/* Plan printing: the JSON document parses back with consistent numbers; text and errors. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "util/dtype.h"
#include "workload/plan_print.h"

static void opts(struct workload_opts *w, const char *model)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->model, sizeof(w->model), "%s", model);
	w->bucket_cap = 25ull << 20;
	w->grad_dtype = DT_F32;
}

/* Run plan_print into memory; returns the text (caller frees) and the result code. */
static char *capture(const struct workload_opts *w, bool json, bool tensors, int *ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*ret = plan_print(f, w, json, tensors, false);
	fclose(f);
	return buf;
}

static json_int_t get_int(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	assert_non_null(v);
	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

static void test_json_roundtrip(void **state)
{
	struct workload_opts w;
	json_error_t err;
	json_t *doc, *buckets, *ts, *b, *v;
	json_int_t sum = 0, count = 0;
	size_t i, j;
	char *s;
	int ret;

	(void)state;
	opts(&w, "resnet50");
	w.first_bucket_cap = 1ull << 20;
	w.gpu_tflops = 100;
	s = capture(&w, true, true, &ret);
	assert_int_equal(ret, 0);
	doc = json_loads(s, 0, &err);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "model")), "resnet50");
	assert_int_equal(get_int(doc, "num_params"), 25557032);
	assert_int_equal(get_int(doc, "num_tensors"), 161);
	assert_int_equal(get_int(doc, "grad_bytes"), 25557032ll * 4);
	assert_int_equal(get_int(doc, "first_bucket_cap"), 1 << 20);
	assert_int_equal(json_array_size(json_object_get(doc, "ready_order")), 161);
	buckets = json_object_get(doc, "buckets");
	assert_int_equal(json_array_size(buckets), get_int(doc, "num_buckets"));
	json_array_foreach(buckets, i, b) {
		sum += get_int(b, "bytes");
		count += (json_int_t)json_array_size(json_object_get(b, "tensors"));
		assert_true(json_is_real(json_object_get(b, "ready_s")));
	}
	assert_int_equal(sum, get_int(doc, "grad_bytes"));
	assert_int_equal(count, 161);
	ts = json_object_get(doc, "tensors");
	assert_int_equal(json_array_size(ts), 161);
	v = json_array_get(ts, 0);
	assert_string_equal(json_string_value(json_object_get(v, "name")), "conv1.weight");
	assert_int_equal(json_array_size(json_object_get(v, "shape")), 4);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(v, "shape"), 0)), 64);
	/* conv1.weight is the last gradient: the last bucket, last ready position */
	assert_int_equal(get_int(v, "ready_pos"), 160);
	assert_int_equal(get_int(v, "bucket"), get_int(doc, "num_buckets") - 1);
	json_array_foreach(ts, j, v)
		assert_int_equal(get_int(v, "index"), (json_int_t)j);
	assert_true(json_array_size(json_object_get(doc, "layers")) > 0);
	json_decref(doc);
	free(s);

	/* without --tensors the per-tensor table is absent */
	w.gpu_tflops = 0;
	s = capture(&w, true, false, &ret);
	assert_int_equal(ret, 0);
	doc = json_loads(s, 0, &err);
	assert_non_null(doc);
	assert_null(json_object_get(doc, "tensors"));
	/* the timeline is always modelled: the profile prices every operator */
	assert_true(json_real_value(json_object_get(doc, "fwd_s")) > 0);
	assert_string_equal(json_string_value(json_object_get(doc, "precision")), "fp32");
	json_decref(doc);
	free(s);
}

static void test_text(void **state)
{
	struct workload_opts w;
	char *s;
	int ret;

	(void)state;
	opts(&w, "gpt2");
	w.grad_dtype = DT_BF16;
	s = capture(&w, false, true, &ret);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(s, "124439808 params in 148 tensors"));
	assert_non_null(strstr(s, "gradients bf16: 248879616 bytes"));
	assert_non_null(strstr(s, "transformer.h.0.attn.c_attn.weight"));
	assert_non_null(strstr(s, "768x2304"));
	free(s);
}

static void test_errors(void **state)
{
	struct workload_opts w;
	char *s;
	int ret;

	(void)state;
	opts(&w, "nosuch");
	s = capture(&w, false, false, &ret);
	assert_int_equal(ret, -ENOENT);
	free(s);
	opts(&w, "gpt2");
	w.grad_dtype = DT_COUNT;
	s = capture(&w, true, false, &ret);
	assert_int_equal(ret, -EINVAL);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_roundtrip),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
