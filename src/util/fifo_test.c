/* The FIFO list: order kept, unlink at the head, middle and tail keeps head and tail right,
 * take finds the oldest match. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "util/common.h"
#include "util/fifo.h"

struct item {
	int v;
	struct fifo_link link;
};

static int pop_value(struct fifo *q)
{
	struct fifo_link *l = fifo_pop(q);

	return l ? fifo_entry(l, struct item, link)->v : -1;
}

static void test_order(void **state)
{
	struct item it[4] = { { .v = 0 }, { .v = 1 }, { .v = 2 }, { .v = 3 } };
	struct fifo q = { 0 };

	(void)state;
	assert_true(fifo_empty(&q));
	assert_null(fifo_pop(&q));
	for (size_t i = 0; i < ARRAY_SIZE(it); i++)
		fifo_push(&q, &it[i].link);
	for (int i = 0; i < 4; i++)
		assert_int_equal(pop_value(&q), i);
	assert_true(fifo_empty(&q));
	assert_null(q.tail);
	/* reusable after draining */
	fifo_push(&q, &it[2].link);
	assert_ptr_equal(q.head, q.tail);
	assert_int_equal(pop_value(&q), 2);
}

/* fifo_push_head: a stack on the same list; the tail stays right for a later push */
static void test_push_head(void **state)
{
	struct item it[3] = { { .v = 0 }, { .v = 1 }, { .v = 2 } };
	struct fifo q = { 0 };

	(void)state;
	fifo_push_head(&q, &it[0].link);
	assert_ptr_equal(q.head, q.tail);
	fifo_push_head(&q, &it[1].link);
	fifo_push(&q, &it[2].link);
	assert_int_equal(pop_value(&q), 1);
	assert_int_equal(pop_value(&q), 0);
	assert_int_equal(pop_value(&q), 2);
	assert_true(fifo_empty(&q));
	assert_null(q.tail);
}

static void test_unlink(void **state)
{
	struct item it[4] = { { .v = 0 }, { .v = 1 }, { .v = 2 }, { .v = 3 } };
	struct fifo q = { 0 };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(it); i++)
		fifo_push(&q, &it[i].link);
	fifo_unlink(&q, &it[0].link, &it[1].link); /* middle */
	fifo_unlink(&q, &it[2].link, &it[3].link); /* tail: tail moves back */
	assert_ptr_equal(q.tail, &it[2].link);
	fifo_push(&q, &it[3].link);
	fifo_unlink(&q, NULL, &it[0].link); /* head */
	assert_int_equal(pop_value(&q), 2);
	assert_int_equal(pop_value(&q), 3);
	assert_int_equal(pop_value(&q), -1);
	assert_null(q.head);
	assert_null(q.tail);
}

static bool is_odd(const struct fifo_link *l, const void *arg)
{
	(void)arg;
	return fifo_entry(l, struct item, link)->v % 2;
}

static bool is_value(const struct fifo_link *l, const void *arg)
{
	return fifo_entry(l, struct item, link)->v == *(const int *)arg;
}

static void test_take(void **state)
{
	struct item it[4] = { { .v = 0 }, { .v = 1 }, { .v = 2 }, { .v = 3 } };
	struct fifo q = { 0 };
	int three = 3, nine = 9;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(it); i++)
		fifo_push(&q, &it[i].link);
	assert_ptr_equal(fifo_take(&q, is_odd, NULL), &it[1].link); /* the oldest match */
	assert_ptr_equal(fifo_take(&q, is_value, &three), &it[3].link); /* the tail */
	assert_ptr_equal(q.tail, &it[2].link);
	assert_null(fifo_take(&q, is_value, &nine));
	assert_null(fifo_take(&q, is_odd, NULL));
	assert_int_equal(pop_value(&q), 0);
	assert_int_equal(pop_value(&q), 2);
	assert_null(q.head);
	assert_null(q.tail);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_push_head),
		cmocka_unit_test(test_unlink),
		cmocka_unit_test(test_take),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
