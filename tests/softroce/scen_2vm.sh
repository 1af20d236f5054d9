#!/bin/sh
# Scenario 2 (one rank in each of two VMs): verbs ops directly with bandwidth figures,
# ib_write_bw at the same message sizes for reference, then gradsync over the same link.
role=$1 peer=$2 rc=0
sizes=${SR_BW_SIZES:-65536 1048576}
total=${SR_BW_TOTAL:-134217728}
# the receiver sleeps on completion events (like ib_write_bw's passive side): with one
# vCPU a busy-polling receiver takes the CPU rxe itself needs. Both cq modes are covered.
if [ "$role" = a ]; then rank=0 addr=10.0.0.1 mode=; else rank=1 addr=$peer mode=--event; fi
echo "== verbs_pingpong rank $rank"
timeout 120 verbs_pingpong --rank $rank --world 2 --addr $addr:18600 --device rxe0:1 \
	--bw "$(echo $sizes | tr ' ' ,)" --bw-total $total --window 16 $mode ${SR_PP_ARGS:-} || rc=1
for size in $sizes; do
	iters=$((total / size))
	echo "== ib_write_bw size $size iters $iters"
	if [ "$role" = a ]; then
		timeout 60 ib_write_bw -d rxe0 -i 1 -x 1 -s $size -n $iters -F --report_gbits || rc=1
	else
		ok=0
		for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
			sleep 0.3
			if timeout 60 ib_write_bw -d rxe0 -i 1 -x 1 -s $size -n $iters -F \
				--report_gbits $peer >/tmp/bw.out 2>&1; then ok=1; break; fi
		done
		cat /tmp/bw.out
		[ $ok = 1 ] || rc=1
	fi
done
if [ -x /bin/gradsync ]; then
	echo "== gradsync run roce_2vm.ini rank $rank"
	sleep 0.5
	timeout 120 gradsync run roce_2vm.ini --rank $rank --world-size 2 \
		--rendezvous 10.0.0.1:18700 || rc=1
fi
exit $rc
