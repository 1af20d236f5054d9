/*
 * SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104): what the bootstrap's challenge-response
 * needs, small enough to read in one sitting and checked against the FIPS and RFC 4231
 * vectors in sha256_test.c. Not for bulk data: it is plain C, no SIMD.
 */
#ifndef GS_UTIL_SHA256_H
#define GS_UTIL_SHA256_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN   32
#define SHA256_BLOCK 64

struct sha256 {
	uint32_t h[8];
	uint64_t bytes; /* hashed so far */
	uint8_t buf[SHA256_BLOCK];
	size_t nbuf;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, uint8_t out[SHA256_LEN]);
void sha256(const void *data, size_t len, uint8_t out[SHA256_LEN]);

/* HMAC-SHA256 over the concatenation of n parts (parts[i], lens[i]). */
void hmac_sha256(const void *key, size_t key_len, const void *const parts[],
		 const size_t lens[], size_t n, uint8_t out[SHA256_LEN]);

/* Equal in time independent of where they differ (MACs, tokens). */
bool mem_equal_ct(const void *a, const void *b, size_t len);

#endif
