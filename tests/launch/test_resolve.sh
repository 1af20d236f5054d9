#!/bin/sh
# Name lookups of the rendezvous host against a name server of the test's own: in a
# network and mount namespace of its own (unshare; user namespace too when not root) a
# server on 127.0.0.1:53 takes every query, answers NXDOMAIN for nosuch.* names and never
# answers the others, and a resolv.conf naming it (timeout:30 attempts:2, so a plain
# getaddrinfo holds 60 s) is bind-mounted over /etc/resolv.conf. Checked: a silent server
# costs no more than [launch] timeout, and the line names the host, the bound and what to
# check; SIGTERM or SIGINT during the lookup stops `gradsync rendezvous` (rank 1 and rank
# 0) and a `gradsync run` rank whose rendezvous is torchrun's MASTER_ADDR (rank 1, and rank
# 0 with its run directory made) within a second, exit 128 + signal, one line naming the
# rank, the signal and the host whose lookup it was in (rank 0 used to say it was
# "waiting for the ranks", of ranks it had not listened for yet); a name that does not
# exist fails at once, not at the timeout. Not covered: a lookup stuck in the kernel (NFS-held /etc/hosts), a resolver
# over TCP, other NSS modules.
set -u
if [ -z "${GS_RESOLVE_NS:-}" ]; then
	command -v unshare >/dev/null 2>&1 || { echo "skip: unshare (util-linux) not installed"; exit 77; }
	command -v ip >/dev/null 2>&1 || { echo "skip: ip (iproute2) not installed"; exit 77; }
	ns="unshare -n -m"
	[ "$(id -u)" = 0 ] || ns="unshare -r -n -m"
	err=$($ns true 2>&1) || { echo "skip: cannot make a namespace ($ns): $err"; exit 77; }
	GS_RESOLVE_NS=1 exec $ns sh "$0"
fi
. "$(dirname "$0")/../lib_net.sh"
rank_test_begin
ip link set lo up || { echo "skip: cannot bring lo up in the namespace"; exit 77; }
printf 'nameserver 127.0.0.1\noptions timeout:30 attempts:2\n' >"$T/resolv.conf"
printf 'hosts: files dns\n' >"$T/nsswitch.conf"
if ! mount --bind "$T/resolv.conf" /etc/resolv.conf ||
   ! mount --bind "$T/nsswitch.conf" /etc/nsswitch.conf; then
	echo "skip: cannot bind-mount a resolv.conf in the namespace"
	exit 77
fi
python3 - "$T/queries" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 53))
log = open(sys.argv[1], "a", buffering=1)
while True:
    q, peer = s.recvfrom(4096)
    i, labels = 12, []
    while i < len(q) and q[i]:
        labels.append(q[i + 1:i + 1 + q[i]].decode(errors="replace"))
        i += 1 + q[i]
    name = ".".join(labels)
    log.write(name + "\n")
    if name.startswith("nosuch."):
        # NXDOMAIN: the query's id, QR|RD|RA, rcode 3, its question, no answer
        flags = 0x8000 | (q[2] & 1) << 8 | 0x80 | 3
        s.sendto(q[:2] + flags.to_bytes(2, "big") + q[4:6] + bytes(6) + q[12:i + 5], peer)
PY
pids="$pids $!"
for i in $(seq 100); do [ -e "$T/queries" ] && break; sleep 0.05; done
export GRADSYNC_TOKEN=resolve-test
port=29500

# the emulation is real: a plain lookup of a silent name is still waiting 3 s on
timeout 3 getent ahosts stalled.gradsync.test >/dev/null
st=$?
[ $st = 124 ] || fail "emulation: getent returned $st within 3 s, the server is not silent"
grep -qx stalled.gradsync.test "$T/queries" || fail "emulation: the query never reached the server"

# asked NAME LOG: wait (at most 10 s) until a query for NAME reached the server beyond the
# LOG lines it had before: the lookup is under way
asked() {
	for i in $(seq 200); do
		[ "$(tail -n +$(($2 + 1)) "$T/queries" | grep -cx "$1")" -ge 1 ] && return 0
		sleep 0.05
	done
	return 1
}

# --- silent server, [launch] timeout 2 s: the rank gives up at the timeout, not at 60 s
t0=$(now)
"$G" rendezvous --rank 1 --world-size 2 --rendezvous stalled.gradsync.test:$port --timeout 2s \
	>"$T/dl.log" 2>&1
st=$?
took=$(elapsed $t0)
ended deadline 1 4
one_line deadline "$T/dl.log" "gradsync[rank 1]: error: bootstrap: rank 1 cannot resolve rendezvous host 'stalled.gradsync.test' within 2s ([launch] timeout): no answer from the resolver: check DNS (/etc/resolv.conf) or /etc/hosts"
echo "silent server: exit $st after ${took}s: $(cat "$T/dl.log")"

# stop TAG SIG WANT LINE CMD...: CMD in the background with a 60 s timeout; once its
# lookup reached the server, SIG; it must exit WANT within a second, its output the one
# LINE (with LINE "+..." its output holds the line ..., and more)
stop() {
	tag=$1 sig=$2 want=$3 line=$4
	shift 4
	seen=$(wc -l <"$T/queries")
	"$@" >"$T/$tag.log" 2>&1 &
	r=$!
	pids="$pids $r"
	asked stalled.gradsync.test "$seen" || fail "$tag: no query reached the server"
	t0=$(now)
	kill -$sig $r
	for i in $(seq 100); do kill -0 $r 2>/dev/null || break; sleep 0.05; done
	kill -0 $r 2>/dev/null && { fail "$tag: still running 5 s after SIG$sig"; kill -9 $r; }
	wait $r
	st=$?
	took=$(elapsed $t0)
	ended $tag $want 1
	case $line in
	+*) grep -qxF "${line#+}" "$T/$tag.log" || { fail "$tag: no line '${line#+}'"; cat "$T/$tag.log"; } ;;
	*) one_line $tag "$T/$tag.log" "$line" ;;
	esac
	echo "SIG$sig during the lookup, $tag: exit $st after ${took}s: $(cat "$T/$tag.log")"
}

stop rank1 TERM 143 \
	"gradsync[rank 1]: error: rank 1 stopped by SIGTERM (signal 15) during the lookup of rendezvous host 'stalled.gradsync.test': it had not reached rank 0 yet" \
	"$G" rendezvous --rank 1 --world-size 2 --rendezvous stalled.gradsync.test:$port --timeout 60s
stop rank0 INT 130 \
	"gradsync[rank 0]: error: rank 0 stopped by SIGINT (signal 2) during the lookup of rendezvous host 'stalled.gradsync.test': it had not listened for the ranks yet" \
	"$G" rendezvous --rank 0 --world-size 2 --rendezvous stalled.gradsync.test:$port --timeout 60s
cat >"$T/job.ini" <<INI
[experiment]
name = resolve
output_dir = $T/results
[collective]
sizes = 4KiB
iterations = 2
[launch]
timeout = 60s
INI
# torchrun's environment: the rendezvous is MASTER_ADDR, MASTER_PORT + 1
stop torchrun INT 130 \
	"gradsync[rank 1]: error: rank 1 stopped by SIGINT (signal 2) during the lookup of rendezvous host 'stalled.gradsync.test': it had not reached rank 0 yet" \
	env RANK=1 WORLD_SIZE=2 LOCAL_RANK=1 LOCAL_WORLD_SIZE=2 MASTER_ADDR=stalled.gradsync.test \
	MASTER_PORT=$port "$G" run "$T/job.ini"
# rank 0 of `run`: its run directory made first, its report of the case interrupted after
stop torchrun0 TERM 143 \
	"+gradsync[rank 0]: error: rank 0 stopped by SIGTERM (signal 15) during the lookup of rendezvous host 'stalled.gradsync.test': it had not listened for the ranks yet" \
	env RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 MASTER_ADDR=stalled.gradsync.test \
	MASTER_PORT=$port "$G" run "$T/job.ini"
[ "$(grep -c ": error: " "$T/torchrun0.log")" = 1 ] || { fail "torchrun0: more than one error"; cat "$T/torchrun0.log"; }

# --- a name that does not exist: said at once, whatever the timeout
for r in 1 0; do
	t0=$(now)
	"$G" rendezvous --rank $r --world-size 2 --rendezvous nosuch.gradsync.test:$port \
		--timeout 60s >"$T/nx.$r.log" 2>&1
	st=$?
	took=$(elapsed $t0)
	ended "no such name, rank $r" 1 2
	one_line "no such name, rank $r" "$T/nx.$r.log" "gradsync[rank $r]: error: bootstrap: rank $r cannot resolve rendezvous host 'nosuch.gradsync.test': Name or service not known: check the name, DNS or /etc/hosts"
	echo "no such name, rank $r: exit $st after ${took}s: $(cat "$T/nx.$r.log")"
done

[ $fails = 0 ] && echo "resolve: all passed"
exit $((fails > 0))
