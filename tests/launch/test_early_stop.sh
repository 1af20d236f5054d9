#!/bin/sh
# A rank started by hand (as a launcher starts it) and stopped by a signal before its
# bootstrap is open, while it still connects to rank 0: it says so in one line naming the
# signal and the rendezvous and exits as a shell reports the signal (143, 130), at once
# when rank 0 is not up, within the 1 s grace when rank 0 holds its handshake unanswered;
# and when rank 0 answers within the grace, rank 0 stops the job naming the rank at once
# instead of waiting out [launch] timeout for it. (The rank died of the default action
# without a word, and rank 0 named it only at the timeout.)
set -u
. "$(dirname "$0")/../lib_net.sh"
rank_test_begin
port=$(free_port $((24000 + $$ % 7000)))
cat >"$T/job.ini" <<INI
[experiment]
name = early
output_dir = $T/results
[collective]
sizes = 4KiB
iterations = 2
[launch]
timeout = 30s
INI
export GRADSYNC_TOKEN=early-stop

# --- rank 0 not up: rank 3 retries its connection; SIGTERM ends it at once
"$G" run "$T/job.ini" --rank 3 --world-size 4 --rendezvous 127.0.0.1:$port >"$T/a.log" 2>&1 &
r=$!
pids=$r
catching $r TERM || fail "not up: rank 3 never caught SIGTERM"
sleep 0.3 # in its retry loop
t0=$(now)
kill -TERM $r
wait $r
st=$?
took=$(elapsed $t0)
ended "not up" 143 1
one_line "not up" "$T/a.log" "gradsync[rank 3]: error: stopped by SIGTERM while connecting to rank 0 at 127.0.0.1:$port"
echo "rank 0 not up: exit $st after ${took}s: $(cat "$T/a.log")"

# --- something holds the port and never answers the handshake (a stopped rank 0): SIGINT
# ends the rank after the grace
port=$(free_port $((port + 1)))
python3 - "$port" "$T/held" <<'PY' &
import os, socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
held = []
while True:  # wait_listen's probe first, then the rank
    c, _ = s.accept()
    n = len(c.recv(1024))
    if n:
        held.append(c)  # the HELLO, never answered
        open(sys.argv[2], "w").write(f"{n}\n")
        time.sleep(30)
PY
holder=$!
pids="$pids $holder"
wait_listen $port || fail "silent: the holder never listened"
"$G" run "$T/job.ini" --rank 1 --world-size 2 --rendezvous 127.0.0.1:$port >"$T/b.log" 2>&1 &
r=$!
pids="$pids $r"
catching $r INT || fail "silent: rank 1 never caught SIGINT"
for i in $(seq 100); do [ -s "$T/held" ] && break; sleep 0.05; done
[ -s "$T/held" ] || fail "silent: the rank's HELLO never came"
t0=$(now)
kill -INT $r
wait $r
st=$?
took=$(elapsed $t0)
kill $holder 2>/dev/null
[ $st = 130 ] || fail "silent: exit $st, expected 130"
within "$took" 3 || fail "silent: ${took}s to stop (grace 1 s)"
grep -qxF "gradsync[rank 1]: error: stopped by SIGINT while connecting to rank 0 at 127.0.0.1:$port" "$T/b.log" ||
	{ fail "silent: message"; cat "$T/b.log"; }
echo "rank 0 silent: exit $st after ${took}s (HELLO of $(cat "$T/held") bytes held)"

# --- rank 0 stopped (SIGSTOP) while rank 1's handshake is under way; SIGTERM to rank 1,
# then rank 0 goes on within the grace: it welcomes rank 1, which tells the job, and rank
# 0 stops at once naming rank 1 (rank 2 never comes: it waited the whole 30 s before)
port=$(free_port $((port + 1)))
"$G" run "$T/job.ini" --rank 0 --world-size 3 --rendezvous 127.0.0.1:$port >"$T/c.0.log" 2>&1 &
r0=$!
pids="$pids $r0"
wait_listen $port || fail "handshake: rank 0 never listened"
kill -STOP $r0
"$G" run "$T/job.ini" --rank 1 --world-size 3 --rendezvous 127.0.0.1:$port >"$T/c.1.log" 2>&1 &
r1=$!
pids="$pids $r1"
catching $r1 TERM || fail "handshake: rank 1 never caught SIGTERM"
# its connection made (the kernel accepts for the stopped rank 0), the HELLO sent
connected $port 1 || fail "handshake: rank 1 never connected"
sleep 0.2
t0=$(now)
kill -TERM $r1
sleep 0.3
kill -CONT $r0
wait $r1
st1=$?
wait $r0
st0=$?
took=$(elapsed $t0)
[ "$st0 $st1" = "1 143" ] || fail "handshake: exits $st0 $st1, expected 1 143"
within "$took" 8 || fail "handshake: ${took}s to stop (timeout 30s)"
grep -qF "gradsync[rank 0]: error: bootstrap: aborting the job: rank 1 stopped by SIGTERM" "$T/c.0.log" ||
	{ fail "handshake: rank 0 does not name rank 1's signal"; cat "$T/c.0.log"; }
grep -q "Operation canceled" "$T/c.0.log" && fail "handshake: rank 0 added a line of its own errno"
python3 - "$T"/results/early-*/report.json <<'PY' || fail "handshake: report.json lacks the reason"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "failed", r["status"]
assert "rank 1 stopped by SIGTERM" in r["cases"][0]["error"], r["cases"][0]["error"]
PY
echo "handshake under way: exits $st0 $st1 after ${took}s: $(grep -o 'aborting the job: .*' "$T/c.0.log" | head -n 1)"

[ $fails = 0 ] && echo "early stop: all passed"
exit $((fails > 0))
