#!/bin/sh
# [matrix] values that hold ',' or ';' (a CPU list): written $, and $; they stay inside
# their value in an axis, an exclude rule and the baseline; case names show them so; a
# run writes them so in experiment.ini, and its --replay runs the same cases.
set -u
. "$(dirname "$0")/../lib.sh"
test_begin
# check/run refuse a CPU the node lacks (config/lint.c)
[ "$(nproc)" -ge 2 ] || { echo "needs CPUs 0 and 1 for bind = cpus:0,1 (nproc: $(nproc))"; exit 77; }

cat >"$T/binds.ini" <<'EOF'
[experiment]
name = binds
output_dir = ${GS_TEST_OUT}
[collective]
sizes = 4KiB
iterations = 2
warmup = 1
[launch]
local_ranks = 2
[matrix]
bind = cpus:0$,1, cpus:1$,0, none
transport = tcp, shm
exclude = bind=cpus:1$,0,transport=shm; bind=none,transport=shm
baseline = bind=cpus:0$,1
EOF
export GS_TEST_OUT="$T/res"
"$G" check "$T/binds.ini" >"$T/out" 2>"$T/err" || fail "check: exit $?: $(cat "$T/err")"
cat >"$T/want" <<'EOF'
  axis bind                    cpus:0$,1, cpus:1$,0, none
  axis transport               tcp, shm
  case 1   bind=cpus:0$,1,transport=tcp  (baseline)
  case 2   bind=cpus:0$,1,transport=shm  (baseline)
  case 3   bind=cpus:1$,0,transport=tcp
  case 4   bind=none,transport=tcp
EOF
grep -E '^  (axis|case) ' "$T/out" | diff "$T/want" - >"$T/diff" || fail "check printed: $(cat "$T/diff")"

# the same value outside [matrix]: $, is a comma there too
printf '[numa]\nbind = cpus:0$,1\n' >"$T/plain.ini"
"$G" check --full "$T/plain.ini" >"$T/out" 2>"$T/err" || fail "plain bind: $(cat "$T/err")"
grep -qx 'bind = cpus:0,1' "$T/out" || fail "plain bind resolved as: $(grep '^bind' "$T/out")"
# what a ${VAR} brings to a list is list text: its commas separate values
printf '[launch]\nlocal_ranks = 2\n[matrix]\ntransport = ${GS_TEST_TR}\n' >"$T/env.ini"
GS_TEST_TR='tcp, shm' "$G" check "$T/env.ini" >"$T/out" 2>&1 || fail "\${VAR} list: $(cat "$T/out")"
grep -q "experiment 'experiment', 2 cases" "$T/out" || fail "\${VAR} list: $(head -n 1 "$T/out")"
# a comma left unescaped: one line naming the file, line and key, and how to write it
printf '[matrix]\nbind = cpus:0,1, none\n' >"$T/bad.ini"
"$G" check "$T/bad.ini" >/dev/null 2>"$T/err"
st=$?
[ $st = 2 ] || fail "unescaped comma: exit $st, expected 2"
[ "$(wc -l <"$T/err")" = 1 ] && grep -qF "bad.ini:2: matrix.bind: unknown binding '1'" "$T/err" &&
	grep -qF "(a ',' separates values: write \$, for a comma inside one)" "$T/err" ||
	fail "unescaped comma: $(cat "$T/err")"

# a run, and its replay: the same four cases, names and bindings
timeout 120 "$G" -q run "$T/binds.ini" >/dev/null 2>"$T/err" || fail "run: exit $?: $(tail -n 3 "$T/err")"
run=$(ls -d "$T"/res/binds-* 2>/dev/null | head -n 1)
grep -qx 'numa.bind = cpus:0$,1, cpus:1$,0, none' "$run/experiment.ini" &&
	grep -qx 'exclude = numa.bind=cpus:1$,0,transport.transport=shm' "$run/experiment.ini" &&
	grep -qx 'baseline = numa.bind=cpus:0$,1' "$run/experiment.ini" ||
	fail "experiment.ini: $(sed -n '/^\[matrix\]/,$p' "$run/experiment.ini")"
timeout 120 "$G" -q run --replay "$run" --out "$T/rep" >/dev/null 2>"$T/err" ||
	fail "replay: exit $?: $(tail -n 3 "$T/err")"
python3 - "$run/report.json" "$T"/rep/binds-*/report.json <<'PY' || fail "report.json cases"
import json, sys
want = [("bind=cpus:0$,1,transport=tcp", "cpus:0,1", "tcp"),
        ("bind=cpus:0$,1,transport=shm", "cpus:0,1", "shm"),
        ("bind=cpus:1$,0,transport=tcp", "cpus:1,0", "tcp"),
        ("bind=none,transport=tcp", "none", "tcp")]
for p in sys.argv[1:]:
    cases = json.load(open(p))["cases"]
    got = [(c["name"], c["swept"]["numa.bind"], c["swept"]["transport.transport"])
           for c in cases]
    assert got == want, (p, got)
    assert all(c["status"] == "ok" for c in cases), [c["status"] for c in cases]
PY

# predict --case: the name as the report shows it, or as its values read
for nm in 'bind=cpus:0$,1,transport=tcp' 'bind=cpus:0,1,transport=tcp'; do
	timeout 20 "$G" predict "$run" --case "$nm" >/dev/null 2>"$T/err"
	grep -q "no such case" "$T/err" && fail "predict --case '$nm': $(cat "$T/err")"
done
timeout 20 "$G" predict "$run" --case 'bind=cpus:0,2,transport=tcp' >/dev/null 2>"$T/err"
st=$?
[ $st = 2 ] && grep -qF -- "--case 'bind=cpus:0,2,transport=tcp': no such case" "$T/err" ||
	fail "predict --case of no case: exit $st: $(cat "$T/err")"

# lint quotes a value as the file writes it
printf '[launch]\nlocal_ranks = 4\n[matrix]\nbind = cpus:0$,1, none\n' >"$T/turns.ini"
"$G" check "$T/turns.ini" >"$T/out" 2>&1 || fail "check turns.ini: exit $?: $(cat "$T/out")"
grep -qF 'turns.ini:4: matrix.bind: warning: cpus:0$,1 pins all 4 local ranks to 2 CPUs' "$T/out" ||
	fail "lint bind warning: $(grep warning "$T/out")"

[ $fails = 0 ] && echo "matrix values: all checks passed"
[ $fails = 0 ]
