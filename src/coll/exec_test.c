/*
 * The executor end to end: N threads, each a rank with two in-process loop transports
 * (peers split between them), run AllReduce for every algorithm, dtype and op over odd
 * sizes with small chunks (many pieces, several in flight, -EAGAIN from a shallow
 * queue), checked bit-exactly with verify.c; then timeout, abort, a long wait in the
 * thread's activity record, argument errors and the point-to-point loops.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "coll/coll.h"
#include "coll/reduce.h"
#include "coll/verify.h"
#include "transport/loop/loop.h"
#include "util/common.h"
#include "util/timeutil.h"

#define MAXR  8
/* the whole matrix up to this many ranks; linear (batches of SCHED_MAX_XFER) up to MAXR */
#define MATRIX_MAXR 6
#define NTP   2
#define GUARD 64

struct job;

/*
 * A staging, asynchronous memops: "device" memory, work reported done two queries late;
 * pieces are copied back to the device only at coll_end (as gpu_memops defers them).
 */
struct fake_dev {
	char *dev;	/* stands in for device memory */
	char *host;	/* the registered bounce buffer */
	int pending[4]; /* per channel: queries left before the work is done */
	uint64_t starts, dones, reduces;
	uint64_t lo, hi;      /* the collective's range (coll_begin) */
	int end_pending;      /* coll_end calls left before it reports done */
	uint64_t begins, ends; /* coll_begin calls, coll_end calls that reported done */
	struct coll_memops ops;
};

struct rank_ctx {
	struct job *j;
	int rank;
	struct fake_dev fd;
	struct transport tp[NTP];
	struct transport_env env[NTP];
	bool use_peer[NTP][MAXR];
	struct coll_comm *c;
	struct coll_buf buf, scratch;
	char *mem, *smem;
	uint64_t eagain, failures;
	int ret; /* the case's result */
	uint64_t ns;
	struct activity act;  /* what this rank's thread does (coll_comm_cfg.act) */
	struct act_snap seen; /* note_body: the other rank's record during its wait */
};

struct job {
	int n;
	struct transport_opts topts;
	char eps[NTP][MAXR][TRANSPORT_EP_MAX];
	pthread_barrier_t bar;
	volatile int abort_flag;
	uint64_t timeout_ns;
	uint64_t buf_bytes, scratch_bytes;
	bool staged;
	bool no_layout; /* comm without a node layout: hierarchical is refused */
	void (*body)(struct rank_ctx *rc);
	const int *algos; /* matrix_body's algorithms */
	size_t nalgos;
	struct rank_ctx ranks[MAXR];
};

/* The loop transport as the registry would hand it out: unset ops filled with stubs. */
static struct transport_ops loop_ops;

static int fake_reduce(void *ctx, int chan, void *dst, const void *src, uint64_t count,
		       enum dtype dt)
{
	struct fake_dev *fd = ctx;

	reduce_sum(dst, src, count, dt);
	fd->reduces++;
	fd->pending[chan] = 2;
	return 0;
}

static int fake_scale(void *ctx, int chan, void *buf, uint64_t count, enum dtype dt,
		      uint32_t divisor)
{
	struct fake_dev *fd = ctx;

	reduce_div(buf, count, dt, divisor);
	fd->pending[chan] = 2;
	return 0;
}

static int fake_query(void *ctx, int chan)
{
	struct fake_dev *fd = ctx;

	if (fd->pending[chan]) {
		fd->pending[chan]--;
		return 0;
	}
	return 1;
}

static int fake_start(void *ctx, int chan, uint64_t off, uint64_t bytes)
{
	struct fake_dev *fd = ctx;

	memcpy(fd->host + off, fd->dev + off, bytes);
	fd->starts++;
	fd->pending[chan] = 2;
	return 0;
}

static int fake_done(void *ctx, int chan, uint64_t off, uint64_t bytes)
{
	struct fake_dev *fd = ctx;

	(void)chan;
	/* deferred to coll_end; a piece outside the collective's range is a failure */
	if (off < fd->lo || off + bytes > fd->hi)
		return -EINVAL;
	fd->dones++;
	return 0;
}

static int fake_begin(void *ctx, uint64_t off, uint64_t bytes)
{
	struct fake_dev *fd = ctx;

	fd->lo = off;
	fd->hi = off + bytes;
	fd->end_pending = -1;
	fd->begins++;
	return 0;
}

static int fake_end(void *ctx)
{
	struct fake_dev *fd = ctx;

	if (fd->end_pending < 0) {
		memcpy(fd->dev + fd->lo, fd->host + fd->lo, fd->hi - fd->lo);
		fd->end_pending = 2;
	}
	if (fd->end_pending) {
		fd->end_pending--;
		return 0;
	}
	fd->ends++;
	return 1;
}

static int setup_rank(struct rank_ctx *rc)
{
	struct job *j = rc->j;
	struct transport *peer_tp[MAXR] = {0};
	struct coll_comm_cfg cfg = {
	    .rank = rc->rank,
	    .nranks = j->n,
	    .peer_tp = peer_tp,
	    .abort_flag = &j->abort_flag,
	    .timeout_ns = j->timeout_ns,
	    .max_channels = 4,
	    .act = &rc->act,
	    /* hierarchical layouts: 2 -> 1x2, 3 -> 1x3, 4 -> 2x2, 5 -> 5x1, 6 -> 3x2 */
	    .local_size = j->no_layout	  ? 0
			  : j->n % 2 == 0 ? 2
			  : j->n % 3 == 0 ? 3
					  : 1,
	};
	size_t len;

	for (int i = 0; i < NTP; i++) {
		for (int p = 0; p < j->n; p++)
			rc->use_peer[i][p] = p != rc->rank && (p + rc->rank) % NTP == i;
		rc->env[i] = (struct transport_env){
		    .rank = rc->rank,
		    .nranks = j->n,
		    .use_peer = rc->use_peer[i],
		    .job_id = 0x1234 + (uint64_t)i,
		    .timeout_ms = 1000,
		    .opts = &j->topts,
		    .numa_node = -1,
		    .abort_flag = &j->abort_flag,
		};
		rc->tp[i].ops = &loop_ops;
		rc->tp[i].env = &rc->env[i];
		if (loop_ops.open(&rc->tp[i], &rc->env[i]))
			return -1;
		if (loop_ops.endpoint(&rc->tp[i], j->eps[i][rc->rank], &len))
			return -1;
	}
	pthread_barrier_wait(&j->bar);
	for (int i = 0; i < NTP; i++)
		if (loop_ops.connect(&rc->tp[i], j->eps[i]))
			return -1;
	for (int p = 0; p < j->n; p++)
		peer_tp[p] = p == rc->rank ? NULL : &rc->tp[(p + rc->rank) % NTP];
	rc->mem = aligned_alloc(64, GS_ALIGN_UP(j->buf_bytes, 64));
	rc->smem = aligned_alloc(64, GS_ALIGN_UP(j->scratch_bytes, 64));
	rc->fd.dev = aligned_alloc(64, GS_ALIGN_UP(j->buf_bytes, 64));
	if (!rc->mem || !rc->smem || !rc->fd.dev)
		return -1;
	if (j->staged) {
		rc->fd.host = rc->mem;
		rc->fd.ops = (struct coll_memops){
		    .name = "fake-staging",
		    .ctx = &rc->fd,
		    .reduce = fake_reduce,
		    .scale = fake_scale,
		    .query = fake_query,
		    .piece_start = fake_start,
		    .piece_done = fake_done,
		    .coll_begin = fake_begin,
		    .coll_end = fake_end,
		};
		cfg.mem = &rc->fd.ops;
	}
	rc->c = coll_comm_create(&cfg);
	if (!rc->c)
		return -1;
	memset(rc->mem, 0, j->buf_bytes);
	memset(rc->smem, 0, j->scratch_bytes);
	if (coll_buf_register(rc->c, &rc->buf, rc->mem, j->buf_bytes, MEM_HOST) ||
	    coll_buf_register(rc->c, &rc->scratch, rc->smem, j->scratch_bytes, MEM_HOST))
		return -1;
	return 0;
}

static void teardown_rank(struct rank_ctx *rc)
{
	coll_buf_deregister(rc->c, &rc->buf);
	coll_buf_deregister(rc->c, &rc->scratch);
	coll_comm_destroy(rc->c);
	for (int i = 0; i < NTP; i++)
		loop_ops.close(&rc->tp[i]);
	free(rc->mem);
	free(rc->smem);
	free(rc->fd.dev);
}

static void *rank_main(void *arg)
{
	struct rank_ctx *rc = arg;

	if (setup_rank(rc)) {
		rc->ret = -1000;
		return NULL;
	}
	pthread_barrier_wait(&rc->j->bar);
	rc->j->body(rc);
	/* Peers may still hold references into our queues until everyone is done. */
	pthread_barrier_wait(&rc->j->bar);
	teardown_rank(rc);
	return NULL;
}

static void run_job(struct job *j)
{
	pthread_t th[MAXR];

	pthread_barrier_init(&j->bar, NULL, (unsigned)j->n);
	for (int r = 0; r < j->n; r++) {
		j->ranks[r] = (struct rank_ctx){.j = j, .rank = r};
		assert_int_equal(pthread_create(&th[r], NULL, rank_main, &j->ranks[r]), 0);
	}
	for (int r = 0; r < j->n; r++)
		pthread_join(th[r], NULL);
	pthread_barrier_destroy(&j->bar);
	for (int r = 0; r < j->n; r++)
		assert_int_not_equal(j->ranks[r].ret, -1000);
}

static struct job *job_new(int n, uint64_t buf_bytes, uint64_t scratch_bytes, int depth,
			   uint64_t eager, uint64_t timeout_ms)
{
	struct job *j = calloc(1, sizeof(*j));

	assert_non_null(j);
	j->n = n;
	j->topts.qp_depth = depth;
	j->topts.slot_size = eager;
	j->timeout_ns = timeout_ms * 1000000ull;
	j->buf_bytes = buf_bytes;
	j->scratch_bytes = scratch_bytes;
	return j;
}

/* ---- correctness matrix ---- */

static const int matrix_algos[] = {ALGO_RING, ALGO_TREE, ALGO_RHD, ALGO_RD, ALGO_LINEAR,
				   ALGO_HIERARCHICAL, ALGO_AUTO};
static const uint64_t matrix_counts[] = {1, 2, 7, 13, 1000, 4099};
static const uint64_t matrix_chunks[] = {24, 1000, 1 << 16};
#define MATRIX_OFF 24 /* bytes: the collective runs inside a bigger registered buffer */

static void matrix_body(struct rank_ctx *rc)
{
	int n = rc->j->n, idx = 0;

	for (size_t a = 0; a < rc->j->nalgos; a++)
		for (int dt = 0; dt < DT_COUNT; dt++)
			for (size_t ci = 0; ci < ARRAY_SIZE(matrix_counts); ci++, idx++) {
				uint64_t count = matrix_counts[ci] + (uint64_t)n;
				uint64_t chunk = matrix_chunks[idx % ARRAY_SIZE(matrix_chunks)];
				int op = idx % REDOP_COUNT, channels = 1 + idx % 4;
				size_t es = dtype_size(dt);
				uint64_t seed = 1000 + (uint64_t)idx, first;
				unsigned char *g = (unsigned char *)rc->mem;
				struct coll_stats st;
				int ret;

				memset(rc->mem, 0xa5, MATRIX_OFF + count * es + GUARD);
				verify_fill(rc->mem + MATRIX_OFF, count, 0, dt, op, seed, rc->rank,
					    n);
				ret =
				    coll_allreduce(rc->c, &rc->buf, MATRIX_OFF, &rc->scratch, count,
						   dt, op, rc->j->algos[a], chunk, channels, &st);
				if (ret) {
					print_error("rank %d %s %s %s count=%llu: %d\n", rc->rank,
						    sched_algo_name(rc->j->algos[a]),
						    dtype_name(dt), redop_name(op),
						    (unsigned long long)count, ret);
					rc->ret = ret;
					return;
				}
				rc->eagain += st.eagain;
				if (verify_check(rc->mem + MATRIX_OFF, count, 0, dt, op, seed, n,
						 &first)) {
					print_error("rank %d %s(%s) %s %s count=%llu chunk=%llu: "
						    "element %llu = %g, want %g\n",
						    rc->rank, sched_algo_name(rc->j->algos[a]),
						    sched_algo_name(st.algo), dtype_name(dt),
						    redop_name(op), (unsigned long long)count,
						    (unsigned long long)chunk,
						    (unsigned long long)first,
						    verify_value(rc->mem + MATRIX_OFF, first, dt),
						    verify_expected(first, dt, op, seed, n));
					rc->failures++;
				}
				/* Nothing outside [off, off + count) was touched. */
				for (uint64_t b = 0; b < MATRIX_OFF; b++)
					if (g[b] != 0xa5)
						rc->failures++;
				for (uint64_t b = 0; b < GUARD; b++)
					if (g[MATRIX_OFF + count * es + b] != 0xa5)
						rc->failures++;
			}
}

static void run_matrix_of(int n, int depth, uint64_t eager, const int *algos, size_t nalgos)
{
	uint64_t maxc = matrix_counts[ARRAY_SIZE(matrix_counts) - 1] + MAXR;
	struct job *j = job_new(n, MATRIX_OFF + maxc * 8 + GUARD, coll_scratch_bytes(1 << 16, 4),
				depth, eager, 10000);
	uint64_t eagain = 0;

	j->body = matrix_body;
	j->algos = algos;
	j->nalgos = nalgos;
	run_job(j);
	for (int r = 0; r < n; r++) {
		assert_int_equal(j->ranks[r].ret, 0);
		assert_int_equal(j->ranks[r].failures, 0);
		eagain += j->ranks[r].eagain;
	}
	/* A queue of 2 cannot take a step's transfers of several pieces at once. */
	if (depth <= 2)
		assert_true(eagain > 0);
	free(j);
}

static void run_matrix(int n, int depth, uint64_t eager)
{
	run_matrix_of(n, depth, eager, matrix_algos, ARRAY_SIZE(matrix_algos));
}

static void test_matrix(void **state)
{
	(void)state;
	for (int n = 2; n <= MATRIX_MAXR; n++)
		run_matrix(n, 64, 256);
}

/* Linear past SCHED_MAX_XFER + 1 ranks: the root takes its peers in two batches. */
static void test_matrix_linear(void **state)
{
	const int linear[] = {ALGO_LINEAR};

	(void)state;
	for (int n = 2; n <= MAXR; n++)
		run_matrix_of(n, 64, 256, linear, ARRAY_SIZE(linear));
}

static void test_matrix_shallow_queue(void **state)
{
	(void)state;
	run_matrix(3, 2, 1 << 20);
	run_matrix(4, 2, 0);
}

/* ---- staging, asynchronous memops ---- */

#define STAGED_COUNT 3001

static void staged_body(struct rank_ctx *rc)
{
	const int algos[] = {ALGO_RING, ALGO_TREE, ALGO_RHD, ALGO_RD, ALGO_LINEAR};
	uint64_t first;

	for (size_t a = 0; a < ARRAY_SIZE(algos); a++) {
		int op = (int)a % REDOP_COUNT;
		struct coll_stats st;
		uint64_t starts = rc->fd.starts, dones = rc->fd.dones, ends = rc->fd.ends;

		verify_fill(rc->fd.dev + 16, STAGED_COUNT, 0, DT_F16, op, a, rc->rank, rc->j->n);
		memset(rc->mem, 0xff, rc->j->buf_bytes);
		if (coll_allreduce(rc->c, &rc->buf, 16, &rc->scratch, STAGED_COUNT, DT_F16, op,
				   algos[a], 200, 3, &st)) {
			rc->failures++;
			return;
		}
		rc->failures +=
		    verify_check(rc->fd.dev + 16, STAGED_COUNT, 0, DT_F16, op, a, rc->j->n, &first);
		rc->failures += rc->fd.starts - starts != st.pieces;
		rc->failures += rc->fd.dones - dones != st.pieces;
		rc->failures += rc->fd.ends - ends != 1 || rc->fd.begins != a + 1;
		rc->failures += rc->fd.lo != 16 || rc->fd.hi != 16 + STAGED_COUNT * 2;
		rc->failures += st.pieces < 4;
	}
	rc->failures += rc->fd.reduces == 0;
}

static void test_staged_memops(void **state)
{
	struct job *j =
	    job_new(3, 16 + STAGED_COUNT * 2, coll_scratch_bytes(200, 3), 64, 256, 5000);

	(void)state;
	j->staged = true;
	j->body = staged_body;
	run_job(j);
	for (int r = 0; r < 3; r++)
		assert_int_equal(j->ranks[r].failures, 0);
	free(j);
}

/* ---- timeout, abort ---- */

static void stall_body(struct rank_ctx *rc)
{
	uint64_t t0 = time_now_ns();

	if (rc->rank == 1) {
		/* Never joins the collective; raises the abort flag when asked to. */
		if (rc->j->timeout_ns > 5000000000ull) {
			struct timespec ts = {0, 50 * 1000000};

			nanosleep(&ts, NULL);
			__atomic_store_n(&rc->j->abort_flag, 1, __ATOMIC_RELAXED);
		}
		return;
	}
	verify_fill(rc->mem, 1000, 0, DT_F32, REDOP_SUM, 1, rc->rank, rc->j->n);
	rc->ret = coll_allreduce(rc->c, &rc->buf, 0, &rc->scratch, 1000, DT_F32, REDOP_SUM,
				 ALGO_RING, 256, 2, NULL);
	rc->ns = time_now_ns() - t0;
}

static void test_timeout(void **state)
{
	struct job *j = job_new(2, 8192, coll_scratch_bytes(256, 2), 64, 4096, 200);

	(void)state;
	j->body = stall_body;
	run_job(j);
	assert_int_equal(j->ranks[0].ret, -ETIMEDOUT);
	assert_true(j->ranks[0].ns >= 200000000ull);
	assert_true(j->ranks[0].ns < 2000000000ull);
	free(j);
}

static void test_abort(void **state)
{
	struct job *j = job_new(2, 8192, coll_scratch_bytes(256, 2), 64, 4096, 10000);

	(void)state;
	j->body = stall_body;
	run_job(j);
	assert_int_equal(j->ranks[0].ret, -ECONNABORTED);
	assert_true(j->ranks[0].ns < 2000000000ull);
	free(j);
}

/*
 * A wait that lasts goes into the waiting thread's activity record, naming the peer: rank
 * 1 never joins, reads rank 0's record from its own thread while rank 0 waits, then
 * aborts; rank 0's record is back to what it was before the collective once it returns.
 */
static void note_body(struct rank_ctx *rc)
{
	struct rank_ctx *r0 = &rc->j->ranks[0];

	if (rc->rank == 1) {
		uint64_t end = time_now_ns() + 5000000000ull;

		do {
			struct timespec ts = {0, 5 * 1000000};

			nanosleep(&ts, NULL);
			act_read(&r0->act, ACT_THREAD_MAIN, time_now_ns(), &rc->seen);
		} while (rc->seen.what != ACT_RECV && time_now_ns() < end);
		__atomic_store_n(&rc->j->abort_flag, 1, __ATOMIC_RELAXED);
		return;
	}
	act_set(&rc->act, ACT_CASE, -1, 0, time_now_ns());
	verify_fill(rc->mem, 1000, 0, DT_F32, REDOP_SUM, 1, rc->rank, rc->j->n);
	rc->ret = coll_allreduce(rc->c, &rc->buf, 0, &rc->scratch, 1000, DT_F32, REDOP_SUM,
				 ALGO_RING, 256, 2, NULL);
	act_read(&rc->act, ACT_THREAD_MAIN, time_now_ns(), &rc->seen);
}

static void test_wait_noted(void **state)
{
	struct job *j = job_new(2, 8192, coll_scratch_bytes(256, 2), 64, 4096, 10000);
	const struct act_snap *during = &j->ranks[1].seen, *after = &j->ranks[0].seen;

	(void)state;
	j->body = note_body;
	run_job(j);
	assert_int_equal(j->ranks[0].ret, -ECONNABORTED);
	/* the first AllReduce of the comm (seq 0) waits on a receive from peer 1, noted once
	 * the wait had lasted (2 ms), aged from when it began */
	assert_int_equal(during->what, ACT_RECV);
	assert_int_equal(during->peer, 1);
	assert_int_equal(during->seq, 0);
	assert_true(during->age_ms >= 2);
	assert_int_equal(after->what, ACT_CASE);
	assert_int_equal(after->peer, -1);
	free(j);
}

/* What the loop transport says it holds for a peer (the tail of a timeout's line): a
 * receive posted with no send, a held send (over the eager size) and an eager one in the
 * peer's inbox with no receive, as both ranks see them; then nothing once they match. */
static void test_loop_pending(void **state)
{
	static char eps[2][TRANSPORT_EP_MAX];
	struct transport_opts topts = {.qp_depth = 8, .slot_size = 64};
	struct transport_env env[2];
	struct transport tp[2];
	struct tp_mr *mr[2];
	struct tp_completion cq[8];
	char a[256], b[256], line[512];
	size_t len;

	(void)state;
	for (int r = 0; r < 2; r++) {
		env[r] = (struct transport_env){.rank = r, .nranks = 2, .job_id = 0x77,
						.timeout_ms = 1000, .opts = &topts, .numa_node = -1};
		tp[r] = (struct transport){.ops = &loop_ops, .env = &env[r]};
		assert_int_equal(loop_ops.open(&tp[r], &env[r]), 0);
		assert_int_equal(loop_ops.endpoint(&tp[r], eps[r], &len), 0);
	}
	for (int r = 0; r < 2; r++) {
		assert_int_equal(loop_ops.connect(&tp[r], eps), 0);
		assert_int_equal(loop_ops.mr_reg(&tp[r], r ? b : a, 256, MEM_HOST, &mr[r]), 0);
	}
	assert_int_equal(loop_ops.post_recv(&tp[0], 1, 7, mr[0], 0, 16, 1), 0);
	assert_int_equal(loop_ops.post_send(&tp[1], 0, 8, mr[1], 0, 128, 2), 0); /* held */
	assert_int_equal(loop_ops.post_send(&tp[1], 0, 9, mr[1], 128, 16, 3), 0); /* eager */
	assert_int_equal(loop_ops.pending(&tp[1], 0, line, sizeof(line)), 0);
	assert_non_null(strstr(line, "sends: 2 in the peer's inbox with no receive (1 held"));
	assert_non_null(strstr(line, "2 sends and 0 receives outstanding, 1 completions"));
	assert_int_equal(loop_ops.pending(&tp[0], 1, line, sizeof(line)), 0);
	assert_non_null(strstr(line, "receives: 1 posted and unmatched, 2 of the peer's sends"));
	assert_int_equal(loop_ops.pending(&tp[0], 0, line, sizeof(line)), -ENOENT);
	/* matched: rank 1's sends go, rank 0's receives complete */
	assert_int_equal(loop_ops.post_recv(&tp[0], 1, 8, mr[0], 0, 128, 4), 0);
	assert_int_equal(loop_ops.post_recv(&tp[0], 1, 9, mr[0], 128, 16, 5), 0);
	assert_int_equal(loop_ops.post_send(&tp[1], 0, 7, mr[1], 144, 16, 6), 0);
	assert_int_equal(loop_ops.poll(&tp[0], cq, 8), 3);
	assert_int_equal(loop_ops.poll(&tp[1], cq, 8), 3);
	assert_int_equal(loop_ops.pending(&tp[1], 0, line, sizeof(line)), 0);
	assert_non_null(strstr(line, "sends: 0 in the peer's inbox with no receive (0 held"));
	assert_non_null(strstr(line, "0 sends and 0 receives outstanding, 0 completions"));
	for (int r = 0; r < 2; r++) {
		loop_ops.mr_dereg(&tp[r], mr[r]);
		loop_ops.close(&tp[r]);
	}
}

/* ---- argument errors, one rank ---- */

static void errors_body(struct rank_ctx *rc)
{
	int fails = 0;

	fails += coll_allreduce(rc->c, &rc->buf, 0, &rc->scratch, 100, DT_F32, REDOP_SUM,
				ALGO_HIERARCHICAL, 256, 1, NULL) != -ENOTSUP;
	/* Scratch sized for 256-byte chunks cannot take 64 KiB chunks. */
	fails += coll_allreduce(rc->c, &rc->buf, 0, &rc->scratch, 2000, DT_F32, REDOP_SUM,
				ALGO_RING, 1 << 16, 1, NULL) != -ENOSPC;
	fails += coll_allreduce(rc->c, &rc->buf, 8, &rc->scratch, 2048, DT_F32, REDOP_SUM,
				ALGO_RING, 256, 1, NULL) != -EINVAL;
	fails += coll_allreduce(rc->c, &rc->buf, 0, &rc->scratch, 10, DT_COUNT, REDOP_SUM,
				ALGO_RING, 256, 1, NULL) != -EINVAL;
	/* Every rank still agrees on the sequence: a real collective works afterwards. */
	verify_fill(rc->mem, 999, 0, DT_BF16, REDOP_AVG, 5, rc->rank, rc->j->n);
	fails += coll_allreduce(rc->c, &rc->buf, 0, &rc->scratch, 999, DT_BF16, REDOP_AVG,
				ALGO_TREE, 256, 2, NULL) != 0;
	{
		uint64_t first;

		fails +=
		    verify_check(rc->mem, 999, 0, DT_BF16, REDOP_AVG, 5, rc->j->n, &first) != 0;
	}
	rc->failures = (uint64_t)fails;
}

static void test_errors(void **state)
{
	struct job *j = job_new(3, 8192, coll_scratch_bytes(256, 2), 64, 4096, 5000);

	(void)state;
	j->body = errors_body;
	j->no_layout = true;
	run_job(j);
	for (int r = 0; r < 3; r++)
		assert_int_equal(j->ranks[r].failures, 0);
	free(j);
}

/* Ring over 4 ranks: each rank's waits and bytes name its two neighbours, and only them. */
static void peer_busy_body(struct rank_ctx *rc)
{
	struct coll_peer_busy b[MAXR];
	struct coll_stats st;
	int n = rc->j->n, next = (rc->rank + 1) % n, prev = (rc->rank + n - 1) % n;

	rc->ret = coll_allreduce(rc->c, &rc->buf, 0, &rc->scratch, 4000, DT_F32, REDOP_SUM,
				 ALGO_RING, 1024, 2, &st);
	if (rc->ret)
		return;
	coll_peer_busy(rc->c, b);
	for (int p = 0; p < n; p++) {
		bool to = p == next, from = p == prev;

		/* 2(n-1) steps of 4000/n elements: 6 x 1000 x 4 bytes each way */
		rc->failures += b[p].send_bytes != (to ? 24000u : 0u);
		rc->failures += b[p].recv_bytes != (from ? 24000u : 0u);
		rc->failures += (b[p].send_ns > 0) != to;
		rc->failures += (b[p].recv_ns > 0) != from;
	}
	/* the transfer log: the same bytes, to the neighbours only, each one completed, as
	 * many sends as receives, no tag twice in one direction (a message is its tag) */
	const struct coll_xfer *x;
	uint64_t lost, bytes[2] = { 0 };
	int nx = coll_xfers(rc->c, &x, &lost), count[2] = { 0 };

	rc->failures += nx < 12 || lost != 0;
	for (int i = 0; i < nx; i++) {
		rc->failures += (int)x[i].peer != (x[i].is_send ? next : prev);
		rc->failures += x[i].done_ns < x[i].post_ns || !x[i].done_ns;
		bytes[!!x[i].is_send] += x[i].bytes;
		count[!!x[i].is_send]++;
		for (int k = 0; k < i; k++)
			rc->failures += x[k].is_send == x[i].is_send && x[k].tag == x[i].tag;
	}
	rc->failures += count[0] != count[1];
	rc->failures += bytes[0] != 24000u || bytes[1] != 24000u;
	coll_xfers_reset(rc->c);
	rc->failures += coll_xfers(rc->c, &x, &lost) != 0;
}

static void test_peer_busy(void **state)
{
	struct job *j = job_new(4, 4000 * 4 + GUARD, coll_scratch_bytes(1024, 2), 64, 256, 10000);

	(void)state;
	j->body = peer_busy_body;
	run_job(j);
	for (int r = 0; r < 4; r++) {
		assert_int_equal(j->ranks[r].ret, 0);
		assert_int_equal(j->ranks[r].failures, 0);
	}
	free(j);
}

static void test_single_rank(void **state)
{
	struct coll_comm_cfg cfg = {
	    .rank = 0, .nranks = 1, .timeout_ns = 1000000, .max_channels = 1};
	struct coll_comm *c = coll_comm_create(&cfg);
	float v[5] = {1, 2, 3, 4, 5};
	struct coll_buf b;
	struct coll_stats st;

	(void)state;
	assert_non_null(c);
	assert_int_equal(coll_comm_ntransports(c), 0);
	assert_int_equal(coll_buf_register(c, &b, v, sizeof(v), MEM_HOST), 0);
	assert_int_equal(
	    coll_allreduce(c, &b, 0, NULL, 5, DT_F32, REDOP_AVG, ALGO_AUTO, 64, 1, &st), 0);
	assert_true(v[0] == 1 && v[4] == 5);
	assert_int_equal(st.algo, ALGO_RING);
	coll_buf_deregister(c, &b);
	coll_comm_destroy(c);
	cfg.timeout_ns = 0;
	assert_null(coll_comm_create(&cfg));
	assert_true(coll_busbw_factor(COLL_OP_ALLREDUCE, 4) == 1.5);
	assert_true(coll_busbw_factor(COLL_OP_WRITE_BW, 2) == 1.0);
	assert_int_equal(coll_op_by_name("write_lat"), COLL_OP_WRITE_LAT);
}

/* ---- point to point ---- */

#define P2P_BYTES 5000

static void p2p_body(struct rank_ctx *rc)
{
	uint64_t ns = 0;
	int ret;

	memset(rc->mem, rc->rank ? 0 : 0x3c, P2P_BYTES);
	ret = coll_write_bw(rc->c, &rc->buf, P2P_BYTES, 500, 8, &ns);
	if (ret || (rc->rank < 2 && !ns) || (rc->rank >= 2 && ns))
		rc->failures++;
	/* Rank 1 now holds rank 0's bytes (all messages carry the same ones). */
	if (rc->rank == 1)
		for (int i = 0; i < P2P_BYTES; i++)
			rc->failures += (unsigned char)rc->mem[i] != 0x3c;
	ret = coll_write_bw(rc->c, &rc->buf, 100, 300, 1, &ns);
	rc->failures += ret != 0;
	ret = coll_write_lat(rc->c, &rc->buf, 8, 200, &ns);
	if (ret || (rc->rank < 2 && !ns))
		rc->failures++;
	rc->ns = ns;
	ret = coll_write_lat(rc->c, &rc->buf, P2P_BYTES, 20, &ns);
	rc->failures += ret != 0;
	rc->failures += coll_write_bw(rc->c, &rc->buf, rc->j->buf_bytes + 1, 1, 1, &ns) !=
			(rc->rank < 2 ? -EINVAL : 0);
}

static void test_p2p(void **state)
{
	struct job *j = job_new(3, 8192, 4096, 4, 1024, 5000);

	(void)state;
	j->body = p2p_body;
	run_job(j);
	for (int r = 0; r < 3; r++)
		assert_int_equal(j->ranks[r].failures, 0);
	free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_single_rank),
	    cmocka_unit_test(test_peer_busy),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_p2p),
	    cmocka_unit_test(test_staged_memops),
	    cmocka_unit_test(test_timeout),
	    cmocka_unit_test(test_loop_pending),
	    cmocka_unit_test(test_abort),
	    cmocka_unit_test(test_wait_noted),
	    cmocka_unit_test(test_matrix_shallow_queue),
	    cmocka_unit_test(test_matrix),
	    cmocka_unit_test(test_matrix_linear),
	};

	transport_ops_complete(&loop_ops, &loop_transport_ops);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
