#!/bin/sh
# report.json has one definition, src/report/report.schema.json: real `gradsync run`
# output (size sweep, DDP workload, write_bw/write_lat/pairwise, a failed case), its per-case
# files and the checked-in fixtures all validate against it, and a document missing a
# member or holding a wrong value does not.
set -u
. "$(dirname "$0")/../lib.sh"
test_begin
V=tests/report/validate_report.py

[ -x "$G" ] || { echo "no $G: build first"; exit 77; }
/usr/bin/python3 -c 'import jsonschema' 2>/dev/null ||
	{ echo "python3-jsonschema missing (./configure --install-deps installs it)"; exit 77; }

# experiment NAME: the head of every experiment here (schema-NAME, output in $T/out, 2
# local ranks; a [launch] key may follow)
experiment() {
	printf '[experiment]\nname = schema-%s\noutput_dir = %s\n[launch]\nlocal_ranks = 2\n' "$1" "$T/out"
}
{ experiment sweep; cat <<INI; } >"$T/sweep.ini"
[collective]
sizes = 4KiB, 256KiB
iterations = 3
warmup = 1
[workload]
iterations = 2
warmup = 1
[matrix]
model = none, resnet18
transport = tcp, shm
INI
{ experiment p2p; cat <<INI; } >"$T/p2p.ini"
[collective]
sizes = 8B, 64KiB
iterations = 20
warmup = 2
[matrix]
op = write_bw, write_lat, pairwise
transport = shm
INI
# a case that fails: no RDMA port here, so transport = ib cannot connect the ranks
{ experiment fail; cat <<INI; } >"$T/fail.ini"
timeout = 20s
[collective]
sizes = 4KiB
iterations = 2
[matrix]
transport = tcp, ib
INI

# verify = off: nothing was checked, so wrong is null, not a claimed 0
{ experiment noverify; cat <<INI; } >"$T/noverify.ini"
[collective]
sizes = 4KiB
iterations = 2
verify = off
[workload]
iterations = 2
warmup = 0
compute = none
[matrix]
model = none, resnet18
INI

# [report] min_busbw missed: exit 1, and report.json and the status file say failed and why
# (report.json said "done" beside exit 1 and the status file a bare "failed")
{ experiment thr; cat <<INI; } >"$T/thr.ini"
[collective]
sizes = 4KiB
iterations = 2
[transport]
transport = shm
[report]
min_busbw = 1000GB/s
INI

for e in sweep p2p fail noverify thr; do
	"$G" -q run "$T/$e.ini" >"$T/$e.out" 2>"$T/$e.err"
	st=$?
	want=0
	case $e in fail | thr) want=1 ;; esac
	[ $st = $want ] || fail "gradsync run $e.ini: exit $st, expected $want: $(tail -n 3 "$T/$e.err")"
done
n=$(ls "$T"/out/*/report.json 2>/dev/null | wc -l)
[ "$n" = 5 ] || fail "expected 5 report.json, found $n"
D=$(dirname "$(grep -l '"schema-thr"' "$T"/out/*/report.json)")
grep -q '^failed: min_busbw 1000GB/s missed by 1 of 1 case; first base: ' "$D/status" ||
	fail "min_busbw missed: status file reads '$(cat "$D/status")'"
/usr/bin/python3 - "$D/report.json" <<'PY' || fail "min_busbw missed: report.json does not say so"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "failed", d["status"]
assert d["error"].startswith("min_busbw 1000GB/s missed by 1 of 1 case"), d.get("error")
assert d["cases"][0]["status"] == "ok", d["cases"][0]["status"]
PY
/usr/bin/python3 "$V" "$T"/out/*/report.json || fail "gradsync run's report.json does not match the schema"
/usr/bin/python3 "$V" --case "$T"/out/*/cases/*.json || fail "a case file does not match the schema"
/usr/bin/python3 "$V" tests/fixtures/reports/*.json || fail "a fixture does not match the schema"

# what the runs covered, so the validation above means something
/usr/bin/python3 - "$T"/out/*/report.json <<'PY' || fail "the runs did not cover every kind of case"
import json, sys
docs = [json.load(open(p)) for p in sys.argv[1:]]
cases = [c for d in docs for c in d["cases"]]
ops = {r["op"] for c in cases for r in c["collective"]}
assert ops == {"allreduce", "write_bw", "write_lat", "pairwise"}, ops
assert any(c["workload"] for c in cases), "no workload case"
assert any(c["status"] == "failed" and c["error"] for c in cases), "no failed case"
rows = [r for c in cases for r in c["collective"]]
assert all("chunk_bytes" in r for r in rows if r["op"] != "pairwise")
assert all(r.get("samples") for r in rows if r["op"].startswith("write_"))
assert all(r["ranks"]["mean_us"] for r in rows if r["op"] == "allreduce")
assert all(len(r["pairs"]) == 1 for r in rows if r["op"] == "pairwise")
unchecked = [c for d in docs if d["experiment"]["name"] == "schema-noverify" for c in d["cases"]]
assert len(unchecked) == 2 and all(
    c["status"] == "ok" and (c["workload"] or c["collective"][0])["wrong"] is None
    for c in unchecked), [(c["name"], c["collective"], c["workload"] and c["workload"]["wrong"]) for c in unchecked]
assert all(isinstance(r["wrong"], int) for d in docs if d["experiment"]["name"] != "schema-noverify"
           for c in d["cases"] for r in c["collective"] if c["status"] == "ok")
PY

# the validator rejects what breaks the schema
R=$(ls "$T"/out/*/report.json | head -n 1)
/usr/bin/python3 - "$R" "$T/bad1.json" "$T/bad2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
del d["cases"][0]["collective"][0]["first_wrong"]
json.dump(d, open(sys.argv[2], "w"))
d = json.load(open(sys.argv[1]))
d["cases"][0]["status"] = "maybe"
json.dump(d, open(sys.argv[3], "w"))
PY
for b in bad1 bad2; do
	if /usr/bin/python3 "$V" "$T/$b.json" >"$T/$b.out"; then
		fail "$b.json validates"
	fi
done
grep -q "cases/0/collective/0: 'first_wrong' is a required property" "$T/bad1.out" ||
	fail "missing member not named: $(cat "$T/bad1.out")"
grep -q "cases/0/status: 'maybe' is not one of" "$T/bad2.out" ||
	fail "wrong value not named: $(cat "$T/bad2.out")"

[ $fails = 0 ] || exit 1
echo "schema: 5 runs, their case files and the fixtures validate"
