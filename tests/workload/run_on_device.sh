#!/bin/sh
# What the cost model's device call runs on a lent H200 (README "Compute model"): the
# PyTorch references of every host-bound case again with a method that removes the host's
# noise (measure_torch_step.py: pinned to one core, trials interleaved over the whole run,
# the median of the trials' medians), with a few GPU-bound fp32 cases as a control against
# the earlier table; host time per pass and the profiler's per-op host counts come in the
# same run. Optionally (CALIBRATE=1) our own kernels: gpu --calibrate --write.
# usage (from the repository root): OUT=DIR tests/workload/run_on_device.sh
# Leaves log.txt, cpu.txt and steps_host.json (and h200_calibrated.profile) in $OUT.
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
L=$OUT/log.txt
{ nproc; nvidia-smi -L; nvidia-smi -q -d CLOCK | grep -A4 "^    Clocks$"; } >"$L" 2>&1
{ lscpu; cat /proc/cpuinfo | grep MHz | sort | uniq -c; } >"$OUT/cpu.txt" 2>&1
# build/gradsync: a binary built here and carried in bin/, or built on the device
binary() {
	mkdir -p build
	if [ -x bin/gradsync ]; then cp bin/gradsync build/gradsync
	else { ./configure && ninja; } >/tmp/build.log 2>&1 || { tail -40 /tmp/build.log | tee -a "$L"; exit 1; }
	fi
}
# one hook a bucket (measure_torch_step.py --gradsync): the buckets' ready times
bucket_hooks() {
	binary
	BUCKETS="--gradsync build/gradsync --bucket-steps 3"
}
if [ "${CALIBRATE:-0}" = 1 ]; then
	binary
	timeout 120 build/gradsync gpu --calibrate --write "$OUT/h200_calibrated.profile" >>"$L" 2>&1
fi
M=tests/workload/measure_torch_step.py
# add_cases PRECS MODEL:BATCH:SEQ...: each shape at each precision of the comma list
add_cases() {
	precs=$1
	shift
	for c in "$@"; do
		for p in $(echo "$precs" | tr , ' '); do CASES=${CASES:+$CASES,}$c:$p; done
	done
}
# ready N: READY=N picks the cases, unless CASES (or an earlier block) gave them
ready() {
	[ "${READY:-0}" = "$1" ] && [ -z "${CASES:-}" ]
}
# every amp_bf16 and tf32 case of the table (the host-bound ones are among them) and four
# fp32 cases as controls (three GPU-bound, one nearly host-bound); CASES=... (with each
# case's precision: model:batch:seq:precision) replaces the list, as the second call did
# with the cases whose trials spread by more than 3% in the first
# READY=1 (issue 13, fourth session): hook-free ready times from light traces (the GPU's
# activities alone, --light-steps) for every host-bound case first (all amp_bf16 and tf32,
# the fp32 cases under 60 ms), and where the kernels of four cases come from (--diag)
if ready 1; then
CASES=gpt2:4:512:fp32,gpt2_medium:8:1024:amp_bf16,bert_large:8:128:amp_bf16
for c in resnet18:32:0 resnet18:64:0 resnet50:16:0 resnet50:32:0 vit_b_16:16:0 \
	bert_base:8:128 bert_base:16:128 gpt2:2:512 gpt2:8:256 bert_large:4:256; do
	CASES=$CASES,$c:amp_bf16,$c:fp32
done
for c in resnet18:128:0 resnet18:256:0 resnet50:64:0 resnet50:96:0 resnet50:128:0 \
	resnet50:256:0 vit_b_16:32:0 vit_b_16:48:0 vit_b_16:64:0 vit_b_16:128:0 vit_l_16:16:0 \
	vit_l_16:24:0 vit_l_16:32:0 vit_l_16:64:0 bert_base:32:128 bert_base:64:128 \
	bert_base:8:512 bert_base:24:256 bert_large:16:128 bert_large:32:128 bert_large:8:512 \
	bert_large:16:512 gpt2:4:1024 gpt2:8:1024 gpt2:16:512 gpt2:4:512 gpt2_medium:2:1024 \
	gpt2_medium:4:1024 gpt2_medium:4:512; do
	CASES=$CASES,$c:amp_bf16
done
CASES=$CASES,bert_large:8:128:fp32
for c in resnet18:128:0 resnet50:128:0 vit_b_16:64:0 vit_l_16:32:0 bert_base:32:128 \
	bert_large:8:512 gpt2:8:1024 gpt2_medium:4:1024; do
	CASES=$CASES,$c:tf32
done
LIGHT=${LIGHT:-2}
DIAG=${DIAG:-gpt2_medium:8:1024:amp_bf16,gpt2:4:512:fp32,bert_base:8:128:fp32,bert_base:8:128:amp_bf16}
fi
# READY=2: bucket ready times of the host-bound cases, whose every trace or hook so far
# stretched the backward: one cheap hook per bucket (--gradsync), 5 trials for the probe
if ready 2; then
bucket_hooks
CASES=resnet18:32:0:amp_bf16,resnet18:64:0:amp_bf16,resnet50:16:0:amp_bf16,resnet50:32:0:amp_bf16
CASES=$CASES,resnet50:64:0:amp_bf16,vit_b_16:16:0:amp_bf16,vit_b_16:32:0:amp_bf16
CASES=$CASES,vit_b_16:48:0:amp_bf16,vit_l_16:16:0:amp_bf16,vit_l_16:24:0:amp_bf16
CASES=$CASES,vit_l_16:32:0:amp_bf16,bert_base:8:128:amp_bf16,bert_base:16:128:amp_bf16
CASES=$CASES,bert_base:32:128:amp_bf16,bert_base:8:512:amp_bf16,bert_base:24:256:amp_bf16
CASES=$CASES,bert_large:4:256:amp_bf16,bert_large:8:128:amp_bf16,bert_large:16:128:amp_bf16
CASES=$CASES,bert_large:32:128:amp_bf16,bert_large:8:512:amp_bf16
CASES=$CASES,gpt2:2:512:amp_bf16,gpt2:4:512:amp_bf16,gpt2:8:256:amp_bf16
CASES=$CASES,gpt2_medium:2:1024:amp_bf16,gpt2_medium:4:512:amp_bf16,bert_large:8:128:fp32
fi
# READY=3 (issue 13, sixth session): the 17 of them that READY=2 left without a reference
# (the host's slow state in most of their few trials), more trials for the probe to choose from
if ready 3; then
bucket_hooks
CASES=resnet18:32:0:amp_bf16,resnet50:16:0:amp_bf16,vit_b_16:16:0:amp_bf16
CASES=$CASES,vit_l_16:16:0:amp_bf16,bert_base:8:128:amp_bf16,bert_base:16:128:amp_bf16
CASES=$CASES,bert_base:32:128:amp_bf16,bert_base:8:512:amp_bf16,bert_large:4:256:amp_bf16
CASES=$CASES,bert_large:8:128:amp_bf16,bert_large:16:128:amp_bf16
CASES=$CASES,bert_large:32:128:amp_bf16,bert_large:8:512:amp_bf16,gpt2:2:512:amp_bf16
CASES=$CASES,gpt2:4:512:amp_bf16,gpt2_medium:2:1024:amp_bf16,gpt2_medium:4:512:amp_bf16
fi
# READY=4: ResNet steps at batches no earlier call measured (held out from every fit: the
# conv table's check on whole steps), with light traces and one hook a bucket
if ready 4; then
bucket_hooks
LIGHT=${LIGHT:-2}
CASES=resnet18:96:0:fp32,resnet18:96:0:amp_bf16,resnet50:48:0:fp32,resnet50:48:0:amp_bf16
CASES=$CASES,resnet18:48:0:fp32,resnet50:24:0:fp32
fi
# READY=5 (issue 13, seventh session): where each kernel of seven fit cases comes from
# (--diag, every group): ViT's layout copies by pass, ResNet-18's convolutions in the step,
# the fp32 forward GEMMs of BERT and ViT, BERT's head and loss; with MICRO=gemm_waves
if ready 5; then
CASES=vit_b_16:64:0:amp_bf16,vit_b_16:64:0:fp32,vit_l_16:32:0:amp_bf16,resnet18:128:0:fp32
CASES=$CASES,resnet18:128:0:amp_bf16,bert_base:32:128:fp32,bert_large:32:128:amp_bf16
DIAG=$CASES
fi
# READY=6 (issue 13, tenth session): a held-out set no fit and no earlier call saw, the
# eight models at new batches and sequence lengths in both precisions, more at amp_bf16,
# and three models outside the eight, with one hook a bucket: the model's check on shapes
# it was never shown (RESULTS.md, "Fresh held-out set")
if ready 6; then
bucket_hooks
CASES=resnet101:32:0:amp_bf16,resnet101:32:0:fp32,gpt2_large:2:1024:amp_bf16
add_cases amp_bf16,fp32 resnet18:80:0 resnet50:40:0 vit_b_16:24:0 vit_l_16:8:0 \
	bert_base:12:384 bert_large:2:512 gpt2:6:768 gpt2_medium:3:1024
add_cases amp_bf16 resnet18:192:0 resnet50:192:0 vit_b_16:96:0 vit_l_16:48:0 \
	bert_base:48:128 bert_large:24:256 gpt2:12:512 gpt2_medium:6:512
fi
# READY=7 (issue 13, twelfth session): fit cases for the host's timeline, new shapes of the
# host-bound steps whose buckets the model placed wrong (none held out): backward's start-up
# and its per-node host cost over the backward (one hook a bucket, light traces with
# forward's GPU idle by tenths: where the host falls behind), 7 trials for the probe, and
# where forward's GPU waits (--diag: each group's idle) in two of them
if ready 7; then
bucket_hooks
LIGHT=${LIGHT:-2}
CASES=vit_b_16:40:0:amp_bf16,vit_b_16:56:0:amp_bf16,resnet50:24:0:amp_bf16
CASES=$CASES,resnet18:48:0:amp_bf16,vit_l_16:12:0:amp_bf16,bert_large:12:128:amp_bf16
CASES=$CASES,bert_base:40:128:tf32,bert_base:16:128:tf32
DIAG=${DIAG:-vit_b_16:40:0:amp_bf16,resnet50:24:0:amp_bf16}
fi
# READY=8 (issue 13, thirteenth session): a third held-out set, shapes no earlier call
# measured (every model at a smaller and a larger batch than any before, tf32 on four
# models), measured before any change of the session, then READY=7's eight fit cases
# again: their first run's host was slow throughout (probe 8.5-14.4 us)
if ready 8; then
bucket_hooks
CASES=resnet101:64:0:amp_bf16,gpt2_large:1:1024:amp_bf16,gpt2_large:1:1024:fp32
add_cases amp_bf16,fp32 resnet18:24:0 resnet50:8:0 vit_b_16:8:0 vit_l_16:4:0 \
	bert_base:4:512 bert_large:6:256 gpt2:3:1024 gpt2_medium:1:1024
add_cases amp_bf16 resnet18:160:0 resnet50:80:0 vit_b_16:80:0 vit_l_16:40:0 \
	bert_base:96:128 bert_large:48:128 gpt2:24:256 gpt2_medium:12:256
CASES=$CASES,vit_b_16:32:0:tf32,bert_large:16:128:tf32,gpt2:4:512:tf32,resnet50:64:0:tf32
CASES=$CASES,vit_b_16:40:0:amp_bf16,vit_b_16:56:0:amp_bf16,resnet50:24:0:amp_bf16
CASES=$CASES,resnet18:48:0:amp_bf16,vit_l_16:12:0:amp_bf16,bert_large:12:128:amp_bf16
CASES=$CASES,bert_base:40:128:tf32,bert_base:16:128:tf32
fi
# READY=9 (issue 13, sixteenth session): a fourth held-out set, to be measured after the
# GPU's dispatch gap and the host refit were committed (df99656): 30 shapes no earlier call
# measured, the eight models and two outside them, both precisions at small and middle
# batches, amp_bf16 at large ones, tf32 on three; one hook a bucket, light traces. Not
# measured yet: the sixteenth session's call stopped answering and no machine followed.
if ready 9; then
bucket_hooks
LIGHT=${LIGHT:-2}
add_cases amp_bf16,fp32 resnet18:112:0 resnet50:56:0 vit_b_16:20:0 vit_l_16:20:0 \
	bert_base:16:256 bert_large:4:512 gpt2:2:1024 gpt2_medium:2:512 resnet101:16:0
add_cases amp_bf16 resnet18:224:0 resnet50:160:0 vit_b_16:112:0 vit_l_16:56:0 \
	bert_base:32:256 bert_large:8:256 gpt2:6:1024 gpt2_medium:2:768 gpt2_large:1:512
CASES=$CASES,vit_l_16:16:0:tf32,bert_base:8:512:tf32,resnet18:64:0:tf32
fi
# READY=10 (issue 13, nineteenth session): a fifth held-out set, measured before any change
# of the session: the Llama family, never timed before (reduced to N decoder layers,
# NAME@N, as gradsync's --num-layers N), the zoo's models no call measured (resnet34,
# resnet152, vit_h_14, gpt2_xl) and new shapes of the eight; one hook a bucket, light traces.
if ready 10; then
bucket_hooks
LIGHT=${LIGHT:-2}
add_cases amp_bf16,fp32 llama2_7b@2:1:1024 llama3_8b@2:1:512 resnet34:64:0 resnet152:32:0
add_cases amp_bf16 llama2_7b@2:4:512 llama2_7b@2:2:2048 llama3_8b@2:4:1024 llama3_8b@4:2:1024 \
	llama3_8b@8:1:2048 vit_h_14:8:0 gpt2_xl:2:1024 vit_b_16:24:0 gpt2:12:512 bert_large:24:128 \
	vit_l_16:8:0
add_cases fp32 resnet50:48:0 bert_base:48:128 resnet18:96:0 gpt2_medium:6:512
fi
# READY=11 (issue 13, nineteenth session; not measured yet: the call got no machine): a
# sixth held-out set for the Llama operators chosen on READY=10's profiles and the head
# width's exponent fitted on its Llamas (run it with MICRO=attn, whose kernels alone check
# that exponent): Llama shapes no call measured, long sequences, the full 32-layer
# llama2_7b (H200 memory), and width-64 models at new shapes.
if ready 11; then
bucket_hooks
LIGHT=${LIGHT:-2}
add_cases amp_bf16 llama2_7b@4:2:1024 llama3_8b@2:2:4096 llama2_7b@2:8:256 llama3_8b@6:1:4096 \
	bert_large:12:256 gpt2_medium:3:1024
add_cases fp32 llama3_8b@3:1:1024 llama2_7b@2:1:2048 vit_l_16:24:0
CASES=$CASES,llama2_7b:1:1024:amp_bf16
fi
# READY=12 (issue 13, twenty-second session): SDPA's math path (grouped-query attention on
# 32-bit inputs, ly_sdpa_math), held out: Llama 3 in fp32 and tf32 at sequences where the
# square's GEMMs and passes weigh (2048, 4096), beside llama2_7b fp32 at 4096 (the fused
# kernel) as the control
if ready 12; then
bucket_hooks
CASES=llama3_8b@2:1:4096:fp32,llama3_8b@2:2:2048:fp32,llama3_8b@2:1:4096:tf32
CASES=$CASES,llama2_7b@2:1:4096:fp32
fi
# READY=13 (issue 13, twenty-third session): the two precisions no call had measured, held
# out (no value of the h200 row was fitted on them): fp16 autocast with GradScaler's scaled
# loss and a model cast to bf16 (gradients bf16, buckets of bf16), the eight models
# at two shapes each, with four autocast bf16 steps of the table as this lease's control
if ready 13; then
bucket_hooks
add_cases amp_fp16,bf16 resnet18:128:0 resnet18:32:0 resnet50:64:0 resnet50:16:0 \
	vit_b_16:64:0 vit_b_16:32:0 vit_l_16:32:0 vit_l_16:16:0 bert_base:32:128 bert_base:8:512 \
	bert_large:8:128 bert_large:8:512 gpt2:8:1024 gpt2:4:512 gpt2_medium:4:1024 \
	gpt2_medium:2:1024
add_cases amp_bf16 resnet50:64:0 vit_b_16:64:0 bert_large:8:512 gpt2:8:1024
fi
# READY=14 (issue 13, twenty-third session): READY=13's precisions on the H200 the h200 row
# describes (READY=13 got an H100): the ResNets, whose BatchNorm runs cuDNN's kernels under
# fp16 autocast and PyTorch's own under bf16 (precision_bn_cudnn), and the GPU-bound
# transformer shapes, with bf16 autocast's ResNets beside them as the control
if ready 14; then
bucket_hooks
add_cases amp_fp16,bf16 resnet18:128:0 resnet18:32:0 resnet50:64:0 resnet50:16:0 \
	vit_b_16:64:0 bert_large:8:512 gpt2:8:1024 gpt2_medium:4:1024
add_cases amp_bf16 resnet50:64:0 resnet18:128:0
fi
# READY=15 (issue 13, twenty-third session): on an H100, cuDNN's BatchNorm over 16-bit
# elements against its fp32 kernels on the same card (fp16 autocast and fp32 ResNets): the
# ratio prices fp16 autocast's BatchNorm on a card that has only fp32 measured
if ready 15; then
binary
add_cases amp_fp16,fp32 resnet18:128:0 resnet18:32:0 resnet50:64:0 resnet50:16:0
fi
# READY=17 (issue 13, twenty-fourth session; ran on an H100 in the twenty-fifth) and READY=18
# (twenty-fifth session, its H200 list grown in the twenty-sixth). On an H200, READY=17 runs
# READY=14's four headline cases (fp16 autocast ResNets, bf16 GPT-2 and BERT) and bert_base
# 16 x 256 as a bf16 model beside bf16 autocast; READY=18 the eight models, each in fp16
# autocast and as a bf16 model at one shape the H100 table has, beside that bert_base.
# On an H100, READY=17 runs five bf16 models at shapes never measured, held out from the h100
# row's host fit; READY=18 the autocast shapes of the held-out set that ran beside READY=17
# (ref/runs/h100_2026-12-05_heldout18.json.gz) again on another lease, beside the same shapes
# under fp16 autocast (never measured). Predictions in RESULTS.md ("READY=17's predictions",
# "READY=18's predictions", "READY=18's H200 list"), written before the runs; bucket hooks as
# READY=13's. READY=19 (thirtieth session): on an H200 READY=18's H200 list; on an H100 (READY=18
# ran there) eight shapes no lease measured, in fp16 autocast and as bf16 models, held out from
# the h100 row's fit ("READY=19's predictions"). READY=20 (thirty-first session), on either
# card: the two precisions (fp32, bf16 autocast) at eight shapes no lease measured,
# held out from both rows' fits ("READY=20's predictions"). READY=21 (same session): the
# cases of the eight models whose step, forward or bucket ready time misses the bar on that
# card's table (on an H200 the 19 at fp32 and bf16 autocast, on an H100 the 21 after
# READY=20), measured again on another lease: how far the references themselves move.
# READY=18's H200 list and READY=20 ran on an H200 in the thirty-fifth session
# (ref/runs/h200_2026-12-07_heldout12.json.gz and ..._heldout13.json.gz; RESULTS.md).
# READY=22 (thirty-sixth session), on either card: eight more shapes neither table holds, in
# fp32 and bf16 autocast, held out from both rows' fits ("READY=22's predictions").
case ${READY:-0} in 17 | 18 | 19 | 20 | 21 | 22) ready_list=1 ;; *) ready_list=0 ;; esac
if [ $ready_list = 1 ] && [ -z "${CASES:-}" ]; then
bucket_hooks
card=$(nvidia-smi -L 2>/dev/null | grep -q H200 && echo h200 || echo h100)
if [ "$READY" = 21 ] && [ $card = h100 ]; then
	add_cases bf16 resnet18:32:0 resnet18:64:0 resnet50:16:0 resnet50:32:0 vit_b_16:32:0 \
		bert_base:32:128 bert_base:8:512 bert_base:16:256 bert_large:8:128 bert_large:4:256
	add_cases amp_fp16 resnet18:64:0 resnet50:16:0 resnet50:48:0 vit_b_16:24:0 vit_b_16:48:0 \
		vit_l_16:32:0 bert_large:6:384
	add_cases amp_bf16 resnet50:36:0 vit_b_16:24:0 vit_b_16:36:0 vit_l_16:28:0
elif [ "$READY" = 21 ]; then
	add_cases amp_bf16 resnet18:24:0 resnet18:32:0 resnet18:48:0 resnet18:64:0 resnet50:8:0 \
		vit_b_16:48:0 vit_b_16:56:0 vit_b_16:112:0 vit_l_16:20:0 vit_l_16:40:0 vit_l_16:56:0 \
		vit_l_16:64:0 bert_base:8:128 bert_base:4:512 bert_large:2:512 bert_large:6:256 \
		gpt2_medium:2:768
	add_cases fp32 resnet50:8:0 gpt2_medium:2:512
elif [ "$READY" = 22 ]; then
	add_cases fp32,amp_bf16 resnet18:40:0 resnet50:44:0 vit_b_16:44:0 vit_l_16:36:0 \
		bert_base:10:448 bert_large:14:192 gpt2:7:384 gpt2_medium:5:448
elif [ "$READY" = 20 ]; then
	add_cases fp32,amp_bf16 resnet18:72:0 resnet50:36:0 vit_b_16:36:0 vit_l_16:28:0 \
		bert_base:20:320 bert_large:10:320 gpt2:5:640 gpt2_medium:3:640
elif [ $card = h200 ] && [ "$READY" = 17 ]; then
	CASES=resnet18:128:0:amp_fp16,resnet50:64:0:amp_fp16,gpt2:8:1024:bf16
	CASES=$CASES,bert_large:8:512:bf16,bert_base:16:256:bf16,bert_base:16:256:amp_bf16
elif [ $card = h200 ]; then
	add_cases amp_fp16,bf16 resnet18:128:0 resnet50:64:0 vit_b_16:64:0 vit_l_16:32:0 \
		bert_base:16:256 bert_large:8:512 gpt2:8:1024 gpt2_medium:4:1024
	CASES=$CASES,bert_base:16:256:amp_bf16
elif [ "$READY" = 19 ]; then
	add_cases amp_fp16,bf16 resnet18:64:0 resnet50:24:0 vit_b_16:48:0 vit_l_16:24:0 \
		bert_base:12:384 bert_large:6:384 gpt2:3:768 gpt2_medium:2:768
elif [ "$READY" = 17 ]; then
	CASES=bert_base:16:256:bf16,bert_large:4:256:bf16,gpt2:2:1024:bf16,vit_b_16:16:0:bf16
	CASES=$CASES,resnet50:32:0:bf16
else
	add_cases amp_bf16,amp_fp16 resnet18:96:0 resnet50:48:0 vit_b_16:24:0 vit_l_16:12:0 \
		bert_base:24:256 bert_large:12:256 gpt2:6:512 gpt2_medium:3:512
fi
fi
# HOST=1 (issue 13, twenty-first session): the host's own time per pass by depth, every
# family at a tiny width (measure_host.py; check_host.py holds the model against it): the
# per-layer price of the host's calls, which the full llama2_7b showed 1.6x too high
if [ "${HOST:-0}" = 1 ]; then
	PYTHONUNBUFFERED=1 timeout $((${HOST_BUDGET_S:-240} + 120)) python3 \
		tests/workload/measure_host.py --out "$OUT/host_layers.json" --rounds 5 \
		--budget-s ${HOST_BUDGET_S:-240} >>"$L" 2>&1
fi
# MICRO=groups (micro_kernels.py --only): library kernels by shape first, e.g.
# MICRO=gemm_gap,conv_split for the convolutions' passes apart at five batches
# (MICRO_BATCHES=8,24,48,96: others, to check the conv table where it was never fitted)
if [ -n "${MICRO:-}" ]; then
	PYTHONUNBUFFERED=1 timeout $((${MICRO_BUDGET_S:-100} + 40)) python3 \
		tests/workload/micro_kernels.py --out "$OUT/micro.json" --only "$MICRO" \
		--budget-s ${MICRO_BUDGET_S:-100} ${MICRO_BATCHES:+--batches $MICRO_BATCHES} >>"$L" 2>&1
fi
# HOST=1 alone measures no step
if [ "${HOST:-0}" = 1 ] && [ -z "${CASES:-}" ] && [ "${READY:-0}" = 0 ]; then
	cat "$L"
	exit 0
fi
if [ -z "${CASES:-}" ]; then
CASES=resnet18:32,resnet18:64,resnet18:128,resnet18:256,resnet50:32,resnet50:64,resnet50:96
CASES=$CASES,resnet50:128,resnet50:256,vit_b_16:32,vit_b_16:48,vit_b_16:64,vit_b_16:128
CASES=$CASES,vit_l_16:16,vit_l_16:24,vit_l_16:32,vit_l_16:64,bert_base:16:128
CASES=$CASES,bert_base:32:128,bert_base:64:128,bert_base:8:512,bert_base:24:256
CASES=$CASES,bert_large:8:128,bert_large:16:128,bert_large:32:128,bert_large:8:512
CASES=$CASES,bert_large:16:512,gpt2:4:1024,gpt2:8:1024,gpt2:16:512,gpt2:8:256,gpt2:4:512
CASES=$CASES,gpt2_medium:2:1024,gpt2_medium:4:1024,gpt2_medium:8:1024,gpt2_medium:4:512
CASES=$CASES,resnet50:128:0:fp32,gpt2:8:1024:fp32,vit_b_16:64:0:fp32,bert_large:8:128:fp32
# shapes never measured before, both precisions: held out from every fit
for c in resnet50:16:0 vit_b_16:16:0 bert_base:8:128 gpt2:2:512 bert_large:4:256; do
	CASES=$CASES,$c:amp_bf16,$c:fp32
done
fi
PYTHONUNBUFFERED=1 timeout ${MEASURE_TIMEOUT:-500} python3 $M --out "$OUT/steps_host.json" \
	--cases "$CASES" --precisions amp_bf16,tf32 --trials ${TRIALS:-5} --iters ${ITERS:-12} --warmup 10 \
	--case-time-s 4 --pin 3 --budget-s ${BUDGET_S:-240} \
	--light-steps ${LIGHT:-0} --diag "${DIAG:-}" ${BUCKETS:-} \
	>>"$L" 2>&1
nvidia-smi -q -d CLOCK | grep -A4 "^    Clocks$" >>"$L" 2>&1
cat "$L"
