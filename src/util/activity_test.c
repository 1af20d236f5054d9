/*
 * Activity records (util/activity.h): the table walked, the texts, the stuck-or-slow
 * verdict at its edges, which thread a rank reports, and a reader never seeing a
 * half-written record while its owner writes.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "util/activity.h"
#include "util/timeutil.h"

static struct act_snap snap(enum act_what w, int peer, uint32_t seq, uint32_t age_ms)
{
	return (struct act_snap){ .what = (uint8_t)w, .peer = peer, .seq = seq, .age_ms = age_ms };
}

static void test_table(void **state)
{
	char buf[128];

	(void)state;
	for (int w = 0; w < ACT_COUNT; w++)
		assert_true(*act_name((enum act_what)w));
	assert_string_equal(act_name(ACT_COUNT), "");
	assert_false(act_in_case(ACT_NONE));
	assert_false(act_in_case(ACT_CLOSING));
	assert_false(act_in_case(ACT_COUNT));
	assert_true(act_in_case(ACT_RECV));
	assert_true(act_in_case(ACT_SETUP));
	assert_true(act_gpu_wait(ACT_GPU_SYNC));
	assert_false(act_gpu_wait(ACT_MEMOPS));
	assert_false(act_gpu_wait(ACT_COUNT));
	assert_string_equal(act_thread_name(ACT_THREAD_COMM), "comm thread");
	assert_string_equal(act_thread_name(ACT_THREADS), "");

	struct act_snap s = snap(ACT_RECV, 2, 1287, 0);

	assert_string_equal(act_describe(&s, buf, sizeof(buf)),
			    "waiting on recv from peer 2 in allreduce seq 1287");
	s = snap(ACT_SEND, 0, 3, 0);
	assert_string_equal(act_describe(&s, buf, sizeof(buf)),
			    "waiting on send to peer 0 in allreduce seq 3");
	s = snap(ACT_ALLREDUCE, -1, 9, 0);
	assert_string_equal(act_describe(&s, buf, sizeof(buf)), "in allreduce seq 9");
	s = snap(ACT_P2P, 3, 0, 0);
	assert_string_equal(act_describe(&s, buf, sizeof(buf)),
			    "in a point-to-point test with peer 3");
	s = snap(ACT_TEST_DELAY, -1, 0, 0);
	assert_string_equal(act_describe(&s, buf, sizeof(buf)),
			    "in the test hook GRADSYNC_TEST_DELAY");
	s.what = 200; /* never past the table */
	assert_string_equal(act_describe(&s, buf, sizeof(buf)), "idle");
}

static void test_judge(void **state)
{
	struct act_snap s;
	uint32_t w;

	(void)state;
	/* returned from the case, or parked: never stuck, however old */
	s = snap(ACT_CLOSING, -1, 0, 60000);
	assert_int_equal(act_judge(&s, 60000, 1000, &w), ACT_FINE);
	s = snap(ACT_NONE, -1, 0, 60000);
	assert_int_equal(act_judge(&s, 60000, 1000, &w), ACT_FINE);
	/* its rank never heard of the abort: nothing to react to */
	s = snap(ACT_RECV, 1, 5, 60000);
	assert_int_equal(act_judge(&s, ACT_NO_ABORT, 1000, &w), ACT_FINE);
	/* in a wait since long before the abort, which came 300 ms ago: 700 ms to go */
	assert_int_equal(act_judge(&s, 300, 1000, &w), ACT_EARLY);
	assert_int_equal(w, 700);
	/* the grace is over: it did not react */
	assert_int_equal(act_judge(&s, 1000, 1000, &w), ACT_STUCK);
	assert_int_equal(w, 0);
	/* entered a new collective after the abort: the grace counts from there */
	s = snap(ACT_ALLREDUCE, -1, 6, 200);
	assert_int_equal(act_judge(&s, 5000, 1000, &w), ACT_EARLY);
	assert_int_equal(w, 800);
	s.age_ms = 1000;
	assert_int_equal(act_judge(&s, 5000, 1000, &w), ACT_STUCK);
	/* a GPU stream sync cannot look at the abort: past the grace it is a GPU wait,
	 * not stuck; within it, early like any other */
	s = snap(ACT_GPU_SYNC, -1, 0, 4000);
	assert_int_equal(act_judge(&s, 1000, 1000, &w), ACT_GPU_WAIT);
	assert_int_equal(act_judge(&s, 400, 1000, &w), ACT_EARLY);
	assert_int_equal(w, 600);
	/* the executor's memops waits poll and look at the abort: stuck when they stay */
	s = snap(ACT_MEMOPS, -1, 3, 4000);
	assert_int_equal(act_judge(&s, 1000, 1000, &w), ACT_STUCK);
}

static void test_pick(void **state)
{
	struct act_snap s[2];

	(void)state;
	/* the comm thread waits on a peer, the main thread only runs the case: both have
	 * not reacted, the innermost (entered last) is the one that says what is stuck */
	s[0] = snap(ACT_CASE, -1, 0, 9000);
	s[1] = snap(ACT_RECV, 2, 40, 4000);
	s[1].thread = ACT_THREAD_COMM;
	assert_int_equal(act_pick(s, 2, 3000, 1000), 1);
	/* entered in the same ms: the comm thread, which runs inside the main thread's case */
	s[1].age_ms = 9000;
	assert_int_equal(act_pick(s, 2, 3000, 1000), 1);
	/* a stuck main thread wins over a comm thread still early */
	s[1].age_ms = 100;
	assert_int_equal(act_pick(s, 2, 3000, 1000), 0);
	/* nothing stuck or early: the main thread */
	s[0] = snap(ACT_CLOSING, -1, 0, 10);
	s[1] = snap(ACT_NONE, -1, 0, 10);
	assert_int_equal(act_pick(s, 2, 3000, 1000), 0);
	/* early beats fine */
	s[1] = snap(ACT_SEND, 3, 1, 50);
	assert_int_equal(act_pick(s, 2, 50, 1000), 1);
	/* a stuck comm thread beats a main thread in a GPU wait entered later; a GPU
	 * wait beats a thread still early */
	s[0] = snap(ACT_GPU_SYNC, -1, 0, 2000);
	s[1] = snap(ACT_RECV, 3, 1, 9000);
	assert_int_equal(act_pick(s, 2, 3000, 1000), 1);
	s[1].age_ms = 100;
	assert_int_equal(act_pick(s, 2, 3000, 1000), 0);
}

/* The writer keeps what, peer, seq and since in step in every record it writes. */
static struct activity shared;
static volatile int stop;

static void *writer(void *arg)
{
	(void)arg;
	for (uint32_t i = 1; !__atomic_load_n(&stop, __ATOMIC_RELAXED); i++)
		act_set(&shared, (enum act_what)(i % ACT_COUNT), (int)i, i, (uint64_t)i * 1000000);
	return NULL;
}

static void test_consistent_read(void **state)
{
	struct activity a = { 0 };
	struct act_mark m;
	struct act_snap s;
	pthread_t t;
	int ok = 0;

	(void)state;
	act_set(&a, ACT_CASE, -1, 0, 1000000000ull);
	act_enter(&a, ACT_RECV, 4, 17, 3000000000ull, &m);
	assert_true(act_read(&a, ACT_THREAD_COMM, 5500000000ull, &s));
	assert_int_equal(s.what, ACT_RECV);
	assert_int_equal(s.peer, 4);
	assert_int_equal(s.seq, 17);
	assert_int_equal(s.age_ms, 2500);
	assert_int_equal(s.thread, ACT_THREAD_COMM);
	act_leave(&a, &m, 6000000000ull);
	assert_true(act_read(&a, ACT_THREAD_MAIN, 6000000000ull, &s));
	assert_int_equal(s.what, ACT_CASE);
	assert_int_equal(s.peer, -1);
	assert_int_equal(s.age_ms, 0);
	/* a NULL record: nobody listens, nothing happens */
	act_enter(NULL, ACT_RECV, 1, 1, 1, &m);
	act_leave(NULL, &m, 2);

	assert_int_equal(pthread_create(&t, NULL, writer, NULL), 0);
	/* until many copies were checked (the writer may start late on a busy host) */
	for (uint64_t end = time_now_ns() + 10000000000ull; ok < 10000 && time_now_ns() < end;) {
		if (!act_read(&shared, ACT_THREAD_MAIN, 2000000000ull * 1000000, &s))
			continue;
		if (s.seq) {
			assert_int_equal((uint32_t)s.peer, s.seq);
			assert_int_equal(s.what, s.seq % ACT_COUNT);
			assert_int_equal(s.age_ms, 2000000000u - s.seq);
			ok++;
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	assert_true(ok >= 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_consistent_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
