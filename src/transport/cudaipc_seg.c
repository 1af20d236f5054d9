/* cudaipc transport: the POSIX shared-memory control segment of one directed pair. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "transport/cudaipc_priv.h"
#include "util/common.h"
#include "util/log.h"
#include "util/timeutil.h"

static void seg_name(char *buf, size_t len, uint64_t job_id, int sender, int receiver)
{
	snprintf(buf, len, "/gradsync-%016llx-cipc-%d-%d", (unsigned long long)job_id, sender,
		 receiver);
}

int cipc_seg_create(struct cipc_seg *s, uint64_t job_id, int sender, int receiver)
{
	size_t size = GS_ALIGN_UP(sizeof(struct cipc_seg_hdr), 4096);
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
	err = posix_fallocate(fd, 0, (off_t)size);
	if (err) {
		log_err(LOG_TRANSPORT, "posix_fallocate %s size=%zu: %s", s->name, size,
			strerror(err));
		goto out_unlink;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED) {
		err = errno;
		log_err(LOG_TRANSPORT, "mmap %s size=%zu: %s", s->name, size, strerror(err));
		goto out_unlink;
	}
	close(fd);
	memset(p, 0, size); /* touch every page now, never on the data path */
	s->hdr = p;
	s->hdr->job_id = job_id;
	s->hdr->sender = sender;
	s->hdr->receiver = receiver;
	s->hdr->receiver_pid = getpid();
	atomic_thread_fence(memory_order_release);
	s->hdr->magic = CIPC_SEG_MAGIC;
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

int cipc_seg_attach(struct cipc_seg *s, uint64_t job_id, int sender, int receiver,
		    uint64_t deadline_ns, volatile const int *abort_flag)
{
	size_t size = GS_ALIGN_UP(sizeof(struct cipc_seg_hdr), 4096);
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
	if (fstat(fd, &st) < 0 || (size_t)st.st_size != size) {
		log_err(LOG_TRANSPORT, "fstat %s peer=%d: not a cudaipc segment", s->name,
			receiver);
		close(fd);
		s->name[0] = '\0';
		return -EPROTO;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	err = errno;
	close(fd);
	if (p == MAP_FAILED) {
		log_err(LOG_TRANSPORT, "mmap %s peer=%d: %s", s->name, receiver, strerror(err));
		s->name[0] = '\0';
		return -err;
	}
	s->hdr = p;
	if (s->hdr->magic != CIPC_SEG_MAGIC || s->hdr->job_id != job_id ||
	    s->hdr->sender != sender || s->hdr->receiver != receiver) {
		log_err(LOG_TRANSPORT, "cudaipc attach %s peer=%d: foreign or torn segment",
			s->name, receiver);
		munmap(p, size);
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

void cipc_seg_destroy(struct cipc_seg *s)
{
	if (s->hdr)
		munmap(s->hdr, GS_ALIGN_UP(sizeof(struct cipc_seg_hdr), 4096));
	if (s->name[0])
		shm_unlink(s->name);
	memset(s, 0, sizeof(*s));
}
