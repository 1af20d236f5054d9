#!/bin/sh
# The command line end to end: verbs, exit codes, the key reference in the README
# against `gradsync keys`, every conf/*.ini parses, and the static link.
set -u
. "$(dirname "$0")/../lib.sh"
test_begin
check() { # check DESC EXPECTED_EXIT CMD...
	desc=$1 want=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL: $desc: exit $got, expected $want"; cat "$T/err"; fails=$((fails + 1))
	fi
}
expect_err() { # expect_err DESC TEXT
	grep -qF -- "$2" "$T/err" || { echo "FAIL: $1: stderr lacks '$2':"; cat "$T/err"; fails=$((fails + 1)); }
}

check "version" 0 "$G" --version
grep -q '^gradsync [0-9]' "$T/out" || { echo "FAIL: version line"; fails=$((fails + 1)); }
check "help" 0 "$G" --help
grep -q '130 / 143 / 129 run stopped by SIGINT / SIGTERM / SIGHUP' "$T/out" ||
	{ echo "FAIL: --help lacks the signal exit codes"; fails=$((fails + 1)); }
# every verb has --help (the README's command line section): a usage line, exit 0
for v in run check plan predict report doctor topo gpu rendezvous keys version; do
	check "$v --help" 0 "$G" "$v" --help
	grep -q "^usage: gradsync $v" "$T/out" || { echo "FAIL: $v --help printed no usage line"; fails=$((fails + 1)); }
done
check "unknown verb" 2 "$G" frobnicate
expect_err "unknown verb" "unknown verb 'frobnicate'"
check "keys" 0 "$G" keys
check "keys section" 0 "$G" keys transport
grep -q 'gid_index' "$T/out" || { echo "FAIL: keys transport lacks gid_index"; fails=$((fails + 1)); }
check "keys bad section" 2 "$G" keys nope
check "keys matrix" 0 "$G" keys matrix
grep -q "baseline = K=V" "$T/out" && grep -q "workload.model" "$T/out" ||
	{ echo "FAIL: keys matrix printed: $(cat "$T/out")"; fails=$((fails + 1)); }
printf '[experiment]\ndescription = x ${}\n' >"$T/emptyvar.ini"
check "\${}" 2 "$G" check "$T/emptyvar.ini"
expect_err "\${}" 'emptyvar.ini:2: experiment.description: ${} names no variable (expected ${NAME} or ${NAME:-default})'
# output that cannot be written is a failure, said once (exit 0 lost the table)
if [ -w /dev/full ]; then
	"$G" keys >/dev/full 2>"$T/err"; st=$?
	[ $st = 1 ] && grep -q "writing standard output: No space left on device" "$T/err" ||
		{ echo "FAIL: keys > /dev/full: exit $st: $(cat "$T/err")"; fails=$((fails + 1)); }
	"$G" gpu --profile h200 --write /dev/full 2>"$T/err"; st=$?
	[ $st = 1 ] && grep -q "gpu: write /dev/full: No space left on device" "$T/err" ||
		{ echo "FAIL: gpu --write /dev/full: exit $st: $(cat "$T/err")"; fails=$((fails + 1)); }
fi
check "check missing arg" 2 "$G" check
# every verb: --help is help (exit 0), a stray option is one usage line (exit 2)
check "gpu --help" 0 "$G" gpu --help
grep -q "^usage: gradsync gpu" "$T/out" || { echo "FAIL: gpu --help"; fails=$((fails + 1)); }
check "gpu --bogus" 2 "$G" gpu --bogus
expect_err "gpu --bogus" "gradsync gpu: '--bogus': unknown option or missing value (see --help)"
check "version --bogus" 2 "$G" version --bogus
expect_err "version --bogus" "gradsync version: unexpected argument '--bogus' (it takes none)"
check "run FILE --bogus" 2 "$G" run conf/quickstart.ini --bogus
expect_err "run FILE --bogus" "gradsync run: unknown option '--bogus' (see --help)"
# A value option given twice is refused: the last one silently replaced the first.
check "run --out twice" 2 "$G" run conf/quickstart.ini --out "$T/a" --out "$T/b"
expect_err "run --out twice" "gradsync run: --out given twice: give it once"
check "plan --model twice" 2 "$G" plan --model resnet50 --model=bert_base
expect_err "plan --model twice" "gradsync plan: --model given twice: give it once"
check "report -b and --baseline" 2 "$G" report -b x --baseline y r.json
expect_err "report -b and --baseline" "gradsync report: --baseline given twice: give it once"
check "topo --bind twice" 2 "$G" topo --bind 0 --bind 1
expect_err "topo --bind twice" "gradsync topo: --bind given twice: give it once"
check "doctor --sysfs-root twice" 2 "$G" doctor -r / --sysfs-root /
expect_err "doctor --sysfs-root twice" "gradsync doctor: --sysfs-root given twice: give it once"
check "predict --size twice" 2 "$G" predict --size 1MiB --size 2MiB r.json
expect_err "predict --size twice" "gradsync predict: --size given twice: give it once"
check "gpu --write twice" 2 "$G" gpu --write a --write b
expect_err "gpu --write twice" "gradsync gpu: --write given twice: give it once"
check "rendezvous --iters twice" 2 "$G" rendezvous --iters 3 --iters 4
expect_err "rendezvous --iters twice" "gradsync rendezvous: --iters given twice: give it once"

# Every shipped experiment parses.
for f in conf/*.ini; do
	check "check $f" 0 "$G" check "$f"
done
check "quickstart matrix" 0 "$G" check conf/quickstart.ini
grep -q "case 4   model=resnet18,transport=shm" "$T/out" || { echo "FAIL: quickstart cases"; cat "$T/out"; fails=$((fails + 1)); }

# Bad files: one line FILE:LINE: section.key: message, exit 2.
printf '[workload]\nbucket_capp = 25MiB\n' >"$T/bad.ini"
check "unknown key" 2 "$G" check "$T/bad.ini"
expect_err "unknown key" "bad.ini:2: workload.bucket_capp: unknown key (did you mean 'bucket_cap'?)"
[ "$(wc -l <"$T/err")" = 1 ] || { echo "FAIL: error is not one line"; fails=$((fails + 1)); }
printf '[matrix]\nchunk_size = 1MiB, 3MiB\nsizes = 1MiB\n' >"$T/bad2.ini"
check "unsweepable" 2 "$G" check "$T/bad2.ini"
expect_err "unsweepable" "bad2.ini:3: matrix.sizes: collective.sizes may not be swept"
# a rendezvous address or timeout that cannot work is refused where it is given (a bad
# port failed every rank at start naming GRADSYNC_RENDEZVOUS; 1ns passed the flag)
printf '[launch]\nrendezvous = 127.0.0.1:99999\n' >"$T/rdv.ini"
check "rendezvous port 99999" 2 "$G" check "$T/rdv.ini"
expect_err "rendezvous port 99999" "rdv.ini:2: launch.rendezvous: '127.0.0.1:99999': expected HOST:PORT, PORT 1..65535"
check "run --rendezvous bogus" 2 "$G" run conf/quickstart.ini --rendezvous bogus
expect_err "run --rendezvous bogus" "gradsync run: --rendezvous 'bogus': expected HOST:PORT"
check "rendezvous --timeout 1ns" 2 "$G" rendezvous --timeout 1ns
expect_err "rendezvous --timeout 1ns" "--timeout '1ns': expected a duration 1ms..24h"
# a path key's ~/ is $HOME, as a shell would have it (output_dir = ~/x made './~/x')
printf '[experiment]\noutput_dir = ~/gsres\n' >"$T/home.ini"
HOME=/tmp/gshome check "output_dir = ~/gsres" 0 "$G" check --full "$T/home.ini"
grep -q '^output_dir = /tmp/gshome/gsres$' "$T/out" || { echo "FAIL: ~/ in output_dir: $(grep output_dir "$T/out")"; fails=$((fails + 1)); }
# a size twice (a range overlapping a value) was measured twice and shown once
printf '[collective]\nsizes = 4KiB..64KiB x2, 16KiB\n' >"$T/dupsz.ini"
check "a size twice" 2 "$G" check "$T/dupsz.ini"
expect_err "a size twice" "dupsz.ini:2: collective.sizes: 16KiB is in the list twice (ranges included)"
check "missing file" 2 "$G" check "$T/none.ini"
expect_err "missing file" "none.ini: cannot read: No such file or directory"

# Issue 16's red-team inputs: each once crashed, hung, read gigabytes or lost a setting.
# Every wait is bounded (timeout 20): a hang fails the test instead of stalling it.
printf '[report]\nformats = ${F}\n' >"$T/formats.ini"
F=$(awk 'BEGIN { for (i = 0; i < 600; i++) printf "%stable", i ? "," : "" }') \
	check "600 list items (stack overflow)" 2 timeout 20 "$G" check "$T/formats.ini"
expect_err "600 list items" "formats.ini:2: report.formats: value too long"
mkdir "$T/inc"
printf '[workload]\niterations = 5\n' >"$T/inc/a.ini"
printf '[workload]\n\niterations = 7\n' >"$T/inc/b.ini"
printf 'include = a.ini\ninclude = b.ini\n' >"$T/inc/main.ini"
check "sibling includes set one key" 0 timeout 20 "$G" check --full "$T/inc/main.ini"
grep -q '^iterations = 7$' "$T/out" || { echo "FAIL: the later include does not win"; cat "$T/out"; fails=$((fails + 1)); }
printf '[workload]\n\niterations = 7\niterations = 8\n' >"$T/inc/dup.ini"
printf 'include = a.ini\ninclude = dup.ini\n' >"$T/inc/main2.ini"
check "duplicate after an include" 2 timeout 20 "$G" check "$T/inc/main2.ini"
expect_err "duplicate after an include" "dup.ini:4: workload.iterations: duplicate key (first set at line 3)"
# The includer wins over its include whether its line comes before the include or after,
# and a key it sets twice is a duplicate even with an include setting it in between.
printf '[workload]\niterations = 2\ninclude = a.ini\n' >"$T/inc/first.ini"
check "includer's line before its include" 0 timeout 20 "$G" check --full "$T/inc/first.ini"
grep -q '^iterations = 2$' "$T/out" || { echo "FAIL: an include overrode its includer"; cat "$T/out"; fails=$((fails + 1)); }
printf '[workload]\niterations = 2\ninclude = a.ini\n[workload]\niterations = 3\n' >"$T/inc/twice.ini"
check "set twice around an include" 2 timeout 20 "$G" check "$T/inc/twice.ini"
expect_err "set twice around an include" "twice.ini:5: workload.iterations: duplicate key (first set at line 2)"
printf '[workload]\niterations = x\n' >"$T/inc/bad.ini"
printf '[workload]\niterations = 2\ninclude = bad.ini\n' >"$T/inc/badinc.ini"
check "a losing include's value is still checked" 2 timeout 20 "$G" check "$T/inc/badinc.ini"
expect_err "a losing include's value is still checked" "bad.ini:2: workload.iterations:"
printf 'include = /dev/zero\n' >"$T/zero.ini"
check "include /dev/zero" 2 timeout 20 "$G" check "$T/zero.ini"
expect_err "include /dev/zero" "zero.ini:1: include: cannot read '/dev/zero': is a character device, not a regular file"
mkfifo "$T/fifo"
printf 'include = fifo\n' >"$T/fifo.ini"
check "include a FIFO" 2 timeout 20 "$G" check "$T/fifo.ini"
expect_err "include a FIFO" "is a FIFO, not a regular file"
check "check a FIFO" 2 timeout 20 "$G" check "$T/fifo"
expect_err "check a FIFO" "fifo: cannot read: is a FIFO, not a regular file"
printf 'include = inc\n' >"$T/dir.ini"
check "include a directory" 2 timeout 20 "$G" check "$T/dir.ini"
expect_err "include a directory" "is a directory, not a regular file"
head -c 100000000 /dev/zero | tr '\0' x | { printf '[experiment]\ndescription = '; cat; } >"$T/huge.ini"
check "100 MB line" 2 timeout 20 "$G" check "$T/huge.ini"
expect_err "100 MB line" "larger than the 1MiB limit"
rm -f "$T/huge.ini"
{ printf '[experiment]\ndescription = '; head -c 900000 /dev/zero | tr '\0' x; echo; } >"$T/long.ini"
check "900 KB line" 2 timeout 20 "$G" check "$T/long.ini"
expect_err "900 KB line" "long.ini:2: line too long (more than 4000 characters)"
{ printf '[experiment]\n; '; head -c 3000 /dev/zero | tr '\0' x; printf '\nseed = 3\n'; } >"$T/line3k.ini"
check "3000-character line (inih cut at 197)" 0 timeout 20 "$G" check "$T/line3k.ini"
printf '[experiment]\nseed = 010\n' >"$T/seed.ini"
check "seed = 010" 0 timeout 20 "$G" check "$T/seed.ini"
grep -q 'experiment.seed = 10$' "$T/out" || { echo "FAIL: seed = 010 is not ten"; cat "$T/out"; fails=$((fails + 1)); }
printf '[workload]\nmodel = custom\nlayers = a:-5\n' >"$T/layers.ini"
check "custom layers a:-5" 2 timeout 20 "$G" check "$T/layers.ini"
expect_err "custom layers a:-5" "layers.ini:3: workload.layers: model custom: layers entry 1 'a:-5'"
printf '[experiment]\rseed = 3\r' >"$T/cr.ini"
check "CR-only line endings" 2 timeout 20 "$G" check "$T/cr.ini"
expect_err "CR-only line endings" "cr.ini:1: carriage return without a line feed"
printf '[experiment] junk\n' >"$T/junk.ini"
check "[experiment] junk" 2 timeout 20 "$G" check "$T/junk.ini"
expect_err "[experiment] junk" "junk.ini:1: text after [experiment]"
check "report on a FIFO" 2 timeout 20 "$G" report "$T/fifo"
expect_err "report on a FIFO" "is a FIFO, not a regular file"
check "report on /dev/zero" 2 timeout 20 "$G" report /dev/zero
expect_err "report on /dev/zero" "is a character device, not a regular file"

# An empty value is judged by the key's check unless the key's default is empty: an
# empty name made the run directory "-<time>", empty devices and bindings passed.
for kv in "experiment name bad name ''" "transport device bad device ''" \
	"gpu device bad GPU list ''" "numa bind unknown binding ''"; do
	set -- $kv
	sec=$1 key=$2
	shift 2
	printf '[%s]\n%s =\n' "$sec" "$key" >"$T/empty.ini"
	check "empty $sec.$key" 2 timeout 20 "$G" check "$T/empty.ini"
	expect_err "empty $sec.$key" "empty.ini:2: $sec.$key: $*"
done
printf '[workload]\nlayers =\n[report]\nmin_busbw =\n' >"$T/empty.ini"
check "empty layers and min_busbw (their defaults)" 0 timeout 20 "$G" check "$T/empty.ini"

# Integer flags take the whole argument or nothing: atoi ran case 2 for '--case 2x' and
# for '--case 4294967298', and rank 0 for '--rank x'.
printf '[collective]\nsizes = 4KiB\n[matrix]\ntransport = tcp, shm\n' >"$T/two.ini"
for v in 2x 4294967298 1.5 0 ''; do
	check "run --case '$v'" 2 timeout 20 "$G" run "$T/two.ini" --case "$v"
	expect_err "run --case '$v'" "gradsync run: --case '$v': expected an integer 1..2147483647"
done
# A run of one case (--case 2) replays that case only (it replayed the whole matrix);
# --case on the replay picks another
printf '[experiment]\nname = one\noutput_dir = %s\n[collective]\nsizes = 4KiB\niterations = 2\n[launch]\nlocal_ranks = 2\n[matrix]\ntransport = tcp, shm\n' "$T/oneres" >"$T/one.ini"
check "run --case 2" 0 timeout 60 "$G" -q run "$T/one.ini" --case 2
check "replay a --case run" 0 timeout 60 "$G" run --replay "$(ls -d "$T"/oneres/one-*)" --out "$T/onerep"
expect_err "replay a --case run" "replaying case 2 only, as its run did (--case N picks another)"
check "replay it with --case 1" 0 timeout 60 "$G" -q run --replay "$(ls -d "$T"/onerep/one-*)" --case 1 --out "$T/onerep1"
python3 - "$T"/onerep/one-*/report.json "$T"/onerep1/one-*/report.json <<'PY' || { echo "FAIL: replay of a --case run"; fails=$((fails + 1)); }
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert [c["name"] for c in a["cases"]] == ["transport=shm"], [c["name"] for c in a["cases"]]
assert a["experiment"]["only_case"] == 2 and b["experiment"]["only_case"] == 1, (a["experiment"], b["experiment"])
assert [c["name"] for c in b["cases"]] == ["transport=tcp"], [c["name"] for c in b["cases"]]
PY
check "run --rank x" 2 timeout 20 "$G" run "$T/two.ini" --rank x --world-size 1
expect_err "run --rank x" "gradsync run: --rank 'x': expected an integer 0..1048575"
check "run --world-size 1x" 2 timeout 20 "$G" run "$T/two.ini" --rank 0 --world-size 1x
expect_err "run --world-size 1x" "gradsync run: --world-size '1x': expected an integer 1..1048576"
check "rendezvous --world-size 4294967297" 2 timeout 20 "$G" rendezvous --rank 0 --world-size 4294967297
expect_err "rendezvous --world-size 4294967297" "gradsync rendezvous: --world-size '4294967297': expected an integer 1..1048576"

# An empty output directory is refused: "" joined to "/name-time" wrote the run into /.
printf '[experiment]\noutput_dir =\n' >"$T/outdir.ini"
check "output_dir =" 2 timeout 20 "$G" check "$T/outdir.ini"
expect_err "output_dir =" "outdir.ini:2: experiment.output_dir: empty directory (expected a path; '.' for the working directory)"
check "run --out ''" 2 timeout 20 "$G" run "$T/two.ini" --out ''
expect_err "run --out ''" "gradsync run: --out '': expected a directory ('.' for the working directory)"

# A modelled step longer than the player's clock fails its case, saying why: gpu_tflops =
# 1e-300 ran resnet18's 1e302 ms step as 8 ms and exited 0.
printf '[experiment]\noutput_dir = %s\n[workload]\nmodel = resnet18\ngpu_tflops = 1e-300\niterations = 1\nwarmup = 0\n[launch]\nlocal_ranks = 2\n' "$T/res" >"$T/tflops.ini"
check "gpu_tflops = 1e-300" 1 timeout 60 "$G" run "$T/tflops.ini"
expect_err "gpu_tflops = 1e-300" "is longer than 1e+09 s: the model's FLOPs (a custom model's gflops) are too many for the GPU's matrix rate (gpu_tflops, else the profile's)"

# Text that is not UTF-8 reaches report.json as \xNN: a Latin-1 description or variable
# once made jansson refuse the document, and the run lost every result with no message.
printf '[experiment]\nname = u8\noutput_dir = %s\ndescription = caf\351\n[collective]\nsizes = 4KiB\niterations = 2\n[launch]\nlocal_ranks = 2\n' "$T/u8res" >"$T/u8.ini"
NCCL_U8=$(printf 'x\351y') check "Latin-1 description" 0 timeout 60 "$G" -q run "$T/u8.ini"
python3 - "$T"/u8res/u8-*/report.json <<'PY' || { echo "FAIL: Latin-1 text in report.json"; fails=$((fails + 1)); }
import json, sys
r = json.load(open(sys.argv[1]))
assert r["experiment"]["description"] == "caf\\xE9", r["experiment"]["description"]
assert r["env"].get("NCCL_U8") == "x\\xE9y", r["env"]
assert r["status"] == "done" and r["cases"][0]["status"] == "ok", r["status"]
PY

# A value that holds ' #', ' ;', '$' or '${' (from ${ENV} or written $#, $;, $$) replays as
# it ran: experiment.ini writes it escaped. One with a line break is refused (it would
# have ended the value in experiment.ini and started another key there).
printf '[experiment]\nname = esc\noutput_dir = %s\ndescription = $;lead ${GSD} cost $$5 $; done\n[collective]\nsizes = 4KiB\niterations = 2\n[launch]\nlocal_ranks = 2\n' "$T/escres" >"$T/esc.ini"
GSD='run #3 ; ${NOPE}' check "a value with # ; \$ {" 0 timeout 60 "$G" -q run "$T/esc.ini"
check "replay it" 0 timeout 60 "$G" -q run --replay "$(ls -d "$T"/escres/esc-*)" --out "$T/escrep"
python3 - "$T"/escres/esc-*/report.json "$T"/escrep/esc-*/report.json <<'PY' || { echo "FAIL: escaped value"; fails=$((fails + 1)); }
import json, sys
a, b = (json.load(open(p))["experiment"]["description"] for p in sys.argv[1:3])
assert a == ";lead run #3 ; ${NOPE} cost $5 ; done" and a == b, (a, b)
PY
# blanks a ${VAR} brings to the ends of a value go, as inih drops them around text:
# experiment.ini could not keep them, so the run and its replay would have differed
printf '[experiment]\ndescription = ${GSB}\n' >"$T/blank.ini"
GSB='  padded value  ' check "blanks from \${ENV}" 0 "$G" check --full "$T/blank.ini"
grep -q '^description = padded value$' "$T/out" ||
	{ echo "FAIL: \${ENV} blanks kept: $(grep description "$T/out")"; fails=$((fails + 1)); }
printf '[experiment]\ndescription = ${GSNL}\n' >"$T/nl.ini"
GSNL=$(printf 'a\n[launch]\nlocal_ranks = 3') check "a line break from \${ENV}" 2 "$G" check "$T/nl.ini"
expect_err "a line break from \${ENV}" 'nl.ini:2: experiment.description: ${GSNL} holds a line break, which a value cannot'

# The closing line names the files the formats wrote, no others (it named html, md and
# csv whenever html was asked for, and none without html)
printf '[experiment]\nname = fm\noutput_dir = %s\n[collective]\nsizes = 4KiB\niterations = 2\n[launch]\nlocal_ranks = 2\n[report]\nformats = json, md\n' "$T/fmres" >"$T/fm.ini"
check "formats = json, md" 0 timeout 60 "$G" run "$T/fm.ini"
grep -q "report: .*/report.json (and report.md)$" "$T/err" ||
	{ echo "FAIL: closing line: $(grep 'report:' "$T/err")"; fails=$((fails + 1)); }

# GRADSYNC_MEMCPY_BPS is the driver's hand-off of the shm bound it measured: one left in
# the user's environment was reported as a measured 0.0 GB/s bound (shm at 1e11 % of it)
printf '[experiment]\nname = mb\noutput_dir = %s\n[collective]\nsizes = 4KiB\niterations = 2\n[transport]\ntransport = shm\n[launch]\nlocal_ranks = 2\n' "$T/mbres" >"$T/mb.ini"
GRADSYNC_MEMCPY_BPS=1 check "an inherited GRADSYNC_MEMCPY_BPS" 0 timeout 60 "$G" -q run "$T/mb.ini"
python3 - "$T"/mbres/mb-*/report.json <<'PY' || { echo "FAIL: an inherited GRADSYNC_MEMCPY_BPS was taken"; fails=$((fails + 1)); }
import json, sys
b = json.load(open(sys.argv[1]))["cases"][0]["bound"]
assert b["kind"] == "memcpy" and b["Bps"] > 1e8, b
PY

# Files a key names are opened as regular files only: op_trace or a gpu profile FILE
# of /dev/zero or a FIFO hung check, plan and run.
printf '[workload]\nmodel = trace\nop_trace = /dev/zero\n' >"$T/trace0.ini"
check "op_trace = /dev/zero" 2 timeout 20 "$G" check "$T/trace0.ini"
expect_err "op_trace = /dev/zero" "op_trace /dev/zero: is a character device, not a regular file"
check "plan --op-trace FIFO" 2 timeout 20 "$G" plan --model trace --op-trace "$T/fifo"
expect_err "plan --op-trace FIFO" "fifo: is a FIFO, not a regular file"
check "plan --gpu-profile FIFO" 2 timeout 20 "$G" plan --model resnet18 --gpu-profile "$T/fifo"
expect_err "plan --gpu-profile FIFO" "not a readable file: is a FIFO, not a regular file"
check "plan --gpu-profile /dev/zero" 2 timeout 20 "$G" plan --model resnet18 --gpu-profile /dev/zero
expect_err "plan --gpu-profile /dev/zero" "is a character device, not a regular file"

# A trace's parameter shape is bounded as a whole: 99999999999999999999 was read as
# LLONG_MAX elements, 65536,65536,65536,65536 wrapped to 0, and folding 67 dimensions
# overflowed a signed product (UBSan).
for dims in 99999999999999999999 65536,65536,65536,65536 "$(seq -s, 67 | sed 's/[0-9]*/2/g')"; do
	printf 'gradsync_op_trace 1\nparam a %s\nfwd 5 x\nbwd 3 y a\n' "$dims" >"$T/big.trace"
	printf '[workload]\nmodel = trace\nop_trace = %s\n' "$T/big.trace" >"$T/bigtrace.ini"
	check "trace param $dims" 2 timeout 20 "$G" check "$T/bigtrace.ini"
	expect_err "trace param $dims" "big.trace:2: bad param line"
done

# Bad input is one line on stderr: a trace error printed its reason, then "model 'trace':
# Invalid argument"; a rendezvous port of 0 two lines; a bad profile file passed `check`.
usage_err() { # usage_err DESC TEXT CMD...: exit 2 and TEXT as the one line on stderr
	desc=$1 text=$2
	shift 2
	check "$desc" 2 timeout 20 "$@"
	expect_err "$desc" "$text"
	[ "$(wc -l <"$T/err")" -eq 1 ] || { echo "FAIL: $desc: stderr is not one line:"; cat "$T/err"; fails=$((fails + 1)); }
}
printf 'gradsync_op_trace 1\nbogus line\n' >"$T/bad.trace"
printf '[workload]\nmodel = trace\nop_trace = %s\n' "$T/bad.trace" >"$T/badtrace.ini"
usage_err "check bad trace" "badtrace.ini:3: workload.op_trace: $T/bad.trace:2: bad bogus line" \
	"$G" check "$T/badtrace.ini"
usage_err "plan bad trace" "bad.trace:2: bad bogus line" \
	"$G" plan --model trace --op-trace "$T/bad.trace"
# a shape the model refuses is named by the flag (or the file's line) that set it
usage_err "plan seq past positions" "gradsync plan: --seq-len '2048': model gpt2 has 1024 positions: seq_len 2048 is past them" \
	"$G" plan --model gpt2 --seq-len 2048
usage_err "plan heads" "gradsync plan: --num-heads '7': model gpt2: hidden_size 768 is not a multiple of num_heads 7" \
	"$G" plan --model gpt2 --num-heads 7
printf '[workload]\nmodel = bert_base\n[matrix]\nseq_len = 128, 4096\n' >"$T/badseq.ini"
usage_err "check seq past positions" "badseq.ini:4: workload.seq_len: model bert_base has 512 positions: seq_len 4096 is past them (case seq_len=4096)" \
	"$G" check "$T/badseq.ini"
# A trace's batch line is its step's; a different [workload] batch would change nothing
printf 'gradsync_op_trace 1\nbatch 8\nparam a 4\nfwd 5 x\nbwd 3 y a\n' >"$T/b8.trace"
printf '[workload]\nmodel = trace\nop_trace = %s\nbatch = 16\n' "$T/b8.trace" >"$T/b8.ini"
usage_err "trace batch conflict" "b8.ini:4: workload.batch: model trace: op_trace $T/b8.trace was recorded at batch 8; batch 16 would not change its recorded times (leave batch unset)" \
	"$G" check "$T/b8.ini"
check "trace batch line" 0 "$G" plan --model trace --op-trace "$T/b8.trace"
grep -q "batch 8," "$T/out" || { echo "FAIL: trace batch line not used: $(cat "$T/out")"; fails=$((fails + 1)); }
printf 'gradsync_op_trace 1\nbatch 8\nbatch 16\nparam a 4\nfwd 5 x\nbwd 3 y a\n' >"$T/b2.trace"
usage_err "trace batch twice" "b2.trace:3: bad batch line (expected one batch N" "$G" plan --model trace --op-trace "$T/b2.trace"
printf 'gradsync_op_trace 1\nbatch 0\nparam a 4\nfwd 5 x\nbwd 3 y a\n' >"$T/b0.trace"
usage_err "trace batch 0" "b0.trace:2: bad batch line" "$G" plan --model trace --op-trace "$T/b0.trace"
printf 'gradsync_op_trace 1\nparam a 4\nfwd 5 x\nbwd 3 y a\nbwd' >"$T/bare.trace"
usage_err "trace bare keyword" "bare.trace:5: bad bwd line" "$G" plan --model trace --op-trace "$T/bare.trace"
printf 'gradsync_op_trace 1\nparam a 4\nfwd 5 x\nbwd 3 y b\n' >"$T/undecl.trace"
usage_err "plan trace undeclared" "bwd y: parameter b not declared" \
	"$G" plan --model trace --op-trace "$T/undecl.trace"
printf 'hbm_gbps = 100\nfoo\n' >"$T/bad.profile"
printf '[workload]\nmodel = resnet18\n[gpu]\nprofile = %s\n' "$T/bad.profile" >"$T/badprof.ini"
usage_err "check bad profile" "badprof.ini:4: gpu.profile: $T/bad.profile:2: expected 'key = value', got 'foo'" \
	"$G" check "$T/badprof.ini"
usage_err "plan bad profile" "bad.profile:2: expected 'key = value', got 'foo'" \
	"$G" plan --model resnet18 --gpu-profile "$T/bad.profile"
usage_err "gpu --profile bad --write" "gradsync gpu: $T/bad.profile:2: expected 'key = value'" \
	"$G" gpu --profile "$T/bad.profile" --write "$T/p.out"
for port in 0 99999 x ''; do
	usage_err "rendezvous port '$port'" "--rendezvous=\"localhost:$port\": expected HOST:PORT, PORT 1..65535" \
		"$G" rendezvous --rendezvous "localhost:$port" --rank 0 --world-size 2
done
check "rendezvous positional" 2 timeout 20 "$G" rendezvous --local-ranks 2 exp.ini
expect_err "rendezvous positional" "gradsync rendezvous: unexpected argument 'exp.ini'"
# GRADSYNC_LOG with a word it does not know was ignored without a word (no debug lines)
usage_err "GRADSYNC_LOG typo" \
	"gradsync: GRADSYNC_LOG=debug,transprt: unknown word 'transprt' (expected a level: error, warn, info, debug; and subsystems: main," \
	env GRADSYNC_LOG=debug,transprt "$G" keys
check "GRADSYNC_LOG any case" 0 env GRADSYNC_LOG=DEBUG,Coll "$G" keys
usage_err "report --out ''" "gradsync report: --out '': expected a directory ('.' for the working directory)" \
	"$G" report --out '' tests/fixtures/reports/tcp_shm.json

# check warns (exit 0: the file may be for another machine) of a case whose local ranks'
# buffers exceed this machine's memory; run stops such a case (tests/engine/test_failures.sh)
printf '[collective]\nsizes = 4KiB, 64GiB\n[launch]\nlocal_ranks = 2\n' >"$T/mem.ini"
check "check memory" 0 "$G" check "$T/mem.ini"
expect_err "check memory" "mem.ini: warning: case 1 (base): 2 local ranks need 256GiB for their buffers (128GiB each), this machine has"

# The README's limits on includes: 16 deep, 256 files with the including one
for i in $(seq 1 17); do echo "include = n$((i + 1)).ini" >"$T/n$i.ini"; done
echo '[experiment]' >"$T/n18.ini"
check "includes 17 deep" 2 "$G" check "$T/n1.ini"
expect_err "includes 17 deep" "include: includes nested deeper than 16"
for i in $(seq 1 256); do echo '[experiment]' >"$T/w$i.ini"; echo "include = w$i.ini"; done >"$T/wide.ini"
check "256 includes" 2 "$G" check "$T/wide.ini"
expect_err "256 includes" "wide.ini:256: include: more than 256 files included"

# The README's key reference is generated from the same table.
"$G" keys --markdown >"$T/keys.md"
sed -n '/<!-- keys:begin -->/,/<!-- keys:end -->/p' README.md | sed '1d;$d' >"$T/readme.md"
if ! diff -u "$T/readme.md" "$T/keys.md" >"$T/diff"; then
	echo "FAIL: README key reference differs from 'gradsync keys --markdown' (regenerate with tests/cli/update_readme_keys.sh):"
	head -n 20 "$T/diff"; fails=$((fails + 1))
fi

# The README's example experiment is conf/quickstart.ini, less its opening comments.
sed -n '/^Example (`conf\/quickstart.ini`/,/^```$/p' README.md | sed '1,3d;$d' >"$T/readme_qs.ini"
grep -v '^;' conf/quickstart.ini >"$T/qs.ini"
if ! diff -u "$T/readme_qs.ini" "$T/qs.ini" >"$T/diff"; then
	echo "FAIL: README's conf/quickstart.ini example differs from the file:"
	head -n 20 "$T/diff"; fails=$((fails + 1))
fi

# Static link: only glibc's own libraries (a sanitizer build links its runtime: skipped).
if grep -q -- '-fsanitize' "${BUILDDIR:-build}/config.ninja" 2>/dev/null; then
	echo "skip: static-link check (sanitizer build links libasan/libubsan)"
elif ldd "$G" >"$T/ldd" 2>&1; then
	others=$(grep -v -E 'linux-vdso|libc\.so|libm\.so|libdl\.so|librt\.so|libpthread\.so|ld-linux' "$T/ldd")
	[ -z "$others" ] || { echo "FAIL: non-glibc shared libraries: $others"; fails=$((fails + 1)); }
fi

[ "$fails" = 0 ] && echo "cli: all checks passed"
exit $((fails > 0))
