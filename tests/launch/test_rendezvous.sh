#!/bin/sh
# `gradsync rendezvous` end to end: a local spawn through the real binary (exec of
# /proc/self/exe, inherited listener, bootstrap), flags, and failures that name ranks.
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

# Rank 0 alone: the timeout names the rank that never came.
check "missing rank" 1 "$G" rendezvous --rank 0 --world-size 3 --token t \
	--rendezvous 127.0.0.1:$((port + 1)) --timeout 1s
expect "missing rank" err "timed out after 1s waiting for ranks 1,2 to connect"
check "bad flags" 2 "$G" rendezvous --rank 3 --world-size 2
expect "bad flags" err "--rank=3 --world-size=2"
check "bad option" 2 "$G" rendezvous --frobnicate 1

[ $fails -eq 0 ] || exit 1
echo "ok"
