#!/bin/sh
# Builds the libFuzzer harnesses of tests/fuzz/ in build-fuzz/ (clang, ASan, UBSan) and runs
# each on a copy of its seed corpus for SECONDS (default 60), both at once. Prints the
# executions of each; exits 1 on any crash, sanitizer report, leak, timeout or OOM, leaving
# the input that caused it in build-fuzz/fuzz-logs/.
# usage: tests/fuzz/run.sh [SECONDS]
set -u
cd "$(dirname "$0")/../.." || exit 1
secs=${1:-60}
B=${FUZZ_BUILDDIR:-build-fuzz}
L=$B/fuzz-logs
./configure --builddir="$B" --fuzz --without-cuda >/dev/null || exit 1
ninja -f "$B/build.ninja" fuzz >"$B/fuzz-build.log" 2>&1 || { tail -n 30 "$B/fuzz-build.log"; exit 1; }
rm -rf "$L"
mkdir -p "$L"
export ASAN_OPTIONS=halt_on_error=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# The INI harness gets a dictionary of the language's words: sections, keys, choices, units.
G=${GRADSYNC:-build/gradsync}
dict=
if [ -x "$G" ]; then
	"$G" keys | awk '
		/^\[/ { printf "\"%s\"\n", $1; next }
		/^  [a-z_]+ / { printf "\"%s = \"\n", $1
			for (i = 1; i <= NF; i++) if ($i == "allowed")
				for (j = i + 1; j <= NF; j++) { w = $j; gsub(/[,"]/, "", w)
					if (w != "" && w !~ /^\(/) printf "\"%s\"\n", w } }
		END { printf "\"include = \"\n\"${\"\n\":-\"\n\"..\"\n\"KiB\"\n\"MiB\"\n\"[matrix]\"\n\"baseline = \"\n\"exclude = \"\n" }' \
		| sed 's/\\/\\\\/g' | sort -u >"$L/ini.dict"
	dict=-dict=$L/ini.dict
fi

# max_len per harness: an experiment file of a few KiB; a wire stream of a few frames
for h in ini:8192 wire:65536; do
	name=${h%%:*}
	cp -r "tests/fuzz/corpus/$name" "$L/corpus-$name"
	d=
	[ "$name" = ini ] && d=$dict
	# shellcheck disable=SC2086
	nice "$B/fuzz/fuzz_$name" $d -max_total_time="$secs" -max_len="${h#*:}" -timeout=10 \
		-rss_limit_mb=2048 -artifact_prefix="$L/$name-" -print_final_stats=1 \
		"$L/corpus-$name" >"$L/$name.log" 2>&1 &
	echo $! >"$L/$name.pid"
done
pass=0 fail=0
for name in ini wire; do
	if wait "$(cat "$L/$name.pid")"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL  fuzz_$name:"
		grep -E -A 12 'ERROR: |runtime error:|==ERROR|SUMMARY|crash-|timeout-|oom-' "$L/$name.log" | head -n 40 | sed 's/^/      /'
	fi
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$L/$name.log")
	echo "fuzz_$name: ${execs:-?} executions in ${secs}s, corpus $(ls "$L/corpus-$name" | wc -l) inputs"
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" = 0 ]
