/* Slow links: rates from both ends' waits, the median rule, the shared host, JSON both ways. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "report/links.h"
#include "report/rjson.h"

/* A ring of 4 hosts where host 2's link runs at a tenth: 1 -> 2 and 2 -> 3 cross it. */
static void ring4(struct link_obs *l)
{
	for (int r = 0; r < 4; r++) {
		bool slow = r == 1 || r == 2;

		/* the slow links keep both ends waiting 10 s; the fast ones 1 s at one end */
		l[r] = (struct link_obs){ r, (r + 1) % 4, 12e6, slow ? 10 : 8, slow ? 10 : 1 };
	}
}

static void test_rate_and_slow(void **state)
{
	struct link_obs l[4];
	struct link_slow s[4];
	int host_of[4] = { 0, 1, 2, 3 }, used;

	(void)state;
	ring4(l);
	assert_true(fabs(link_rate(&l[0]) - 12e6) < 1);   /* min(8, 1) = 1 s */
	assert_true(fabs(link_rate(&l[1]) - 1.2e6) < 1);  /* min(10, 10) */
	assert_true(fabs(links_median(l, 4, &used) - 6.6e6) < 1);
	assert_int_equal(used, 4);
	assert_int_equal(links_find_slow(l, 4, s, 4), 2);
	assert_true((s[0].from == 1 && s[1].from == 2) || (s[0].from == 2 && s[1].from == 1));
	assert_int_equal(links_common_host(s, 2, host_of, 4), 2);
	/* one slow link names no host; two links between the same hosts name neither */
	assert_int_equal(links_common_host(s, 1, host_of, 4), -1);
	s[1] = (struct link_slow){ s[0].to, s[0].from, 1, 1 };
	assert_int_equal(links_common_host(s, 2, host_of, 4), -1);
	/* all alike: none is slow; fewer than three links: nothing to compare */
	for (int r = 0; r < 4; r++)
		l[r].send_s = l[r].recv_s = 2;
	assert_int_equal(links_find_slow(l, 4, s, 4), 0);
	ring4(l);
	assert_int_equal(links_find_slow(l, 2, s, 4), 0);
	/* a link that moved nothing is left out */
	l[0].bytes = 0;
	assert_true(link_rate(&l[0]) == 0);
}

/* An even ring whose bottleneck moves: at each size one link (a different one) reads
 * 5x below the others, as the line rate against buffered sends. */
static void even_moving(struct link_obs *l, int slow_from)
{
	for (int r = 0; r < 4; r++)
		l[r] = (struct link_obs){ r, (r + 1) % 4, 10e6, r == slow_from ? 5 : 1,
					  r == slow_from ? 5 : 1 };
}

static void test_persistent(void **state)
{
	struct link_obs a[4], b[4], c[4];
	struct link_obs *obs[3] = { a, b, c };
	int nobs[3] = { 4, 4, 4 };
	struct link_slow s[4];
	double least = -1;

	(void)state;
	/* the shaped link (host 2's, flows 1 -> 2 and 2 -> 3) is slow at every size */
	ring4(a);
	ring4(b);
	ring4(c);
	c[1].send_s = c[1].recv_s = 20; /* 0.6 MB/s at the largest size */
	assert_int_equal(links_slow_persistent(obs, nobs, 3, s, 4, &least), 2);
	assert_int_equal(s[0].from, 1); /* the slowest first, figures of the last size */
	assert_true(fabs(s[0].rate_Bps - 0.6e6) < 1);
	/* at the first sizes: the median of the others (12, 12, 1.2 MB/s) over 1.2 MB/s */
	assert_true(fabs(least - (12e6 / 1.2e6)) < 1e-9);
	/* a bottleneck that moves between sizes is named at none */
	even_moving(a, 0);
	even_moving(b, 2);
	even_moving(c, 3);
	assert_int_equal(links_find_slow(c, 4, s, 4), 1); /* one size alone would name it */
	assert_int_equal(links_slow_persistent(obs, nobs, 3, s, 4, &least), 0);
	assert_true(least == 0);
	/* the same link at every size is named; one size is judged as links_find_slow */
	even_moving(a, 3);
	even_moving(b, 3);
	assert_int_equal(links_slow_persistent(obs, nobs, 3, s, 4, NULL), 1);
	assert_int_equal(s[0].from, 3);
	assert_int_equal(links_slow_persistent(obs + 2, nobs, 1, s, 4, NULL), 1);
	assert_int_equal(links_slow_persistent(obs, nobs, 0, s, 4, NULL), 0);
}

static void test_json_round_trip(void **state)
{
	struct link_obs l[4], back[4];
	json_t *row = json_object();
	int n;

	(void)state;
	ring4(l);
	assert_int_equal(rj_row_set_links(row, l, 4), 0);
	assert_int_equal(json_array_size(json_object_get(row, "links")), 4);
	n = links_from_json(row, back, 4);
	assert_int_equal(n, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(back[i].from, l[i].from);
		assert_int_equal(back[i].to, l[i].to);
		assert_true(fabs(link_rate(&back[i]) - link_rate(&l[i])) < 1e-3 * link_rate(&l[i]));
	}
	json_decref(row);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_and_slow),
		cmocka_unit_test(test_persistent),
		cmocka_unit_test(test_json_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
