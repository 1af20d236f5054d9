#!/bin/sh
# Scenario 2 (one rank in each of two VMs): verbs ops directly with bandwidth figures,
# ib_write_bw at the same message sizes for reference, then gradsync over the same link.
role=$1 peer=$2 rc=0
sizes=${SR_BW_SIZES:-65536 1048576}
total=${SR_BW_TOTAL:-134217728}
lat_sizes=${SR_LAT_SIZES:-8 65536}
# the receiver sleeps on completion events (like ib_write_bw's passive side): with one
# vCPU a busy-polling receiver takes the CPU rxe itself needs. Both cq modes are covered.
if [ "$role" = a ]; then rank=0 addr=10.0.0.1 mode=; else rank=1 addr=$peer mode=--event; fi
echo "== verbs_pingpong rank $rank"
timeout 120 verbs_pingpong --rank $rank --world 2 --addr $addr:18600 --device rxe0:1 \
	--bw "$(echo $sizes | tr ' ' ,)" --bw-total $total --window 16 \
	--lat "$(echo $lat_sizes | tr ' ' ,)" $mode ${SR_PP_ARGS:-} || rc=1
# perftest CMD...: the server side on VM a, the client on VM b retrying until it listens
perftest() {
	if [ "$role" = a ]; then
		timeout 60 "$@" || rc=1
		return
	fi
	ok=0
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		sleep 0.3
		if timeout 60 "$@" $peer >/tmp/pt.out 2>&1; then ok=1; break; fi
	done
	cat /tmp/pt.out
	[ $ok = 1 ] || rc=1
}
for size in $sizes; do
	echo "== ib_write_bw size $size iters $((total / size))"
	perftest ib_write_bw -d rxe0 -i 1 -x 1 -s $size -n $((total / size)) -F --report_gbits
done
for size in $lat_sizes; do
	echo "== ib_write_lat size $size"
	perftest ib_write_lat -d rxe0 -i 1 -x 1 -s $size -n 200 -F
done
if [ -x /bin/gradsync ]; then
	echo "== gradsync run roce_2vm.ini rank $rank"
	sleep 0.5
	# both VMs run this script: a shared secret in the environment (never in argv)
	GRADSYNC_TOKEN=softroce-2vm timeout 120 gradsync run roce_2vm.ini --rank $rank \
		--world-size 2 --rendezvous 10.0.0.1:18700 || rc=1
fi
exit $rc
