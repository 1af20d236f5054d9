#!/bin/sh
# `gradsync rendezvous` stopped by a signal, as `gradsync run` is (run/stop.h): a rank
# started by hand and signalled while the ranks exchange stops the job, naming itself, its
# host, its pid and the signal in one line, the other rank says the same in one line, and
# they exit 128 + the signal and 1 within seconds (the [launch] timeout is 30 s); rank 0
# signalled while it still waits for a rank tells the rank already there; every rank
# signalled (a launcher forwarding a hangup) exits 129 each. Ctrl-C on a --local-ranks
# parent stops its ranks and leaves no process behind. (The ranks died of the default
# action without a word, and the others read "rank 1 exited unexpectedly".)
set -u
. "$(dirname "$0")/../lib_net.sh"
rank_test_begin
export GRADSYNC_TOKEN=rdv-signals
host=$(hostname)

# reap TAG PID...: wait for each (10 s at most: a rank still there is a hang), exits in
# $sts, seconds since $t0 in $took
reap() {
	tag=$1
	shift
	reap_all "$tag" 10 "$@"
	took=$(elapsed $t0)
	within "$took" 5 || fail "$tag: ${took}s to stop ([launch] timeout 30 s)"
}
# signalled WORLD TAG WANT SIG R...: ranks 0 and 1 of WORLD started by hand on a fresh
# port ($port), pids in p0 and p1, each iterating long enough to be signalled
# mid-exchange; once rank 1 joined rank 0, SIG to ranks R...; their exits must read WANT
signalled() {
	world=$1 tag=$2 want=$3 sig=$4
	shift 4
	port=$(free_port $((24000 + $$ % 7000)))
	for r in 0 1; do
		"$G" rendezvous --rank $r --world-size $world --rendezvous 127.0.0.1:$port \
			--timeout 30s --iters 1000000 >"$T/$tag.$r.log" 2>&1 &
		eval p$r=\$!
		pids="$pids $!"
	done
	connected $port 1 || fail "$tag: rank 1 never connected"
	sleep 0.5
	t0=$(now)
	for r in "$@"; do eval kill -$sig \$p$r; done
	reap $tag $p0 $p1
	[ "$sts" = "$want" ] || fail "$tag: exits$sts, expected$want"
}

# --- SIGTERM to rank 1 while the two ranks run their barriers
signalled 2 term " 1 143" TERM 1
why="rank 1 stopped by SIGTERM on host $host (pid $p1)"
one_line term "$T/term.1.log" "gradsync[rank 1]: error: bootstrap: aborting the job: $why"
one_line term "$T/term.0.log" "gradsync[rank 0]: error: bootstrap: aborting the job: $why"
echo "SIGTERM to rank 1: exits$sts after ${took}s: $(cat "$T/term.0.log")"

# --- SIGINT to rank 0 (Ctrl-C where it runs)
signalled 2 int " 130 1" INT 0
why="rank 0 stopped by SIGINT on host $host (pid $p0)"
one_line int "$T/int.1.log" "gradsync[rank 1]: error: bootstrap: aborting the job: $why"
echo "SIGINT to rank 0: exits$sts after ${took}s: $(cat "$T/int.1.log")"

# --- SIGHUP to every rank, as a launcher forwards it: each exits 129; whichever rank's
# abort came first, every line names SIGHUP
signalled 2 hup " 129 129" HUP 0 1
for r in 0 1; do
	[ "$(wc -l <"$T/hup.$r.log")" = 1 ] && grep -q "^gradsync\[rank $r\]: error: bootstrap: aborting the job: rank [01] stopped by SIGHUP on host $host (pid [0-9]*)$" "$T/hup.$r.log" ||
		{ fail "hup: rank $r's output"; cat "$T/hup.$r.log"; }
done
echo "SIGHUP to both: exits$sts after ${took}s"

# --- rank 0 of 3 waiting for rank 2, which never comes; rank 1 joined: SIGINT to rank 0
# tells rank 1 who stopped and why, rank 0 says what it was doing
signalled 3 wait " 130 1" INT 0
one_line wait "$T/wait.0.log" "gradsync[rank 0]: error: stopped by SIGINT while waiting for the ranks at 127.0.0.1:$port"
one_line wait "$T/wait.1.log" "gradsync[rank 1]: error: bootstrap: aborting the job: rank 0 stopped by SIGINT on host $host (pid $p0) while waiting for rank 2 to connect"
echo "SIGINT to rank 0 waiting for rank 2: exits$sts after ${took}s: $(cat "$T/wait.1.log")"

# --- Ctrl-C on a local spawn of 3 ranks: the parent forwards it, its ranks stop, none is
# left (ps), the parent exits 130 naming the signal and the ranks
"$G" rendezvous --local-ranks 3 --iters 1000000 --timeout 30s >"$T/local.out" 2>"$T/local.err" &
parent=$!
pids="$pids $parent"
kids=
for i in $(seq 200); do
	kids=$(pgrep -P $parent | tr '\n' ' ')
	[ "$(echo $kids | wc -w)" = 3 ] && break
	sleep 0.05
done
[ "$(echo $kids | wc -w)" = 3 ] || fail "local: 3 ranks never ran (children: $kids)"
pids="$pids $kids"
# each rank in its exchange: its bootstrap's reader thread runs
for k in $kids; do
	for i in $(seq 200); do
		[ "$(awk '/^Threads:/ { print $2 }' /proc/$k/status 2>/dev/null)" -ge 2 ] 2>/dev/null && break
		sleep 0.05
	done
done
sleep 0.5
t0=$(now)
kill -INT $parent
reap local $parent
[ "$sts" = " 130" ] || fail "local: exit$sts, expected 130"
left=$(ps -o pid=,args= -p "$(echo $kids | tr ' ' ',')" 2>/dev/null)
[ -z "$left" ] || fail "local: ranks left after the parent exited: $left"
grep -qxF "gradsync: warning: got SIGINT, forwarding it to ranks 0-2" "$T/local.err" ||
	{ fail "local: the parent does not say it forwarded SIGINT"; cat "$T/local.err"; }
echo "Ctrl-C on --local-ranks 3: exit$sts after ${took}s, no rank left ($(echo $kids) gone)"

[ $fails = 0 ] && echo "rendezvous signals: all passed"
exit $((fails > 0))
