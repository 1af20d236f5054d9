#!/bin/sh
# The host instrument (measure_host.py, check_host.py): every shape it measures is one
# `gradsync plan` models (the same arguments, accepted), the model's host time grows with
# the depth by the same amount at every step, and where torch and torchvision import here a
# CPU run of two families goes through check_host.py (numbers and lines checked; a CPU's
# step is no GPU host's, so the ratios are not judged).
set -u
GRADSYNC=${GRADSYNC:-build/gradsync}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "python3 not found"; exit 77; }
[ -x "$GRADSYNC" ] || { echo "no binary $GRADSYNC"; exit 77; }
fail=0
(cd "$HERE" && "$PY" - "$GRADSYNC") <<'PYEOF' || fail=1
import sys
import measure_host as mh
from check_host import plan_host_ms
binary = sys.argv[1]
fams, bad = {}, 0
for fam, n, kv, prec in mh.cases():
    f, b = plan_host_ms(binary, mh.plan_args(fam, n, kv) + ["--precision", prec])
    if not (f > 0 and b > 0):
        print("FAIL: %s %d %s: host %.3f + %.3f ms" % (fam, n, prec, f, b))
        bad = 1
    if fam not in mh.RESNETS:  # a ResNet's models differ by more than their depth
        fams.setdefault((fam, prec), []).append((n, f))
for (fam, prec), rows in fams.items():
    # each layer adds the same calls: the step per layer is one number at every depth
    steps = [(f2 - f1) / (n2 - n1) for (n1, f1), (n2, f2) in zip(rows, rows[1:])]
    if min(steps) <= 0 or max(steps) - min(steps) > 1e-6 * max(steps):
        print("FAIL: %s %s host per layer %s" % (fam, prec, steps))
        bad = 1
print("%d shapes planned, %d families by depth" % (len(mh.cases()), len(fams)))
sys.exit(bad)
PYEOF
# a CPU run of the two families torchvision builds, one round, and its check
TPY=
for p in "$PY" /usr/bin/python3; do
	if "$p" -c 'import torch, torchvision' >/dev/null 2>&1; then TPY=$p; break; fi
done
if [ -n "$TPY" ]; then
	T=$(mktemp -d)
	(cd "$HERE" && "$TPY" measure_host.py --out "$T/host.json" --only resnet18,vit_b_16 \
		--rounds 1 --iters 1 --pin -1 >"$T/run.log" 2>&1) ||
		{ echo "FAIL: measure_host.py on the CPU"; cat "$T/run.log"; fail=1; }
	(cd "$HERE" && "$PY" check_host.py "$GRADSYNC" "$T/host.json" >"$T/check.log" 2>&1)
	rc=$?
	# 0 or 1 (a CPU's slopes are no GPU host's); a crash or a missing row is a failure
	if [ $rc -gt 1 ] || [ "$(grep -Ec '^vit_b_16 +[0-9]+ ' "$T/check.log")" != 10 ] ||
		[ "$(grep -Ec '^resnet18 +8 ' "$T/check.log")" != 2 ] ||
		! grep -Eq '^vit_b_16 +fp32 +per layer fwd [0-9.]+ / model 0\.[0-9]+' "$T/check.log"; then
		echo "FAIL: check_host.py (rc $rc)"
		cat "$T/check.log"
		fail=1
	fi
	rm -rf "$T"
else
	echo "torch/torchvision not importable: the CPU run skipped"
fi
[ $fail = 0 ] && echo "ok"
exit $fail
