#!/bin/sh
# Not part of `ninja test`: renders the sweep fixtures' pages (10, 72 and 300 cases with
# long names) in headless Chromium for a look, as PNGs in DIR (default /tmp/gradsync-shots).
# Needs chromium (apt-get install chromium) and build/tests/report_html_test.
set -eu
OUT=${1:-/tmp/gradsync-shots}
B=${BUILDDIR:-build}
mkdir -p "$OUT"
GS_FIXTURE_OUT="$OUT" "$B/tests/report_html_test" >/dev/null
for n in 10 72 300; do
	chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run \
		--user-data-dir="$(mktemp -d)" --screenshot="$OUT/sweep$n.png" \
		--window-size=1400,16000 "file://$(realpath "$OUT")/sweep$n.html" 2>/dev/null
	echo "$OUT/sweep$n.png"
done
