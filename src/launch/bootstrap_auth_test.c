/*
 * Rank 0's admission under attack: the eviction policy (table-driven), 300 idle
 * connections held on the port while a 4-rank job starts and finishes, and a process
 * posing as rank 0 without the token (the rank refuses it, and the token never
 * crosses the wire).
 */
#include <pthread.h>

#include "launch/bootstrap_int.h"
#include "launch/bootstrap_test_job.h"

#define MS 1000000ull

static void test_victim_policy(void **state)
{
	static struct bs_pending p[BS_MAX_PENDING];
	uint64_t now = 10000 * MS;

	(void)state;
	/* room left, and the source below its share: nobody is displaced */
	for (int i = 0; i < 3; i++)
		p[i] = (struct bs_pending){.source = "10.0.0.1", .accepted_ns = (uint64_t)i * MS};
	assert_int_equal(bs_pending_victim(p, 3, "10.0.0.2", now), -1);
	/* a full source: its oldest idle entry goes, even with free slots elsewhere */
	for (int i = 0; i < BS_MAX_PER_SOURCE; i++)
		p[i] = (struct bs_pending){.source = "10.0.0.1",
					   .accepted_ns = (uint64_t)(100 - i) * MS};
	p[BS_MAX_PER_SOURCE] = (struct bs_pending){.source = "10.0.0.9", .accepted_ns = 0};
	assert_int_equal(bs_pending_victim(p, BS_MAX_PER_SOURCE + 1, "10.0.0.1", now),
			 BS_MAX_PER_SOURCE - 1);
	/* another source is not limited by 10.0.0.1's share */
	assert_int_equal(bs_pending_victim(p, BS_MAX_PER_SOURCE + 1, "10.0.0.2", now), -1);
	/* idle before active: an active entry survives although it is older */
	p[BS_MAX_PER_SOURCE - 1].active = true;
	p[BS_MAX_PER_SOURCE - 1].stage_ns = now;
	assert_int_equal(bs_pending_victim(p, BS_MAX_PER_SOURCE + 1, "10.0.0.1", now),
			 BS_MAX_PER_SOURCE - 2);
	/* every slot full, sources spread: the oldest idle of all */
	for (int i = 0; i < BS_MAX_PENDING; i++) {
		p[i] = (struct bs_pending){.active = true, .stage_ns = now - 10 * MS,
					   .accepted_ns = (uint64_t)i * MS};
		snprintf(p[i].source, sizeof(p[i].source), "10.1.%d.%d", i / 250, i % 250);
	}
	p[40].active = false;
	p[50].active = false;
	assert_int_equal(bs_pending_victim(p, BS_MAX_PENDING, "10.9.9.9", now), 40);
	/* none idle: the one stuck longest in its stage, once past BS_EVICT_MIN_NS */
	p[40].active = p[50].active = true;
	assert_int_equal(bs_pending_victim(p, BS_MAX_PENDING, "10.9.9.9", now), -2);
	p[7].stage_ns = now - BS_EVICT_MIN_NS;
	p[9].stage_ns = now - BS_EVICT_MIN_NS - 1;
	assert_int_equal(bs_pending_victim(p, BS_MAX_PENDING, "10.9.9.9", now), 9);
}

/* ---- 300 idle connections ---- */

#define NIDLE 300

static int idle_job_fn(struct job *j, int rank, struct bootstrap *b)
{
	int v = rank * 3, all[MAX_RANKS];

	child_check(!bootstrap_allgather(b, &v, all, sizeof(v)), __LINE__, "allgather");
	for (int r = 0; r < j->n; r++)
		child_check(all[r] == r * 3, __LINE__, "allgather content");
	child_check(!bootstrap_barrier(b), __LINE__, "barrier");
	bootstrap_close(b);
	return 0;
}

static int idle_open_fn(struct job *j, int rank)
{
	struct bootstrap *b;

	if (rank)
		msleep(700); /* the idle crowd is in place before the ranks come */
	child_check(!open_rank(j, rank, &b), __LINE__, "bootstrap_open");
	return idle_job_fn(j, rank, b);
}

static void test_idle_crowd(void **state)
{
	struct job j = {.n = 4, .timeout_ms = 8000, .inherit = true, .open_fn = idle_open_fn};
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fds[NIDLE], open_left = 0;
	double took;

	(void)state;
	job_start(&j);
	a.sin_port = htons((uint16_t)atoi(strchr(j.addr, ':') + 1));
	/* non-blocking connects: a full backlog must not stall the attacker (or the test) */
	for (int i = 0; i < NIDLE; i++) {
		fds[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		assert_true(fds[i] >= 0);
		if (connect(fds[i], (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS)
			fail_msg("idle connect %d: %s", i, strerror(errno));
	}
	took = job_finish(&j);
	for (int r = 0; r < j.n; r++)
		expect_exit(&j, r, 0);
	for (int i = 0; i < NIDLE; i++) {
		char c;

		/* displaced ones see EOF; the rest are still open */
		if (recv(fds[i], &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN)
			open_left++;
		close(fds[i]);
	}
	print_message("4 ranks joined past %d idle connections in %.2fs; %d still open\n", NIDLE,
		      took, open_left);
	assert_non_null(strstr(read_log(&j, 0), "connections were closed unfinished on the way"));
	assert_true(took < 6.0); /* loose: far below the 5 s per-connection deadline x rounds */
	job_cleanup(&j);
}

/* ---- an impostor rank 0 ---- */

struct impostor {
	int listen_fd;
	uint8_t seen[BS_HDR_LEN * 2 + BS_HELLO_LEN + BS_MAC_LEN]; /* HELLO, then PROOF */
	size_t nseen;
};

static void *impostor_main(void *arg)
{
	struct impostor *im = arg;
	uint8_t out[BS_HDR_LEN + BS_MAC_LEN];
	struct bs_hdr h = {.magic = BS_MAGIC, .version = BS_VERSION, .type = BS_CHALLENGE,
			   .len = BS_NONCE_LEN};
	int fd = accept(im->listen_fd, NULL, NULL);
	uint64_t deadline = time_now_ns() + 3000000000ull;

	if (fd < 0)
		return NULL;
	fcntl(fd, F_SETFL, O_NONBLOCK);
	if (bs_read_full(fd, im->seen, BS_HDR_LEN + BS_HELLO_LEN, deadline))
		goto out;
	im->nseen = BS_HDR_LEN + BS_HELLO_LEN;
	bs_hdr_pack(&h, out);
	memset(out + BS_HDR_LEN, 0x5a, BS_NONCE_LEN);
	if (bs_write_full(fd, out, BS_HDR_LEN + BS_NONCE_LEN, deadline) ||
	    bs_read_full(fd, im->seen + im->nseen, BS_HDR_LEN + BS_MAC_LEN, deadline))
		goto out;
	im->nseen += BS_HDR_LEN + BS_MAC_LEN;
	/* WELCOME with a MAC made up without the token */
	h.type = BS_WELCOME;
	h.len = BS_MAC_LEN;
	bs_hdr_pack(&h, out);
	memset(out + BS_HDR_LEN, 0x33, BS_MAC_LEN);
	bs_write_full(fd, out, sizeof(out), deadline);
	msleep(200);
out:
	close(fd);
	return NULL;
}

static void test_impostor_root(void **state)
{
	struct impostor im = {0};
	char addr[64];
	struct bootstrap_opts o = {.rank = 1, .nranks = 2, .token = TOKEN, .timeout_ms = 3000,
				   .addr = addr};
	struct bootstrap *b = NULL;
	uint8_t want[BS_MAC_LEN], nonce_r[BS_NONCE_LEN], nonce_0[BS_NONCE_LEN];
	pthread_t t;

	(void)state;
	im.listen_fd = bound_listener(addr, sizeof(addr));
	assert_int_equal(pthread_create(&t, NULL, impostor_main, &im), 0);
	assert_int_equal(bootstrap_open(&o, &b), -EACCES);
	assert_null(b);
	pthread_join(t, NULL);
	close(im.listen_fd);
	/* what crossed the wire: our HELLO and a proof, never the token itself */
	assert_int_equal(im.nseen, sizeof(im.seen));
	assert_null(memmem(im.seen, im.nseen, TOKEN, strlen(TOKEN)));
	memcpy(nonce_r, im.seen + BS_HDR_LEN + 8, BS_NONCE_LEN);
	memset(nonce_0, 0x5a, sizeof(nonce_0));
	bs_auth_mac(TOKEN, strlen(TOKEN), BS_ROLE_RANK, 1, 2, nonce_r, nonce_0, want);
	assert_memory_equal(im.seen + 2 * BS_HDR_LEN + BS_HELLO_LEN, want, BS_MAC_LEN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_victim_policy),
		cmocka_unit_test(test_idle_crowd),
		cmocka_unit_test(test_impostor_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
