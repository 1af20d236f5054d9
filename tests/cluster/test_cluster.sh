#!/bin/sh
# The emulated cluster in CI, bounded (about a minute): 2 and 4 hosts on shaped links
# (tests/cluster/bed.sh). Asserts that `gradsync predict`, fitted on the 2-host run
# only, is within 15% of the busbw the 4-host run measured at 16 MiB (ring); that a
# run with one host's link at a tenth of the others names a link of that host, and only
# that one, in its report, while the even 4-host run names none; and that op = pairwise
# on the same slowed cluster names the pairs through that host and the host's link.
# Skips (77) without root, tc or network namespaces. GS_CLUSTER_KEEP=DIR keeps every
# run's directory there (the bed's reports, to look into a failure); each bed run's time,
# load and CPU pressure (PSI: the share of time some task waited for a CPU) are logged.
set -u
HERE=$(dirname "$0")
G=${GRADSYNC:-build/gradsync}
G=$(readlink -f "$G")
export GRADSYNC="$G"
[ "$(id -u)" = 0 ] || { echo "skip: network namespaces need root"; exit 77; }
for c in ip tc unshare timeout python3; do
	command -v $c >/dev/null 2>&1 || { echo "skip: $c not installed"; exit 77; }
done
T=$(mktemp -d)
trap 'if [ -n "${GS_CLUSTER_KEEP:-}" ]; then mkdir -p "$GS_CLUSTER_KEEP" && cp -r "$T"/. "$GS_CLUSTER_KEEP"/; fi; rm -rf "$T"' EXIT
cat >"$T/ci.ini" <<'INI'
[experiment]
name = cluster_ci
[collective]
sizes = ${GS_SIZES}
iterations = ${GS_ITERS:-3}
warmup = 1
algorithm = ring
channels = 8
[transport]
transport = tcp
tcp_interface = ${GS_IF}
[launch]
timeout = 60s
INI
# the same cluster, op = pairwise: every pair in turn, 4 messages per measurement
sed -e '/^\[collective\]/a op = pairwise' -e '/^algorithm\|^channels\|^warmup/d' \
	-e 's/^iterations = .*/iterations = 4/' "$T/ci.ini" >"$T/pw.ini"
# CPU pressure: microseconds some runnable task waited for a CPU (PSI), for the log
psi() { awk '/^some/ { sub("total=", "", $5); print $5 }' /proc/pressure/cpu 2>/dev/null; }
bed() { # bed NAME SIZES OPTIONS...: run $INI (ci.ini) at SIZES on the bed into $T/NAME
	name=$1; export GS_SIZES="$2"; shift 2
	mkdir -p "$T/$name"
	p0=$(psi) t0=$(date +%s%N)
	"$HERE/bed.sh" --limit 100 --out "$T/$name" --logs "$T/$name.logs" "$@" "${INI:-$T/ci.ini}" \
		>"$T/$name.out" 2>&1
	st=$?
	p1=$(psi) t1=$(date +%s%N)
	[ -n "$p0" ] && echo "bed $name: $(((t1 - t0) / 1000000)) ms, load $(cut -d' ' -f1 /proc/loadavg), cpu pressure $(((p1 - p0) * 100000 / (t1 - t0 + 1)))%" >&2
	if [ $st = 77 ]; then
		echo "skip: $(grep 'bed.sh:' "$T/$name.out" | tail -n 1)"
		exit 77
	fi
	if [ $st != 0 ]; then
		echo "FAIL: bed $name exited $st"; tail -n 20 "$T/$name.out"; exit 1
	fi
	ls -d "$T/$name"/cluster_ci-* | head -n 1
}
# 1 MiB pieces: 16 MiB keeps 8 in flight on 4 hosts, as a large bucket would. 5 iterations:
# predict compares p50 with p50, and a median of 5 holds against 2 iterations that a loaded
# machine starved (the 4-host check once read 19.7% under heavy load)
export GS_ITERS=5
two=$(bed two "1MiB, 4MiB, 16MiB" --hosts 2) || exit $?
four=$(bed four "1MiB, 4MiB, 16MiB" --hosts 4) || exit $?
unset GS_ITERS
slow=$(bed slow "1MiB, 4MiB" --hosts 4 --slow 2=10mbit) || exit $?
fails=0

# predict from 2 hosts, compared with 4
"$G" predict "$two" --compare "$four" --hosts 4 --size 16MiB >"$T/predict.txt" 2>"$T/predict.err"
st=$?
cat "$T/predict.txt" "$T/predict.err"
if [ $st != 0 ]; then
	echo "FAIL: predict exited $st"; fails=$((fails + 1))
fi
grep -q 'between hosts  tcp' "$T/predict.txt" || { echo "FAIL: no fit between hosts"; fails=$((fails + 1)); }
err=$(awk '$1 == "4x1" && $3 == "ring" { print $NF }' "$T/predict.txt" | tr -d '%+-')
if [ -z "$err" ] || ! awk -v e="$err" 'BEGIN { exit !(e <= 15) }'; then
	echo "FAIL: 4-host ring busbw predicted from 2 hosts off by ${err:-?}% (limit 15%)"
	fails=$((fails + 1))
else
	echo "ok: 4-host ring busbw at 16MiB predicted within $err%"
fi

# the slow link is named: the ring's flow into host2 (1 -> 2), read by its time in flight;
# its flow out (2 -> 3) is as slow and is named too; no link away from host2 may be
slow_named() {
	"$G" report "$1" >"$T/slow.txt" 2>&1
	grep -E 'SLOW LINK|slow link|rest on' "$T/slow.txt"
	named=$(grep -c 'SLOW LINK' "$T/slow.txt")
	grep -Eq 'SLOW LINK rank 1 \(host1\) -> rank 2 ' "$T/slow.txt" &&
		! grep 'SLOW LINK' "$T/slow.txt" | grep -vq '(host2)' &&
		! grep -q 'rest on both ends' "$T/slow.txt"
}
if slow_named "$slow"; then
	echo "ok: host2's link named ($named link(s) named)"
else
	echo "FAIL: the run with host2's link at 10 Mbit/s does not name 1 -> 2, or names a link away from host2 ($named named)"
	fails=$((fails + 1))
fi
# the even cluster names no link (by time in flight its links read within 1.6x of each
# other; tests/cluster/RESULTS.md)
"$G" report "$four" >"$T/four.txt" 2>&1
grep -E 'SLOW LINK|no slow link' "$T/four.txt" | sed 's/^/even cluster: /'
if grep -q 'SLOW LINK' "$T/four.txt"; then
	echo "FAIL: the even 4-host cluster names a slow link"; fails=$((fails + 1))
elif ! grep -q 'no slow link among' "$T/four.txt"; then
	echo "FAIL: the even 4-host run has no link verdict"; fails=$((fails + 1))
else
	echo "ok: the even cluster names no link"
fi

# op = pairwise with host2's link at a tenth: the pairs through host2 (0-2, 1-2, 2-3)
# are slow, no other pair is, and the report names host2's link
pw=$(INI="$T/pw.ini" bed pw "128KiB" --hosts 4 --slow 2=10mbit) || exit $?
"$G" report "$pw" >"$T/pw.txt" 2>&1
grep -E 'slow pair|every slow pair' "$T/pw.txt"
pairs=$(sed -n 's/.*: slow pair \([0-9]-[0-9]\) .*/\1/p' "$T/pw.txt" | sort -u | tr '\n' ' ')
if [ "$pairs" != "0-2 1-2 2-3 " ]; then
	echo "FAIL: pairwise named slow pairs '$pairs', expected '0-2 1-2 2-3 '"; fails=$((fails + 1))
elif ! grep -q 'every slow pair has host host2 at one end: its link is the slow one' "$T/pw.txt"; then
	echo "FAIL: pairwise does not name host2's link"; fails=$((fails + 1))
else
	echo "ok: pairwise names the pairs through host2 and its link"
fi
[ $fails = 0 ] && echo "cluster: projection from 2 to 4 hosts within 15%, slow link named, even cluster clean, pairwise names the link"
exit $fails
