#!/bin/sh
# Inside the emulated cluster's VM (tests/cluster/vm.sh): put tests/cluster back in place, run
# the command /work/cmd names with its environment, and send /out back to the host as base64
# between "GS_OUT_BEGIN" and "GS_OUT_END" console lines. Exits with the command's status.
export PATH=/usr/sbin:/usr/bin:/bin:/sbin
export GRADSYNC=/bin/gradsync
cd /work || exit 1
# shm between the ranks of a host: POSIX shm lives in /dev/shm, which devtmpfs lacks
mkdir -p /dev/shm && mount -t tmpfs shm /dev/shm || exit 1
mkdir -p tests/cluster /out/run /out/logs
for f in *.sh *.ini; do
	[ -e "$f" ] && mv "$f" tests/cluster/
done
. /work/cmd
echo "vm: $(nproc) CPUs, $(awk '/MemTotal/ {print $2 / 1024 " MiB"}' /proc/meminfo), kernel $(uname -r)" >&2
{
	"$@"
	echo $? >/tmp/status
} 2>&1 | tee /out/vm.out
st=$(cat /tmp/status)
(cd /out && tar -czf - .) | base64 >/tmp/out.b64
echo GS_OUT_BEGIN
cat /tmp/out.b64
echo GS_OUT_END
exit "$st"
