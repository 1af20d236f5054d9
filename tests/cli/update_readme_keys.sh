#!/bin/sh
# Regenerates the key reference between the markers in README.md from `gradsync keys --markdown`.
set -eu
G=${GRADSYNC:-build/gradsync}
tmp=$(mktemp)
"$G" keys --markdown >"$tmp"
awk -v f="$tmp" '
	/<!-- keys:begin -->/ { print; while ((getline l < f) > 0) print l; skip = 1; next }
	/<!-- keys:end -->/ { skip = 0 }
	!skip { print }' README.md >README.md.new
mv README.md.new README.md
rm -f "$tmp"
