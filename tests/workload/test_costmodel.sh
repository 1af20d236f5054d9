#!/bin/sh
# The cost model against the PyTorch steps measured on the H200 (ref/h200_torch_steps.json):
# the ready order must equal PyTorch's in every case, and the held-out error may not grow
# past the guard (the issue's targets are reported, see README "Compute model"). Then, where
# torch is installed, DDP itself on the CPU (resnet18): buckets and ready order under bf16
# autocast, and plan --bucket-cap 25MiB against DDP(bucket_cap_mb=25) in fp32.
set -u
GRADSYNC=${GRADSYNC:-build/gradsync}
HERE=$(dirname "$0")
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "python3 not found"; exit 77; }
fail=0
# (plain: the cases measured on a host 1.5x slower than the quiet one are listed apart: the
# 29 of READY=9's lease, 10 of READY=10's, 3 GPU-bound fp32 ResNets of an earlier run and 16
# of the thirty-fifth session's READY=18 / READY=20 lease; the other host-bound cases of
# those leases ran at 1.3-1.5x the quiet pace, under that cut, and miss in plain by their
# host alone (vit_h_14 b8 -38%): worst is --host-pace's to guard)
# (guards at the thirty-fifth session's figures plus a little: median 3.5%, forward 5.6%)
out=$("$PY" "$HERE/check_costmodel.py" "$GRADSYNC" --guard-median 0.037 --guard-worst 0.54 \
	--guard-fwd-median 0.058 --guard-within 146 --guard-ready-median 0.055 \
	--guard-ready-within 126) || fail=1
printf '%s\n' "$out"
case $out in
*"slow-host: 56 cases,"*) ;;
*) echo "FAIL: check_costmodel: not the 56 slow-host cases apart"; fail=1 ;;
esac
# the same told each case's host pace (the run's quiet trials' probe over the quiet host's);
# every held-out case, READY=9's slow lease too (its host-bound steps the noisiest: worst);
# the bucket ready times against the model told the pace of their own trials
# (median 3.2%, worst 28.3%, forward 4.7%, 209 of 217 within 15%, ready 176 within 15%)
out=$("$PY" "$HERE/check_costmodel.py" "$GRADSYNC" --host-pace --guard-median 0.034 \
	--guard-worst 0.30 --guard-fwd-median 0.049 --guard-within 207 --guard-ready-median 0.055 \
	--guard-ready-within 174 --buckets resnet18:48:0:amp_bf16) ||
	{ echo "FAIL: check_costmodel --host-pace"; fail=1; }
case $out in
*"slow-host:"*) echo "FAIL: check_costmodel --host-pace set cases apart"; fail=1 ;;
esac
# --buckets: the named case's buckets, each against its measured ready time (the table's)
case $out in
*"bucket 2     48 tensors  model "*" ms  bucket-hooked    6.820 ms"*) ;;
*) echo "FAIL: check_costmodel --buckets: no bucket lines for resnet18 b48"; fail=1 ;;
esac
# the steps measured on an H100 (ref/h100_torch_steps.json: READY=12's Llamas, READY=13/14's
# fp16 autocast and bf16 models, READY=16's BERTs again, READY=17's bf16 models, a set of
# the eight models in bf16 autocast and fp32, READY=18: that set's autocast shapes again on a
# quiet lease and in fp16 autocast, READY=19: eight shapes no lease had measured, in fp16
# autocast and as bf16 models, and READY=20: eight more in fp32 and bf16 autocast, on two
# leases, and READY=22: eight more in the same two) against the h100 row, whose host values
# were fitted on its fp16 and bf16 autocast, fp32 and tf32 steps (fit_cases_h100.txt): the
# rest is held out (RESULTS.md, thirty-sixth session: 93 of 94 within 15%, median 4.7%;
# READY=19, READY=20 and READY=22 16 of 16 on each of two leases).
# The ready order of fp16 autocast (bf16 autocast's) and of a bf16 model (fp32's) must be
# PyTorch's, and the ResNets stay where their BatchNorm's kernel family puts them.
out=$("$PY" "$HERE/check_costmodel.py" "$GRADSYNC" --ref "$HERE/ref/h100_torch_steps.json" \
	--fit-cases "$HERE/fit_cases_h100.txt" --profile h100 --host-pace --guard-median 0.05 \
	--guard-within 93) || { echo "FAIL: check_costmodel on the H100's steps"; fail=1; }
case $out in
*"resnet50        64     0 amp_fp16"*) ;;
*) echo "FAIL: no fp16 autocast ResNet among the H100's steps"; fail=1 ;;
esac
# the convolution table against cuDNN's kernels at the batches it was not fitted on
"$PY" "$HERE/fit_conv.py" "$GRADSYNC" --check --max-shape-median 0.15 --max-batch-sum 0.18 || fail=1
# fused attention's rates against the held-out cases' attention kernels
"$PY" "$HERE/fit_attn.py" "$GRADSYNC" --check --max-median 0.07 >/dev/null || { echo "FAIL: fit_attn.py --check"; fail=1; }
# BatchNorm's rows against the held-out ResNet traces' BatchNorm kernels
"$PY" "$HERE/fit_bn.py" "$GRADSYNC" --check >/dev/null || { echo "FAIL: fit_bn.py --check"; fail=1; }
# ready references: an instrument counts only where it did not stretch the backward past 10%
"$PY" -c '
import sys
sys.path.insert(0, sys.argv[1])
from check_costmodel import ready_reference as r
c = {"bwd_ms": 10.0, "bucket_ready_ms": {"a": 4.0}, "bwd_bucket_ms": 10.5,
     "ready_share": {"a": 0.5}, "bwd_light_ms": 10.2, "ready_ms": {"a": 30.0}}
assert r(c)[2] == "bucket-hooked" and r(c)[0]["a"] == 4.0, r(c)
c["bwd_bucket_ms"] = 12.0
assert r(c)[2] == "light" and abs(r(c)[0]["a"] - 5.1) < 1e-9, r(c)
c["bwd_light_ms"] = 18.0
assert r(c) is None, r(c)  # the hooks (30 ms) stretched it too
c["ready_ms"] = {"a": 10.4}
assert r(c)[2] == "hooked", r(c)
# a case pace: the probes of the trials its run kept (within 1.10 of the run pace)
from check_costmodel import case_pace as cp
c = {"trials": [[1, 10.0, 0, 0, 7.0], [1, 12.0, 0, 0, 9.0], [1, 11.0, 0, 0, 7.4]],
     "quiet_trials": 2, "step_ms": 10.5}
assert cp(c, [7.1, 9.5]) == 7.2, cp(c, [7.1, 9.5])
c["quiet_trials"], c["step_ms"] = 3, 11.0
assert cp(c, [7.1, 9.5]) == 7.4, cp(c, [7.1, 9.5])
assert cp(c, [20.0]) == 7.4 and cp({"trials": [[1, 2, 3, 4]]}, [7.0]) is None
' "$HERE" || { echo "FAIL: ready_reference"; fail=1; }
# profiles: a written row reads back to the same plan; a bad file names file:line
tmp=$(mktemp -d)
"$GRADSYNC" gpu --profile a100 --write "$tmp/a100.profile" || fail=1
a=$("$GRADSYNC" plan --model gpt2 --gpu-profile a100 --json | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["fwd_s"] + d["bwd_s"])')
b=$("$GRADSYNC" plan --model gpt2 --gpu-profile "$tmp/a100.profile" --json | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(d["fwd_s"] + d["bwd_s"])')
[ "$a" = "$b" ] || { echo "FAIL: profile file round trip: $a vs $b"; fail=1; }
printf 'hbm_gbps = 1000\nbogus_key = 1\n' >"$tmp/bad.profile"
msg=$("$GRADSYNC" plan --model gpt2 --gpu-profile "$tmp/bad.profile" 2>&1 >/dev/null)
case "$msg" in *bad.profile:2:*bogus_key*) ;; *) echo "FAIL: bad profile message: $msg"; fail=1 ;; esac
rm -rf "$tmp"
# precision changes what a step costs: fp32 without TF32 is the slowest for a transformer
t() { "$GRADSYNC" plan --model bert_large --batch 8 --seq-len 512 --precision "$1" --json | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(int((d["fwd_s"] + d["bwd_s"]) * 1e6))'; }
[ "$(t fp32)" -gt "$(t amp_bf16)" ] && [ "$(t fp32)" -gt "$(t tf32)" ] ||
	{ echo "FAIL: fp32 $(t fp32) us not slower than amp_bf16 $(t amp_bf16) / tf32 $(t tf32)"; fail=1; }
# launch_gap = 0 (CUDA graphs) is never slower than eager
g0=$("$GRADSYNC" plan --model resnet50 --batch 8 --launch-gap 0 --json | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(int((d["fwd_s"] + d["bwd_s"]) * 1e6))')
g1=$("$GRADSYNC" plan --model resnet50 --batch 8 --json | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(int((d["fwd_s"] + d["bwd_s"]) * 1e6))')
[ "$g0" -lt "$g1" ] || { echo "FAIL: launch_gap 0 step $g0 us not below eager $g1 us"; fail=1; }
# backward's start-up: the profile's bwd_start_us per forward call of the plan's own ops,
# none under CUDA graphs
for gap in auto 0; do
	"$GRADSYNC" plan --model resnet50 --batch 32 --precision amp_bf16 --launch-gap $gap --json --ops |
		"$PY" -c '
import json, sys
p = json.load(sys.stdin)
calls = sum(o["calls"] for o in p["ops"] if o["phase"] == "fwd")
want = 0 if sys.argv[1] == "0" else calls * float(sys.argv[2]) * 1e-6
assert calls > 100 and abs(p["bwd_start_s"] - want) < 1e-9, (p["bwd_start_s"], want)
' $gap "$("$GRADSYNC" gpu --profile h200 --write - | sed -n "s/^bwd_start_us = //p")" ||
		{ echo "FAIL: bwd_start_s (launch_gap $gap)"; fail=1; }
done
# op_trace: a recorded step replays as recorded (forward and backward totals, ready times)
tr=$HERE/ref/resnet50_b32_amp_bf16.trace
"$GRADSYNC" plan --model trace --op-trace "$tr" --json --tensors | "$PY" -c '
import json, sys
p = json.load(sys.stdin)
fwd = bwd = 0.0
ready, t = {}, 0.0
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "fwd":
        fwd += float(f[1])
    elif f and f[0] == "bwd":
        bwd += float(f[1])
        t += float(f[1])
        for n in f[3:]:
            ready[n] = t
assert abs(p["fwd_s"] * 1e6 - fwd) < 1e-3 * fwd, (p["fwd_s"], fwd)
assert abs(p["bwd_s"] * 1e6 - bwd) < 1e-3 * bwd, (p["bwd_s"], bwd)
names = [x["name"] for x in p["tensors"]]
assert p["num_params"] == 25557032, p["num_params"]
for b in p["buckets"]:
    want = max(ready[names[i]] for i in b["tensors"])
    assert abs(b["ready_s"] * 1e6 - want) < 1e-3 * want + 1e-3, (b["index"], b["ready_s"], want)
print("op_trace: forward %.2f ms, backward %.2f ms replayed" % (fwd / 1e3, bwd / 1e3))
' "$tr" || fail=1
tmp=$(mktemp)
printf 'gradsync_op_trace 1\nparam a.weight 4,4\nbwd 10 a\nbwd x y z\n' >"$tmp"
msg=$("$GRADSYNC" plan --model trace --op-trace "$tmp" 2>&1 >/dev/null)
case "$msg" in *:4:*"bad bwd line"*) ;; *) echo "FAIL: bad trace message: $msg"; fail=1 ;; esac
printf 'gradsync_op_trace 1\nparam a.weight 4,4\nparam b.weight 4\nbwd 10 a a.weight\n' >"$tmp"
msg=$("$GRADSYNC" plan --model trace --op-trace "$tmp" 2>&1 >/dev/null)
case "$msg" in *"b.weight is in no bwd line"*) ;; *) echo "FAIL: unused parameter message: $msg"; fail=1 ;; esac
rm -f "$tmp"
# Debian's python3-torch lives in the system interpreter, which may not be first on PATH
TPY=
for p in "$PY" /usr/bin/python3; do
	if "$p" -c 'import torch, torchvision' >/dev/null 2>&1; then TPY=$p; break; fi
done
if [ -n "$TPY" ]; then
	# the smallest model keeps CI short; all models ran on the GPU (RESULTS.md)
	"$TPY" "$HERE/check_ddp_buckets.py" "$GRADSYNC" --models resnet18 --precision amp_bf16 || fail=1
	"$TPY" "$HERE/check_ddp_buckets.py" "$GRADSYNC" --models resnet18 --bucket-cap-mb 25 || fail=1
	# a bf16 model: DDP buckets bf16 gradients, and plan's grad_dtype (auto) follows
	"$TPY" "$HERE/check_ddp_buckets.py" "$GRADSYNC" --models resnet18,vit_b_16 --precision bf16 || fail=1
	# fp16 autocast: checked where this torch's autocast has float16 on the device, else
	# skipped (77), never run as fp32 (torch 1.13's CPU autocast disables itself for float16)
	out=$("$TPY" "$HERE/check_ddp_buckets.py" "$GRADSYNC" --models resnet18 --precision amp_fp16 2>&1)
	case $? in 0 | 77) echo "$out" | tail -1 ;; *) echo "$out"; echo "FAIL: amp_fp16 buckets"; fail=1 ;; esac
	out=$("$GRADSYNC" plan --model resnet18 --precision bf16 --grad-dtype f32 --json)
	case $out in *'"grad_dtype":"f32"'*) ;; *) echo "FAIL: an explicit grad_dtype lost"; fail=1 ;; esac
else
	echo "torch / torchvision not importable: the DDP checks on the CPU are skipped"
fi
exit $fail
