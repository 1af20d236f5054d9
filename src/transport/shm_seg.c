/*
 * shm transport: POSIX shared-memory segments of the directed rings. Setup of the
 * ring S -> R, bounded by timeout_ms:
 *   1. R (open): shm_open("/gradsync-<job>-<S>-<R>", O_EXCL), fallocate, map, touch
 *      every page, fill the header and publish the magic last;
 *   2. endpoints {pid, rank} are all-gathered by the engine;
 *   3. S (connect): open and map it, check magic/job/ranks/sizes and R's pid, store
 *      its own pid, unlink the name: nothing is left in /dev/shm if anyone dies now;
 *   4. R (connect): waits until S's pid appears, then watches it through a pidfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "transport/shm_seg.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

static void seg_name(char *buf, size_t len, uint64_t job_id, int sender, int receiver)
{
	snprintf(buf, len, "/gradsync-%016llx-%d-%d", (unsigned long long)job_id, sender, receiver);
}

static size_t seg_data_off(uint32_t nslots)
{
	return GS_ALIGN_UP(sizeof(struct shm_seg_hdr) + nslots * sizeof(struct shm_desc), 4096);
}

int shm_seg_create(struct shm_seg *s, uint64_t job_id, int sender, int receiver, uint32_t nslots,
		   uint32_t slot_size)
{
	size_t off = seg_data_off(nslots);
	size_t size = off + (size_t)nslots * slot_size;
	int fd, err;
	void *p;

	memset(s, 0, sizeof(*s));
	seg_name(s->name, sizeof(s->name), job_id, sender, receiver);
	fd = shm_open(s->name, O_CREAT | O_EXCL | O_RDWR, 0600);
	if (fd < 0 && errno == EEXIST) {
		/* left over by a killed run with the same job id: ours now */
		shm_unlink(s->name);
		fd = shm_open(s->name, O_CREAT | O_EXCL | O_RDWR, 0600);
	}
	if (fd < 0) {
		err = errno;
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
	s->data = (char *)p + off;
	s->size = size;
	s->hdr->job_id = job_id;
	s->hdr->sender = sender;
	s->hdr->receiver = receiver;
	s->hdr->receiver_pid = getpid();
	s->hdr->nslots = nslots;
	s->hdr->slot_size = slot_size;
	s->hdr->data_off = off;
	atomic_store_explicit(&s->hdr->sender_pid, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	s->hdr->magic = SHM_SEG_MAGIC;
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

int shm_seg_attach(struct shm_seg *s, uint64_t job_id, int sender, int receiver,
		   uint64_t deadline_ns, volatile const int *abort_flag)
{
	struct stat st;
	int fd, err;
	void *p;

	memset(s, 0, sizeof(*s));
	seg_name(s->name, sizeof(s->name), job_id, sender, receiver);
	fd = seg_open_wait(s->name, deadline_ns, abort_flag);
	if (fd < 0) {
		err = errno;
		log_err(LOG_TRANSPORT, "shm_open %s peer=%d: %s", s->name, receiver, strerror(err));
		s->name[0] = '\0';
		return -err;
	}
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(struct shm_seg_hdr)) {
		err = errno ? errno : EPROTO;
		log_err(LOG_TRANSPORT, "fstat %s peer=%d: bad segment", s->name, receiver);
		close(fd);
		return -err;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
		 0);
	err = errno;
	close(fd);
	if (p == MAP_FAILED) {
		log_err(LOG_TRANSPORT, "mmap %s peer=%d: %s", s->name, receiver, strerror(err));
		return -err;
	}
	s->hdr = p;
	s->size = (size_t)st.st_size;
	/* the receiver fills the header before the magic; sizes agree with the file */
	if (s->hdr->magic != SHM_SEG_MAGIC || s->hdr->job_id != job_id ||
	    s->hdr->sender != sender || s->hdr->receiver != receiver ||
	    s->hdr->data_off + (size_t)s->hdr->nslots * s->hdr->slot_size > s->size) {
		log_err(LOG_TRANSPORT, "shm attach %s peer=%d: foreign or torn segment", s->name,
			receiver);
		munmap(p, s->size);
		s->hdr = NULL;
		return -EPROTO;
	}
	atomic_thread_fence(memory_order_acquire);
	s->data = (char *)p + s->hdr->data_off;
	atomic_store_explicit(&s->hdr->sender_pid, getpid(), memory_order_release);
	/* both sides are mapped now: drop the name so a crash leaves nothing behind */
	shm_unlink(s->name);
	s->name[0] = '\0';
	return 0;
}

void shm_seg_destroy(struct shm_seg *s)
{
	if (s->hdr)
		munmap(s->hdr, s->size);
	if (s->name[0])
		shm_unlink(s->name);
	memset(s, 0, sizeof(*s));
}
