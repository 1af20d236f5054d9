#!/bin/sh
# Build the GPU layer's test and bench programs without the project's build system:
# tests/gpu/build.sh OUTDIR [NVCC]. Static cudart, dynamic glibc, as the gradsync binary.
set -e
out=${1:?usage: build.sh OUTDIR [NVCC]}
nvcc=${2:-${NVCC:-/usr/local/cuda/bin/nvcc}}
cuda=$(dirname "$(dirname "$nvcc")")
arch=${NVCC_ARCH:-"-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90"}
cc=${CC:-gcc}
cflags="-std=gnu11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -Isrc -I$cuda/include"
mkdir -p "$out/obj"
objs=""
pids=""
# the calibration in cuda_kern.c notes its calls for a bounded group (util/callbound.c,
# and what that needs: bounded.c, fsbound_stop.c, units.c)
for f in src/util/log.c src/util/strutil.c src/coll/verify.c src/coll/gpu_memops.c \
	src/gpu/select.c src/gpu/cuda.c src/gpu/cuda_mem.c src/gpu/cuda_dmabuf.c src/gpu/dmabuf_range.c \
	src/gpu/cuda_kern.c src/util/callbound.c src/util/bounded.c src/util/fsbound_stop.c \
	src/util/units.c; do
	o="$out/obj/$(basename "$f" .c).o"
	$cc $cflags -c "$f" -o "$o" &
	pids="$pids $!"
	objs="$objs $o"
done
for f in kernels/*.cu; do
	o="$out/obj/k_$(basename "$f" .cu).o"
	# shellcheck disable=SC2086
	"$nvcc" -std=c++17 -O3 -Isrc $arch -Xcompiler -fno-exceptions,-fno-threadsafe-statics \
		-c "$f" -o "$o" &
	pids="$pids $!"
	objs="$objs $o"
done
for p in $pids; do
	wait "$p"
done
# -fno-exceptions,-fno-threadsafe-statics above keep nvcc's host code off libstdc++
libs="-L$cuda/lib64 -Wl,-Bstatic -lcudart_static -Wl,-Bdynamic -ldl -lrt -lpthread -lm"
for p in gpu_test gpu_bench memops_bench; do
	# shellcheck disable=SC2086
	$cc $cflags tests/gpu/$p.c $objs -o "$out/$p" $libs
done
echo "built $out/gpu_test $out/gpu_bench $out/memops_bench"
