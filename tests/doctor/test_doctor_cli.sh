#!/bin/sh
# `gradsync doctor` end to end: the live machine, the fixtures (text and JSON, exit codes),
# the check list, and usage errors.
set -u
. "$(dirname "$0")/../lib.sh"
test_begin
FX=tests/fixtures/sysfs

# live: runs without a GPU driver or RDMA device, ends with the verdict line
"$G" doctor >"$T/live" 2>"$T/err"
st=$?
[ $st = 0 ] || [ $st = 1 ] || fail "doctor on /sys: exit $st: $(cat "$T/err")"
grep -Eq '^(PASS|WARN|FAIL): [0-9]+ pass, [0-9]+ warn, [0-9]+ fail, [0-9]+ skipped$' "$T/live" \
	|| fail "doctor on /sys: no verdict line"
grep -q '^\[auto_path\]' "$T/live" || fail "doctor on /sys: no auto_path section"

# the broken DGX fails (exit 1) and names its faults; the good one passes (exit 0)
"$G" doctor --sysfs-root "$FX/dgx-h100-bad" >"$T/bad"
[ $? = 1 ] || fail "dgx-h100-bad: want exit 1"
grep -q 'FAIL  GPU 0000:1a:00.0   ACS redirects peer traffic to mlx5_0 (PIX)' "$T/bad" \
	|| fail "dgx-h100-bad: ACS finding"
grep -q 'FAIL  mlx5_3             link trained x8 of x16' "$T/bad" || fail "dgx-h100-bad: x8 link"
grep -q 'fix: load nvidia_peermem' "$T/bad" || fail "dgx-h100-bad: peermem fix"
grep -q '^FAIL: ' "$T/bad" || fail "dgx-h100-bad: verdict"
"$G" doctor --sysfs-root "$FX/dgx-h100" >"$T/good" || fail "dgx-h100: want exit 0, got $?"
grep -q '^PASS: [0-9]* pass, 0 warn, 0 fail' "$T/good" || fail "dgx-h100: verdict $(tail -n 1 "$T/good")"

# JSON: verdict, counts and findings agree with the text
"$G" doctor --json --sysfs-root "$FX/dgx-h100-bad" >"$T/bad.json"
[ $? = 1 ] || fail "dgx-h100-bad --json: want exit 1"
if command -v python3 >/dev/null 2>&1; then
	python3 - "$T/bad.json" <<'PY' || fail "dgx-h100-bad JSON content"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verdict"] == "fail", j["verdict"]
f = j["findings"]
assert len(f) == sum(j["counts"].values()), "counts"
acs = [x for x in f if x["check"] == "pcie_acs" and x["level"] == "fail"]
assert len(acs) == 1 and acs[0]["subject"] == "GPU 0000:1a:00.0", acs
assert all(x["fix"] for x in f if x["level"] in ("warn", "fail")), "a warn/fail without a fix"
PY
fi

# --gdr-level judges the GPU-NIC distance
"$G" doctor --sysfs-root "$FX/two-socket-sys" --gdr-level SYS >"$T/sys"
grep -q 'closest NIC mlx5_0 is SYS within gdr_level SYS, but GPU on NUMA node 0' "$T/sys" || fail "--gdr-level SYS"

# the check list, usage errors
[ "$("$G" doctor --checks | wc -l)" -ge 14 ] || fail "--checks lists fewer than 14 checks"
# --json applies to --checks too, in either order (it printed text)
for o in "--json --checks" "--checks --json"; do
	"$G" doctor $o | python3 -c 'import json, sys; c = json.load(sys.stdin); assert len(c) >= 14 and all(x["name"] and x["title"] for x in c)' ||
		fail "doctor $o: not a JSON list of the checks"
done
"$G" doctor --gdr-level XYZ >/dev/null 2>"$T/err"
[ $? = 2 ] || fail "--gdr-level XYZ: want exit 2"
grep -q "expected LOC, PIX, PXB, PHB or SYS" "$T/err" || fail "--gdr-level XYZ message"
"$G" doctor --sysfs-root /nonexistent >/dev/null 2>"$T/err"
[ $? = 1 ] || fail "missing root: want exit 1"
[ "$(wc -l <"$T/err")" = 1 ] || fail "missing root: want one line, got: $(cat "$T/err")"
"$G" doctor extra >/dev/null 2>&1
[ $? = 2 ] || fail "extra argument: want exit 2"

# a capture of /sys (capture.sh) gives the same findings as /sys itself (CUDA and verbs
# facts aside: this machine has neither a GPU driver nor an RDMA device)
if "$FX/capture.sh" "$T/cap" >"$T/caplog" 2>&1; then
	"$G" doctor | sed 1d >"$T/a"
	"$G" doctor --sysfs-root "$T/cap" | sed 1d >"$T/b"
	diff "$T/a" "$T/b" >"$T/diff" || fail "doctor on a capture of /sys differs: $(cat "$T/diff")"
else
	fail "capture.sh: $(cat "$T/caplog")"
fi

# the README's check table is the check table
"$G" doctor --checks | awk '{n = $1; $1 = ""; sub(/^ /, ""); printf "| `%s` | %s |\n", n, $0}' \
	>"$T/checks.md"
sed -n '/<!-- doctor:checks:begin -->/,/<!-- doctor:checks:end -->/p' README.md | sed '1d;$d' \
	>"$T/readme.md"
cmp -s "$T/checks.md" "$T/readme.md" || fail "README doctor table differs from doctor --checks: $(diff "$T/checks.md" "$T/readme.md" | head -5)"

[ $fails = 0 ] && echo "doctor cli: all checks passed"
[ $fails = 0 ]
