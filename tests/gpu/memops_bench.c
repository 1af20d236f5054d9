/*
 * Benchmark (not a test) of gradsync's own staged pipeline, src/coll/gpu_memops.c,
 * driven as the executor drives it (coll_begin, then per piece in order piece_start,
 * wait, piece_done, wait, on `channels` slots at once, then coll_end until done),
 * against one pinned cudaMemcpyAsync D2H of the same bytes in the same run. Sweeps the
 * pieces per copy (gpu_memops_batch; 1 = piece by piece, the pipeline before batching).
 * Before timing, one pass of each batch checks the bytes: the host mirror is changed
 * between piece_start and piece_done (as a reduce would) and the device buffer must
 * come back changed, every byte.
 * The host mirror comes from cudaHostAlloc (`hostalloc`, gpu_host_alloc) or from 2 MiB
 * pages (`thp`: aligned, madvise(MADV_HUGEPAGE) before the first touch, cudaHostRegister):
 * whether the IOMMU's walks over a 1 GiB mirror of 4 KiB pages cost the pipeline.
 *   memops_bench [TOTAL_MIB [PIECE_KIB [CHANNELS [hostalloc|thp]]]]   (default 1024 1024 4 hostalloc)
 * Prints "batch GB/s ratio" rows last. Exit 0, 1 on an error, 77 without a GPU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/gpu_memops.h"
#include "gpu/gpu.h"
#include "huge_pages.h"
#include "util/timeutil.h"

#define TIMEOUT_NS (60ull * 1000 * 1000 * 1000)
#define REPS 5

struct slot {
	bool busy, done_sent;
	uint64_t off, bytes;
};

/*
 * One staged pass over total bytes in piece-byte pieces on `channels` slots, the
 * executor's order: a free slot starts the next piece; once its copy in is done (check:
 * the piece's host bytes are flipped, as a reduce would change them) it ends the piece;
 * once that is done the slot is free again. Returns 0 or -errno.
 */
static int pass(const struct coll_memops *o, char *host, uint64_t total, uint64_t piece,
		int channels, bool check)
{
	struct slot sl[COLL_MAX_CHANNELS] = { 0 };
	uint64_t next = 0, done = 0, t0 = time_now_ns();
	int ret, q;

	ret = o->coll_begin(o->ctx, 0, total);
	while (!ret && done < total) {
		for (int ch = 0; ch < channels && !ret; ch++) {
			struct slot *x = &sl[ch];

			if (!x->busy) {
				if (next >= total)
					continue;
				x->off = next;
				x->bytes = piece < total - next ? piece : total - next;
				next += x->bytes;
				x->busy = true;
				x->done_sent = false;
				ret = o->piece_start(o->ctx, ch, x->off, x->bytes);
				continue;
			}
			q = o->query(o->ctx, ch);
			if (q < 0)
				ret = q;
			if (q != 1)
				continue;
			if (x->done_sent) {
				x->busy = false;
				done += x->bytes;
				continue;
			}
			if (check)
				for (uint64_t i = 0; i < x->bytes; i++)
					host[x->off + i] ^= 0x5a;
			x->done_sent = true;
			ret = o->piece_done(o->ctx, ch, x->off, x->bytes);
		}
		if (time_now_ns() - t0 > TIMEOUT_NS)
			ret = -ETIMEDOUT;
	}
	while (!ret && (q = o->coll_end(o->ctx)) != 1) {
		if (q < 0)
			return q;
		if (time_now_ns() - t0 > TIMEOUT_NS)
			return -ETIMEDOUT;
	}
	return ret;
}

static char *mirror_alloc(bool thp, uint64_t bytes)
{
	void *p;

	if (!thp)
		return gpu_host_alloc(bytes);
	p = huge_alloc(bytes, true);
	if (p && gpu_host_register(p, bytes)) {
		free(p);
		p = NULL;
	}
	return p;
}

static void mirror_free(bool thp, char *p)
{
	if (!p)
		return;
	if (!thp) {
		gpu_host_free(p);
		return;
	}
	gpu_host_unregister(p);
	free(p);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	uint64_t total = (argc > 1 ? strtoull(argv[1], NULL, 0) : 1024) << 20;
	uint64_t piece = (argc > 2 ? strtoull(argv[2], NULL, 0) : 1024) << 10;
	int channels = argc > 3 ? atoi(argv[3]) : 4;
	bool thp = argc > 4 && !strcmp(argv[4], "thp");
	static const int batches[] = { 1, 2, 4, 8, 16, 32 };
	double base[REPS], gbs[sizeof(batches) / sizeof(batches[0])][REPS], pinned;
	struct gpu_stream *s;
	struct gpu_memops *m;
	const struct coll_memops *o;
	char *host, *pin, *dev, *back;
	int ret = 1;

	if (!gpu_available() || gpu_set_device(0))
		return 77;
	if (!total || !piece || channels < 1 || channels > COLL_MAX_CHANNELS) {
		fprintf(stderr, "usage: memops_bench [TOTAL_MIB [PIECE_KIB [CHANNELS [hostalloc|thp]]]]\n");
		return 1;
	}
	host = mirror_alloc(thp, total);
	pin = gpu_host_alloc(total); /* the baseline's host end: cudaHostAlloc in both modes */
	back = malloc(total);
	dev = gpu_alloc(total);
	s = gpu_stream_create(true);
	m = gpu_memops_create(channels);
	if (!host || !pin || !back || !dev || !s || !m)
		goto out;
	o = gpu_memops_ops(m);
	if (gpu_memops_mirror(m, GPU_MIRROR_DATA, host, dev, total))
		goto out;
	for (uint64_t i = 0; i < total; i++)
		back[i] = (char)(i * 7 + (i >> 12));
	if (gpu_memcpy(dev, back, total, GPU_COPY_H2D))
		goto out;
	/* the check: every batch's pass flips every byte once, on the host, mid-piece */
	for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
		uint64_t bad = 0;

		if (gpu_memops_batch(m, batches[b]) || pass(o, host, total, piece, channels, true))
			goto out;
		if (gpu_memcpy(host, dev, total, GPU_COPY_D2H))
			goto out;
		for (uint64_t i = 0; i < total; i++)
			bad += host[i] != (char)(back[i] ^ (b % 2 ? 0 : 0x5a));
		if (bad) {
			fprintf(stderr, "batch %d: %llu wrong bytes\n", batches[b],
				(unsigned long long)bad);
			goto out;
		}
	}
	printf("check: %zu batches, every byte of %llu MiB came back as changed on the host\n",
	       sizeof(batches) / sizeof(batches[0]), (unsigned long long)(total >> 20));
	/* timed, interleaved: the pinned copy, then each batch, REPS times */
	for (int r = 0; r < REPS; r++) {
		uint64_t t0 = time_now_ns();

		if (gpu_memcpy_async(pin, dev, total, GPU_COPY_D2H, s) ||
		    gpu_stream_sync(s, 60000))
			goto out;
		base[r] = total / (double)(time_now_ns() - t0);
		for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
			if (gpu_memops_batch(m, batches[b]))
				goto out;
			t0 = time_now_ns();
			if (pass(o, host, total, piece, channels, false))
				goto out;
			gbs[b][r] = total / (double)(time_now_ns() - t0);
		}
	}
	qsort(base, REPS, sizeof(double), cmp_double);
	pinned = base[REPS / 2];
	printf("staged pipeline of gpu_memops.c, %llu MiB in %llu KiB pieces, %d channels, "
	       "mirror %s (AnonHugePages %ld KiB), median of %d, against one pinned D2H %.1f GB/s\n",
	       (unsigned long long)(total >> 20), (unsigned long long)(piece >> 10), channels,
	       thp ? "thp" : "hostalloc", anon_huge_kib(), REPS, pinned);
	printf("batch GB/s ratio (each repetition's GB/s in run order)\n");
	for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++) {
		double med;

		printf("%d", batches[b]);
		memcpy(base, gbs[b], sizeof(base)); /* the pinned figures are spent: reuse */
		qsort(base, REPS, sizeof(double), cmp_double);
		med = base[REPS / 2];
		printf(" %.1f %.2f (", med, med / pinned);
		for (int r = 0; r < REPS; r++)
			printf("%s%.1f", r ? " " : "", gbs[b][r]);
		printf(")\n");
	}
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "memops_bench: failed\n");
	gpu_memops_destroy(m);
	gpu_stream_destroy(s);
	gpu_free(dev);
	mirror_free(thp, host);
	gpu_host_free(pin);
	free(back);
	return ret;
}
