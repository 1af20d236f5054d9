#!/bin/sh
# The command line end to end: verbs, exit codes, the key reference in the README
# against `gradsync keys`, every conf/*.ini parses, and the static link.
set -u
G=${GRADSYNC:-build/gradsync}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0
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
check "unknown verb" 2 "$G" frobnicate
expect_err "unknown verb" "unknown verb 'frobnicate'"
check "keys" 0 "$G" keys
check "keys section" 0 "$G" keys transport
grep -q 'gid_index' "$T/out" || { echo "FAIL: keys transport lacks gid_index"; fails=$((fails + 1)); }
check "keys bad section" 2 "$G" keys nope
check "check missing arg" 2 "$G" check

# Every shipped experiment parses.
for f in conf/*.ini; do
	check "check $f" 0 "$G" check "$f"
done
check "quickstart matrix" 0 "$G" check conf/quickstart.ini
grep -q 'case 2   transport=shm' "$T/out" || { echo "FAIL: quickstart cases"; cat "$T/out"; fails=$((fails + 1)); }

# Bad files: one line FILE:LINE: section.key: message, exit 2.
printf '[workload]\nbucket_capp = 25MiB\n' >"$T/bad.ini"
check "unknown key" 2 "$G" check "$T/bad.ini"
expect_err "unknown key" "bad.ini:2: workload.bucket_capp: unknown key (did you mean 'bucket_cap'?)"
[ "$(wc -l <"$T/err")" = 1 ] || { echo "FAIL: error is not one line"; fails=$((fails + 1)); }
printf '[matrix]\nchunk_size = 1MiB, 3MiB\nsizes = 1MiB\n' >"$T/bad2.ini"
check "unsweepable" 2 "$G" check "$T/bad2.ini"
expect_err "unsweepable" "bad2.ini:3: matrix.sizes: collective.sizes may not be swept"
check "missing file" 2 "$G" check "$T/none.ini"
expect_err "missing file" "none.ini: cannot read: No such file or directory"

# The README's key reference is generated from the same table.
"$G" keys --markdown >"$T/keys.md"
sed -n '/<!-- keys:begin -->/,/<!-- keys:end -->/p' README.md | sed '1d;$d' >"$T/readme.md"
if ! diff -u "$T/readme.md" "$T/keys.md" >"$T/diff"; then
	echo "FAIL: README key reference differs from 'gradsync keys --markdown' (regenerate with tests/cli/update_readme_keys.sh):"
	head -n 20 "$T/diff"; fails=$((fails + 1))
fi

# Static link: only glibc's own libraries.
if ldd "$G" >"$T/ldd" 2>&1; then
	others=$(grep -v -E 'linux-vdso|libc\.so|libm\.so|libdl\.so|librt\.so|libpthread\.so|ld-linux' "$T/ldd")
	[ -z "$others" ] || { echo "FAIL: non-glibc shared libraries: $others"; fails=$((fails + 1)); }
fi

[ "$fails" = 0 ] && echo "cli: all checks passed"
exit $((fails > 0))
