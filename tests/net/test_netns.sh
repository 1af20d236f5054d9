#!/bin/sh
# Multi-host: two network namespaces joined by a veth pair act as two hosts; 2 ranks
# in each, started by hand with --rank/--world-size/--rendezvous, AllReduce over tcp
# (and shm between the ranks of one namespace with transport = auto). Checks that
# every result is exact and that auto picks shm inside a host and tcp across; a host
# whose link goes down mid-run is named unreachable by the other; a peer's tcp address
# with no route to it is named in the error; a DNS server that never answers costs no
# more than the timeout.
set -u
G=${GRADSYNC:-build/gradsync}
G=$(readlink -f "$G")
command -v ip >/dev/null 2>&1 || { echo "skip: ip (iproute2) not installed"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "skip: network namespaces need root"; exit 77; }
A=gs_a_$$ B=gs_b_$$
T=$(mktemp -d)
cleanup() {
	for p in $(cat "$T"/pids 2>/dev/null); do kill "$p" 2>/dev/null; done
	ip netns del "$A" 2>/dev/null
	ip netns del "$B" 2>/dev/null
	rm -rf "$T" "/etc/netns/$A"
}
trap cleanup EXIT
if ! ip netns add "$A" 2>"$T/err"; then
	echo "skip: cannot create a network namespace: $(cat "$T/err")"
	exit 77
fi
ip netns add "$B"
ip link add va$$ type veth peer name vb$$
ip link set va$$ netns "$A"
ip link set vb$$ netns "$B"
ip -n "$A" addr add 10.77.0.1/24 dev va$$
ip -n "$B" addr add 10.77.0.2/24 dev vb$$
for n in "$A" "$B"; do ip -n "$n" link set lo up; done
ip -n "$A" link set va$$ up
ip -n "$B" link set vb$$ up

run_case() { # run_case NAME TRANSPORT [ALGORITHM]
	name=$1 tp=$2 algo=${3:-ring}
	cat >"$T/$name.ini" <<INI
[experiment]
name = $name
output_dir = $T/results
[collective]
sizes = 4KiB, 1MiB, 8MiB
iterations = 5
warmup = 1
algorithm = $algo
[transport]
transport = $tp
tcp_interface = \${GS_IF}
[launch]
timeout = 30s
INI
	port=$((20000 + $$ % 20000))
	: >"$T/pids"
	for r in 0 1 2 3; do
		if [ $r -lt 2 ]; then ns=$A ifn=va$$; else ns=$B ifn=vb$$; fi
		# own UTS namespace: each "host" has its own hostname, as real hosts do
		GS_IF=$ifn ip netns exec "$ns" unshare --uts sh -c "hostname host-$ifn && exec \"\$0\" \"\$@\"" \
			"$G" run "$T/$name.ini" --rank $r --world-size 4 \
			--rendezvous 10.77.0.1:$port --token netns-test >"$T/$name.$r.log" 2>&1 &
		echo $! >>"$T/pids"
	done
	st=0
	for p in $(cat "$T/pids"); do wait "$p" || st=1; done
	: >"$T/pids"
	if [ $st != 0 ]; then
		echo "FAIL: $name: a rank failed"; tail -n 5 "$T/$name".*.log; return 1
	fi
	rep=$(ls -d "$T"/results/$name-*/report.json | head -n 1)
	python3 - "$rep" "$tp" "$algo" <<'PY' || return 1
import json, sys
r = json.load(open(sys.argv[1]))
c = r["cases"][0]
assert c["status"] == "ok", c
assert r["nranks"] == 4, r["nranks"]
rows = c["collective"]
assert len(rows) == 3 and all(x["wrong"] == 0 for x in rows), rows
kinds = sorted(p["transport"] for p in c["paths"])
print(sys.argv[2], "paths:", kinds, "busbw 8MiB:", rows[-1]["busbw_GBps"])
if sys.argv[2] == "auto":
    assert kinds == ["shm", "tcp"], kinds
assert all(x["algo"] == sys.argv[3] for x in rows), [x["algo"] for x in rows]
PY
}
fails=0
run_case netns_tcp tcp || fails=$((fails + 1))
run_case netns_auto auto || fails=$((fails + 1))
# 2 hosts x 2 ranks: reduce-scatter over shm inside, ring over tcp across, all-gather inside
run_case netns_hier auto hierarchical || fails=$((fails + 1))

# Host B vanishes mid-run (its link down: no FIN, no RST) under a long timeout: the
# bootstrap's keepalive notices within ~15 s and each side says the other is
# unreachable, naming its address (it said "exited unexpectedly", as for a crash)
cat >"$T/gone.ini" <<INI
[experiment]
name = gone
output_dir = $T/results
[collective]
sizes = 1MiB
iterations = 1000000
[transport]
transport = tcp
tcp_interface = \${GS_IF}
[launch]
timeout = 60s
INI
port=$((20000 + ($$ + 7) % 20000))
: >"$T/pids"
for r in 0 1; do
	if [ $r = 0 ]; then ns=$A ifn=va$$; else ns=$B ifn=vb$$; fi
	GS_IF=$ifn ip netns exec "$ns" "$G" run "$T/gone.ini" --rank $r --world-size 2 \
		--rendezvous 10.77.0.1:$port --token netns-test >"$T/gone.$r.log" 2>&1 &
	echo $! >>"$T/pids"
done
for i in $(seq 200); do grep -q "iteration" "$T/gone.0.log" && break; sleep 0.1; done
ip -n "$B" link set vb$$ down
start=$(date +%s)
sts=
for p in $(cat "$T/pids"); do wait "$p"; sts="$sts $?"; done
: >"$T/pids"
took=$(( $(date +%s) - start ))
[ "$sts" = " 1 1" ] || { echo "FAIL: host gone: exits$sts, expected 1 1"; fails=$((fails + 1)); }
[ $took -le 40 ] || { echo "FAIL: host gone: ${took}s to notice (keepalive ~15 s)"; fails=$((fails + 1)); }
grep -q "rank 1 is unreachable (connection to it: .*; it was at 10.77.0.2:[0-9]*)" "$T/gone.0.log" ||
	{ echo "FAIL: host gone: rank 0 does not say rank 1 is unreachable, naming it:"; grep error "$T/gone.0.log" | head -n 3; fails=$((fails + 1)); }
grep -q "rank 0 is unreachable (connection to it: .*; it was at 10.77.0.1:$port)" "$T/gone.1.log" ||
	{ echo "FAIL: host gone: rank 1 does not say rank 0 is unreachable, naming it:"; grep error "$T/gone.1.log" | head -n 3; fails=$((fails + 1)); }
echo "host gone: exits$sts after ${took}s: $(grep -o 'rank 1 is unreachable.*' "$T/gone.0.log" | head -n 1)"

# Rank 1's tcp_interface names an address host A has no route to: rank 0's error names
# the address it tried (it said only "tcp connect peer=1 stream=0: Network is
# unreachable", the user left to guess what rank 1 had offered)
ip -n "$B" addr add 10.99.0.2/32 dev vb$$
sed 's/^timeout = 60s/timeout = 10s/; s/^iterations = .*/iterations = 3/' "$T/gone.ini" >"$T/unr.ini"
ip -n "$B" link set vb$$ up
ip -n "$A" link set va$$ up
port=$((20000 + ($$ + 11) % 20000))
: >"$T/pids"
for r in 0 1; do
	if [ $r = 0 ]; then ns=$A ifn=va$$; else ns=$B ifn=10.99.0.2; fi
	GS_IF=$ifn ip netns exec "$ns" "$G" run "$T/unr.ini" --rank $r --world-size 2 \
		--rendezvous 10.77.0.1:$port --token netns-test >"$T/unr.$r.log" 2>&1 &
	echo $! >>"$T/pids"
done
sts=
for p in $(cat "$T/pids"); do wait "$p"; sts="$sts $?"; done
: >"$T/pids"
[ "$sts" = " 1 1" ] || { echo "FAIL: unroutable: exits$sts, expected 1 1"; fails=$((fails + 1)); }
grep -q "error: tcp connect peer=1 at 10.99.0.2:[0-9]* stream=0: Network is unreachable" "$T/unr.0.log" ||
	{ echo "FAIL: unroutable: rank 0 does not name the address:"; grep error "$T/unr.0.log" | head -n 3; fails=$((fails + 1)); }
echo "unroutable: exits$sts: $(grep -o 'tcp connect peer=1 at.*' "$T/unr.0.log" | head -n 1)"
# A rendezvous host name whose DNS server takes its packets and never answers: the rank
# gives up at [launch] timeout (2 s), saying the resolver did not answer; getaddrinfo
# itself waited timeout x attempts of resolv.conf (10-20 s here) past it. Host A's own
# resolv.conf (ip netns exec binds /etc/netns/NAME/resolv.conf) names a silent server.
mkdir -p "/etc/netns/$A"
printf 'nameserver 10.77.0.2\noptions timeout:10 attempts:2\n' >"/etc/netns/$A/resolv.conf"
start=$(date +%s)
ip netns exec "$A" timeout 60 "$G" rendezvous --rank 1 --world-size 2 --timeout 2s \
	--rendezvous rdv.gradsync.example:$port --token netns-test >"$T/dns.log" 2>&1
st=$?
took=$(( $(date +%s) - start ))
rm -rf "/etc/netns/$A"
[ $st != 0 ] && [ $took -le 4 ] || { echo "FAIL: silent DNS: exit $st after ${took}s (timeout 2s)"; fails=$((fails + 1)); }
grep -qF "cannot resolve rendezvous host 'rdv.gradsync.example' within 2s ([launch] timeout): no answer from the resolver" "$T/dns.log" ||
	{ echo "FAIL: silent DNS: no line saying the resolver did not answer:"; cat "$T/dns.log"; fails=$((fails + 1)); }
echo "silent DNS: exit $st after ${took}s: $(grep -o 'cannot resolve.*' "$T/dns.log" | head -n 1)"
[ $fails = 0 ] && echo "netns: 4 ranks on 2 hosts verified over tcp, auto (shm+tcp) and hierarchical"
exit $fails
