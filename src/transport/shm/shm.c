/*
 * shm transport: ranks on one host exchange through POSIX shared-memory rings, one
 * per directed pair (setup in shm_pair.h, data protocol in shm_progress.c), and from
 * SHM_DIRECT_MIN bytes straight from the sender's buffer when it is a shmem allocation
 * the receiver can map. No thread: progress happens in poll().
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "transport/host_mr.h"
#include "transport/shm/shm_priv.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

#define SHM_EP_MAGIC 0x67736d6570000002ull
#define SHM_DEF_SLOT (1u << 20)
#define SHM_DEF_RING (8ull << 20)
#define SHM_MIN_SLOT 4096u

static size_t seg_data_off(uint32_t nslots)
{
	return GS_ALIGN_UP(sizeof(struct shm_seg_hdr) + nslots * sizeof(struct shm_desc), 4096);
}

static void shm_seg_init(struct shm_pair_core *c, struct shm_pair_hdr *ph)
{
	const struct shm_priv *s = (const struct shm_priv *)c;
	struct shm_seg_hdr *h = (struct shm_seg_hdr *)ph;

	h->nslots = s->nslots;
	h->slot_size = s->slot_size;
	h->data_off = seg_data_off(s->nslots);
	atomic_store(&h->s_cpu, -1);
}

/* The sizes the receiver wrote fit the file (they are read on every slot). */
static bool shm_seg_valid(const struct shm_pair_hdr *ph, size_t size)
{
	const struct shm_seg_hdr *h = (const struct shm_seg_hdr *)ph;

	return size >= sizeof(*h) && h->nslots >= 2 && h->slot_size &&
	       h->data_off >= seg_data_off(h->nslots) &&
	       h->data_off + (size_t)h->nslots * h->slot_size <= size;
}

/* The sender consumes CTS entries as soon as it reads them: their slots are free. */
static const _Atomic uint64_t *shm_cts_floor(struct shm_pair_hdr *h)
{
	return &h->cts_tail;
}

static const struct shm_pair_proto shm_proto = {
    .name = "shm",
    .seg_infix = "",
    .seg_magic = SHM_SEG_MAGIC,
    .ep_magic = SHM_EP_MAGIC,
    .seg_init = shm_seg_init,
    .seg_valid = shm_seg_valid,
    .cts_floor = shm_cts_floor,
    .progress = shm_progress,
    /* a vDSO read; the thread CPU clock would be a syscall on every spin of the
     * caller's poll loop. No thread of ours runs elsewhere, so time spent copying
     * inside poll() is the transport's CPU time. */
    .cpu_clock = time_now_ns,
    .clock_at_work = true,
};

static void shm_close(struct transport *t)
{
	struct shm_priv *s = t->priv;

	if (!s)
		return;
	for (size_t i = 0; s->maps && i < (size_t)s->c.env->nranks * SHM_MAPS; i++)
		if (s->maps[i].id)
			munmap((void *)s->maps[i].ptr, s->maps[i].size);
	shm_pair_fini(&s->c);
	free(s->slot_next);
	free(s->maps);
	free(s->direct);
	free(s->src);
	free(s);
	t->priv = NULL;
}

static int shm_open_t(struct transport *t, const struct transport_env *env)
{
	const struct transport_opts *o = env->opts;
	uint64_t ring = o && o->shm_ring ? o->shm_ring : SHM_DEF_RING;
	uint64_t slot = o && o->slot_size ? o->slot_size : SHM_DEF_SLOT;
	struct shm_priv *s;
	int err;

	if (slot < SHM_MIN_SLOT || slot > (1u << 30)) {
		log_err(LOG_TRANSPORT, "shm open: slot_size %llu outside 4KiB..1GiB",
			(unsigned long long)slot);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	t->priv = s;
	t->env = env;
	s->slot_size = (uint32_t)slot;
	s->nslots = (uint32_t)GS_MAX(ring / slot, 2);
	s->copy = o ? o->shm_copy : TP_SHM_COPY_AUTO;
	s->cpu = -2;
	s->src = calloc(SHM_PAIR_NREQS, sizeof(*s->src));
	s->direct = calloc((size_t)env->nranks, sizeof(*s->direct));
	s->maps = calloc((size_t)env->nranks * SHM_MAPS, sizeof(*s->maps));
	s->slot_next = calloc((size_t)env->nranks, sizeof(*s->slot_next));
	err = s->src && s->direct && s->maps && s->slot_next ? shm_pair_init(&s->c, env, &shm_proto)
							      : -ENOMEM;
	if (!err)
		err = shm_pair_create(&s->c,
				      seg_data_off(s->nslots) + (size_t)s->nslots * s->slot_size);
	if (err)
		shm_close(t);
	return err;
}

/* A receive posted its CTS: the sender may sleep waiting for it (shm_wait.c). */
static int recv_posted(struct shm_priv *s, int peer, int err)
{
	struct shm_seg_hdr *rx;

	if (err)
		return err;
	rx = shm_hdr(&s->c.links[peer].rx);
	shm_bell_ring(&s->c, &rx->bell_s, &rx->s_sleeps);
	return 0;
}

static int shm_post_recv(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
			 size_t len, uint64_t cookie)
{
	if (!mr)
		return -EINVAL;
	return recv_posted(t->priv, peer,
			   shm_pair_post_recv(t->priv, peer, tag, mr->addr, mr->len, off, len,
					      cookie, NULL, NULL, DT_F32));
}

/* Slots are reduced straight into the buffer: no copy into the executor's scratch. */
static int shm_post_recv_reduce(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr,
				size_t off, size_t len, enum dtype dt, tp_reduce_fn red,
				uint64_t cookie)
{
	struct shm_priv *s = t->priv;

	if (!mr || !red || (unsigned)dt >= DT_COUNT || len % dtype_size(dt) ||
	    s->slot_size % dtype_size(dt))
		return -EINVAL;
	return recv_posted(s, peer,
			   shm_pair_post_recv(t->priv, peer, tag, mr->addr, mr->len, off, len,
					      cookie, NULL, red, dt));
}

static int shm_post_send(struct transport *t, int peer, uint64_t tag, struct tp_mr *mr, size_t off,
			 size_t len, uint64_t cookie)
{
	struct shm_priv *s = t->priv;
	struct shm_pair_req *r;
	struct shm_src *src;
	int err;

	if (!mr)
		return -EINVAL;
	err = shm_pair_post_send(&s->c, peer, tag, mr->addr, mr->len, off, len, cookie, &r);
	if (err)
		return err;
	src = &s->src[pair_req_index(&s->c, r)];
	src->shared = mr->shared;
	if (mr->shared) {
		src->loc = mr->share;
		src->loc.off += off;
	}
	return 0;
}

/*
 * As the receiver of every peer: may we take its descriptors (pidfd_getfd wants ptrace
 * rights over it)? An fd number nobody has answers EBADF once the rights are checked.
 * direct_ok tells the peer; shm_copy = direct without it fails here.
 */
static int shm_connect(struct transport *t, const void *eps)
{
	struct shm_priv *s = t->priv;
	int err = shm_pair_connect(t, eps);

	for (int p = 0; !err && p < s->c.env->nranks; p++) {
		struct shm_pair_link *l = &s->c.links[p];
		int fd, why = ENOSYS;

		if (!l->active || s->copy == TP_SHM_COPY_SLOTS)
			continue;
		if (l->pidfd >= 0) {
			fd = (int)syscall(SYS_pidfd_getfd, l->pidfd, INT_MAX, 0);
			why = fd < 0 ? errno : 0;
			if (fd >= 0)
				close(fd);
		}
		if (why == EBADF) {
			atomic_store_explicit(&shm_hdr(&l->rx)->direct_ok, 1, memory_order_release);
			continue;
		}
		if (s->copy == TP_SHM_COPY_DIRECT) {
			/* pidfd_getfd needs ptrace rights over the peer and Linux >= 5.6 */
			log_err(LOG_TRANSPORT,
				"shm connect peer=%d: shm_copy = direct: pidfd_getfd: %s", p,
				strerror(why));
			return -EPERM;
		}
		log_dbg(LOG_TRANSPORT, "shm connect peer=%d: slots only (pidfd_getfd: %s)", p,
			strerror(why));
	}
	return err;
}

static int shm_path_info(struct transport *t, struct tp_path_info *info)
{
	struct shm_priv *s = t->priv;

	memset(info, 0, sizeof(*info));
	snprintf(info->transport, sizeof(info->transport), "shm");
	snprintf(info->device, sizeof(info->device), "shm");
	snprintf(info->note, sizeof(info->note), "ring %u slots x %u B per directed pair",
		 s->nslots, s->slot_size);
	return 0;
}

/*
 * chunk_size = auto. Measured on the 2-core VM (2 ranks: 5 interleaved repetitions, each
 * run's mean; tests/bench/RESULTS.md "shm's chunk by size"): 512 KiB pieces cross through
 * the slots and are reduced while still in L2, 1 MiB pieces go direct from the sender's
 * buffer (SHM_DIRECT_MIN), one copy fewer but out of cache. 2 ranks: 512 KiB 1.3-2.4x
 * ahead from 2 to 16 MiB (8 MiB 633 against 1239 us), even at 24-32 MiB, 1 MiB ahead from
 * 48 MiB (4630 against 5014 us) and 1.3-1.8x at 64-256 MiB; 4 ranks: 512 KiB ahead at 2
 * and 4 MiB (573 / 953 against 824 / 1431 us), behind from 8 MiB. Never smaller for more
 * bytes (coll_comm_chunk).
 */
static uint64_t shm_chunk_auto(uint64_t bytes, int nranks)
{
	uint64_t cached_max = nranks <= 2 ? 16ull << 20 : 4ull << 20;

	return bytes <= cached_max ? TP_CHUNK_CACHED : SHM_DIRECT_MIN;
}

const struct transport_ops shm_ops = {
    .name = "shm",
    .kind = TP_SHM,
    .chunk_auto = shm_chunk_auto,
    .can_connect = shm_pair_on_host,
    .open = shm_open_t,
    .endpoint = shm_pair_endpoint,
    .connect = shm_connect,
    .mr_reg = host_mr_reg,
    .mr_dereg = host_mr_dereg,
    .post_send = shm_post_send,
    .post_recv = shm_post_recv,
    .post_recv_reduce = shm_post_recv_reduce,
    .poll = shm_pair_poll,
    .wait = shm_wait,
    .peer_on_cpu = shm_peer_on_cpu,
    .coll_begin = shm_coll_begin,
    .path_info = shm_path_info,
    .stats = shm_pair_stats,
    .pending = shm_pair_pending,
    .close = shm_close,
};
