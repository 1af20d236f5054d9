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

/* Every segment's name in /dev/shm starts so (shm_open's name is "/" and this). */
#define SEG_PREFIX "gradsync-"

static void seg_name(struct shm_pair_seg *s, const struct shm_pair_proto *pr, uint64_t job_id,
		     int sender, int receiver)
{
	snprintf(s->name, sizeof(s->name), "/" SEG_PREFIX "%016llx-%s%d-%d",
		 (unsigned long long)job_id, pr->seg_infix, sender, receiver);
}

/*
 * Unlink our uid's regular files in /dev/shm whose name starts with prefix and for which
 * gone(fd, arg) holds (NULL: every one): the one walk of both sweeps. Returns how many
 * were removed; *bytes (unless NULL) adds their sizes.
 */
/* Unbounded, as every /dev/shm call here: tmpfs is memory, no server to lose. */
static int seg_sweep(const char *prefix, bool (*gone)(int fd, void *arg), void *arg,
		     uint64_t *bytes)
{
	struct dirent *e;
	int n = 0;
	DIR *d = opendir("/dev/shm");

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[320];
		struct stat st;
		bool drop;
		int fd;

		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			continue;
		/* only our own: a name someone else made is theirs to remove */
		drop = !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		       (!gone || gone(fd, arg));
		close(fd);
		if (drop && unlink(path) == 0) {
			n++;
			if (bytes)
				*bytes += (uint64_t)st.st_size;
		}
	}
	closedir(d);
	return n;
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

/* A process's identity beyond its pid, which the kernel reuses: the pid namespace's
 * inode (a pid means nothing outside it) and the start time. 0 when unreadable. */
static uint64_t proc_pidns(const char *pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%s/ns/pid", pid);
	return stat(path, &st) ? 0 : (uint64_t)st.st_ino;
}

/* 0 also for a process that has exited and awaits its reaping (zombie): it is gone. */
static uint64_t proc_start(const char *pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* the command name may hold spaces and ')': fields count from the last ')' */
	p = strrchr(buf, ')');
	if (p && (p[2] == 'Z' || p[2] == 'X'))
		return 0;
	for (i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (p)
		sscanf(p + 1, "%llu", &start);
	return start;
}

/* The creator fields of a header, as the segment's first bytes at offset 24. */
struct seg_creator {
	int32_t receiver_pid;
	int32_t sender_pid;
	uint64_t receiver_pidns;
	uint64_t receiver_start;
};
_Static_assert(offsetof(struct shm_pair_hdr, receiver_pid) == 24 &&
		       offsetof(struct shm_pair_hdr, receiver_start) == 40,
	       "struct seg_creator mirrors the header from receiver_pid on");

static int seg_create(struct shm_pair_core *c, struct shm_pair_seg *s, int sender)
{
	struct seg_creator me = {.receiver_pid = getpid(), .receiver_pidns = proc_pidns("self"),
				 .receiver_start = proc_start("self")};
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
	/* who we are, before the slow part (fallocate and touching every page): a job
	 * killed meanwhile (its launcher got SIGKILL) leaves a name the next one can judge */
	if (pwrite(fd, &me, sizeof(me), offsetof(struct shm_pair_hdr, receiver_pid)) !=
	    (ssize_t)sizeof(me)) {
		err = errno ? errno : EIO;
		log_err(LOG_TRANSPORT, "write %s: %s", s->name, strerror(err));
		goto out_unlink;
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
	/* touch every page now: the data path must never fault a fresh page; the first 64
	 * bytes (zero but the creator, the file is new) keep the creator meanwhile */
	memset((char *)p + 64, 0, size - 64);
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

/* seg_sweep's test for shm_pair_sweep_stale: the creator in the header is gone. */
static bool creator_gone(int fd, void *arg)
{
	const uint64_t *ns = arg;
	struct seg_creator cr;
	char pid[16];

	if (pread(fd, &cr, sizeof(cr), offsetof(struct shm_pair_hdr, receiver_pid)) !=
	    (ssize_t)sizeof(cr))
		return false;
	if (cr.receiver_pid <= 0 || cr.receiver_pidns != *ns || !cr.receiver_start)
		return false;
	snprintf(pid, sizeof(pid), "%d", (int)cr.receiver_pid);
	return proc_start(pid) != cr.receiver_start; /* alive: a job setting up */
}

/*
 * Remove our uid's segments whose creator is gone: names a job killed during setup left
 * (the launcher got SIGKILL, and its ranks with it, before any sender unlinked them;
 * nobody is left to sweep them by job id), each up to shm_ring bytes of /dev/shm for
 * good. Only creators in our pid namespace are judged (elsewhere a pid means nothing);
 * a pid alive with another start time was reused: its creator is gone too. A segment
 * older than the creator fields is left alone. Returns how many were removed.
 */
static int shm_pair_sweep_stale(void)
{
	uint64_t ns = proc_pidns("self"), bytes = 0;
	int n;

	if (!ns)
		return 0;
	n = seg_sweep(SEG_PREFIX, creator_gone, &ns, &bytes);
	if (n)
		log_warn(LOG_TRANSPORT, "removed %d shared-memory segments (%.1f MiB) that gradsync jobs killed during setup left in /dev/shm",
			 n, bytes / 1048576.0);
	return n;
}

int shm_pair_create(struct shm_pair_core *c, size_t seg_size)
{
	const struct transport_env *env = c->env;
	int err;

	/* before we add our own: /dev/shm is the budget of every ring of this host */
	shm_pair_sweep_stale();
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
		if (tp_env_aborting(c->env))
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
	char prefix[48];

	snprintf(prefix, sizeof(prefix), SEG_PREFIX "%016llx-", (unsigned long long)job_id);
	return seg_sweep(prefix, NULL, NULL, NULL);
}
