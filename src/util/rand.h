/* Secrets from the kernel: random bytes (getrandom) and their hex spelling (tokens, nonces). */
#ifndef GS_UTIL_RAND_H
#define GS_UTIL_RAND_H

#include <stddef.h>
#include <stdint.h>

/* len bytes from getrandom(2), blocking only until the pool is initialised: 0 or -errno. */
int rand_bytes(void *buf, size_t len);
/* nbytes random bytes as 2 * nbytes lower-case hex digits into out (len > 2 * nbytes). */
int rand_hex(char *out, size_t len, size_t nbytes);
/* A random 64-bit value; 0 or -errno. */
int rand_u64(uint64_t *out);

#endif
