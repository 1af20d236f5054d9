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

# The prologue of a test that starts ranks by hand: G (the binary, absolute), T (a
# scratch directory), pids (the ranks started; killed at exit, T removed), fails and
# fail(). Call it at the top level of the test, not in a subshell: it sets the EXIT trap.
rank_test_begin() {
	G=$(readlink -f "${GRADSYNC:-build/gradsync}")
	T=$(mktemp -d)
	pids=
	trap 'for p in $pids; do kill -9 $p 2>/dev/null; done; rm -rf "$T"' EXIT
	fails=0
}
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
