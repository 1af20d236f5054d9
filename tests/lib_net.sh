# Shell helpers for the end-to-end tests that open a rendezvous port by hand (sourced).

# A free rendezvous port from $1 up, below the kernel's ephemeral range (32768+), where
# the transports' own sockets can never take it between runs.
free_port() {
	python3 - "$1" <<'PY'
import socket, sys
for p in range(int(sys.argv[1]), 32000):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
        print(p)
        break
    except OSError:
        pass
    finally:
        s.close()
PY
}

# Wait (at most 20 s) until something listens on ${2:-127.0.0.1}:$1; non-zero when nothing did.
wait_listen() {
	python3 - "$1" "${2:-127.0.0.1}" <<'PY'
import socket, sys, time
end = time.time() + 20
while time.time() < end:
    try:
        socket.create_connection((sys.argv[2], int(sys.argv[1])), timeout=1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)
PY
}

. "$(dirname "$0")/../lib.sh"

# The prologue of a test that starts ranks by hand: test_begin's (tests/lib.sh: G, T,
# fails and fail()) and pids (the ranks started; killed at exit, T removed). Call it at
# the top level of the test, not in a subshell: it sets the EXIT trap.
rank_test_begin() {
	test_begin
	pids=
	trap 'for p in $pids; do kill -9 $p 2>/dev/null; done; rm -rf "$T"' EXIT
}

# reap_all TAG SECS PID...: wait for each PID in turn, SECS at most each (every wait has a
# bound: one still there then is a hang, said and killed); their exits, in order, in $sts
reap_all() {
	tag=$1 secs=$2
	shift 2
	sts=
	for p in "$@"; do
		for i in $(seq $((secs * 10))); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -0 "$p" 2>/dev/null && { fail "$tag: pid $p still running $secs s on"; kill -9 "$p"; }
		wait "$p"
		sts="$sts $?"
	done
}

# Wall-clock seconds for timing a stop: now prints the time, elapsed T0 the seconds since
# T0 (two decimals), within SECS LIMIT succeeds when SECS <= LIMIT.
now() { python3 -c 'import time; print(time.time())'; }
elapsed() { python3 -c "import time,sys; print(f'{time.time() - float(sys.argv[1]):.2f}')" "$1"; }
within() { python3 -c "import sys; sys.exit(float(sys.argv[1]) > float(sys.argv[2]))" "$1" "$2"; }
# ended TAG WANT LIMIT: the command's exit, $st, is WANT, and $took at most LIMIT seconds
ended() {
	[ "$st" = "$2" ] || fail "$1: exit $st, expected $2"
	within "$took" "$3" || fail "$1: ${took}s to end (at most $3 s)"
}
# one_line TAG FILE LINE: FILE holds LINE and nothing else
one_line() {
	[ "$(cat "$2")" = "$3" ] || { fail "$1: $2 is not the one line '$3':"; cat "$2"; }
}

# catching PID SIG: wait (at most 10 s) until PID has a handler for SIG (SigCgt), so the
# signal comes in the window tested, not before the rank set up its handlers
catching() {
	python3 - "$1" "$2" <<'PY'
import signal, sys, time
pid, bit = sys.argv[1], 1 << (getattr(signal, "SIG" + sys.argv[2]) - 1)
end = time.time() + 10
while time.time() < end:
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("SigCgt:") and int(line.split()[1], 16) & bit:
                sys.exit(0)
    except OSError:
        sys.exit(1)
    time.sleep(0.01)
sys.exit(1)
PY
}

# connected PORT N: wait (at most 10 s) until N connections to port PORT are established
# (ranks that reached rank 0); non-zero when they never were
connected() {
	for i in $(seq 200); do
		[ "$(ss -Htn state established "( dport = :$1 )" 2>/dev/null | wc -l)" -ge "$2" ] &&
			return 0
		sleep 0.05
	done
	return 1
}
