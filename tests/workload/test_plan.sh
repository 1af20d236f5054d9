#!/bin/sh
# gradsync plan: exit codes, then every model's JSON plan checked against the published
# parameter counts and a Python copy of DDP's bucket assignment (plan_selfcheck.py).
set -u
GRADSYNC=${GRADSYNC:-build/gradsync}
HERE=$(dirname "$0")
if ! "$GRADSYNC" plan --help >/dev/null 2>&1; then
	echo "gradsync has no plan verb in this build"
	exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "python3 not found"
	exit 77
fi
fail=0
expect() {
	want=$1
	shift
	"$GRADSYNC" "$@" >/dev/null 2>&1
	got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL: gradsync $* exited $got, expected $want"
		fail=1
	fi
}
expect 0 plan --list
expect 2 plan --list --model resnet18
"$GRADSYNC" plan --list --json | python3 -c 'import json, sys; m = json.load(sys.stdin); assert {"resnet50", "trace", "custom"} <= {x["name"] for x in m}' ||
	{ echo "FAIL: plan --list --json"; fail=1; }
expect 0 plan --model resnet50
expect 0 plan --model llama3_8b --num-layers 2 --json --tensors --gpu-tflops 400
expect 0 plan --model custom --layers "a:10M:1, b:5M"
expect 2 plan --model nosuch
# a matrix: the first case with a model, said; --case picks another; a flag the model does
# not read is said (it was dropped without a word)
out=$("$GRADSYNC" plan conf/quickstart.ini 2>&1 >/dev/null)
case $out in *"has 4 cases: case 3 (model=resnet18,transport=tcp)"*) ;;
*) echo "FAIL: plan of a matrix: $out"; fail=1 ;; esac
expect 2 plan conf/quickstart.ini --case 9
pn=$(mktemp --suffix=.ini)
printf '[matrix]\ntransport = tcp, shm\n' >"$pn"
out=$("$GRADSYNC" plan "$pn" 2>&1 >/dev/null)
rm -f "$pn"
case $out in *"case 1 (transport=tcp)"*"give FILE.ini with a [workload] model"*) ;;
*) echo "FAIL: plan of a matrix without a model: $out"; fail=1 ;; esac
expect 2 plan --model resnet18 --case 1
out=$("$GRADSYNC" plan --model resnet18 --seq-len 100 2>&1 >/dev/null)
case $out in *"warning: --seq-len: model resnet18 does not read it"*) ;;
*) echo "FAIL: plan --seq-len on a ResNet: $out"; fail=1 ;; esac
expect 2 plan
expect 2 plan --model resnet50 --bucket-cap lots
expect 2 plan --model resnet50 --grad-dtype f8
expect 2 plan --model resnet50 --bogus
expect 2 plan --model resnet50 extra-argument
expect 2 plan --model vit_b_16 --image-size 250
expect 2 plan --model custom --layers "a:b:c"
# the flags are the key table's keys, with its bounds (issue 14)
expect 2 plan --model resnet50 --grad-dtype f64
expect 2 plan --model resnet50 --batch 0
expect 2 plan --model resnet50 --bucket-cap 0
expect 2 plan --model resnet50 --precision fp8
expect 2 plan --model resnet50 --gpu-profile nosuch-gpu
expect 0 plan --model resnet50 --precision amp_bf16 --gpu-profile a100 --ops
expect 0 plan --model gpt2 --precision tf32 --launch-gap 0 --json --ops
# the row says what its steps were held against: the h200's fp16-autocast and bf16-model
# steps were only held out (none fitted), and a file written from it keeps saying so
"$GRADSYNC" plan --model resnet50 --precision amp_fp16 | head -1 |
	grep -q "^precision amp_fp16, gpu profile h200 (measured: H200.*fp16 autocast and bf16 models held out only (11 of 16 within 15%))$" ||
	{ echo "FAIL: the h200 row's header does not say how fp16 autocast was held"; fail=1; }
"$GRADSYNC" gpu --profile h200 --write - | grep -q "^source = measured: H200.*held out only (11 of 16 within 15%)$" ||
	{ echo "FAIL: gpu --write lost the h200 row's source"; fail=1; }
# the host's pace: the four host values scaled by it over the row's (6.921 us a tiny op)
expect 2 gpu --profile h200 --host-pace 0 --write -
expect 2 gpu --profile h200 --host-pace 7us --write -
expect 2 gpu --host-pace 7
gap=$("$GRADSYNC" gpu --profile h200 --host-pace 13.842 --write - | awk '$1 == "launch_gap_us" { print $3 }')
gap0=$("$GRADSYNC" gpu --profile h200 --write - | awk '$1 == "launch_gap_us" { print $3 }')
awk -v a="$gap" -v b="$gap0" 'BEGIN { exit !(b > 0 && a / b > 1.999 && a / b < 2.001) }' ||
	{ echo "FAIL: --host-pace 13.842 launch_gap_us $gap against $gap0"; fail=1; }
# DDP's first bucket: 1 MiB while bucket_cap is unset, the cap itself once it is given
first() { "$GRADSYNC" plan --model resnet50 --json "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["first_bucket_cap"])'; }
[ "$(first)" = 1048576 ] || { echo "FAIL: default first bucket $(first)"; fail=1; }
[ "$(first --bucket-cap 25MiB)" = 26214400 ] || { echo "FAIL: --bucket-cap 25MiB first bucket $(first --bucket-cap 25MiB)"; fail=1; }
[ "$(first --bucket-cap 25MiB --first-bucket-cap 2MiB)" = 2097152 ] || { echo "FAIL: explicit first bucket"; fail=1; }
# a step the player cannot wait out is refused: gpu_tflops = 1e-300 modelled 1e302 ms,
# which a run played as 8 ms
expect 2 plan --model resnet18 --gpu-tflops 1e-300
msg=$("$GRADSYNC" plan --model resnet18 --gpu-tflops 1e-300 2>&1 >/dev/null)
case $msg in
*"modelled step of "*"e+299 s (forward "*"e+29"*" s, backward "*"e+29"*" s) is longer than 1e+09 s"*) ;;
*) echo "FAIL: --gpu-tflops 1e-300: $msg"; fail=1 ;;
esac
[ "$(printf '%s\n' "$msg" | wc -l)" = 1 ] || { echo "FAIL: --gpu-tflops 1e-300 error is not one line: $msg"; fail=1; }
expect 0 plan --model resnet18 --gpu-tflops 1e-6
msg=$("$GRADSYNC" plan --model nosuch 2>&1 >/dev/null)
[ "$(printf '%s\n' "$msg" | wc -l)" = 1 ] || { echo "FAIL: usage error is not one line: $msg"; fail=1; }
# fused attention by its tiles (costmodel.h attn_tiles_s): plan --ops says what the tiles are
# cut from; too few tiles for the SMs run slower per FLOP (GPT-2 2 x 512 against 8 x 1024);
# a profile file from before the tiles (attn_eff, no sm_count) keeps the rate model, as one
# that says sm_count = 0
T=$(mktemp -d)
"$GRADSYNC" gpu --profile h200 --write - | grep -v '^sm_count' >"$T/old.profile"
{ cat "$T/old.profile"; echo "sm_count = 0"; } >"$T/zero.profile"
for a in "2 512 h200" "8 1024 h200" "2 512 $T/old.profile" "2 512 $T/zero.profile"; do
	set -- $a
	"$GRADSYNC" plan --model gpt2 --batch "$1" --seq-len "$2" --precision amp_bf16 \
		--gpu-profile "$3" --json --ops >"$T/p_$1_$2_$(basename "$3")".json || fail=1
done
python3 - "$T" <<'PY' || { echo "FAIL: attention tiles in plan"; fail=1; }
import json, sys
d = sys.argv[1]
def attn(name):
    ops = json.load(open("%s/%s.json" % (d, name)))["ops"]
    return [o for o in ops if o["class"] == "attention" and o["phase"] == "fwd"][0]
small, big = attn("p_2_512_h200"), attn("p_8_1024_h200")
assert (small["attn_bh"], small["head_dim"], small["seq"], small["causal"]) == (24, 64, 512, True), small
assert big["attn_bh"] == 96 and big["seq"] == 1024, big
assert small["gpu_s"] / small["flops"] > 2 * big["gpu_s"] / big["flops"], (small, big)
old, zero = attn("p_2_512_old.profile"), attn("p_2_512_zero.profile")
assert old["gpu_s"] == zero["gpu_s"] != small["gpu_s"], (old, zero, small)
PY
rm -rf "$T"
# forward near the host/GPU balance: plan says how far the ready times may move (the part
# of backward's start-up a host 10% faster or slower hides or shows); a forward far from it
# (resnet50 b256, GPU-bound) and CUDA graphs (no start-up) say nothing, their swing 0
swing() { "$GRADSYNC" plan --json "$@" | python3 -c 'import json,sys; j=json.load(sys.stdin); print("%.6f %.6f %.6f %.6f" % (j["ready_swing_s"], j["host_fwd_s"], j["gpu_fwd_s"], j["bwd_start_s"]))'; }
set -- $(swing --model vit_b_16 --batch 48 --precision amp_bf16)
python3 -c 'import sys
s, h, g, b = map(float, sys.argv[1:])
shown = lambda x: min(max(x + b - g, 0), b)
assert s > 0 and abs(s - (shown(1.1 * h) - shown(0.9 * h))) < 2e-6, sys.argv' "$@" ||
	{ echo "FAIL: vit_b_16 b48 ready_swing_s $*"; fail=1; }
"$GRADSYNC" plan --model vit_b_16 --batch 48 --precision amp_bf16 |
	grep -q "^  ready times may move by up to 0.4.* ms: forward's host (.* ms) and GPU (.* ms) are near balance" ||
	{ echo "FAIL: plan vit_b_16 b48 does not say its ready times may move"; fail=1; }
[ "$(swing --model resnet50 --batch 256 --precision amp_bf16 | cut -d' ' -f1)" = 0.000000 ] ||
	{ echo "FAIL: resnet50 b256 ready_swing_s not 0"; fail=1; }
[ "$(swing --model vit_b_16 --batch 48 --precision amp_bf16 --launch-gap 0 | cut -d' ' -f1)" = 0.000000 ] ||
	{ echo "FAIL: CUDA graphs ready_swing_s not 0"; fail=1; }
"$GRADSYNC" plan --model resnet50 --batch 256 --precision amp_bf16 | grep -q 'ready times may move' &&
	{ echo "FAIL: plan resnet50 b256 says its ready times may move"; fail=1; }
python3 "$HERE/plan_selfcheck.py" "$GRADSYNC" || fail=1
exit $fail
