#!/bin/sh
# The layering of src/ (README "Layout"): lists every #include "DIR/..." that crosses a
# folder and fails on one that reaches a higher layer than its own. A layer may include
# any layer of a lower rank; folders of one rank stand beside each other and may not
# include one another. -v prints every crossing include with its verdict.
cd "$(dirname "$0")/../.." || exit 1
verbose=${1:-}

rank() {
	case $1 in
	util) echo 0 ;;
	gpu | launch) echo 1 ;;
	topo | kernels) echo 2 ;; # kernels/ implements gpu/kernels.h
	transport) echo 3 ;;
	coll) echo 4 ;;
	workload) echo 5 ;;
	report) echo 6 ;;
	doctor) echo 7 ;;
	config) echo 8 ;;
	run) echo 9 ;;
	cmd) echo 10 ;;
	main.c) echo 11 ;;
	*) echo "" ;;
	esac
}

bad=0
# FILE:LINE:#include "DIR/..." for every file of src/ and kernels/
out=$(grep -rnoE '^#include "[a-z_]+/[^"]+"' src kernels | while IFS=: read -r f ln inc; do
	case $f in src/*) from=${f#src/} ;; *) from=$f ;; esac
	from=${from%%/*}
	to=${inc#\#include \"}
	to=${to%%/*}
	[ "$from" = "$to" ] && continue
	rf=$(rank "$from") rt=$(rank "$to")
	if [ -z "$rf" ] || [ -z "$rt" ]; then
		echo "UNKNOWN $f:$ln: $from -> $to (add the folder to tests/layers/test_layers.sh)"
	elif [ "$rt" -ge "$rf" ]; then
		echo "UPWARD $f:$ln: $from ($rf) includes $to ($rt)"
	elif [ -n "$verbose" ]; then
		echo "ok $f:$ln: $from -> $to"
	fi
done)
[ -n "$out" ] && echo "$out"
echo "$out" | grep -qE '^(UPWARD|UNKNOWN)' && bad=1
[ "$bad" = 0 ] && echo "layers: no include reaches up"
exit $bad
