#!/bin/sh
# The GPU layer on this machine: links tests/gpu/gpu_test.c against the library with the
# configured flags and runs it. With a GPU it must pass; without one (CI) it must say
# once why GPUs are unavailable and exit 77, which this script passes on as a skip.
# (static libstdc++ only covers nvcc host stubs built without -fno-threadsafe-statics.)
set -u
B=${BUILDDIR:-build}
conf=$B/config.ninja
[ -f "$conf" ] || { echo "skip: no $conf (run ./configure)"; exit 77; }
get() { sed -n "s/^$1 = //p" "$conf"; }
bin=$B/tests/gpu_device  # no _test suffix: run.sh would run it as a unit test
mkdir -p "$B/tests"
# shellcheck disable=SC2046
$(get cc) $(get cflags) tests/gpu/gpu_test.c -o "$bin" $(get ldflags) "$B/libgradsync.a" \
	$(get libs) -Wl,-Bstatic -lstdc++ -Wl,-Bdynamic -lm || { echo "FAIL: cannot link gpu_test"; exit 1; }
out=$("$bin" 2>&1)
rc=$?
echo "$out"
case $rc in
0) exit 0 ;;
77)
	n=$(echo "$out" | grep -c "GPUs unavailable")
	if [ "$n" != 1 ]; then
		echo "FAIL: expected one 'GPUs unavailable' line, got $n"
		exit 1
	fi
	echo "skip: $(echo "$out" | grep "GPUs unavailable" | sed 's/^gradsync: warning: //')"
	exit 77 ;;
*) echo "FAIL: gpu_test exit $rc"; exit 1 ;;
esac
