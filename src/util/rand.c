/* Random bytes for job tokens and nonces, straight from getrandom(2): no seeding, no state. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "util/log.h"
#include "util/rand.h"

int rand_bytes(void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = errno;
			log_err(LOG_MAIN, "getrandom %zu bytes: %s", len, strerror((int)n));
			return -(int)n;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int rand_hex(char *out, size_t len, size_t nbytes)
{
	unsigned char b[64];
	int ret;

	if (nbytes > sizeof(b) || len <= 2 * nbytes)
		return -EINVAL;
	ret = rand_bytes(b, nbytes);
	if (ret)
		return ret;
	for (size_t i = 0; i < nbytes; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	memset(b, 0, sizeof(b));
	return 0;
}

int rand_u64(uint64_t *out)
{
	return rand_bytes(out, sizeof(*out));
}
