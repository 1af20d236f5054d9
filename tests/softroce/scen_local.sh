#!/bin/sh
# Scenario 1 (inside one VM): 4 ranks over rxe0 loopback; verbs ops directly, then gradsync.
rc=0
echo "== verbs_pingpong 4 ranks, 2 QPs per peer"
timeout 60 verbs_pingpong --local 4 --qps 2 --device rxe0:1 --gid -1 || rc=1
echo "== verbs_pingpong 2 ranks, cq_mode event, depth 16, nothing inline, 64 KiB writes"
timeout 60 verbs_pingpong --local 2 --event --depth 16 --inline 0 --slot 65536 --device auto ||
	rc=1
echo "== verbs_pingpong 4 ranks, every receive flushed (GRADSYNC_VERBS_FLUSH=1), depth 16"
# depth 16 bounds the loopback QP's READs too: deep queues wait for send queue room
GRADSYNC_VERBS_FLUSH=1 timeout 60 verbs_pingpong --local 4 --qps 2 --depth 16 --device rxe0:1 ||
	rc=1
# expect_err WHAT ARGS...: open must fail and the log must name WHAT
expect_err() {
	want=$1
	shift
	out=$(timeout 30 verbs_pingpong --local 2 --expect-fail "$@" 2>&1)
	echo "$out"
	echo "$out" | grep -q "$want" || { echo "MISSING error line: $want"; rc=1; }
}
echo "== clear errors: wrong link layer, missing device, bad GID index, port"
expect_err "link layer is Ethernet, transport ib needs InfiniBand; use transport = roce" \
	--kind ib --device rxe0:1
expect_err "verbs: no ACTIVE InfiniBand port on any device (have: rxe0)" --kind ib
expect_err "verbs device mlx5_0 not found (have: rxe0); use transport = tcp" --device mlx5_0:1
expect_err "gid_index 9 is empty or out of range" --gid 9
expect_err "verbs rxe0 has 1 port(s), there is no port 2" --device rxe0:2
echo "== peer death: rank 1 exits after connect"
timeout 60 verbs_pingpong --local 2 --die || rc=1
# uptime_ms: busybox date has no %N; /proc/uptime counts in 10 ms steps
uptime_ms() {
	awk '{printf "%d", $1 * 1000}' /proc/uptime
}
# flushrun NAME: roce_flush4.ini once (the caller sets GRADSYNC_VERBS_FLUSH); checks every
# size verified exact and prints "FLUSH NAME ..." lines: per-size times, wall time, flushes
flushrun() {
	name=$1
	t0=$(uptime_ms)
	timeout 120 gradsync run roce_flush4.ini --out /tmp/$name >/tmp/$name.out 2>&1 ||
		{ cat /tmp/$name.out; echo "FLUSH $name run failed"; return 1; }
	t1=$(uptime_ms)
	rep=$(ls /tmp/$name/*/report.json)
	sed -n '/time per operation/,/^$/p' /tmp/$name.out |
		awk -v n="$name" \
			'$1 ~ /^[0-9]+[KMG]?i?B$/ {print "FLUSH " n " size=" $1 " usec=" $2}'
	nok=$(grep -o '"wrong": *0,' "$rep" | wc -l)
	fl=$(grep -o 'flushes [0-9]*' "$rep" | head -1)
	echo "FLUSH $name wall_ms=$((t1 - t0)) exact_sizes=$nok/5 ${fl:-no flush QP}"
	[ "$nok" = 5 ] || { echo "FLUSH $name: results not exact"; return 1; }
}
# stalled_peer: two ranks started apart, rank 1 stopped (SIGSTOP) mid-run. Rank 0 times out
# and its error line ends with what roce still holds for peer 1 (transport_ops.pending):
# its requests, the QP's outstanding work and credits. Prints "STALL ..." lines.
stalled_peer() {
	echo "== stalled peer: rank 1 stopped, rank 0's timeout line says what roce holds"
	sed 's/^timeout = 90s/timeout = 5s/; s/^local_ranks = 4/local_ranks = 1/;
		s/^sizes = .*/sizes = 64KiB/; s/^iterations = 3/iterations = 1000000/;
		s/^warmup = 1/warmup = 0/; s/^verify = all/verify = off/; /^\[matrix\]/,$d' \
		roce_local4.ini >/tmp/stall.ini
	for r in 0 1; do
		GRADSYNC_TOKEN=stall timeout 60 gradsync run /tmp/stall.ini --rank $r \
			--world-size 2 --rendezvous 127.0.0.1:18800 >/tmp/stall.$r.out 2>&1 &
		eval pid$r=$!
	done
	sleep 4
	kill -STOP "$pid1"
	wait "$pid0"
	st=$?
	kill -KILL "$pid1"
	wait "$pid1" 2>/dev/null
	line=$(grep -m 1 'waits on .* peer 1' /tmp/stall.0.out)
	echo "STALL exit=$st $line"
	# exit 1: the run's own failure; 124 would be `timeout 60` ending a rank that hung
	if [ "$st" != 1 ] || ! echo "$line" | grep -q '; roce peer 1: sends: .*receives: .*qpn 0x'; then
		echo "STALL: rank 0 did not fail naming what roce holds for peer 1:"
		grep -v '^case' /tmp/stall.0.out | tail -n 5
		return 1
	fi
}
if [ -x /bin/gradsync ]; then
	echo "== gradsync run roce_local4.ini"
	timeout 120 gradsync run roce_local4.ini || rc=1
	echo "== receive flush: roce_flush4.ini without, then with GRADSYNC_VERBS_FLUSH=1"
	flushrun noflush || rc=1
	grep -q 'flushes' /tmp/noflush/*/report.json &&
		{ echo "FLUSH noflush: a flush QP without GRADSYNC_VERBS_FLUSH"; rc=1; }
	export GRADSYNC_VERBS_FLUSH=1
	flushrun flush || rc=1
	unset GRADSYNC_VERBS_FLUSH
	grep -q 'flushes [1-9]' /tmp/flush/*/report.json ||
		{ echo "FLUSH flush: the path note reports no flushes"; rc=1; }
	stalled_peer || rc=1
fi
exit $rc
