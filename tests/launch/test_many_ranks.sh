#!/bin/sh
# 100 local ranks under a small descriptor limit (issue 16): with `ulimit -Sn 256` the
# soft limit is raised to the hard one (tcp needs a socket per peer and stream, rank 0
# one more per rank); with `ulimit -n 256` (hard too) shm still fits (a pidfd per peer),
# and tcp stops with a line naming the limit instead of a bare EMFILE.
set -u
G=$(readlink -f "${GRADSYNC:-build/gradsync}")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
[ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge 1024 ] ||
	{ echo "skip: hard RLIMIT_NOFILE $(ulimit -Hn) is below 1024"; exit 77; }
write_ini() { # write_ini NAME TRANSPORT EXTRA
	cat >"$T/$1.ini" <<INI
[experiment]
name = $1
output_dir = $T/results
[collective]
sizes = 4KiB
iterations = 2
warmup = 1
[transport]
transport = $2
$3
[launch]
local_ranks = 100
timeout = 60s
[report]
formats = json
INI
}
write_ini tcp tcp ""
write_ini shm shm "shm_ring = 64KiB
slot_size = 16KiB"
(ulimit -Sn 256 && timeout 150 "$G" -q run "$T/tcp.ini") >"$T/tcp.log" 2>&1 ||
	fail "100 tcp ranks under ulimit -Sn 256: $(grep -m 3 error "$T/tcp.log")"
(ulimit -n 256 && timeout 150 "$G" -q run "$T/shm.ini") >"$T/shm.log" 2>&1 ||
	fail "100 shm ranks under ulimit -n 256: $(grep -m 3 error "$T/shm.log")"
(ulimit -n 256 && timeout 150 "$G" -q run "$T/tcp.ini") >"$T/tcp2.log" 2>&1 &&
	fail "100 tcp ranks under a hard limit of 256 passed?"
grep -q "out of file descriptors (RLIMIT_NOFILE 256 (hard 256)" "$T/tcp2.log" ||
	fail "no line naming the descriptor limit: $(grep -m 3 'rank 0.*error' "$T/tcp2.log")"
[ $fails = 0 ] && echo "100 ranks: tcp under a soft 256 (raised), shm under a hard 256, tcp's limit named"
exit $((fails > 0))
