#!/bin/sh
# /init of the test VMs (tests/softroce/lib.sh): load the modules the bed packed; with a NIC
# (the Soft-RoCE VMs), bring eth0 up at MTU 9000 and create rxe0; run /scenario.sh ROLE PEER_IP
# (kernel arg gs.env.NAME=V,W exports NAME="V W" to it), print "GS_EXIT n" for the host and
# power off. A VM without a NIC (the emulated cluster's) makes its own links.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
. /etc/sr_modules

ip=10.0.0.1/24
role=a
peer=
for kv in $(cat /proc/cmdline); do
	case $kv in
	gs.ip=*) ip=${kv#gs.ip=} ;;
	gs.role=*) role=${kv#gs.role=} ;;
	gs.peer=*) peer=${kv#gs.peer=} ;;
	gs.env.*=*) # gs.env.NAME=a,b -> NAME="a b" for the scenario
		kv=${kv#gs.env.}
		export "${kv%%=*}=$(echo "${kv#*=}" | tr , ' ')" ;;
	esac
done

fail() {
	echo "GS_FAIL $*"
	echo "GS_EXIT 99"
	reboot -f
}

for m in $SR_MODULES; do
	insmod /lib/modules/$m.ko || fail "insmod $m"
done
ip link set lo up
if [ -e /sys/class/net/eth0 ]; then
	ip link set eth0 mtu 9000 || fail "eth0 mtu 9000"
	ip link set eth0 up || fail "eth0 up"
	ip addr add "$ip" dev eth0 || fail "ip addr $ip"
	rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0"
	# the port turns ACTIVE once the netdev carrier is seen; give it a moment
	for i in 1 2 3 4 5 6 7 8 9 10; do
		grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state 2>/dev/null && break
		sleep 0.2
	done
	echo "GS_READY role=$role ip=$ip $(cat /sys/class/infiniband/rxe0/ports/1/state)"
else
	echo "GS_READY role=$role (no NIC)"
fi
cd /work
/bin/sh /scenario.sh "$role" "$peer"
rc=$?
# rxe's own counters, the nonzero ones: retransmits and sequence errors say what the link
# and the soft device did while the scenario ran (a stall with none of them is the device's)
if [ -d /sys/class/infiniband/rxe0/ports/1/hw_counters ]; then
	cd /sys/class/infiniband/rxe0/ports/1/hw_counters &&
		echo "RXE role=$role $(for f in *; do v=$(cat "$f"); [ "$v" = 0 ] || printf '%s=%s ' "$f" "$v"; done)"
	cd /work
fi
echo "GS_EXIT $rc"
sync
reboot -f
