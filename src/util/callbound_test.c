/*
 * Bounded library calls (util/callbound.h): a group that returns hands its results back; one
 * whose call does not return is given up on, naming the call and its object, and frees its
 * argument when it returns at last; the test hook GRADSYNC_TEST_HANG blocks a named call on
 * a group's thread only; groups run at once within one bound (callbound_run_all); a stop
 * signal ends a wait, its own handler's flag or fsbound's.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/callbound.h"
#include "util/fsbound.h"
#include "util/test_later.h"
#include "util/timeutil.h"

#define TMO 5000000000ull   /* groups that return: never near it */
#define SHORT 50000000ull   /* groups that do not */

static int dropped; /* args the test's drop freed */

struct group {
	const char *op, *obj; /* the call noted, and its object */
	const char *op2;      /* then this one, on the same object (a note without one) */
	int pipe_r;           /* >= 0: the call blocks reading it until the test writes */
	int pipe_w;           /* > 0: a byte written into it first (another group's pipe_r) */
	int result;
};

static void group_fn(void *arg)
{
	struct group *g = arg;
	char b;

	if (g->pipe_w > 0 && write(g->pipe_w, "x", 1) != 1)
		g->result = -1;
	callbound_note(g->op, g->obj);
	if (g->op2)
		callbound_note(g->op2, NULL);
	g->result = g->pipe_r < 0 ? 42 : (int)read(g->pipe_r, &b, 1);
}

static void group_drop(void *arg)
{
	free(arg);
	__atomic_add_fetch(&dropped, 1, __ATOMIC_SEQ_CST);
}

static struct group *group_new(const char *op, const char *obj, int pipe_r)
{
	struct group *g = calloc(1, sizeof(*g));

	assert_non_null(g);
	*g = (struct group){ .op = op, .obj = obj, .pipe_r = pipe_r };
	return g;
}

/* wait (at most 5 s) until the thread of a group given up on has dropped it: n drops */
static void wait_dropped(int n)
{
	for (int i = 0; i < 500 && __atomic_load_n(&dropped, __ATOMIC_SEQ_CST) < n; i++)
		usleep(10000);
	assert_int_equal(__atomic_load_n(&dropped, __ATOMIC_SEQ_CST), n);
}

/* A group that returns: 0, its results the caller's; nothing dropped. */
static void test_returns(void **state)
{
	struct group *g = group_new("cuInit", "CUDA driver", -1);
	struct callbound_at at;
	char why[128];

	(void)state;
	assert_int_equal(callbound_run(group_fn, g, group_drop, "CUDA driver", TMO, &at, why,
				       sizeof(why)), 0);
	assert_int_equal(g->result, 42);
	free(g);
	assert_int_equal(dropped, 0);
}

/* A call that does not return: given up on at the bound, the call, its object and the
 * bound said; the group dropped once the call returns. */
static void test_gives_up(void **state)
{
	struct callbound_at at;
	char why[128];
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(callbound_run(group_fn, group_new("ibv_query_port", "mlx5_0 port 1", p[0]),
				       group_drop, "RDMA devices", SHORT, &at, why, sizeof(why)),
			 -ETIMEDOUT);
	assert_string_equal(at.op, "ibv_query_port");
	assert_string_equal(at.obj, "mlx5_0 port 1");
	assert_string_equal(why, "ibv_query_port did not return within 50ms");
	assert_int_equal(write(p[1], "x", 1), 1);
	wait_dropped(1);
	close(p[0]);
	close(p[1]);
}

/* A note without an object (a step deep in the GPU layer) keeps the last note's; with none
 * before it, the group's what is named. */
static void test_note_keeps_object(void **state)
{
	struct group *g;
	struct callbound_at at;
	char why[128];
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	g = group_new("cudaSetDevice", "CUDA device 1", p[0]);
	g->op2 = "cudaEventSynchronize";
	assert_int_equal(callbound_run(group_fn, g, group_drop, "CUDA device 1", SHORT, &at, why,
				       sizeof(why)),
			 -ETIMEDOUT);
	assert_string_equal(at.op, "cudaEventSynchronize");
	assert_string_equal(at.obj, "CUDA device 1");
	assert_string_equal(why, "cudaEventSynchronize did not return within 50ms");
	assert_int_equal(callbound_run(group_fn, group_new("cudaMalloc", NULL, p[0]), group_drop,
				       "CUDA device 2", SHORT, &at, why, sizeof(why)),
			 -ETIMEDOUT);
	assert_string_equal(at.op, "cudaMalloc");
	assert_string_equal(at.obj, "CUDA device 2");
	assert_int_equal(write(p[1], "xy", 2), 2);
	wait_dropped(3);
	close(p[0]);
	close(p[1]);
}

/* GRADSYNC_TEST_HANG: a listed call blocks on a group's thread (given up on as a wedged
 * driver would be), matched whole; a note outside a group never blocks. */
static void test_hook(void **state)
{
	struct callbound_at at;
	char why[128];

	(void)state;
	assert_int_equal(setenv("GRADSYNC_TEST_HANG", "ibv_open_device,cuInit", 1), 0);
	assert_true(callbound_test_hang("cuInit"));
	assert_true(callbound_test_hang("ibv_open_device"));
	assert_false(callbound_test_hang("cuIni"));
	assert_false(callbound_test_hang("ibv_open"));
	assert_false(callbound_test_hang("ibv_query_port"));
	callbound_note("cuInit", "CUDA driver"); /* not a group's thread: returns */
	assert_int_equal(callbound_run(group_fn, group_new("cuInit", "CUDA driver", -1), group_drop,
				       "CUDA driver", SHORT, &at, why, sizeof(why)),
			 -ETIMEDOUT);
	assert_string_equal(at.op, "cuInit");
	assert_string_equal(at.obj, "CUDA driver");
	assert_string_equal(why, "cuInit did not return within 50ms");
	assert_int_equal(unsetenv("GRADSYNC_TEST_HANG"), 0);
	assert_false(callbound_test_hang("cuInit"));
}

/* A group of callbound_run_all, as the doctor's probes are made. */
static struct callbound_group all_group(struct group *g, const char *what, const char *hint)
{
	return (struct callbound_group){ .fn = group_fn, .arg = g, .drop = group_drop,
					 .what = what, .hint = hint };
}

/* callbound_run_all starts every group before it waits for one: the first blocks until
 * the second, started after it, writes to it; both return, each with its results. */
static void test_all_at_once(void **state)
{
	struct group *a, *b;
	struct callbound_group g[2];
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	a = group_new("cuInit", "CUDA driver", p[0]);
	b = group_new("ibv_get_device_list", "RDMA devices", -1);
	b->pipe_w = p[1];
	g[0] = all_group(a, "CUDA driver", "driver wedged?");
	g[1] = all_group(b, "RDMA devices", NULL);
	assert_int_equal(callbound_run_all(g, 2, TMO), 0);
	assert_int_equal(g[0].ret, 0);
	assert_int_equal(g[1].ret, 0);
	assert_int_equal(a->result, 1);
	assert_int_equal(b->result, 42);
	free(a);
	free(b);
	close(p[0]);
	close(p[1]);
	assert_int_equal(dropped, 3);
}

/*
 * Two groups whose calls do not return, a third that does: one bound for all of them (a
 * bound on a hang, not a timing: waited one after the other they would take 2 s), each
 * given up on named with its own call, object and hint; the third's results handed back.
 */
static void test_all_one_bound(void **state)
{
	struct group *a, *b, *c = group_new("cudaGetDeviceProperties", "CUDA device 0", -1);
	struct callbound_group g[3];
	uint64_t t0, took;
	int p[2], q[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	assert_int_equal(pipe(q), 0);
	a = group_new("cuInit", "CUDA driver", p[0]);
	b = group_new("ibv_query_port", "mlx5_0 port 1", q[0]);
	g[0] = all_group(a, "CUDA driver", "driver wedged?");
	g[1] = all_group(c, "CUDA driver", NULL);
	g[2] = all_group(b, "RDMA devices", "HCA or its driver wedged?");
	t0 = time_now_ns();
	assert_int_equal(callbound_run_all(g, 3, 1000000000ull), 0);
	took = time_now_ns() - t0;
	assert_true(took >= 1000000000ull && took < 1900000000ull);
	assert_int_equal(g[0].ret, -ETIMEDOUT);
	assert_string_equal(g[0].at.op, "cuInit");
	assert_string_equal(g[0].at.obj, "CUDA driver");
	assert_string_equal(g[0].why, "cuInit did not return within 1s (driver wedged?)");
	assert_int_equal(g[1].ret, 0);
	assert_int_equal(c->result, 42);
	assert_int_equal(g[2].ret, -ETIMEDOUT);
	assert_string_equal(g[2].at.op, "ibv_query_port");
	assert_string_equal(g[2].at.obj, "mlx5_0 port 1");
	assert_string_equal(g[2].why,
			    "ibv_query_port did not return within 1s (HCA or its driver wedged?)");
	free(c);
	assert_int_equal(write(p[1], "x", 1), 1);
	assert_int_equal(write(q[1], "x", 1), 1);
	wait_dropped(5);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
}

/* A group whose arg could not be allocated is not run (-ENOMEM, its object named, nothing
 * dropped); the others beside it are; callbound_run_group says it in the caller's words. */
static void test_all_no_memory(void **state)
{
	struct group *a = group_new("cuInit", "CUDA driver", -1);
	struct callbound_group g[2];
	struct callbound_at at;
	char why[128];

	(void)state;
	g[0] = all_group(NULL, "RDMA devices", NULL);
	g[1] = all_group(a, "CUDA driver", NULL);
	assert_int_equal(callbound_run_all(g, 2, TMO), 0);
	assert_int_equal(g[0].ret, -ENOMEM);
	assert_string_equal(g[0].at.obj, "RDMA devices");
	assert_string_equal(g[0].why, strerror(ENOMEM));
	assert_int_equal(g[1].ret, 0);
	assert_int_equal(a->result, 42);
	free(a);
	g[0] = all_group(NULL, "CUDA device 0", "driver wedged?");
	assert_int_equal(callbound_run_group(&g[0], TMO, &at, why, sizeof(why)), -ENOMEM);
	assert_string_equal(at.op, "start");
	assert_string_equal(at.obj, "CUDA device 0");
	assert_string_equal(why, strerror(ENOMEM));
	assert_int_equal(dropped, 5);
}

/* A program's own handler's flag (run/stop.c's), raised during the wait: -EINTR, the call
 * pending named; the signal its owner's (fsbound took nothing). */
static void test_stop_watched(void **state)
{
	static volatile sig_atomic_t flag;
	struct later l = { .sig = SIGTERM, .flag = &flag };
	struct callbound_at at;
	char why[128];
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	fsb_stop_watch(&flag);
	later_start(&l);
	assert_int_equal(callbound_run(group_fn, group_new("ibv_open_device", "mlx5_0", p[0]),
				       group_drop, "RDMA devices", TMO, &at, why, sizeof(why)),
			 -EINTR);
	later_join(&l);
	assert_string_equal(why, "stopped by SIGTERM while ibv_open_device was pending");
	assert_string_equal(at.obj, "mlx5_0");
	assert_int_equal(fsb_stop_signo(), 0);
	fsb_stop_watch(NULL);
	assert_int_equal(write(p[1], "x", 1), 1);
	wait_dropped(6);
	close(p[0]);
	close(p[1]);
}

/* A stop signal at its default action: fsbound's handler takes it for the wait, main is
 * told (128 + the signal), and a later group is not attempted. For good: the last test. */
static void test_stop_default(void **state)
{
	struct later l = { .sig = SIGTERM };
	struct callbound_at at;
	char why[128];

	(void)state;
	assert_int_equal(setenv("GRADSYNC_TEST_HANG", "cuInit", 1), 0);
	later_start(&l);
	assert_int_equal(callbound_run(group_fn, group_new("cuInit", "CUDA driver", -1), group_drop,
				       "CUDA driver", TMO, &at, why, sizeof(why)),
			 -EINTR);
	later_join(&l);
	assert_string_equal(why, "stopped by SIGTERM while cuInit was pending");
	assert_int_equal(fsb_stop_signo(), SIGTERM);
	assert_int_equal(callbound_run(group_fn, group_new("x", "y", -1), group_drop, "Y", TMO, &at,
				       why, sizeof(why)),
			 -EINTR);
	assert_string_equal(why, "not attempted: stopped by SIGTERM");
	wait_dropped(7); /* the one not attempted: at once */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_returns),
		cmocka_unit_test(test_gives_up),
		cmocka_unit_test(test_note_keeps_object),
		cmocka_unit_test(test_hook),
		cmocka_unit_test(test_all_at_once),
		cmocka_unit_test(test_all_one_bound),
		cmocka_unit_test(test_all_no_memory),
		cmocka_unit_test(test_stop_watched),
		cmocka_unit_test(test_stop_default), /* the last: its stop stays */
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
