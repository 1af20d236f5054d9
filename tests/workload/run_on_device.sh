#!/bin/sh
# What the cost model's device call runs on a lent H200 (README "Compute model"): build,
# calibrate our kernels (gpu --calibrate --write), hold compute = gemm against plan
# (check_gemm_mode.py), and measure PyTorch steps: the amp_bf16 cases again with more
# iterations and hook-free ready times, new batch sizes held out from every fit, and the
# fit cases' amp_bf16 steps a second time (the reference's own repeatability).
# usage (from the repository root): OUT=DIR tests/workload/run_on_device.sh
# Leaves log.txt, h200_calibrated.profile and steps_{amp,new,rep}.json in $OUT.
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
L=$OUT/log.txt
{ nproc; nvidia-smi -L; } >"$L" 2>&1
# a binary built on the CPU machine (static libraries, glibc dynamic) in bin/, else build here
mkdir -p build
if [ -x bin/gradsync ]; then cp bin/gradsync build/gradsync
else { ./configure && ninja; } >/tmp/build.log 2>&1 || { tail -40 /tmp/build.log | tee -a "$L"; exit 1; }
fi
timeout 120 build/gradsync gpu --calibrate --write "$OUT/h200_calibrated.profile" >>"$L" 2>&1
mkdir -p /tmp/gemm_mode
timeout 150 python3 tests/workload/check_gemm_mode.py build/gradsync --out-dir /tmp/gemm_mode \
	>/tmp/gemm_mode.txt 2>&1
tail -9 /tmp/gemm_mode.txt >>"$L"
grep -rh "compute = gemm: our GEMM" /tmp/gemm_mode.txt /tmp/gemm_mode 2>/dev/null | head -2 >>"$L"
M=tests/workload/measure_torch_step.py
NEW=resnet18:64,resnet50:96,vit_b_16:48,vit_l_16:24,bert_base:24:256,bert_large:16:128,gpt2:4:512,gpt2_medium:4:512
REP=gpt2_medium:4:1024,gpt2:8:1024,bert_large:32:128,bert_base:32:128,vit_l_16:32,vit_b_16:64,resnet50:128,resnet18:128
timeout 200 python3 $M --out "$OUT/steps_amp.json" --precisions amp_bf16 --iters 20 --budget-s 130 \
	>>"$L" 2>&1
timeout 120 python3 $M --out "$OUT/steps_new.json" --precisions fp32,amp_bf16 --iters 12 \
	--cases "$NEW" --budget-s 80 >>"$L" 2>&1
timeout 70 python3 $M --out "$OUT/steps_rep.json" --precisions amp_bf16 --iters 20 --no-profile \
	--cases "$REP" --budget-s 40 >>"$L" 2>&1
cat "$L"
