/* memfd-backed host allocations and the table that finds them (shmem.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/common.h"
#include "util/log.h"
#include "util/shmem.h"

/* A rank holds a handful of buffers (data, scratch, pristine): a small table is enough. */
#define SHMEM_MAX 32

struct shmem_ent {
	char *addr;
	size_t size;
	int fd;
	uint64_t id;
};

/* The allocator's own state (like malloc's): which of this process's pages are shareable. */
static struct shmem_ent table[SHMEM_MAX];
static uint64_t next_id = 1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void *shmem_alloc(size_t bytes)
{
	size_t size = GS_ALIGN_UP(bytes ? bytes : 1, 4096);
	struct shmem_ent *e = NULL;
	void *p;
	int fd, err;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < SHMEM_MAX && !e; i++)
		if (!table[i].addr)
			e = &table[i];
	if (!e) {
		pthread_mutex_unlock(&lock);
		log_dbg(LOG_TRANSPORT, "shmem_alloc %zu: table full, private memory", bytes);
		return NULL;
	}
	e->addr = (char *)-1; /* reserved while we allocate outside the lock */
	pthread_mutex_unlock(&lock);
	fd = memfd_create("gradsync-buf", MFD_CLOEXEC);
	if (fd < 0) {
		err = errno;
		log_dbg(LOG_TRANSPORT, "memfd_create: %s, private memory", strerror(err));
		goto out_free;
	}
	/* allocate for real: no memory must fail here, not as SIGBUS on the data path */
	err = posix_fallocate(fd, 0, (off_t)size);
	if (err) {
		log_dbg(LOG_TRANSPORT, "memfd fallocate %zu: %s, private memory", size,
			strerror(err));
		goto out_close;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED) {
		err = errno;
		log_dbg(LOG_TRANSPORT, "mmap memfd %zu: %s, private memory", size, strerror(err));
		goto out_close;
	}
	memset(p, 0, size);
	pthread_mutex_lock(&lock);
	*e = (struct shmem_ent){.addr = p, .size = size, .fd = fd, .id = next_id++};
	pthread_mutex_unlock(&lock);
	return p;
out_close:
	close(fd);
out_free:
	pthread_mutex_lock(&lock);
	e->addr = NULL;
	pthread_mutex_unlock(&lock);
	return NULL;
}

void shmem_free(void *p)
{
	struct shmem_ent e = {0};

	if (!p)
		return;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < SHMEM_MAX; i++)
		if (table[i].addr == p) {
			e = table[i];
			table[i].addr = NULL;
			break;
		}
	pthread_mutex_unlock(&lock);
	if (!e.addr) {
		log_err(LOG_TRANSPORT, "shmem_free %p: not a shmem allocation", p);
		return;
	}
	munmap(e.addr, e.size);
	close(e.fd);
}

bool shmem_find(const void *p, size_t len, struct shmem_loc *loc)
{
	const char *c = p;
	bool found = false;

	pthread_mutex_lock(&lock);
	for (int i = 0; i < SHMEM_MAX && !found; i++) {
		const struct shmem_ent *e = &table[i];

		if (!e->addr || e->addr == (char *)-1 || c < e->addr || c > e->addr + e->size ||
		    len > (size_t)(e->addr + e->size - c))
			continue;
		*loc = (struct shmem_loc){
		    .fd = e->fd, .id = e->id, .size = e->size, .off = (size_t)(c - e->addr)};
		found = true;
	}
	pthread_mutex_unlock(&lock);
	return found;
}
