# Shell helpers every end-to-end test may source: `. "$(dirname "$0")/../lib.sh"`.

# The prologue of a test: G (the binary, absolute: a test may cd elsewhere), T (a scratch
# directory, removed at exit), fails and fail(). Call it at the top level of the test, not
# in a subshell: it sets the EXIT trap. A test that must also undo something else at exit
# sets its own trap after it, one that still removes "$T".
test_begin() {
	G=$(readlink -f "${GRADSYNC:-build/gradsync}")
	T=$(mktemp -d)
	trap 'rm -rf "$T"' EXIT
	fails=0
}
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
