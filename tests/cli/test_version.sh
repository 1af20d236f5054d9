#!/bin/sh
# The build's identity (README "Build options"): `gradsync version` names the build-id
# that readelf reads from the file, and report.json records it; build.ninja's stamp rule
# (tools/build_stamp.sh), run on a scratch git repository with a consumer of the stamp
# (nothing of gradsync is built), stamps the new commit after a commit, flags modified
# sources -dirty, rebuilds nothing when nothing changed ("ninja: no work to do" twice),
# and says "unknown" outside a checkout of its own.
set -u
. "$(dirname "$0")/../lib.sh"
test_begin
SRC=$PWD
for tool in readelf git ninja; do
	command -v $tool >/dev/null 2>&1 || { echo "$tool not installed: not checked"; exit 77; }
done

# --- the build-id: gradsync version, readelf -n, report.json
elf=$(readelf -n "$G" | sed -n 's/^ *Build ID: \([0-9a-f]*\)$/\1/p')
mine=$("$G" version | sed -n 's/^build-id: //p')
[ ${#elf} = 40 ] || fail "readelf -n shows no sha1 build-id: '$elf'"
[ "$mine" = "$elf" ] || fail "gradsync version says build-id '$mine', readelf -n '$elf'"
cat >"$T/ver.ini" <<INI
[experiment]
name = ver
output_dir = $T/results
[collective]
sizes = 4KiB
iterations = 2
warmup = 0
[launch]
local_ranks = 2
INI
"$G" run "$T/ver.ini" >"$T/run.log" 2>&1 || fail "run: $(tail -n 3 "$T/run.log")"
python3 - "$T"/results/ver-*/report.json "$elf" <<'PY' || fail "report.json's gradsync.build_id"
import json, sys
got = json.load(open(sys.argv[1]))["gradsync"]["build_id"]
assert got == sys.argv[2], (got, sys.argv[2])
PY
echo "build-id: version, readelf -n and report.json agree: $elf"

# --- the stamp, on a scratch repository: build.ninja's own rule, and a consumer of it
R=$T/repo
mkdir -p "$R/src" "$R/tools"
cp "$SRC/tools/build_stamp.sh" "$R/tools/"
echo 9.9.9 >"$R/VERSION"
echo 'int x;' >"$R/src/a.c"
{
	awk '/^rule stamp$/ { on = 1 } on && /^$/ { exit } on' "$SRC/build.ninja"
	printf 'rule copy\n  command = cp $in $out\n'
	printf 'build stamp.h: stamp tools/build_stamp.sh\nbuild user: copy stamp.h\n'
} >"$R/build.ninja"
grep -q 'restat = 1' "$R/build.ninja" || fail "build.ninja's stamp rule not found or not restat"
cd "$R" || exit 1
gitc() { git -c user.name=t -c user.email=t@example.org "$@" >/dev/null; }
gitc init -q
gitc add -A
gitc commit -q -m one
# stamp COMMIT: the header names COMMIT and version 9.9.9
stamp() {
	grep -qxF "#define GS_COMMIT \"$1\"" stamp.h && grep -qxF '#define GS_VERSION "9.9.9"' stamp.h ||
		fail "$2: stamp.h is not commit $1: $(grep GS_COMMIT stamp.h)"
}
# idle WHAT: ninja twice has nothing to do
idle() {
	for i in 1 2; do
		out=$(ninja 2>&1)
		[ "$out" = "ninja: no work to do." ] || fail "$1: ninja run $i: $out"
	done
}
ninja >/dev/null || fail "first ninja"
stamp "$(git rev-parse --short=12 HEAD)" "first build"
idle "unchanged tree"
echo 'int y;' >>src/a.c
out=$(ninja)
stamp "$(git rev-parse --short=12 HEAD)-dirty" "modified source"
echo "$out" | grep -q "cp stamp.h user" || fail "modified source: the stamp's user not rebuilt: $out"
idle "modified tree, built"
gitc commit -q -a -m two
ninja >/dev/null
stamp "$(git rev-parse --short=12 HEAD)" "after a commit, without configure"
idle "committed tree, built"
# the sources touched, their content the commit's: the stamp runs, its user is spared
sleep 1
touch src/a.c
out=$(ninja)
echo "$out" | grep -q "cp stamp.h user" && fail "touched source: the stamp's user rebuilt: $out"
echo "$out" | grep -q "STAMP" || fail "touched source: the stamp did not look: $out"
idle "touched tree, built"
# no git checkout of its own: a tarball, also one unpacked inside another repository
mkdir "$R/tarball"
cp -r "$R/src" "$R/tools" "$R/VERSION" "$R/build.ninja" "$R/tarball/"
cd "$R/tarball" || exit 1
ninja >/dev/null || fail "tarball: ninja"
stamp unknown "a tarball inside another repository"
idle "tarball"
echo "stamp: commit after a commit, -dirty, unknown in a tarball; unchanged trees: no work to do"

[ $fails = 0 ] && echo "version: all passed"
exit $((fails > 0))
