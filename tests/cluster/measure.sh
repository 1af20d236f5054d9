#!/bin/sh
# The validation of `gradsync predict` on the emulated cluster (tests/cluster/RESULTS.md):
# a one-host run (the inside-a-host tier) and the 2-host run are the fit; 4 and 8 hosts
# (1 rank each) and 2 hosts x 2 ranks are measured to compare with the projection.
# usage: tests/cluster/measure.sh OUTDIR [bed options; default --rate 50mbit]
# Takes about 25 minutes at 50 Mbit/s. OUTDIR/<layout>/ holds each layout's runs, and
# OUTDIR/predict.txt what `gradsync predict` makes of them.
set -eu
O=$(mkdir -p "$1" && readlink -f "$1"); shift
[ $# -gt 0 ] || set -- --rate 50mbit
B=$(dirname "$0")/bed.sh
G=${GRADSYNC:-build/gradsync}
mkdir -p "$O/1x2"
GS_IF=lo GS_ITERS=20 GS_ALGOS="ring, tree, rhd, hierarchical" "$G" -q run "$(dirname "$0")/sweep.ini" --out "$O/1x2" >"$O/1x2.log" 2>&1
for lay in 2x1 4x1 8x1 2x2; do
	h=${lay%x*} l=${lay#*x}
	algos="ring, tree, rhd"
	[ "$l" -gt 1 ] && algos="ring, tree, rhd, hierarchical"
	mkdir -p "$O/$lay"
	GS_ALGOS=$algos "$B" --hosts "$h" --ranks-per-host "$l" --out "$O/$lay" "$@" \
		"$(dirname "$0")/sweep.ini" >"$O/$lay.sweep.log" 2>&1
	"$B" --hosts "$h" --ranks-per-host "$l" --out "$O/$lay" "$@" \
		"$(dirname "$0")/resnet50.ini" >"$O/$lay.resnet50.log" 2>&1
	echo "$lay done" >&2
done
# fit on the one-host and 2-host runs only; everything else is compared against
cmp=
for d in "$O"/4x1/* "$O"/8x1/* "$O"/2x2/*; do cmp="$cmp --compare $d"; done
# shellcheck disable=SC2086
"$G" predict "$O"/1x2/* "$O"/2x1/* $cmp --hosts 2,4,8,16 --ranks-per-host 1,2 \
	--size 64MiB --fit-from 1MiB >"$O/predict.txt" 2>&1 || true
cat "$O/predict.txt"
