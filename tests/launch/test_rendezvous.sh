#!/bin/sh
# `gradsync rendezvous` end to end: a local spawn through the real binary (exec of
# /proc/self/exe, inherited listener, bootstrap), flags, and failures that name ranks,
# the port another process holds, a rendezvous that never answers or does not resolve.
set -u
G=${GRADSYNC:-build/gradsync}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
if ! "$G" rendezvous --help >/dev/null 2>&1; then
	echo "skip: this gradsync has no 'rendezvous' verb yet (main.c row pending)"
	exit 77
fi
check() { # check DESC EXPECTED_EXIT CMD...
	desc=$1 want=$2
	shift 2
	timeout 20 "$@" >"$T/out" 2>"$T/err"
	got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL: $desc: exit $got, expected $want"; cat "$T/out" "$T/err"; fails=$((fails + 1))
	fi
}
expect() { # expect DESC FILE TEXT
	grep -qF -- "$3" "$T/$2" || { echo "FAIL: $1: $2 lacks '$3':"; cat "$T/$2"; fails=$((fails + 1)); }
}

check "local spawn" 0 "$G" rendezvous --local-ranks 3 --iters 5 --timeout 10s
expect "local spawn" out "3 ranks via local"
expect "local spawn" out "bootstrap barrier:"
check "local spawn, fixed port" 0 "$G" rendezvous --local-ranks 2 --iters 5 \
	--rendezvous 127.0.0.1:$((20000 + $$ % 10000))
expect "fixed port" out "rendezvous 127.0.0.1:$((20000 + $$ % 10000))"

# Two ranks started by hand with flags.
port=$((30000 + $$ % 2000))
timeout 20 "$G" rendezvous --rank 1 --world-size 2 --rendezvous 127.0.0.1:$port --token t \
	--iters 5 >"$T/r1" 2>&1 &
check "flags rank 0" 0 "$G" rendezvous --rank 0 --world-size 2 --rendezvous 127.0.0.1:$port \
	--token t --iters 5
wait $! || { echo "FAIL: flags rank 1"; cat "$T/r1"; fails=$((fails + 1)); }
expect "flags" out "2 ranks via flags"

# Two ranks as MPICH's or Intel MPI's Hydra starts them (PMI_RANK, PMI_SIZE,
# MPI_LOCALRANKID): no job id to derive a port from, so without a rendezvous each stops
# at once saying to set one; with GRADSYNC_RENDEZVOUS they meet.
check "pmi without rendezvous" 2 env PMI_RANK=0 PMI_SIZE=2 MPI_LOCALRANKID=0 \
	MPI_LOCALNRANKS=2 GRADSYNC_TOKEN=t "$G" rendezvous --iters 5
expect "pmi without rendezvous" err "pmi launch of 2 ranks: the launcher names no job"
for r in 1 0; do
	PMI_RANK=$r PMI_SIZE=2 MPI_LOCALRANKID=$r MPI_LOCALNRANKS=2 GRADSYNC_TOKEN=t \
		GRADSYNC_RENDEZVOUS=127.0.0.1:$((port + 3)) timeout 20 "$G" rendezvous --iters 5 \
		>"$T/pmi$r" 2>&1 &
	eval pmi$r=\$!
done
wait $pmi0 || { echo "FAIL: pmi rank 0"; cat "$T/pmi0"; fails=$((fails + 1)); }
wait $pmi1 || { echo "FAIL: pmi rank 1"; cat "$T/pmi1"; fails=$((fails + 1)); }
cp "$T/pmi0" "$T/out"
expect "pmi" out "2 ranks via pmi"

# Rank 0 alone: the timeout names the rank that never came.
check "missing rank" 1 "$G" rendezvous --rank 0 --world-size 3 --token t \
	--rendezvous 127.0.0.1:$((port + 1)) --timeout 1s
expect "missing rank" err "timed out after 1s waiting for ranks 1,2 to connect"
# Most of a big job missing: runs of ranks as ranges, and where the line runs out of
# room it says how many more (it stopped at "...,52,53, to connect", as if only those)
check "missing ranks" 1 "$G" rendezvous --rank 0 --world-size 1000 --token t \
	--rendezvous 127.0.0.1:$((port + 1)) --timeout 1s
expect "missing ranks" err "timed out after 1s waiting for ranks 1-999 to connect"
check "bad flags" 2 "$G" rendezvous --rank 3 --world-size 2
expect "bad flags" err "--rank=3 --world-size=2"
check "bad option" 2 "$G" rendezvous --frobnicate 1

# The rendezvous port held by another process (a listener that never answers): rank 0
# says the port is taken (it used to ask whether 127.0.0.1 is an address of this host),
# and a local spawn ends within seconds, its other rank stopped once rank 0 has failed.
taken=$((port + 2))
python3 - "$taken" "$T/held" <<'PY' &
import os, socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
open(sys.argv[2], "w").close()
time.sleep(30)
PY
holder=$!
for i in $(seq 100); do [ -e "$T/held" ] && break; sleep 0.05; done
check "port taken" 1 "$G" rendezvous --rank 0 --world-size 2 --token t \
	--rendezvous 127.0.0.1:$taken --timeout 2s
expect "port taken" err "bind/listen 127.0.0.1:$taken: Address already in use: another process"
start=$(date +%s)
check "port taken, local spawn" 1 "$G" rendezvous --local-ranks 2 --iters 5 \
	--rendezvous 127.0.0.1:$taken --timeout 10s
took=$(( $(date +%s) - start ))
expect "port taken, local spawn" err "holds port $taken; choose another rendezvous port"
[ $took -le 6 ] || { echo "FAIL: port taken, local spawn: ${took}s (timeout 10s)"; fails=$((fails + 1)); }
kill $holder 2>/dev/null
wait $holder 2>/dev/null

# A rank whose rendezvous is held by something that accepts and never answers (another
# program on the port, or rank 0 stopped) says so, and one whose host name does not
# resolve says that: both read "could not reach rank 0 ...: Connection timed out" or
# "No route to host" before.
python3 - "$taken" "$T/held2" <<'PY' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
open(sys.argv[2], "w").close()
end, held = time.time() + 20, []
s.settimeout(1)
while time.time() < end:
    try:
        held.append(s.accept()[0])
    except OSError:
        pass
PY
holder=$!
for i in $(seq 100); do [ -e "$T/held2" ] && break; sleep 0.05; done
check "silent rank 0" 1 "$G" rendezvous --rank 1 --world-size 2 --token t \
	--rendezvous 127.0.0.1:$taken --timeout 2s
expect "silent rank 0" err "rank 1 reached 127.0.0.1:$taken, but nothing answered its handshake within 2s"
kill $holder 2>/dev/null
wait $holder 2>/dev/null
check "unknown host" 1 "$G" rendezvous --rank 1 --world-size 2 --token t \
	--rendezvous no-such-host.invalid:$taken --timeout 1s
expect "unknown host" err "rank 1 cannot resolve rendezvous host 'no-such-host.invalid'"

[ $fails -eq 0 ] || exit 1
echo "ok"
