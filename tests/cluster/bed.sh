#!/bin/sh
# An emulated cluster on one machine: H "hosts" (network namespaces, each with its own
# hostname) on one switch (a bridge in its own namespace), each host's link shaped with
# tc (tbf rate both ways, netem delay where the kernel has it), L ranks per host started
# with the normal launcher flags. Two tiers, as on a real cluster: ranks of one host talk
# over shm / loopback (fast, unshaped), hosts over their shaped links.
#
# usage: tests/cluster/bed.sh [options] EXPERIMENT.ini [gradsync run options...]
#   --vm                run the bed inside one qemu VM whose kernel has sch_netem, so
#                       --delay is real (tests/cluster/vm.sh; this host's kernel has no
#                       netem). --out and --logs stay host directories
#   --hosts H           hosts, 1..8 (default 2; 1: the inside-a-host tier alone)
#   --ranks-per-host L  ranks in each host (default 1); rank r runs on host r / L
#   --rate RATE         every link, each direction, in tc units (default 100mbit: the
#                       8 ranks of 8 hosts on 2 busy cores kept up with it, not with 200)
#   --delay D           delay added at each shaper (default 50us; a packet from host to
#                       host crosses two with --shape both: 2 x D one way); needs
#                       sch_netem, else the bed says so and adds none (--vm has it)
#   --slow H=RATE       host H's link (0-based) at RATE instead; repeatable
#   --queue T           tbf queue of each link egress, as time at the rate (default 50ms)
#   --gso on|off        off: every link carries MTU-sized packets (gso_max_segs 1), so its
#                       queue and burst can be as shallow as a switch port's; on (default):
#                       64 KiB GSO packets, the queue must hold several of them
#   --burst B           tbf bucket (default 64kb with GSO, without it 4kb, or two packets
#                       of a larger --mtu)
#   --mtu M             every link's MTU (default 1500; 9000: jumbo frames, as on RoCE and
#                       IB clusters, a sixth of the packets without GSO)
#   --cc NAME           TCP congestion control inside the hosts (default bbr when the
#                       kernel has it, else the kernel's default)
#   --shape WHERE       both (default): each link shaped host -> switch and switch ->
#                       host, as a full-duplex NIC and its switch port; egress: host ->
#                       switch only, so every flow crosses one shaper (tree at 4 hosts
#                       ran 16% faster so: tests/cluster/RESULTS.md)
#   --sample DIR        what the links carried: DIR/links.txt, every host's link each way
#                       every 10 ms (tests/cluster/linkuse.py; with GRADSYNC_LOG=debug,coll
#                       its `report` sets it against the messages in flight), and at the
#                       end DIR/tcp.txt, each host's TCP segments out and retransmitted and
#                       each shaper's drops
#   --limit S           bound of the whole run in seconds (default 600)
#   --out DIR           parent of the run directory (default: the experiment's)
#   --logs DIR          where each rank's output goes (default: a temporary directory,
#                       printed when a rank fails)
# Every rank gets GS_IF=eth0 and GS_HOST=h in its environment (an experiment can use
# `tcp_interface = ${GS_IF}`). The bed prints the run directory on its last line
# ("run: DIR"), exits with the first failing rank's status (124 when the bound
# passed), and removes every namespace it made on any exit.
set -u
G=${GRADSYNC:-build/gradsync}
G=$(readlink -f "$G")
# --vm: the same bed, run in a VM by vm.sh (the arguments without --vm)
VM=
for a in "$@"; do [ "$a" = --vm ] && VM=1; done
if [ -n "$VM" ]; then
	n=$#
	for a in "$@"; do [ "$a" = --vm ] || set -- "$@" "$a"; done
	shift "$n"
	exec bash "$(dirname "$0")/vm.sh" bed "$@"
fi
H=2 L=1 RATE=100mbit DELAY=50us LIMIT=600 OUT= LOGS= SLOW= QUEUE=50ms CC= SHAPE=both
GSO=on BURST= MTU=1500 SAMPLE=
while [ $# -gt 0 ]; do
	case $1 in
	--hosts) H=$2; shift 2 ;;
	--ranks-per-host) L=$2; shift 2 ;;
	--rate) RATE=$2; shift 2 ;;
	--delay) DELAY=$2; shift 2 ;;
	--slow) SLOW="$SLOW $2"; shift 2 ;;
	--limit) LIMIT=$2; shift 2 ;;
	--queue) QUEUE=$2; shift 2 ;;
	--cc) CC=$2; shift 2 ;;
	--shape) SHAPE=$2; shift 2 ;;
	--gso) GSO=$2; shift 2 ;;
	--burst) BURST=$2; shift 2 ;;
	--mtu) MTU=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--logs) LOGS=$2; shift 2 ;;
	--sample) SAMPLE=$2; shift 2 ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	--) shift; break ;;
	-*) echo "bed.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || { echo "bed.sh: no experiment file (see --help)" >&2; exit 2; }
INI=$(readlink -f "$1"); shift
case $H in [1-8]) ;; *) echo "bed.sh: --hosts $H: 1..8 hosts" >&2; exit 2 ;; esac
case $L in [1-9]|[1-9][0-9]) ;; *) echo "bed.sh: --ranks-per-host $L: 1..99" >&2; exit 2 ;; esac
case $SHAPE in both|egress) ;; *) echo "bed.sh: --shape $SHAPE: both or egress" >&2; exit 2 ;; esac
case $GSO in on|off) ;; *) echo "bed.sh: --gso $GSO: on or off" >&2; exit 2 ;; esac
case $MTU in [1-9][0-9][0-9]|[1-9][0-9][0-9][0-9]) ;; *) echo "bed.sh: --mtu $MTU: 100..9999" >&2; exit 2 ;; esac
if [ -z "$BURST" ]; then
	BURST=64kb
	[ $GSO = off ] && BURST=$((MTU < 2048 ? 4096 : 2 * MTU + 200))
fi
[ "$(id -u)" = 0 ] || { echo "bed.sh: network namespaces need root" >&2; exit 77; }
for c in ip tc unshare timeout; do
	command -v $c >/dev/null 2>&1 || { echo "bed.sh: $c not installed" >&2; exit 77; }
done

# Names carry our pid: several beds (and tests/net) may run at once.
P=gsc$$
SW=${P}sw
T=$(mktemp -d)
[ -n "$LOGS" ] || LOGS=$T/logs
mkdir -p "$LOGS"
cleanup() {
	for p in $(cat "$T/pids" 2>/dev/null); do kill "$p" 2>/dev/null; done
	[ -n "$SAMPLE" ] && sample_end
	for h in $(seq 0 $((H - 1))); do ip netns del "${P}h$h" 2>/dev/null; done
	ip netns del "$SW" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# rate of host h's link: the last --slow for h, else --rate
link_rate() {
	r=$RATE
	for s in $SLOW; do [ "${s%%=*}" = "$1" ] && r=${s#*=}; done
	echo "$r"
}

# shape DEV in NS: netem delay (when the kernel has it) then tbf at RATE. The bucket
# holds one 64 KiB GSO packet (tbf would otherwise split each one). The queue holds
# 50 ms, several GSO packets even at 50 Mbit/s: shallower ones dropped and halved the
# rate (measured). A queue that cubic fills delays what waits behind the data (the
# receiver's clear-to-send, ACKs) by its depth; BBR (below) keeps it nearly empty.
shape() {
	ns=$1 dev=$2 rate=$3
	parent=root
	if [ -n "$NETEM" ]; then
		ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: netem delay "$DELAY" limit 100000 || return 1
		parent="parent 1:1"
	fi
	# shellcheck disable=SC2086
	ip netns exec "$ns" tc qdisc add dev "$dev" $parent handle 10: tbf rate "$rate" \
		burst "$BURST" latency "$QUEUE" || return 1
}

ip netns add "$SW" 2>"$T/err" || { echo "bed.sh: cannot create a network namespace: $(cat "$T/err")" >&2; exit 77; }
ip -n "$SW" link add br0 type bridge || exit 1
ip -n "$SW" link set br0 up
ip -n "$SW" link set lo up
# netem is optional (not every kernel builds sch_netem); tbf is required.
NETEM=
ip -n "$SW" link add probe0 type veth peer name probe1
if [ "$DELAY" != 0 ] && ip netns exec "$SW" tc qdisc add dev probe0 root netem delay "$DELAY" 2>/dev/null; then
	NETEM=1
elif [ "$DELAY" != 0 ]; then
	echo "bed.sh: this kernel has no sch_netem: links get their rate but no added delay" >&2
fi
if ! ip netns exec "$SW" tc qdisc replace dev probe0 root tbf rate 1mbit burst 32kb latency 50ms 2>"$T/err"; then
	echo "bed.sh: tc tbf unavailable: $(cat "$T/err")" >&2
	exit 77
fi
ip -n "$SW" link del probe0

if [ -z "$CC" ] && grep -qw bbr /proc/sys/net/ipv4/tcp_available_congestion_control 2>/dev/null; then
	CC=bbr
fi
for h in $(seq 0 $((H - 1))); do
	ns=${P}h$h
	ip netns add "$ns" || exit 1
	# congestion control is per network namespace
	[ -n "$CC" ] && ip netns exec "$ns" sysctl -qw net.ipv4.tcp_congestion_control="$CC"
	[ -n "${SSAI:-}" ] && ip netns exec "$ns" sysctl -qw net.ipv4.tcp_slow_start_after_idle=$SSAI
	ip -n "$SW" link add "p$h" type veth peer name eth0 netns "$ns" || exit 1
	ip -n "$SW" link set dev "p$h" mtu "$MTU" && ip -n "$ns" link set dev eth0 mtu "$MTU" ||
		exit 1
	if [ $GSO = off ]; then
		# TCP then sends MSS-sized segments, and the bridge forwards them as they are
		ip -n "$SW" link set dev "p$h" gso_max_segs 1 &&
			ip -n "$ns" link set dev eth0 gso_max_segs 1 || exit 1
	fi
	ip -n "$SW" link set "p$h" master br0 up
	ip -n "$ns" addr add "10.78.0.$((h + 1))/24" dev eth0
	ip -n "$ns" link set lo up
	ip -n "$ns" link set eth0 up
	rate=$(link_rate "$h")
	# host -> switch on eth0, switch -> host on p$h: the link is slow both ways
	shape "$ns" eth0 "$rate" && { [ "$SHAPE" = egress ] || shape "$SW" "p$h" "$rate"; } || {
		echo "bed.sh: shaping host $h's link failed" >&2
		exit 1
	}
done
desc="hosts $H x $L ranks, links $RATE${NETEM:+ + $DELAY}, queue $QUEUE, burst $BURST"
desc="$desc${CC:+, tcp $CC}"
[ "$MTU" != 1500 ] && desc="$desc, MTU $MTU"
[ $GSO = off ] && desc="$desc, MTU-sized packets (no GSO)"
[ "$SHAPE" = egress ] && desc="$desc, shaped host -> switch only"
for s in $SLOW; do desc="$desc, host ${s%%=*} at ${s#*=}"; done
echo "bed: $desc" >&2

# --sample: the switch's ports' byte counters, from the switch's own namespace
sample_end() {
	[ -f "$T/sampler" ] || return 0
	: >"$T/stop"
	wait "$(cat "$T/sampler")" 2>/dev/null
	rm -f "$T/sampler"
	for h in $(seq 0 $((H - 1))); do
		echo "host $h: $(ip netns exec "${P}h$h" nstat -az TcpOutSegs TcpRetransSegs 2>/dev/null |
			awk 'NR > 1 { printf "%s %s ", $1, $2 }')host egress $(ip netns exec "${P}h$h" tc -s qdisc show dev eth0 |
			grep -o 'dropped [0-9]*' | head -n 1), switch egress $(ip netns exec "$SW" tc -s qdisc show dev "p$h" |
			grep -o 'dropped [0-9]*' | head -n 1)"
	done >"$SAMPLE/tcp.txt"
}
if [ -n "$SAMPLE" ]; then
	mkdir -p "$SAMPLE" || exit 1
	ip netns exec "$SW" python3 "$(dirname "$0")/linkuse.py" sample "$SAMPLE/links.txt" 0.01 \
		"$T/stop" &
	echo $! >"$T/sampler"
fi

N=$((H * L))
PORT=$((20000 + $$ % 20000))
: >"$T/pids"
set -- "$@"
[ -n "$OUT" ] && set -- --out "$(readlink -f "$OUT")" "$@"
for r in $(seq 0 $((N - 1))); do
	h=$((r / L))
	# own UTS namespace per rank: each "host" has its own hostname, as real hosts do
	GS_IF=eth0 GS_HOST=$h GS_HN=host$h timeout -k 5 "$LIMIT" ip netns exec "${P}h$h" \
		unshare -u sh -c 'hostname "$GS_HN" && exec "$@"' sh \
		"$G" run "$INI" --rank "$r" --world-size "$N" --rendezvous "10.78.0.1:$PORT" \
		--token "bed-$$" "$@" >"$LOGS/rank$r.log" 2>&1 &
	echo $! >>"$T/pids"
done
st=0 r=0
for p in $(cat "$T/pids"); do
	wait "$p"
	s=$?
	if [ $s != 0 ] && [ $st = 0 ]; then
		st=$s
		echo "bed.sh: rank $r exited with $s; its output:" >&2
		tail -n 20 "$LOGS/rank$r.log" >&2
	fi
	r=$((r + 1))
done
: >"$T/pids"
[ -n "$SAMPLE" ] && sample_end
dir=$(sed -n "s/^gradsync: results: //p" "$LOGS/rank0.log" | tail -n 1)
cat "$LOGS/rank0.log"
[ -n "$dir" ] && echo "run: $dir"
exit $st
