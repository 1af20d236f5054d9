#!/bin/sh
# Real multi-process AllReduce over tcp and shm: 2, 3, 4 and 5 ranks, every algorithm,
# every element type, sum and avg, odd sizes, every iteration verified bit-exactly.
set -u
G=$(readlink -f "${GRADSYNC:-build/gradsync}")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cat >"$T/e.ini" <<INI
[experiment]
name = engine
output_dir = $T/results
[collective]
sizes = 4, 65540, 1048580
iterations = 2
warmup = 1
verify = all
chunk_size = 16KiB
[launch]
timeout = 30s
[report]
formats = json
[matrix]
transport = tcp, shm
local_ranks = 2, 3, 4, 5
algorithm = ring, tree, rhd
dtype = f32, bf16, f16, f64
reduce_op = sum, avg
exclude = dtype=f64,reduce_op=avg; dtype=f16,local_ranks=3; dtype=bf16,local_ranks=5
INI
"$G" -q run "$T/e.ini" >"$T/out" 2>"$T/err"
st=$?
python3 - "$T" <<'PY' || exit 1
import glob, json, sys
rep = json.load(open(glob.glob(sys.argv[1] + "/results/engine-*/report.json")[0]))
cases = rep["cases"]
bad = [c["name"] for c in cases if c["status"] != "ok"
       or any(r["wrong"] for r in c["collective"]) or len(c["collective"]) != 3]
algos = {r["algo"] for c in cases for r in c["collective"]}
print(f"{len(cases)} cases, algorithms {sorted(algos)}, failing: {bad}")
assert not bad, bad
assert algos == {"ring", "tree", "rhd"}, algos
assert len(cases) == 192 - 48, len(cases)
PY
[ $st = 0 ] || { echo "gradsync run exited $st"; tail -n 20 "$T/err"; exit 1; }

# tcp driven both ways (a progress thread, or inline in the executor), with one stream
# and with striping over three, and chunk_size = auto (the transport's 512KiB)
cat >"$T/p.ini" <<INI
[experiment]
name = progress
output_dir = $T/results
[collective]
sizes = 4, 1048580, 5242884
iterations = 2
warmup = 1
verify = all
[launch]
timeout = 30s
[report]
formats = json
[transport]
transport = tcp
[matrix]
progress = thread, inline
streams = 1, 3
local_ranks = 2, 4
algorithm = ring, rhd
INI
"$G" -q run "$T/p.ini" >"$T/out" 2>"$T/err"
st=$?
python3 - "$T" <<'PY' || exit 1
import glob, json, sys
rep = json.load(open(glob.glob(sys.argv[1] + "/results/progress-*/report.json")[0]))
cases = rep["cases"]
bad = [c["name"] for c in cases if c["status"] != "ok"
       or any(r["wrong"] for r in c["collective"]) or len(c["collective"]) != 3]
print(f"{len(cases)} tcp progress cases, failing: {bad}")
assert not bad and len(cases) == 16, (bad, len(cases))
for c in cases:
    mode = c["config"]["transport.progress"]
    assert c["path"]["note"].endswith(mode + " progress"), (c["name"], c["path"]["note"])
    assert all(r["chunk_bytes"] == 512 << 10 for r in c["collective"]), c["name"]
PY
[ $st = 0 ] || { echo "gradsync run exited $st"; tail -n 20 "$T/err"; exit 1; }
echo "engine: every case exact"
