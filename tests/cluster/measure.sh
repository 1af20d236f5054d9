#!/bin/sh
# The validation of `gradsync predict` on the emulated cluster (tests/cluster/RESULTS.md):
# a one-host run (the inside-a-host tier) and the 2-host run are the fit; 4 and 8 hosts
# (1 rank each) and 2 hosts x 2 ranks are measured to compare with the projection.
# usage: tests/cluster/measure.sh OUTDIR [bed options; default --rate 50mbit]
#   (in a VM with a real link delay: tests/cluster/vm.sh measure OUTDIR [bed options])
# env: LAYOUTS ("1x2 2x1 4x1 8x1 2x2": hosts x ranks per host; 1x2 and 2x1 are the fit),
#      GS_SIZES (the sweep's sizes, sweep.ini), FIT_FROM (1MiB: the smallest size fitted),
#      PREDICT_SIZES (64MiB: one projection table per size), ALGOS ("ring, tree, rhd";
#      hierarchical is added where a host has several ranks), WORKLOAD (1: the ResNet-50
#      step at each layout; 0: collectives only)
# Takes about 25 minutes at 50 Mbit/s. OUTDIR/<layout>/ holds each layout's runs, and
# OUTDIR/predict.txt what `gradsync predict` makes of them.
set -eu
O=$(mkdir -p "$1" && readlink -f "$1"); shift
[ $# -gt 0 ] || set -- --rate 50mbit
HERE=$(dirname "$0")
B=$HERE/bed.sh
G=${GRADSYNC:-build/gradsync}
LAYOUTS=${LAYOUTS:-1x2 2x1 4x1 8x1 2x2}
# CPU pressure (the share of time some runnable task waited for a CPU) over one run
psi() { awk '/^some/ { sub("total=", "", $5); print $5 }' /proc/pressure/cpu 2>/dev/null; }
fit= cmp=
for lay in $LAYOUTS; do
	h=${lay%x*} l=${lay#*x}
	algos=${ALGOS:-ring, tree, rhd}
	[ "$l" -gt 1 ] && algos="$algos, hierarchical"
	mkdir -p "$O/$lay"
	p0=$(psi) t0=$(date +%s)
	# a run that fails is said and left out; the others still measure
	if [ "$h" = 1 ]; then
		# the inside-a-host tier: one host, its ranks over shm; many iterations, it is quick
		GS_ITERS=20 GS_ALGOS=$algos "$B" --hosts 1 --ranks-per-host "$l" --out "$O/$lay" "$@" \
			"$HERE/sweep.ini" >"$O/$lay.sweep.log" 2>&1 || echo "$lay: sweep exited $?" >&2
	else
		GS_ALGOS=$algos "$B" --hosts "$h" --ranks-per-host "$l" --out "$O/$lay" "$@" \
			"$HERE/sweep.ini" >"$O/$lay.sweep.log" 2>&1 || echo "$lay: sweep exited $?" >&2
		[ "${WORKLOAD:-1}" = 0 ] || "$B" --hosts "$h" --ranks-per-host "$l" --out "$O/$lay" \
			"$@" "$HERE/resnet50.ini" >"$O/$lay.resnet50.log" 2>&1 ||
			echo "$lay: resnet50 exited $?" >&2
	fi
	p1=$(psi) t1=$(date +%s)
	echo "$lay done $(date +%T), $((t1 - t0)) s, load $(cut -d' ' -f1-3 /proc/loadavg)${p0:+, cpu pressure $(((p1 - p0) / 10000 / (t1 - t0 + (t1 == t0))))%}" >&2
	# fit on the one-host and 2-host runs only; everything else is compared against
	for d in "$O/$lay"/*; do
		[ -f "$d/report.json" ] || continue
		case $lay in 1x*|2x1) fit="$fit $d" ;; *) cmp="$cmp --compare $d" ;; esac
	done
done
: >"$O/predict.txt"
for size in ${PREDICT_SIZES:-64MiB}; do
	# shellcheck disable=SC2086
	"$G" predict $fit $cmp --hosts 2,4,8,16 --ranks-per-host 1,2 \
		--size "$size" --fit-from "${FIT_FROM:-1MiB}" >>"$O/predict.txt" 2>&1 || true
done
cat "$O/predict.txt"
