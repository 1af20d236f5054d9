/*
 * The standalone GPU experiments' one error check (reduce_sweep.cu, staged_sweep.cu):
 * a failed CUDA call prints where and why and ends the experiment (they are programs of
 * their own, not the project's code, which converts errors at the boundary instead).
 */
#ifndef GS_TESTS_GPU_SWEEP_CHECK_H
#define GS_TESTS_GPU_SWEEP_CHECK_H

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                          \
	do {                                                                           \
		cudaError_t e_ = (x);                                                  \
		if (e_ != cudaSuccess) {                                               \
			fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,      \
				cudaGetErrorString(e_));                               \
			exit(1);                                                       \
		}                                                                      \
	} while (0)

#endif
