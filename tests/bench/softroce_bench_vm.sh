#!/bin/sh
# In-VM part of tests/bench/bench_softroce.sh (busybox sh; run as /scenario.sh ROLE PEER).
# VM a (10.0.0.1) holds rank 0 and ib_write_bw's client, VM b (10.0.0.2) rank 1 and
# ib_write_bw's server, so both tools move data a -> b. Results go to /tmp/results; VM a
# prints what the host needs as "SRB ..." lines:
#   SRB wbw rep=K size=S tool=gs GBps=X          (one-way write bandwidth)
#   SRB ib begin|end rep=K size=S tool=ib|ibbi    (ib_write_bw's output between them)
#   SRB ar rep=K size=S busbw=X                  (AllReduce over roce)
#   SRB cpu transport=T size=S busbw=X cpu_s_per_GB=Y host_cpu_s_per_GB=Z
# Settings (kernel args gs.env.NAME=V,W): SRB_SIZES, SRB_TOTAL, SRB_REPS, SRB_PARTS
# ("wbw ar cpu"), SRB_CQ (cq_mode of both ranks), SRB_CQ_A / SRB_CQ_B (one VM's rank).
role=$1 peer=$2 rc=0
sizes=${SRB_SIZES:-65536 1048576}
total=${SRB_TOTAL:-67108864}
reps=${SRB_REPS:-3}
parts=${SRB_PARTS:-wbw ar cpu}
if [ "$role" = a ]; then
	rank=0 cq=${SRB_CQ_A:-${SRB_CQ:-event}}
else
	rank=1 cq=${SRB_CQ_B:-${SRB_CQ:-event}}
fi
RDV=10.0.0.1 SRV=10.0.0.2
n=0 t0=$(date +%s) big=0
for s in $sizes; do [ "$s" -gt $big ] && big=$s; done
mkdir -p /tmp/results
echo "SRB vm role=$role rank=$rank cq_mode=$cq cpus=$(grep -c ^processor /proc/cpuinfo)" \
	"sizes='$sizes' total=$total reps=$reps parts='$parts'"

has() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
mark() { echo "SRB time t=$(($(date +%s) - t0)) $*"; }

# ibwbw REP SIZE TOOL [ARG...]: one ib_write_bw measurement (TOOL names it: ib, or ibbi
# with -b, both directions at once); server on VM b, client on VM a retrying
# until the server listens (each measurement on its own port). Their output goes straight
# to the console (line-buffered there, so a run killed by timeout still shows how far it
# got); the host takes the result row between "SRB ib begin" and "SRB ib end".
ibwbw() {
	local k=$1 s=$2 tool=$3 it=$((total / $2)) e=1 t1 t2 i
	shift 3
	n=$((n + 1))
	set -- ib_write_bw -d rxe0 -i 1 -x 1 -s "$s" -n "$it" -p $((18500 + n)) -F --report_gbits "$@"
	echo "SRB ib begin rep=$k size=$s tool=$tool"
	if [ "$role" = b ]; then
		timeout 90 "$@"
		e=$?
	else
		t1=$(date +%s)
		for i in $(seq 200); do
			t2=$(date +%s)
			timeout 90 "$@" $SRV
			e=$?
			# a refused connection fails at once: retry that for up to 60 s, nothing else
			[ $e -ne 0 ] && [ $(($(date +%s) - t2)) -le 2 ] &&
				[ $(($(date +%s) - t1)) -lt 60 ] || break
			sleep 0.2
		done
	fi
	echo "SRB ib end rep=$k size=$s tool=$tool exit=$e"
	[ $e -eq 0 ] || { rc=1; echo "SRB error ib_write_bw role=$role size=$s exit=$e"; }
}

# gsrun TAG INI SED...: gradsync on its own rendezvous port; rank 0's run directory in $dir
gsrun() {
	local tag=$1 ini=$2 e
	shift 2
	n=$((n + 1))
	sed -e "s/^cq_mode = .*/cq_mode = $cq/" "$@" "/work/$ini" >"/tmp/$tag.ini"
	dir=
	GRADSYNC_TOKEN=softroce-bench timeout 200 gradsync run "/tmp/$tag.ini" --out "/tmp/results/$tag" --rank $rank \
		--world-size 2 --rendezvous $RDV:$((18700 + n)) >/tmp/gs.out 2>&1
	e=$?
	sed 's/^/  /' /tmp/gs.out
	if [ $e -ne 0 ]; then
		rc=1
		echo "SRB error gradsync $tag exit $e"
		return 1
	fi
	[ "$role" = a ] || return 1
	dir=$(ls -d /tmp/results/$tag/*/ 2>/dev/null | tail -1)
	dir=${dir%/} # gradsync report names the run after the last path component
	[ -f "$dir/report.csv" ] || { rc=1; echo "SRB error gradsync $tag: no report.csv"; return 1; }
}

# csv DIR: "transport op size busbw cpu_s_per_GB host_cpu_s_per_GB" per collective row
# (the quoted case name holds commas: dropped before splitting)
csv() {
	sed 's/"[^"]*"/case/g' "$1/report.csv" | awk -F, '
		function v(x) { return x == "" ? "-" : x }
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$1 == "collective" { print $c["transport"], $c["op"], $c["size"], v($c["busbw_GBps"]),
			v($c["cpu_s_per_GB"]), v($c["host_cpu_s_per_GB"]) }'
}

for k in $(seq "$reps"); do
	if has wbw; then
		for s in $sizes; do
			ibwbw "$k" "$s" ib
		done
		mark "rep=$k ib_write_bw done"
		for s in $sizes; do
			gsrun "wbw_r${k}_$s" softroce_wbw.ini -e "s/^sizes = .*/sizes = $s/" \
				-e "s/^iterations = .*/iterations = $(((total + s - 1) / s))/" || continue
			csv "$dir" | while read -r tp op size bw cpu host; do
				echo "SRB wbw rep=$k size=$size tool=gs GBps=$bw cpu_s_per_GB=$cpu" \
					"host_cpu_s_per_GB=$host"
			done
		done
		mark "rep=$k gradsync write_bw done"
	fi
	if has ar; then
		if gsrun "ar_r$k" softroce_allreduce.ini; then
			csv "$dir" | while read -r tp op size bw cpu host; do
				echo "SRB ar rep=$k size=$size busbw=$bw cpu_s_per_GB=$cpu host_cpu_s_per_GB=$host"
			done
		fi
		# the bed's own limit with traffic both ways at once, as in the AllReduce
		ibwbw "$k" "$big" ibbi -b
		mark "rep=$k allreduce, ib_write_bw -b done"
	fi
done
if has cpu; then
	if gsrun cpu softroce_cpu.ini; then
		echo "== gradsync report $dir"
		gradsync report "$dir"
		csv "$dir" | while read -r tp op size bw cpu host; do
			echo "SRB cpu transport=$tp size=$size busbw=$bw cpu_s_per_GB=$cpu host_cpu_s_per_GB=$host"
		done
	fi
	mark "cpu matrix done"
fi
exit $rc
