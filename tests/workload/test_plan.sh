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
expect 0 plan --model resnet50
expect 0 plan --model llama3_8b --num-layers 2 --json --tensors --gpu-tflops 400
expect 0 plan --model custom --layers "a:10M:1, b:5M"
expect 2 plan --model nosuch
expect 2 plan
expect 2 plan --model resnet50 --bucket-cap lots
expect 2 plan --model resnet50 --grad-dtype f8
expect 2 plan --model resnet50 --bogus
expect 2 plan --model resnet50 extra-argument
expect 2 plan --model vit_b_16 --image-size 250
expect 2 plan --model custom --layers "a:b:c"
msg=$("$GRADSYNC" plan --model nosuch 2>&1 >/dev/null)
[ "$(printf '%s\n' "$msg" | wc -l)" = 1 ] || { echo "FAIL: usage error is not one line: $msg"; fail=1; }
python3 "$HERE/plan_selfcheck.py" "$GRADSYNC" || fail=1
exit $fail
