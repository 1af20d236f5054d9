#!/bin/sh
# Scenario 1 (inside one VM): 4 ranks over rxe0 loopback; verbs ops directly, then gradsync.
rc=0
echo "== verbs_pingpong 4 ranks, 2 QPs per peer"
timeout 60 verbs_pingpong --local 4 --qps 2 --device rxe0:1 --gid -1 || rc=1
echo "== verbs_pingpong 2 ranks, cq_mode event, depth 16, nothing inline, 64 KiB writes"
timeout 60 verbs_pingpong --local 2 --event --depth 16 --inline 0 --slot 65536 --device auto ||
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
if [ -x /bin/gradsync ]; then
	echo "== gradsync run roce_local4.ini"
	timeout 120 gradsync run roce_local4.ini || rc=1
fi
exit $rc
