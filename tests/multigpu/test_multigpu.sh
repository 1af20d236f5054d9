#!/bin/sh
# Two ranks sharing the GPU(s) of this machine: links tests/multigpu/mgpu_test.c against
# the library and runs its checks (cudaipc point to point, our AllReduce over cudaipc,
# the NCCL reference when libnccl.so.2 is found). No GPU (CI): exit 77, a skip.
# MGPU_MODE=bench prints the bandwidth tables instead.
set -u
B=${BUILDDIR:-build}
conf=$B/config.ninja
[ -f "$conf" ] || { echo "skip: no $conf (run ./configure)"; exit 77; }
grep -q "GS_HAVE_CUDA 1" "$B/config.h" 2>/dev/null || { echo "skip: built without CUDA"; exit 77; }
get() { sed -n "s/^$1 = //p" "$conf"; }
bin=$B/tests/mgpu_device # no _test suffix: run.sh would run it as a unit test
mkdir -p "$B/tests"
# shellcheck disable=SC2046
$(get cc) $(get cflags) tests/multigpu/mgpu_test.c -o "$bin" $(get ldflags) \
	"$B/libgradsync.a" $(get libs) -Wl,-Bstatic -lstdc++ -Wl,-Bdynamic -lm ||
	{ echo "FAIL: cannot link mgpu_test"; exit 1; }
# NCCL from a Python wheel when the system has none; NVLink multicast always off
if ! ldconfig -p 2>/dev/null | grep -q 'libnccl.so.2 '; then
	d=$(python3 -c 'import nvidia.nccl as n, os; print(os.path.join(list(n.__path__)[0], "lib"))' \
		2>/dev/null)
	[ -n "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export NCCL_NVLS_ENABLE=0
"$bin" "${MGPU_MODE:-check}"
rc=$?
case $rc in
0|77) exit $rc ;;
*) echo "FAIL: mgpu_test exit $rc"; exit 1 ;;
esac
