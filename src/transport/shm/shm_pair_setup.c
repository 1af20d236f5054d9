/*
 * Setup of the shm/cudaipc pair machinery (steps in shm_pair.h): the directed segments'
 * create, attach (bounded wait), unlink and unmap, endpoints, links and requests.
 */
#include <dirent.h>
#include <errno.h>
#include <pwd.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "transport/shm/shm_pair.h"
#include "util/log.h"
#include "util/timeutil.h"

struct shm_pair_ep {
	uint64_t magic;
	int32_t pid;
	int32_t rank;
};

bool shm_pair_on_host(const struct transport_env *env, int peer)
{
	return peer != env->rank && peer >= 0 && peer < env->nranks &&
	       env->host_of_rank[peer] == env->host_of_rank[env->rank];
}

static void seg_name(struct shm_pair_seg *s, const struct shm_pair_proto *pr, uint64_t job_id,
		     int sender, int receiver)
{
	snprintf(s->name, sizeof(s->name), "/gradsync-%016llx-%s%d-%d", (unsigned long long)job_id,
		 pr->seg_infix, sender, receiver);
}

/*
 * Someone holds our name already. The job id is a random nonce, so that is no leftover
 * of ours: never take it over (it may be a trap), say whose it is.
 */
static void seg_name_taken(const struct shm_pair_seg *s, int sender)
{
	char path[96], who[64] = "?";
	struct stat st;

	snprintf(path, sizeof(path), "/dev/shm%s", s->name);
	if (!stat(path, &st)) {
		struct passwd *pw = getpwuid(st.st_uid);

		if (pw && pw->pw_name)
			snprintf(who, sizeof(who), "%s (uid %u)", pw->pw_name, (unsigned)st.st_uid);
		else
			snprintf(who, sizeof(who), "uid %u", (unsigned)st.st_uid);
	}
	log_err(LOG_TRANSPORT,
		"shm_open %s peer=%d: File exists, owned by %s: this job's random name was "
		"taken before us (squatted?); not using it",
		path, sender, who);
}

static int seg_create(struct shm_pair_core *c, struct shm_pair_seg *s, int sender)
{
	const struct shm_pair_proto *pr = c->proto;
	size_t size = c->seg_size;
	int fd, err;
	void *p;

	memset(s, 0, sizeof(*s));
	seg_name(s, pr, c->env->job_id, sender, c->env->rank);
	fd = shm_open(s->name, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0) {
		err = errno;
		if (err == EEXIST)
			seg_name_taken(s, sender);
		else
			log_err(LOG_TRANSPORT, "shm_open %s: %s", s->name, strerror(err));
		s->name[0] = '\0';
		return -err;
	}
	/* allocate for real: a full /dev/shm must fail here with ENOSPC, not SIGBUS later */
	err = posix_fallocate(fd, 0, (off_t)size);
	if (err) {
		log_err(LOG_TRANSPORT, "posix_fallocate %s size=%zu: %s (is /dev/shm big enough?)",
			s->name, size, strerror(err));
		goto out_unlink;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED) {
		err = errno;
		log_err(LOG_TRANSPORT, "mmap %s size=%zu: %s", s->name, size, strerror(err));
		goto out_unlink;
	}
	close(fd);
	/* touch every page now: the data path must never fault a fresh page */
	memset(p, 0, size);
	s->hdr = p;
	s->size = size;
	s->hdr->job_id = c->env->job_id;
	s->hdr->sender = sender;
	s->hdr->receiver = c->env->rank;
	s->hdr->receiver_pid = getpid();
	if (pr->seg_init)
		pr->seg_init(c, s->hdr);
	atomic_thread_fence(memory_order_release);
	s->hdr->magic = pr->seg_magic;
	return 0;

out_unlink:
	close(fd);
	shm_unlink(s->name);
	s->name[0] = '\0';
	return -err;
}

static int seg_open_wait(const char *name, uint64_t deadline_ns, volatile const int *abort_flag)
{
	struct timespec ms = {0, 1000000};
	int fd;

	for (;;) {
		fd = shm_open(name, O_RDWR, 0);
		if (fd >= 0 || errno != ENOENT)
			return fd;
		if (abort_flag && *abort_flag) {
			errno = ECANCELED;
			return -1;
		}
		if (time_now_ns() > deadline_ns) {
			errno = ETIMEDOUT;
			return -1;
		}
		nanosleep(&ms, NULL);
	}
}

/* S side of setup step 3 (without the pid check, which needs the endpoint). */
static int seg_attach(struct shm_pair_core *c, struct shm_pair_seg *s, int receiver,
		      uint64_t deadline_ns)
{
	const struct shm_pair_proto *pr = c->proto;
	struct stat st;
	int fd, err;
	void *p;

	memset(s, 0, sizeof(*s));
	seg_name(s, pr, c->env->job_id, c->env->rank, receiver);
	fd = seg_open_wait(s->name, deadline_ns, c->env->abort_flag);
	if (fd < 0) {
		err = errno;
		log_err(LOG_TRANSPORT, "shm_open %s peer=%d: %s", s->name, receiver, strerror(err));
		s->name[0] = '\0';
		return -err;
	}
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(struct shm_pair_hdr)) {
		log_err(LOG_TRANSPORT, "fstat %s peer=%d: not a %s segment", s->name, receiver,
			pr->name);
		close(fd);
		s->name[0] = '\0';
		return -EPROTO;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		 0);
	err = errno;
	close(fd);
	if (p == MAP_FAILED) {
		log_err(LOG_TRANSPORT, "mmap %s peer=%d: %s", s->name, receiver, strerror(err));
		s->name[0] = '\0';
		return -err;
	}
	s->hdr = p;
	s->size = (size_t)st.st_size;
	/* the receiver fills the header before the magic */
	if (s->hdr->magic != pr->seg_magic || s->hdr->job_id != c->env->job_id ||
	    s->hdr->sender != c->env->rank || s->hdr->receiver != receiver ||
	    !pr->seg_valid(s->hdr, s->size)) {
		log_err(LOG_TRANSPORT, "%s attach %s peer=%d: foreign or torn segment", pr->name,
			s->name, receiver);
		munmap(p, s->size);
		s->hdr = NULL;
		s->name[0] = '\0';
		return -EPROTO;
	}
	atomic_thread_fence(memory_order_acquire);
	atomic_store_explicit(&s->hdr->sender_pid, getpid(), memory_order_release);
	/* both sides are mapped now: drop the name so a crash leaves nothing behind */
	shm_unlink(s->name);
	s->name[0] = '\0';
	return 0;
}

static void seg_destroy(struct shm_pair_seg *s)
{
	if (s->hdr)
		munmap(s->hdr, s->size);
	if (s->name[0])
		shm_unlink(s->name);
	memset(s, 0, sizeof(*s));
}

int shm_pair_init(struct shm_pair_core *c, const struct transport_env *env,
		  const struct shm_pair_proto *proto)
{
	c->env = env;
	c->proto = proto;
	c->links = calloc((size_t)env->nranks, sizeof(*c->links));
	c->reqs = calloc(SHM_PAIR_NREQS, sizeof(*c->reqs));
	if (proto->where_off)
		c->where = calloc(SHM_PAIR_NREQS, sizeof(*c->where));
	if (!c->links || !c->reqs || (proto->where_off && !c->where))
		return -ENOMEM;
	/* both loops write every page now: posts never fault one in */
	for (int i = SHM_PAIR_NREQS - 1; i >= 0; i--)
		pair_req_put(c, &c->reqs[i]);
	for (int i = 0; c->where && i < SHM_PAIR_NREQS; i++)
		c->where[i].alloc_off = UINT64_MAX; /* not announced yet */
	for (int p = 0; p < env->nranks; p++)
		c->links[p].pidfd = -1;
	return 0;
}

int shm_pair_create(struct shm_pair_core *c, size_t seg_size)
{
	const struct transport_env *env = c->env;
	int err;

	c->seg_size = seg_size;
	for (int p = 0; p < env->nranks; p++) {
		struct shm_pair_link *l = &c->links[p];

		if (!env->use_peer[p] || p == env->rank)
			continue;
		if (!shm_pair_on_host(env, p)) {
			log_err(LOG_TRANSPORT, "%s open peer=%d: not on this host", c->proto->name,
				p);
			return -EHOSTUNREACH;
		}
		err = seg_create(c, &l->rx, p);
		if (err)
			return err;
		l->cts_floor = c->proto->cts_floor(l->rx.hdr);
		l->active = true;
	}
	return 0;
}

void shm_pair_fini(struct shm_pair_core *c)
{
	for (int p = 0; c->links && p < c->env->nranks; p++) {
		/*
		 * The segment the peer created for us and we never attached (it died, or setup
		 * stopped first) has a name only we still know: remove it, or it stays in
		 * /dev/shm. The random job id makes it ours; a live peer keeps its mapping.
		 */
		if (p != c->env->rank && c->env->use_peer[p] && shm_pair_on_host(c->env, p) &&
		    !c->links[p].tx.hdr) {
			struct shm_pair_seg tx;

			seg_name(&tx, c->proto, c->env->job_id, c->env->rank, p);
			shm_unlink(tx.name);
		}
		seg_destroy(&c->links[p].rx);
		seg_destroy(&c->links[p].tx);
		if (c->links[p].pidfd >= 0)
			close(c->links[p].pidfd);
	}
	free(c->links);
	free(c->reqs);
	free(c->where);
	c->links = NULL;
	c->reqs = NULL;
	c->where = NULL;
}

int shm_pair_endpoint(struct transport *t, void *buf, size_t *len)
{
	struct shm_pair_core *c = t->priv;
	struct shm_pair_ep ep = {c->proto->ep_magic, getpid(), c->env->rank};

	if (*len < sizeof(ep))
		return -ENOSPC;
	memcpy(buf, &ep, sizeof(ep));
	*len = sizeof(ep);
	return 0;
}

/* R: wait until the peer mapped our rx segment (it unlinks the name then). */
static int wait_attached(struct shm_pair_core *c, int p, uint64_t deadline)
{
	struct timespec ms = {0, 1000000};
	struct shm_pair_seg *rx = &c->links[p].rx;

	while (!atomic_load_explicit(&rx->hdr->sender_pid, memory_order_acquire)) {
		if (c->env->abort_flag && *c->env->abort_flag)
			return -ECANCELED;
		if (time_now_ns() > deadline) {
			log_err(LOG_TRANSPORT, "%s connect peer=%d: peer never attached",
				c->proto->name, p);
			return -ETIMEDOUT;
		}
		nanosleep(&ms, NULL);
	}
	rx->name[0] = '\0'; /* unlinked by the peer */
	return 0;
}

int shm_pair_connect(struct transport *t, const void *eps)
{
	struct shm_pair_core *c = t->priv;
	const struct transport_env *env = c->env;
	const char *name = c->proto->name;
	uint64_t deadline = time_now_ns() + (uint64_t)env->timeout_ms * 1000000ull;
	int err;

	for (int p = 0; p < env->nranks; p++) {
		struct shm_pair_link *l = &c->links[p];
		const struct shm_pair_ep *ep =
		    (const void *)((const char *)eps + p * TRANSPORT_EP_MAX);

		if (!l->active)
			continue;
		if (ep->magic != c->proto->ep_magic || ep->rank != p) {
			log_err(LOG_TRANSPORT, "%s connect peer=%d: bad endpoint record", name, p);
			return -EPROTO;
		}
		l->pid = ep->pid;
		err = seg_attach(c, &l->tx, p, deadline);
		if (err)
			return err;
		if (l->tx.hdr->receiver_pid != l->pid) {
			log_err(LOG_TRANSPORT,
				"%s connect peer=%d: pid %d is not the endpoint's %d", name, p,
				l->tx.hdr->receiver_pid, l->pid);
			return -EPROTO;
		}
		/* pidfd sees a dead peer even while it is an unreaped zombie */
		l->pidfd = pidfd_open(l->pid, 0);
	}
	for (int p = 0; p < env->nranks; p++) {
		if (!c->links[p].active)
			continue;
		err = wait_attached(c, p, deadline);
		if (err)
			return err;
		c->links[p].last_progress_ns = time_now_ns();
	}
	return 0;
}

int transport_sweep_job(uint64_t job_id)
{
	char prefix[48], path[320];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(prefix, sizeof(prefix), "gradsync-%016llx-", (unsigned long long)job_id);
	d = opendir("/dev/shm");
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct stat st;

		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
		/* only our own: a name someone else made is theirs to remove */
		if (lstat(path, &st) || st.st_uid != geteuid())
			continue;
		if (unlink(path) == 0)
			n++;
	}
	closedir(d);
	return n;
}
