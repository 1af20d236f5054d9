/* Non-cryptographic hashing: FNV-1a 64 (job tokens, experiment fingerprints). */
#ifndef GS_UTIL_HASH_H
#define GS_UTIL_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t hash_fnv1a64(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ull;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ull;
	}
	return h;
}

#endif
