#!/bin/sh
# Cross-key mistakes are found at `check` time, one FILE:LINE line each: errors stop
# check and run with exit 2 before anything runs, warnings are printed and the
# experiment goes on (config/lint.c).
set -u
. "$(dirname "$0")/../lib.sh"
test_begin

# expect_err FILE REGEX: check exits 2 and stderr has a line matching REGEX
expect_err() {
	"$G" check "$1" >/dev/null 2>"$T/err"
	st=$?
	[ $st = 2 ] || fail "$1: exit $st, expected 2"
	grep -Eq "$2" "$T/err" || fail "$1: no line like '$2' in: $(cat "$T/err")"
}
expect_warn() {
	"$G" check "$1" >/dev/null 2>"$T/err" || fail "$1: exit $?, expected 0 (warnings only)"
	grep -Eq "$2" "$T/err" || fail "$1: no line like '$2' in: $(cat "$T/err")"
}

printf '[collective]\nsizes = 1000003\n' >"$T/odd.ini"
expect_err "$T/odd.ini" "odd.ini:2: collective.sizes: error: 1000003 bytes is not a whole number of f32 elements"
printf '[collective]\ndtype = f64\nsizes = 4B\n' >"$T/small.ini"
expect_err "$T/small.ini" "small.ini:3: collective.sizes: error: .*not even one; use a multiple of 8"
printf '[gpu]\ngdr = on\n' >"$T/gdr.ini"
expect_err "$T/gdr.ini" "gdr.ini:2: gpu.gdr: error: on needs GPU buffers"
printf '[transport]\ntransport = nccl\n' >"$T/nccl.ini"
expect_err "$T/nccl.ini" "nccl.ini:2: transport.transport: error: nccl needs GPU buffers"
printf '[numa]\nbind = cpus:1000\n' >"$T/cpus.ini"
expect_err "$T/cpus.ini" "cpus.ini:2: numa.bind: error: cpus:1000: CPU 1000 not online \(online: 0-"
# a NUMA node this node lacks is refused at check too, as the ranks refuse it
printf '[numa]\nbind = node:63\n' >"$T/node.ini"
expect_err "$T/node.ini" "node.ini:2: numa.bind: error: node:63: NUMA node 63 does not exist \(nodes here: 0"
# write_bw with one local rank: check warns (a launcher may start more); run without a
# launcher refuses it before anything runs, with no results directory
printf '[experiment]\noutput_dir = %s/p2pres\n[collective]\nop = write_bw\n[launch]\nlocal_ranks = 1\n' "$T" >"$T/p2p1.ini"
expect_warn "$T/p2p1.ini" "p2p1.ini:6: launch.local_ranks: warning: op = write_bw needs 2 ranks, and local_ranks = 1 starts one when no launcher starts more"
timeout 30 "$G" -q run "$T/p2p1.ini" >/dev/null 2>"$T/err"
st=$?
[ $st = 2 ] || fail "run write_bw on 1 rank: exit $st, expected 2"
grep -q "p2p1.ini:6: launch.local_ranks: error: op = write_bw needs 2 ranks, and local_ranks = 1 starts one$" "$T/err" ||
	fail "run write_bw on 1 rank: $(cat "$T/err")"
[ ! -e "$T/p2pres" ] || fail "run write_bw on 1 rank made $(ls "$T/p2pres")"
printf '[matrix]\ntransport = tcp, shm\nbaseline = dtype=f32\n' >"$T/base.ini"
expect_err "$T/base.ini" "base.ini:3: matrix.baseline: error: dtype is not a \[matrix\] axis"
printf '[matrix]\ntransport = tcp, shm\nexclude = reduce_op=avg\n' >"$T/excl.ini"
expect_err "$T/excl.ini" "excl.ini:3: matrix.exclude: error: reduce_op is not a \[matrix\] axis"
printf '[workload]\nmodel = resnet18\ncompute = gemm\n' >"$T/gemm.ini"
expect_err "$T/gemm.ini" "gemm.ini:3: workload.compute: error: gemm plays the model's ops on the GPU, but \[gpu\] device = none in case base"
printf '[collective]\nsizes = 4KiB, 64KiB\n[report]\nmin_busbw = 1GB/s @ 1GiB\n' >"$T/thr.ini"
expect_err "$T/thr.ini" "thr.ini:4: report.min_busbw: error: the range 1GiB holds none of the sizes of case base"
# run refuses what check refuses, before it creates a results directory
printf '[experiment]\noutput_dir = %s/res\n[collective]\nsizes = 1000003\n' "$T" >"$T/run.ini"
"$G" run "$T/run.ini" >/dev/null 2>"$T/err"; st=$?
[ $st = 2 ] || fail "run with a lint error: exit $st, expected 2"
[ ! -e "$T/res" ] || fail "run with a lint error created $T/res"

# Inside a Slurm allocation but not a job step: one line saying to use srun, at once.
printf '[experiment]\noutput_dir = %s/res2\n[launch]\ntimeout = 30s\n' "$T" >"$T/slurm.ini"
start=$(date +%s)
SLURM_JOB_ID=42 SLURM_NTASKS=4 SLURM_PROCID=0 "$G" run "$T/slurm.ini" >/dev/null 2>"$T/err"
st=$?
[ $st = 2 ] || fail "sbatch without srun: exit $st, expected 2"
grep -q "not in a job step (an sbatch script or salloc shell): start the ranks with 'srun gradsync run FILE.ini'" "$T/err" ||
	fail "sbatch without srun: $(cat "$T/err")"
[ $(( $(date +%s) - start )) -lt 10 ] || fail "sbatch without srun took the timeout"
SLURM_JOB_ID=43 SLURM_NTASKS=2 "$G" run "$T/slurm.ini" >/dev/null 2>"$T/err"
[ $? = 2 ] || fail "salloc shell of 2 tasks ran local ranks"

printf '[transport]\ntransport = tcp\n[matrix]\ngdr_level = PIX, PXB, SYS\n' >"$T/lvl.ini"
expect_warn "$T/lvl.ini" "lvl.ini:4: matrix.gdr_level: warning: swept over 3 values, but only ib/roce with GPU buffers reads it \(transport = tcp, host buffers\)"
printf '[transport]\ntransport = shm\nstreams = 8\n' >"$T/str.ini"
expect_warn "$T/str.ini" "str.ini:3: transport.streams: warning: set, but only tcp reads it \(transport = shm\)"
printf '[transport]\ntransport = tcp\nshm_copy = direct\nslot_size = 64KiB\nqp_timeout = 18\n' >"$T/tcpx.ini"
expect_warn "$T/tcpx.ini" "tcpx.ini:3: transport.shm_copy: warning: set, but only shm reads it"
expect_warn "$T/tcpx.ini" "tcpx.ini:4: transport.slot_size: warning: set, but only shm or ib/roce reads it"
expect_warn "$T/tcpx.ini" "tcpx.ini:5: transport.qp_timeout: warning: set, but only ib/roce reads it"
printf '[launch]\nlocal_ranks = 2\n[numa]\nbind = cpus:1,1\n' >"$T/dupcpu.ini"
expect_warn "$T/dupcpu.ini" "dupcpu.ini:4: numa.bind: warning: cpus:1,1 pins all 2 local ranks to 1 CPU"
printf '[launch]\nlocal_ranks = 4\n[numa]\nbind = cpus:0\n' >"$T/one.ini"
expect_warn "$T/one.ini" "one.ini:4: numa.bind: warning: cpus:0 pins all 4 local ranks to 1 CPU"
# [workload] keys no case's model reads: a shape key of another family, any with model = none
printf '[workload]\nmodel = resnet50\nseq_len = 128\n' >"$T/seq.ini"
expect_warn "$T/seq.ini" "seq.ini:3: workload.seq_len: warning: set, but model resnet50 does not read it \(families that do: bert, gpt2, llama, custom\)"
printf '[workload]\nmodel = bert_base\n[matrix]\nimage_size = 224, 384\n' >"$T/img.ini"
expect_warn "$T/img.ini" "img.ini:4: matrix.image_size: warning: swept over 2 values, but model bert_base does not read it .*: the cases differ in name only"
printf '[workload]\nbucket_cap = 50MiB\n' >"$T/none.ini"
expect_warn "$T/none.ini" "none.ini:2: workload.bucket_cap: warning: set, but model = none \(the \[collective\] benchmark\) reads no \[workload\] key"
printf '[workload]\nmodel = gpt2\nop_trace = x.trace\n' >"$T/otr.ini"
expect_warn "$T/otr.ini" "otr.ini:3: workload.op_trace: warning: set, but model gpt2 does not read it \(families that do: trace\)"
# [collective] keys a DDP workload or the case's op does not read
printf '[workload]\nmodel = resnet18\n[collective]\nop = write_bw\nalgorithm = ring\n' >"$T/cwl.ini"
expect_warn "$T/cwl.ini" "cwl.ini:4: collective.op: warning: set, but model resnet18 runs a DDP workload, which takes only algorithm, chunk_size, channels and verify from \[collective\]"
printf '[collective]\nop = write_lat\nreduce_op = avg\n[matrix]\nwindow = 1, 4\n' >"$T/p2p.ini"
expect_warn "$T/p2p.ini" "p2p.ini:3: collective.reduce_op: warning: set, but op = write_lat does not read it \(only allreduce does\)"
expect_warn "$T/p2p.ini" "p2p.ini:5: matrix.window: warning: swept over 2 values, but op = write_lat does not read it \(write_bw and pairwise do\)"
# an exclude rule that drops nothing (a value off its axis, a self-contradiction)
printf '[matrix]\ntransport = tcp, shm\nexclude = transport=ib\n' >"$T/ex.ini"
expect_warn "$T/ex.ini" "ex.ini:3: matrix.exclude: warning: 'transport=ib' matches no combination of the axes, so it excludes nothing"
printf '[matrix]\ntransport = tcp, shm\nexclude = transport=tcp; transport=shm\n' >"$T/exall.ini"
expect_err "$T/exall.ini" "exall.ini:3: matrix.exclude: every case is excluded"
# the rule that excluded them is named, not the first one written
printf '[matrix]\ntransport = tcp, shm\nexclude = transport=ib\nexclude = transport=tcp; transport=shm\n' >"$T/exall2.ini"
expect_err "$T/exall2.ini" "exall2.ini:4: matrix.exclude: every case is excluded \(by this rule and the others that match\)"
# read by one case of the matrix: no warning
printf '[workload]\nseq_len = 128\n[matrix]\nmodel = resnet50, bert_base\n' >"$T/mix.ini"
"$G" check "$T/mix.ini" >/dev/null 2>"$T/err" || fail "mix.ini: exit $?"
[ -s "$T/err" ] && fail "mix.ini warned: $(cat "$T/err")"
# an included file's line is named
printf '[transport]\nstreams = 8\n' >"$T/inc.ini"
printf 'include = inc.ini\n[transport]\ntransport = shm\n' >"$T/top.ini"
expect_warn "$T/top.ini" "inc.ini:2: transport.streams: warning"
# the line named is the one whose value the key holds: the includer's, after its include,
# and not shifted by long lines before it (a 1024-byte reader once counted them twice)
printf 'include = inc.ini\n[transport]\ntransport = shm\n; %s\nstreams = 4\n' \
	"$(printf '%03000d' 0)" >"$T/over.ini"
expect_warn "$T/over.ini" "over.ini:5: transport.streams: warning"
# the shipped experiments are clean
for f in conf/*.ini; do
	"$G" check "$f" >/dev/null 2>"$T/err" || fail "$f: exit $?"
	[ -s "$T/err" ] && fail "$f: $(cat "$T/err")"
done

[ $fails = 0 ] && echo "lint: all checks passed"
[ $fails = 0 ]
