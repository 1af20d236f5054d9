/* shm transport tests: forked ranks on one host (exchange, lengths, dead peer, abort, leaks). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/mman.h>

#include "transport/shm/shm_pair.h"
#include "transport/tp_test_cases.h"
#include "util/test_capture.h"

extern const struct transport_ops shm_ops;

static void run_ok(int nranks, const struct transport_opts *o, tpt_body body, void *arg)
{
	int st[TPT_MAX_RANKS];

	tpt_run(&shm_ops, nranks, o, 5000, body, arg, st);
	for (int i = 0; i < nranks; i++) {
		assert_true(WIFEXITED(st[i]));
		assert_int_equal(WEXITSTATUS(st[i]), 0);
	}
}

static void test_exchange(void **state)
{
	/* table: ranks x ring geometry x posting order */
	static const struct {
		int nranks;
		uint64_t ring, slot;
		enum tpt_order order;
	} cases[] = {
	    {2, 4u << 20, 512u << 10, TPT_RECV_FIRST}, {2, 4u << 20, 512u << 10, TPT_SEND_FIRST},
	    {2, 64u << 10, 4096, TPT_MIXED}, /* tiny ring: many wraps, 2048 slots per 8 MiB */
	    {3, 8u << 20, 1u << 20, TPT_MIXED},	       {4, 8u << 20, 1u << 20, TPT_SEND_FIRST},
	    {4, 2u << 20, 1u << 20, TPT_RECV_FIRST},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct transport_opts o = {
		    .kind = TP_SHM, .shm_ring = cases[i].ring, .slot_size = cases[i].slot};
		enum tpt_order order = cases[i].order;

		run_ok(cases[i].nranks, &o, tpt_body_exchange, &order);
	}
	assert_int_equal(tpt_count_segments(), 0);
}

static void test_many_small(void **state)
{
	struct transport_opts o = {
	    .kind = TP_SHM, .streams = 3, .shm_ring = 1u << 20, .slot_size = 65536};

	(void)state;
	run_ok(2, &o, tpt_body_many, NULL);
}

static void test_msgsize(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 4u << 20, .slot_size = 1u << 20};

	(void)state;
	run_ok(2, &o, tpt_body_msgsize, NULL);
}

/* The held-tag case (tp_test_util.h) on host memory, 3x the CTS queue's capacity. */
static int body_held_tag(struct tpt_rank *r, void *arg)
{
	enum { N = 3 * SHM_PAIR_CTS_CAP };
	char *buf = calloc(N + 1, TPT_HELD_LEN);

	(void)arg;
	TP_CHECK(buf);
	return tpt_held_tag(r, buf, MEM_HOST, N);
}

static void test_held_tag(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 64u << 10, .slot_size = 4096};

	(void)state;
	run_ok(2, &o, body_held_tag, NULL);
}

static void test_killed_peer(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 4u << 20, .slot_size = 1u << 20};
	struct tpt_kill kills[] = {{3000, false}, {3000, true}};
	int st[2];

	(void)state;
	for (size_t i = 0; i < sizeof(kills) / sizeof(kills[0]); i++) {
		tpt_run(&shm_ops, 2, &o, kills[i].timeout_ms, tpt_body_killed, &kills[i], st);
		assert_true(WIFEXITED(st[0]));
		assert_int_equal(WEXITSTATUS(st[0]), 0);
		assert_true(WIFSIGNALED(st[1]));
		assert_int_equal(WTERMSIG(st[1]), SIGKILL);
	}
	assert_int_equal(tpt_count_segments(), 0); /* names were unlinked at connect */
}

/* A peer that opened but never connects: connect fails at the timeout, not before or long after. */
static void test_connect_timeout(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .streams = 2};
	double ms = 0;

	(void)state;
	assert_int_equal(tpt_connect_alone(&shm_ops, 0, 300, &o, &ms), -ETIMEDOUT);
	assert_true(ms >= 290 && ms < 1500);
	assert_int_equal(tpt_count_segments(), 0); /* the unattached ring was unlinked at close */
}

static void test_abort(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 4u << 20, .slot_size = 1u << 20};

	(void)state;
	run_ok(2, &o, tpt_body_abort, NULL);
}

static void test_can_connect(void **state)
{
	int hosts[3] = {7, 7, 9};
	bool use[3] = {false, true, true};
	struct transport_opts o = {.kind = TP_SHM, .slot_size = 100};
	struct transport_env env = {.rank = 0,
				    .nranks = 3,
				    .host_of_rank = hosts,
				    .use_peer = use,
				    .timeout_ms = 100,
				    .opts = &o};
	struct transport t = {.ops = &shm_ops};

	(void)state;
	assert_true(shm_ops.can_connect(&env, 1));
	assert_false(shm_ops.can_connect(&env, 2));
	assert_false(shm_ops.can_connect(&env, 0));
	assert_int_equal(shm_ops.open(&t, &env), -EINVAL); /* slot below 4 KiB */
	o.slot_size = 0;
	assert_int_equal(shm_ops.open(&t, &env), -EHOSTUNREACH); /* rank 2 is elsewhere */
	assert_int_equal(tpt_count_segments(), 0);
}

static void test_bandwidth(void **state)
{
	struct transport_opts o = {.kind = TP_SHM, .shm_ring = 8u << 20, .slot_size = 1u << 20};

	(void)state;
	run_ok(2, &o, tpt_body_bw, "shm");
}

/* One rank of a 2-rank job, in this process: env and transport for `rank`. */
struct setup_rank {
	int hosts[2];
	bool use[2];
	struct transport_opts o;
	struct transport_env env;
	struct transport t;
};

static void setup_rank_init(struct setup_rank *s, int rank, uint64_t job)
{
	memset(s, 0, sizeof(*s));
	s->use[!rank] = true;
	s->o = (struct transport_opts){.kind = TP_SHM, .shm_ring = 4u << 20, .slot_size = 1u << 20};
	s->env = (struct transport_env){.rank = rank,
					.nranks = 2,
					.local_rank = rank,
					.host_of_rank = s->hosts,
					.use_peer = s->use,
					.job_id = job,
					.timeout_ms = 2000,
					.opts = &s->o,
					.numa_node = -1};
	s->t.ops = &shm_ops;
}

/* Rank 1 opens (creating the segment rank 0 would attach) and is killed with SIGKILL. */
static void kill_rank1_after_open(uint64_t job)
{
	pid_t pid = fork();
	int st;

	assert_true(pid >= 0);
	if (pid == 0) {
		static struct setup_rank r1;

		setup_rank_init(&r1, 1, job);
		if (shm_ops.open(&r1.t, &r1.env))
			_exit(3);
		raise(SIGKILL);
		_exit(4);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	/* its segment for rank 0 is left: nobody attached it, its creator is gone */
	assert_int_equal(tpt_count_segments(), 1);
}

/*
 * A rank dies during setup (segments created, endpoints not yet exchanged): the
 * survivor's close removes the segment the dead rank made for it, and the driver's
 * sweep removes what is left when nobody survives.
 */
static void test_rank_dies_in_setup(void **state)
{
	static struct setup_rank r0;
	uint64_t job = ((uint64_t)getpid() << 20) | 0xabc00;

	(void)state;
	kill_rank1_after_open(job);
	setup_rank_init(&r0, 0, job);
	assert_int_equal(shm_ops.open(&r0.t, &r0.env), 0);
	assert_int_equal(tpt_count_segments(), 2);
	shm_ops.close(&r0.t); /* setup stopped: the job aborted */
	assert_int_equal(tpt_count_segments(), 0);
	/* every rank killed: the local driver sweeps by job id */
	kill_rank1_after_open(job + 1);
	assert_int_equal(transport_sweep_job(job + 2), 0); /* another job's names stay */
	assert_int_equal(tpt_count_segments(), 1);
	assert_int_equal(transport_sweep_job(job + 1), 1);
	assert_int_equal(tpt_count_segments(), 0);
}

/* A name taken before us is never adopted: the error names the path and its owner. */
static void test_squatted_name(void **state)
{
	static struct setup_rank r1;
	uint64_t job = ((uint64_t)getpid() << 20) | 0xdef00;
	char name[64], log[1024];
	struct capture c;
	int fd, ret;
	struct passwd *pw = getpwuid(geteuid());

	(void)state;
	snprintf(name, sizeof(name), "/gradsync-%016llx-0-1", (unsigned long long)job);
	fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	assert_true(fd >= 0);
	close(fd);
	setup_rank_init(&r1, 1, job);
	capture_begin(&c);
	ret = shm_ops.open(&r1.t, &r1.env);
	capture_end(&c, log, sizeof(log));
	assert_int_equal(ret, -EEXIST);
	if (!ret)
		shm_ops.close(&r1.t);
	print_message("%s", log);
	assert_non_null(strstr(log, "/dev/shm/gradsync-"));
	assert_non_null(strstr(log, "File exists, owned by"));
	assert_non_null(pw);
	assert_non_null(strstr(log, pw->pw_name));
	/* the squatter's object is still there: we did not remove or adopt it */
	fd = shm_open(name, O_RDWR, 0);
	assert_true(fd >= 0);
	close(fd);
	shm_unlink(name);
	assert_int_equal(tpt_count_segments(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exchange),	cmocka_unit_test(test_many_small),
	    cmocka_unit_test(test_msgsize),	cmocka_unit_test(test_held_tag),
	    cmocka_unit_test(test_killed_peer), cmocka_unit_test(test_connect_timeout),
	    cmocka_unit_test(test_abort),	cmocka_unit_test(test_can_connect),
	    cmocka_unit_test(test_bandwidth),	cmocka_unit_test(test_rank_dies_in_setup),
	    cmocka_unit_test(test_squatted_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
