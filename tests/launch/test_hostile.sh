#!/bin/sh
# The job against hostile neighbours (issue 16), through the real binary, loopback only:
# 300 idle connections held on the rendezvous port while a 4-rank job starts and finishes;
# strangers (wrong token, a stolen rank number, garbage) all get the same refusal while a
# real rank joins; the token never reaches a file or argv; token_file modes; a launcher
# job without a token; shm names nobody can squat; no /dev/shm segment left when a rank is
# killed during shm setup; ranks with different experiment files stopped at once, naming
# the rank, the key and both values, or the model's gradients when op_trace's content
# differs; ranks of two builds (two build-ids) stopped before the first case, naming the
# rank and both builds; a stranger holding half a HELLO on a rank's tcp data port delays
# no peer; the segments of a job killed with its launcher during shm setup removed by the
# next one.
set -u
. "$(dirname "$0")/../lib_net.sh"
rank_test_begin
port=$(free_port $((21000 + $$ % 9000)))

cat >"$T/job.ini" <<INI
[experiment]
name = hostile
output_dir = $T/results
[collective]
sizes = 64KiB
iterations = 3
warmup = 1
[transport]
transport = tcp
[launch]
timeout = 30s
INI

# --- 300 idle connections held (and re-opened when dropped) while 4 ranks join
export GRADSYNC_TOKEN=hostile-test-token
"$G" run "$T/job.ini" --rank 0 --world-size 4 --rendezvous 127.0.0.1:$port >"$T/idle.0.log" 2>&1 &
r0=$!
pids="$r0"
wait_listen $port || fail "rank 0 never listened"
python3 - "$port" "$T/crowd" <<'PY' &
import os, selectors, socket, sys, time
port, stop = int(sys.argv[1]), sys.argv[2] + ".stop"
sel = selectors.DefaultSelector()
def one():
    s = socket.socket(); s.setblocking(False)
    try:
        s.connect(("127.0.0.1", port))
    except BlockingIOError:
        pass
    sel.register(s, selectors.EVENT_READ)
for _ in range(300):
    one()
opened, end = 300, time.time() + 60
while time.time() < end and not os.path.exists(stop):
    for key, _ in sel.select(timeout=0.2):
        s = key.fileobj
        try:
            data = s.recv(256)
        except OSError:
            data = b""
        if not data:  # dropped by rank 0: take the slot again
            sel.unregister(s); s.close(); one(); opened += 1
open(sys.argv[2], "w").write(f"{opened}\n")
PY
crowd=$!
pids="$pids $crowd"
sleep 1
start=$(date +%s)
for r in 1 2 3; do
	"$G" run "$T/job.ini" --rank $r --world-size 4 --rendezvous 127.0.0.1:$port \
		>"$T/idle.$r.log" 2>&1 &
	pids="$pids $!"
done
for p in $pids; do
	[ "$p" = "$crowd" ] && continue
	wait "$p" || fail "idle crowd: a rank failed: $(tail -n 3 "$T"/idle.*.log)"
done
took=$(( $(date +%s) - start ))
: >"$T/crowd.stop"
wait $crowd
[ $took -le 20 ] || fail "idle crowd: the job took ${took}s"
grep -q "connections were closed unfinished on the way" "$T/idle.0.log" ||
	fail "idle crowd: rank 0 did not count the closed idle connections"
echo "idle crowd: 4 ranks joined and finished in ${took}s past 300 idle connections ($(cat "$T/crowd") opened)"
pids=

# --- strangers: wrong token, a real token with a taken rank, garbage: one answer for all
port=$(free_port $((port + 1)))
"$G" run "$T/job.ini" --rank 0 --world-size 2 --rendezvous 127.0.0.1:$port >"$T/s0.log" 2>&1 &
pids="$!"
wait_listen $port || fail "rank 0 never listened"
# the wire's version, from its one definition
ver=$(sed -n 's/^#define BS_VERSION *\([0-9]*\).*/\1/p' "$(dirname "$0")/../../src/launch/bootstrap_wire.h")
python3 - "$port" "$ver" >"$T/strangers" <<'PY'
import hashlib, hmac, os, socket, struct, sys
port, ver = int(sys.argv[1]), int(sys.argv[2])
def frame(t, payload):
    return struct.pack(">IHBBII", 0x47534253, ver, t, 0, 0, len(payload)) + payload
def recv_all(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            break
        b += c
    return b
def answer(s):
    h = recv_all(s, 16)
    if len(h) < 16:
        return "EOF"
    magic, ver, t, op, seq, ln = struct.unpack(">IHBBII", h)
    return (t, recv_all(s, ln))
def handshake(token, rank, nranks):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    nr = os.urandom(32)
    s.sendall(frame(1, struct.pack(">II", rank, nranks) + nr))
    t, n0 = answer(s)
    assert t == 8, t  # CHALLENGE, whatever the HELLO said
    msg = b"rank" + b"gradsync-bootstrap-2" + struct.pack(">II", rank, nranks) + nr + n0
    s.sendall(frame(9, hmac.new(token, msg, hashlib.sha256).digest()))
    return answer(s)
def garbage():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    return answer(s)
for name, a in (("wrong token", handshake(b"guess", 1, 2)),
                ("stolen rank 0", handshake(b"hostile-test-token", 0, 2)),
                ("wrong world size", handshake(b"hostile-test-token", 1, 9)),
                ("garbage", garbage())):
    print(name, a)
PY
"$G" run "$T/job.ini" --rank 1 --world-size 2 --rendezvous 127.0.0.1:$port >"$T/s1.log" 2>&1 ||
	fail "strangers: the real rank 1 failed: $(tail -n 3 "$T/s1.log")"
wait $pids || fail "strangers: rank 0 failed: $(tail -n 3 "$T/s0.log")"
pids=
n=$(grep -c "(3, b'refused')" "$T/strangers")
[ "$n" = 4 ] || { fail "strangers: not one identical refusal for all:"; cat "$T/strangers"; }
grep -q "refused connection from 127.0.0.1:.*: wrong token" "$T/s0.log" ||
	fail "strangers: rank 0's log does not name the wrong token"
echo "strangers: $n identical refusals; rank 0's log: $(grep -c 'refused connection' "$T/s0.log") reasons"
unset GRADSYNC_TOKEN

# --- rank 0 listens on the address named, not on every interface
ip4=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep '^[0-9.]*$' | grep -v '^127\.' | head -n 1)
if [ -n "$ip4" ]; then
	port=$(free_port $((port + 1)))
	GRADSYNC_TOKEN=x "$G" run "$T/job.ini" --rank 0 --world-size 2 --rendezvous $ip4:$port \
		>"$T/bind.log" 2>&1 &
	r0=$!
	wait_listen $port $ip4 || fail "rank 0 does not listen on $ip4:$port"
	python3 - "$port" <<'PY' || fail "rank 0 named $ip4 but also listens on 127.0.0.1 (the wildcard?)"
import socket, sys
try:
    socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()
except ConnectionRefusedError:
    sys.exit(0)
sys.exit(1)
PY
	kill -TERM $r0
	wait $r0
	echo "bind: rank 0 listens on $ip4:$port only"
else
	echo "bind: no non-loopback IPv4 address here, not checked"
fi

# --- the token never reaches a file, argv, or the report
cat >"$T/local.ini" <<INI
[experiment]
name = secret
output_dir = $T/results
[collective]
sizes = 64KiB
iterations = 2
[launch]
local_ranks = 2
token = ini-secret-4711
INI
"$G" run "$T/local.ini" >"$T/local.log" 2>&1 || fail "local run with an INI token: $(tail -n 3 "$T/local.log")"
sed '/^token = /d' "$T/local.ini" >"$T/cli.ini"
"$G" run "$T/cli.ini" --token cli-secret-0815 >"$T/cli.log" 2>&1 ||
	fail "local run with --token: $(tail -n 3 "$T/cli.log")"
if grep -rl "ini-secret-4711\|cli-secret-0815" "$T/results" "$T/local.log" "$T/cli.log"; then
	fail "a token reached the files above"
fi
d=$(ls -d "$T"/results/secret-* | head -n 1)
grep -q "^; token = (redacted)" "$d/experiment.ini" || fail "experiment.ini lacks the redaction"
python3 - "$T"/results/secret-* <<'PY' || fail "report.json: token or argv not redacted"
import json, sys
ini, cli = (json.load(open(d + "/report.json")) for d in sorted(sys.argv[1:]))
assert ini["cases"][0]["config"]["launch.token"] == "(redacted)", ini["cases"][0]["config"]["launch.token"]
assert cli["argv"][-1] == "(redacted)" and cli["argv"][-2] == "--token", cli["argv"]
assert "GRADSYNC_TOKEN" not in json.dumps(cli["env"])
PY
echo "redaction: no token in $(find "$T/results" -type f | wc -l) result files or the logs"

# --- token_file: mode checked, content used
printf 'file-secret-1\n' >"$T/tok"
chmod 644 "$T/tok"
printf '[launch]\ntoken_file = %s\n' "$T/tok" >>"$T/job.ini"
"$G" run "$T/job.ini" --rank 0 --world-size 2 --rendezvous 127.0.0.1:1 >"$T/tf.log" 2>&1
st=$?
[ $st = 2 ] || fail "token_file mode 0644: exit $st, expected 2"
grep -q "token_file $T/tok: mode 0644 lets other users read the job token; chmod 600 $T/tok" "$T/tf.log" ||
	{ fail "token_file mode 0644: message"; cat "$T/tf.log"; }
chmod 600 "$T/tok"
port=$(free_port $((port + 1)))
for r in 0 1; do
	"$G" run "$T/job.ini" --rank $r --world-size 2 --rendezvous 127.0.0.1:$port >"$T/tf.$r.log" 2>&1 &
	pids="$pids $!"
done
for p in $pids; do wait "$p" || fail "token_file 0600: a rank failed: $(cat "$T"/tf.*.log | tail -n 4)"; done
pids=
# --- a launcher job without a token stops with one line saying what to set
RANK=0 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 "$G" run "$T/cli.ini" >"$T/nt.log" 2>&1
st=$?
[ $st = 2 ] || fail "torchrun without a token: exit $st, expected 2"
grep -q "no job token; put a secret in a file only you can read" "$T/nt.log" ||
	{ fail "torchrun without a token: message"; cat "$T/nt.log"; }
echo "tokens: token_file 0644 refused, 0600 used; a launcher job without a token refused"

# report_says WHAT WANT: the newest run's report.json is failed and its first case's
# error holds WANT
report_says() {
	python3 - "$(ls -td "$T"/results/hostile-* | head -n 1)" "$2" <<'PY' || fail "$1: report.json lacks the reason"
import json, sys
r = json.load(open(sys.argv[1] + "/report.json"))
assert r["status"] == "failed", r["status"]
assert sys.argv[2] in r["cases"][0]["error"], r["cases"][0]["error"]
PY
}

# hand_job TAG N TOKEN [R BIN]: N ranks started by hand on 127.0.0.1:$port, rank r with
# $T/TAG.r.ini and its output in $T/TAG.r.log (rank R runs BIN instead); then sts holds
# their exits in rank order and took the seconds they took
hand_job() {
	start=$(date +%s)
	pids=
	r=0
	while [ $r -lt $2 ]; do
		g=$G
		[ "$r" = "${4:-}" ] && g=$5
		GRADSYNC_TOKEN=$3 "$g" run "$T/$1.$r.ini" --rank $r --world-size $2 \
			--rendezvous 127.0.0.1:$port >"$T/$1.$r.log" 2>&1 &
		pids="$pids $!"
		r=$((r + 1))
	done
	sts=
	for p in $pids; do wait "$p"; sts="$sts $?"; done
	pids=
	took=$(( $(date +%s) - start ))
}

# --- ranks started by hand with different experiment files: the job stops before the
# first case's transports open, rank 0 names the rank, the key and both values, every
# rank exits 1, and the report keeps the reason (it used to take the whole timeout,
# "Message too long" or wrong results, depending on the key)
for tp in tcp shm; do
	port=$(free_port $((port + 1)))
	sed "s/^transport = tcp/transport = $tp/" "$T/job.ini" >"$T/mm.0.ini"
	cp "$T/mm.0.ini" "$T/mm.1.ini"
	sed 's/^sizes = 64KiB/sizes = 16KiB/' "$T/mm.0.ini" >"$T/mm.2.ini"
	hand_job mm 3 mm
	[ "$sts" = " 1 1 1" ] || fail "mismatch $tp: exits$sts, expected 1 1 1"
	[ $took -le 10 ] || fail "mismatch $tp: took ${took}s (timeout 30s)"
	want="rank 2 (host $(hostname)) runs another experiment than rank 0: case 1 [collective] sizes = 16KiB there, 64KiB on rank 0"
	grep -qF "error: $want" "$T/mm.0.log" || { fail "mismatch $tp: rank 0 does not name it"; cat "$T/mm.0.log"; }
	grep -q "this rank's experiment differs from rank 0's" "$T/mm.2.log" ||
		{ fail "mismatch $tp: rank 2 does not say it differs"; cat "$T/mm.2.log"; }
	report_says "mismatch $tp" "$want"
	echo "mismatch $tp: exits$sts in ${took}s: $(grep -o 'rank 2 (host.*rank 0;' "$T/mm.0.log" | head -n 1)"
done

# --- the same experiment file, but op_trace holds another model on rank 1 (the keys
# agree, the gradients do not; ViT's image_size, which ranks may set apart, does the
# same): rank 0 names the rank and the gradients that differ before the case opens
# (the first bucket failed with "Message too long")
port=$(free_port $((port + 1)))
printf 'gradsync_op_trace 1\nbatch 8\nparam fc.weight 256,512 f32\nparam fc.bias 256 f32\nfwd 10 fc\nbwd 20 fc fc.weight fc.bias\n' \
	>"$T/a.trace"
cat >"$T/tr.ini" <<INI
[experiment]
name = hostile
output_dir = $T/results
[workload]
model = trace
op_trace = $T/NODE/op.trace
compute = none
iterations = 2
warmup = 0
[transport]
transport = tcp
[launch]
timeout = 30s
INI
mkdir -p "$T/n0" "$T/n1"
cp "$T/a.trace" "$T/n0/op.trace"
sed 's/256,512/256,500/' "$T/a.trace" >"$T/n1/op.trace"
for r in 0 1; do sed "s/NODE/n$r/" "$T/tr.ini" >"$T/tr.$r.ini"; done
hand_job tr 2 tr
[ "$sts" = " 1 1" ] || fail "gradients: exits$sts, expected 1 1"
[ $took -le 10 ] || fail "gradients: took ${took}s (timeout 30s)"
want="rank 1 (host $(hostname)) runs another experiment than rank 0: case 1 [workload] the model's gradients (model, its shape keys, op_trace's content) = 2 tensors, 128256 elements"
grep -qF "error: $want" "$T/tr.0.log" || { fail "gradients: rank 0 does not name them"; cat "$T/tr.0.log"; }
echo "gradients: exits$sts in ${took}s: $(grep -o 'rank 1 (host.*rank 0;' "$T/tr.0.log" | head -n 1)"

# --- ranks started by hand from two builds of gradsync (a node left with another
# copy): the job stops before its first case, rank 0 naming the rank, its host and both
# builds (it ran, its ranks' results and wire records read by another build's code).
# The other build is a copy of this one whose build-id note holds other bytes (objcopy),
# its version and commit unchanged: what a rebuild of the same commit looks like.
port=$(free_port $((port + 1)))
if command -v objcopy >/dev/null 2>&1 &&
	objcopy -O binary --only-section=.note.gnu.build-id "$G" "$T/note" &&
	python3 - "$T/note" <<'PY' &&
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[16:] = bytes(x ^ 0xff for x in b[16:])  # the sha1 after the 12-byte header and "GNU\0"
open(sys.argv[1], "wb").write(b)
PY
	objcopy --update-section .note.gnu.build-id="$T/note" "$G" "$T/other"
then
	mine=$("$G" version | sed -n 's/^build-id: //p')
	other=$("$T/other" version | sed -n 's/^build-id: //p')
	elf=$(readelf -n "$T/other" | sed -n 's/^ *Build ID: \([0-9a-f]*\)$/\1/p')
	[ "$other" = "$elf" ] && [ "$other" != "$mine" ] ||
		fail "builds: the copy's build-id $other, readelf's $elf, ours $mine"
	cp "$T/job.ini" "$T/ver.0.ini"
	cp "$T/job.ini" "$T/ver.1.ini"
	hand_job ver 2 ver 1 "$T/other"
	[ "$sts" = " 1 1" ] || fail "builds: exits$sts, expected 1 1"
	[ $took -le 10 ] || fail "builds: took ${took}s (timeout 30s)"
	line=$("$G" version | sed -n 's/^\(gradsync [^ ]* (commit [^,]*\),.*/\1/p')
	want="rank 1 (host $(hostname)) runs $line, build-id $(echo "$other" | cut -c1-16)), rank 0 $line, build-id $(echo "$mine" | cut -c1-16)): every rank needs the same build"
	grep -qF "error: $want" "$T/ver.0.log" || { fail "builds: rank 0 does not name both"; cat "$T/ver.0.log"; }
	grep -qF "error: this rank runs $line, build-id $(echo "$other" | cut -c1-16)), rank 0 (host $(hostname)) $line, build-id $(echo "$mine" | cut -c1-16))" "$T/ver.1.log" ||
		{ fail "builds: rank 1 does not say it differs"; cat "$T/ver.1.log"; }
	report_says builds "$want"
	echo "builds: exits$sts in ${took}s: $(grep -o 'rank 1 (host.*build$' "$T/ver.0.log" | head -n 1)"
else
	echo "builds: objcopy could not make a copy with another build-id, not checked"
fi

# --- a stranger on a rank's tcp data port that sends part of a HELLO and waits: the
# rank reads every connection's HELLO as it comes, so the real peer behind it gets in
# and the job finishes (the rank read one HELLO at a time until the deadline, so the
# case failed after the whole timeout, blaming rank 0, which had connected). rank 0's
# connect() calls are held 2 s by strace so that the stranger comes first.
if command -v strace >/dev/null 2>&1; then
	port=$(free_port $((port + 1)))
	sed 's/^timeout = 30s/timeout = 10s/' "$T/job.ini" >"$T/dp.ini"
	export GRADSYNC_TOKEN=dp
	# LeakSanitizer cannot work under ptrace: an ASan build checks no leaks here
	nolsan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	ASAN_OPTIONS=$nolsan strace -o /dev/null -f -e trace=connect -e inject=connect:delay_enter=2000000 \
		"$G" run "$T/dp.ini" --rank 0 --world-size 2 --rendezvous 127.0.0.1:$port \
		>"$T/dp.0.log" 2>&1 &
	pids="$!"
	wait_listen $port || fail "data port: rank 0 never listened"
	"$G" run "$T/dp.ini" --rank 1 --world-size 2 --rendezvous 127.0.0.1:$port \
		>"$T/dp.1.log" 2>&1 &
	r1=$!
	pids="$pids $r1"
	unset GRADSYNC_TOKEN
	# rank 1's one listening socket (the rendezvous is rank 0's): its tcp data port
	python3 - "$r1" >"$T/dp.stranger" 2>&1 <<'PY' &
import os, socket, sys, time
pid, end = sys.argv[1], time.time() + 20
while time.time() < end:
    try:
        inodes = {os.readlink(f"/proc/{pid}/fd/{f}")[8:-1] for f in os.listdir(f"/proc/{pid}/fd")}
    except OSError:
        inodes = set()
    for line in open("/proc/net/tcp").readlines()[1:]:
        f = line.split()
        if f[3] == "0A" and f[9] in inodes:
            s = socket.create_connection(("127.0.0.1", int(f[1].split(":")[1], 16)))
            s.sendall(b"GSX!")
            print("held", f[1])
            while os.path.exists(f"/proc/{pid}") and time.time() < end:
                time.sleep(0.1)  # held until rank 1 is gone
            sys.exit(0)
    time.sleep(0.02)
print("no data port")
PY
	held=$!
	start=$(date +%s)
	sts=
	for p in $pids; do wait "$p"; sts="$sts $?"; done
	pids=
	took=$(( $(date +%s) - start ))
	wait $held
	grep -q held "$T/dp.stranger" || fail "data port: the stranger found no port: $(cat "$T/dp.stranger")"
	[ "$sts" = " 0 0" ] || { fail "data port: exits$sts, expected 0 0"; tail -n 3 "$T/dp.1.log"; }
	[ $took -le 8 ] || fail "data port: took ${took}s (timeout 10s)"
	echo "data port: a stranger's half HELLO held; exits$sts in ${took}s"
else
	echo "data port: strace not installed, not checked"
fi

# --- shm: squatted names of the old scheme do not matter; a rank killed in setup leaves nothing
for n in 0000000000000000-0-1 0000000000000000-1-0 0001000000000000-0-1; do
	: >"/dev/shm/gradsync-$n" 2>/dev/null
done
cat >"$T/shm.ini" <<INI
[experiment]
name = shm
output_dir = $T/results
[collective]
sizes = 1MiB
iterations = 3
[transport]
transport = shm
shm_ring = 256MiB
[launch]
local_ranks = 3
timeout = 20s
INI
"$G" run "$T/shm.ini" >"$T/shm.log" 2>&1 || fail "shm run beside squatted names: $(tail -n 3 "$T/shm.log")"
"$G" run "$T/shm.ini" >"$T/shmkill.log" 2>&1 &
drv=$!
# While setup is under way, find a segment of this run (its creator is a child of our
# driver: /dev/shm is shared with other users' jobs) and print its creator's pid and the
# run's name prefix.
set -- $(python3 - "$drv" <<'PY'
import os, struct, sys, time
drv, end = sys.argv[1], time.time() + 20
def parent(pid):
    try:
        return open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1]
    except OSError:
        return None
while time.time() < end:
    for n in os.listdir("/dev/shm"):
        if not n.startswith("gradsync-"):
            continue
        try:
            with open("/dev/shm/" + n, "rb") as f:
                h = f.read(28)
        except OSError:
            continue
        if len(h) < 28 or not struct.unpack("<Q", h[:8])[0]:
            continue
        pid = struct.unpack("<i", h[24:28])[0]
        if parent(pid) == drv:
            print(pid, n[:len("gradsync-") + 17]); sys.exit(0)
    time.sleep(0.001)
PY
)
if [ $# = 2 ]; then
	kill -9 "$1"
	wait $drv && fail "shm kill: the run passed although rank pid $1 was killed"
	left=$(ls /dev/shm | grep "^$2" | wc -l)
	[ "$left" = 0 ] || { fail "shm kill: $left segments $2* left in /dev/shm"; ls /dev/shm | grep "^$2"; }
	echo "shm: killed rank pid $1 mid-setup; /dev/shm holds $left segments $2*"
else
	wait $drv
	fail "shm kill: no segment of the run appeared (setup too fast to catch?)"
fi
# --- leftovers of a job killed during shm setup with its launcher (kill -9 of the driver:
# its ranks die too, nobody sweeps by job id; each name held up to shm_ring of /dev/shm
# for good): the next shm job removes the names whose creator is gone, keeps those of a
# live creator or of another pid namespace. Deterministic: segments written by hand
# with the creator fields (pid, pid namespace inode, start time) at offset 24.
sleep 30 &
live=$!
pids="$pids $live"
sh -c 'exit 0' &
dead=$!
wait $dead
python3 - "$live" "$dead" <<'PY'
import os, struct, sys
live, dead = int(sys.argv[1]), int(sys.argv[2])
ns = os.stat("/proc/self/ns/pid").st_ino
start = lambda pid: int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[19])
def seg(name, pid, pidns, st):
    with open("/dev/shm/gradsync-" + name, "wb") as f:
        f.write(bytes(24) + struct.pack("<iiQQ", pid, 0, pidns, st) + bytes(4096 - 48))
seg("5a1e000000000000-0-1", dead, ns, start(live) + 1)  # creator gone
seg("5a1e000000000000-1-0", live, ns, start(live) + 7)  # pid reused by another process
seg("5a1e000000000001-0-1", live, ns, start(live))      # creator alive: a job setting up
seg("5a1e000000000002-0-1", dead, ns + 1, 12345)        # another pid namespace's
PY
sed 's/^shm_ring = 256MiB/shm_ring = 1MiB/' "$T/shm.ini" >"$T/sweep.ini"
"$G" run "$T/sweep.ini" >"$T/sweep.log" 2>&1 || fail "shm sweep: run failed: $(tail -n 3 "$T/sweep.log")"
left=$(ls /dev/shm | grep '^gradsync-5a1e' | tr '\n' ' ')
[ "$left" = "gradsync-5a1e000000000001-0-1 gradsync-5a1e000000000002-0-1 " ] ||
	fail "shm sweep: left in /dev/shm: $left"
# the ranks sweep at once: each says what it removed
n=$(sed -n 's/.*warning: removed \([0-9]*\) shared-memory segments (0.0 MiB) that gradsync jobs killed during setup left in \/dev\/shm$/\1/p' \
	"$T/sweep.log" | awk '{ n += $1 } END { print n + 0 }')
[ "$n" = 2 ] || { fail "shm sweep: the lines say $n segments removed, not 2"; grep removed "$T/sweep.log"; }
rm -f /dev/shm/gradsync-5a1e*
kill $live 2>/dev/null
echo "shm sweep: dead creators' segments removed, a live one's and another namespace's kept"
# and the real thing: the driver killed while its ranks set up 256MiB rings
"$G" run "$T/shm.ini" >"$T/shmdrv.log" 2>&1 &
drv=$!
for i in $(seq 200); do [ "$(pgrep -P $drv | wc -l)" = 3 ] && break; sleep 0.01; done
ranks=$(pgrep -P $drv)
sleep 0.2
kill -9 $drv
wait $drv 2>/dev/null
# the ranks die of PR_SET_PDEATHSIG; unmapping their rings takes a moment
for i in $(seq 100); do
	alive=
	for r in $ranks; do [ -e /proc/$r ] && alive=1; done
	[ -z "$alive" ] && break
	sleep 0.1
done
# this run's names: those whose creator (header, offset 24) was one of its ranks; /dev/shm
# may hold other jobs' too
ours() {
	python3 - $ranks <<'PY'
import os, struct, sys
for n in sorted(os.listdir("/dev/shm")):
    try:
        with open("/dev/shm/" + n, "rb") as f:
            h = f.read(28)
    except OSError:
        continue
    if n.startswith("gradsync-") and len(h) == 28 and str(struct.unpack("<i", h[24:])[0]) in sys.argv[1:]:
        print(n)
PY
}
before=$(ours | wc -l)
"$G" run "$T/sweep.ini" >"$T/sweep2.log" 2>&1 || fail "shm sweep after kill -9: run failed"
after=$(ours | wc -l)
[ "$after" = 0 ] || { fail "shm sweep after kill -9 of the driver: $after of its segments left"; ours; }
echo "shm sweep: kill -9 of the driver mid-setup left $before segments, the next job $after"

for n in 0000000000000000-0-1 0000000000000000-1-0 0001000000000000-0-1; do
	rm -f "/dev/shm/gradsync-$n"
done

[ $fails = 0 ] && echo "hostile: all passed"
exit $((fails > 0))
