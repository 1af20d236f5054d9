#!/bin/sh
# Runs every test: the cmocka unit binaries in BUILDDIR/tests/, then each executable
# tests/<area>/test_*.sh (exit 0 pass, 77 skip, anything else fail). Prints one
# closing line "N passed, N failed, N skipped" and exits non-zero on any failure.
# GRADSYNC_TESTS=pattern runs only the matching tests.
set -u
BUILDDIR=${1:-build}
export GRADSYNC=$PWD/$BUILDDIR/gradsync BUILDDIR
pass=0 fail=0 skip=0 failed=
LOGDIR=$BUILDDIR/test-logs
mkdir -p "$LOGDIR"
# Sanitizer reports are also written to files (log_path), whatever a test does with the
# stderr of gradsync and its ranks: any report left there after a test fails that test.
# A sanitizer build runs with the strict options unless the caller chose its own.
SANDIR=$PWD/$LOGDIR/sanitizer
rm -rf "$SANDIR"
mkdir -p "$SANDIR"
if grep -q -- '-fsanitize' "$BUILDDIR/config.ninja" 2>/dev/null; then
	: "${ASAN_OPTIONS=halt_on_error=1:detect_stack_use_after_return=1}"
	: "${UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1}"
fi
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$SANDIR/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$SANDIR/ubsan"

run_one() {
	name=$1
	shift
	case "$name" in *${GRADSYNC_TESTS:-}*) ;; *) return ;; esac
	start=$(date +%s)
	log="$LOGDIR/$(echo "$name" | tr / _).log"
	"$@" >"$log" 2>&1
	st=$?
	dur=$(( $(date +%s) - start ))
	if [ -n "$(ls -A "$SANDIR")" ]; then
		# cat, not mv: a rank may still be writing. A report (ERROR:, SUMMARY:, a
		# runtime error) fails the test whatever its status; a file without one is
		# the sanitizer about itself (LeakSanitizer's "Unable to get registers from
		# thread N" when a thread is exiting as a signal ends the process: it skipped
		# its leak check, it found nothing), kept in the log, not a failure
		{ echo "--- sanitizer reports:"; cat "$SANDIR"/*; } >>"$log"
		if cat "$SANDIR"/* | grep -q -E 'ERROR: |SUMMARY: |runtime error:'; then
			case $st in 0|77) st=99 ;; esac
		fi
		rm -f "$SANDIR"/*
		grep -m 3 -E '^SUMMARY: |runtime error:' "$log" | sed 's/^/      /'
	fi
	case $st in
	0) pass=$((pass + 1)); echo "PASS  $name (${dur}s)" ;;
	77) skip=$((skip + 1)); echo "SKIP  $name: $(tail -n 1 "$log")" ;;
	*) fail=$((fail + 1)); failed="$failed $name"; echo "FAIL  $name (exit $st, ${dur}s)"
	   tail -n 30 "$log" | sed 's/^/      /' ;;
	esac
}

for t in "$BUILDDIR"/tests/*_test; do
	[ -x "$t" ] || continue
	run_one "$(basename "$t")" "$t"
done
for t in tests/*/test_*.sh; do
	[ -x "$t" ] || continue
	run_one "$(basename "$(dirname "$t")")/$(basename "$t" .sh)" "$t"
done

[ -n "$failed" ] && echo "failed:$failed (logs in $LOGDIR/)"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
