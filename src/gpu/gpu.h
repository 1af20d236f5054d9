/*
 * GPU layer: device selection, memory, streams and our kernels (the .cu files in kernels/),
 * behind an interface that gpu_stub.c implements when configure finds no CUDA.
 */
#ifndef GS_GPU_GPU_H
#define GS_GPU_GPU_H

#include <stdint.h>
#include <stdbool.h>

enum gpu_tristate { GPU_AUTO = 0, GPU_ON, GPU_OFF };
enum gdr_level { GDR_LOC = 0, GDR_PIX, GDR_PXB, GDR_PHB, GDR_SYS };
enum gdr_mode { GDR_MODE_AUTO = 0, GDR_MODE_DMABUF, GDR_MODE_PEERMEM };

/* [gpu] section, resolved by config/. */
struct gpu_opts {
	char device[64];   /* "auto", "none", or a list "0,1,2,3" indexed by local rank */
	int gdr;           /* enum gpu_tristate */
	int gdr_level;     /* enum gdr_level */
	int gdr_read;      /* enum gpu_tristate */
	int gdr_mode;      /* enum gdr_mode */
};

#endif
