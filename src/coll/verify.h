/*
 * Result verification in the manner of nccl-tests, but bit-exact: inputs are small
 * integers times a power of two, deterministic from (seed, rank, global index), chosen
 * so that every partial sum in any order, the sum over nranks and (for avg) the
 * quotient by nranks are exactly representable in the element type. Any correct
 * AllReduce, whatever its order of reduction, then yields one exact bit pattern.
 *
 * The pattern, per global index g (base + i), with p the type's significand bits
 * (f16 11, bf16 8, f32 24, f64 53) and m = min(2^p / nranks, 2^20):
 *   x_r = (y + z_r - z_{(r+1) mod n}) * 2^e,   |y| <= m - 2 floor(m/4), |z| <= floor(m/4),
 *   e in [-4, 4];  sum = n * y * 2^e, avg = y * 2^e (the z terms telescope away).
 * When nranks > 2^p (bf16 beyond 256 ranks, f16 beyond 2048) m is 0 and every input is
 * 0: the check then only proves data moved without corruption into non-zero bits.
 */
#ifndef GS_COLL_VERIFY_H
#define GS_COLL_VERIFY_H

#include <stdint.h>
#include "util/dtype.h"

/* Fill rank's count elements starting at global element index base. */
void verify_fill(void *buf, uint64_t count, uint64_t base, enum dtype dt, enum redop op,
		 uint64_t seed, int rank, int nranks);

/*
 * Compare the AllReduce result in buf against the exact expectation. Returns the number
 * of wrong elements; *first_bad gets the index (relative to buf) of the first one, or
 * count when all are right.
 */
uint64_t verify_check(const void *buf, uint64_t count, uint64_t base, enum dtype dt, enum redop op,
		      uint64_t seed, int nranks, uint64_t *first_bad);

/* For error lines: the expected result at global index g, and element i of buf, as doubles. */
double verify_expected(uint64_t g, enum dtype dt, enum redop op, uint64_t seed, int nranks);
double verify_value(const void *buf, uint64_t i, enum dtype dt);
/* Element i of buf set to x, rounded once as a kernel rounds: 16-bit types through f32. */
void verify_store(void *buf, uint64_t i, enum dtype dt, double x);

#endif
