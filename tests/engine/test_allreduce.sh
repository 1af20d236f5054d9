#!/bin/sh
# Real multi-process AllReduce over tcp and shm: 2, 3, 4 and 5 ranks, every algorithm,
# every element type, sum and avg, odd sizes, every iteration verified bit-exactly; then
# tcp driven both ways (a progress thread, or inline in the executor); shm reducing in
# place from many small slots; write_bw and write_lat over tcp and shm, their rows on
# the terminal as each size is measured.
set -u
. "$(dirname "$0")/../lib.sh"
test_begin

# run NAME SIZES [INI LINES...]: one experiment, verify = all, 2 timed iterations; the
# lines continue its [collective] section
run() {
	name=$1 sizes=$2
	shift 2
	{
		printf '[experiment]\nname = %s\noutput_dir = %s/results\n' "$name" "$T"
		printf '[launch]\ntimeout = 30s\n[report]\nformats = json\n'
		printf '[collective]\nsizes = %s\niterations = 2\nwarmup = 1\nverify = all\n' "$sizes"
		printf '%s\n' "$@" # more [collective] keys, then other sections
	} >"$T/$name.ini"
	"$G" -q run "$T/$name.ini" >"$T/out" 2>"$T/err"
	st=$?
}

# check NAME CASES [PYTHON]: every case ok, exact, 3 sizes; then PYTHON over `cases`
check() {
	python3 - "$T" "$1" "$2" "${3:-}" <<'PY' || exit 1
import glob, json, sys
T, name, want, extra = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rep = json.load(open(glob.glob(f"{T}/results/{name}-*/report.json")[0]))
cases = rep["cases"]
bad = [c["name"] for c in cases if c["status"] != "ok"
       or any(r["wrong"] for r in c["collective"]) or len(c["collective"]) != 3]
print(f"{name}: {len(cases)} cases, failing: {bad}")
assert not bad, bad
assert len(cases) == want, len(cases)
# every report carries the doctor's findings for rank 0's node
doc = rep["doctor"]
assert doc["verdict"] in ("pass", "warn", "fail"), doc
assert any(f["check"] == "auto_path" for f in doc["findings"]), doc["findings"]
exec(extra)
PY
	[ $st = 0 ] || { echo "gradsync run exited $st"; tail -n 20 "$T/err"; exit 1; }
}

# odd element counts; sizes must be whole elements (check refuses others), so the
# 8-byte type has sizes of its own
run engine "4, 65540, 1048580" "chunk_size = 16KiB" "[matrix]" "transport = tcp, shm" \
	"local_ranks = 2, 3, 4, 5" "algorithm = ring, tree, rhd" "dtype = f32, bf16, f16" \
	"reduce_op = sum, avg" "exclude = dtype=f16,local_ranks=3; dtype=bf16,local_ranks=5"
check engine $((144 - 24)) '
algos = {r["algo"] for c in cases for r in c["collective"]}
assert algos == {"ring", "tree", "rhd"}, algos'
run engine64 "8, 65544, 1048584" "chunk_size = 16KiB" "dtype = f64" "[matrix]" \
	"transport = tcp, shm" "local_ranks = 2, 3, 4, 5" "algorithm = ring, tree, rhd"
check engine64 24

# one stream and striping over three; chunk_size = auto is tcp's 512KiB
run progress "4, 1048580, 5242884" "[transport]" "transport = tcp" "[matrix]" \
	"progress = thread, inline" "streams = 1, 3" "local_ranks = 2, 4" "algorithm = ring, rhd"
check progress 16 '
for c in cases:
    mode = c["config"]["transport.progress"]
    assert c["path"]["note"].endswith(mode + " progress"), (c["name"], c["path"]["note"])
    assert all(r["chunk_bytes"] == 512 << 10 for r in c["collective"]), c["name"]'
# shm reduces received slots straight into the buffer: messages of many small slots,
# every algorithm, a 2-byte and an 8-byte type
run slots "8, 1048584, 5242888" "chunk_size = 512KiB" "[transport]" "transport = shm" \
	"slot_size = 64KiB" "shm_ring = 256KiB" "[matrix]" "local_ranks = 2, 3, 4" \
	"algorithm = ring, tree, rhd" "dtype = bf16, f64"
check slots 18

# the perftest-like modes over tcp and shm: bytes checked by rank 1, times per message
run p2p "4, 65540, 1048580" "[launch]" "local_ranks = 2" "[matrix]" "op = write_bw, write_lat" \
	"transport = tcp, shm"
check p2p 4 '
for c in cases:
    for r in c["collective"]:
        assert r["op"] == c["config"]["collective.op"] and r["iterations"] == 2, r
        assert r["samples"] == 5 and r["busbw_GBps"] > 0 and r["time_us"]["avg"] > 0, r
        # they move bytes: no f32 count of the unread dtype, no reduction
        assert (r["dtype"], r["redop"], r["count"]) == ("u8", "none", r["size"]), r'
# their rows reach the terminal as each size is measured, as AllReduce's do (they
# printed none: the case line, then silence until the report)
cat >"$T/live.ini" <<INI
[experiment]
name = live
output_dir = $T/live
[collective]
op = write_lat
sizes = 4KiB, 64KiB
iterations = 2
[launch]
local_ranks = 2
timeout = 30s
INI
"$G" run "$T/live.ini" >/dev/null 2>"$T/live.err" || { echo "FAIL: live write_lat run"; tail -n 5 "$T/live.err"; exit 1; }
[ "$(grep -c '^ *\(4\.0KiB\|64\.0KiB\|4KiB\|64KiB\) *[0-9]* *u8 *none ' "$T/live.err")" = 2 ] ||
	{ echo "FAIL: write_lat printed no row per size while it ran:"; cat "$T/live.err"; exit 1; }
echo "p2p live rows: $(grep -c ' u8 *none ' "$T/live.err") of 2"
# a run from before u8 recorded the unread [collective] dtype (f32): its write_bw rows are
# still compared with these, in one table, not set apart as another element type
d=$(ls -d "$T"/results/p2p-*)
python3 - "$d/report.json" "$T/old.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
for c in r["cases"]:
    for x in c["collective"]:
        x.update(dtype="f32", redop="sum", count=x["size"] // 4)
json.dump(r, open(sys.argv[2], "w"))
PY
"$G" report "$d/report.json" "$T/old.json" >"$T/out" 2>&1 || { cat "$T/out"; exit 1; }
[ "$(grep -c '^write_bw: bus bandwidth' "$T/out")" = 1 ] ||
	{ echo "FAIL: write_bw rows of the two runs set apart"; grep '^write_' "$T/out"; exit 1; }
echo "engine: every case exact"
