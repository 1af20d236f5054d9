# The qemu VM plumbing of the test beds: fetch a Debian 6.1 kernel, build an initramfs holding
# busybox, the modules a bed loads and the binaries under test, and boot one or two VMs bounded
# by timeout. Sourced by tests/softroce/ (rxe: SR_MODULES) and tests/cluster/vm.sh (netem and
# tbf on veths: SR_CLUSTER_MODULES); every function returns non-zero on failure and
# sr_skip/sr_fail end the calling script with the ninja-test exit convention (77 skip).

SR_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SR_CACHE=${SR_CACHE:-$SR_DIR/cache}
SR_KPKG_META=linux-image-amd64          # depends on the current linux-image-6.1.0-N-amd64
SR_MODULES="virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci failover
net_failover virtio_net crc32_generic udp_tunnel ip6_udp_tunnel ib_core ib_uverbs rdma_rxe"
# the emulated cluster's VM: namespaces on a bridge, links shaped by tbf behind a netem delay
# (the build host's kernel has no sch_netem; this one does), TCP BBR as on the host bed
SR_CLUSTER_MODULES="llc stp bridge veth sch_tbf sch_netem tcp_bbr"
# what the kernel cache keeps (the package holds ~400 MB of modules): every bed's modules
SR_CACHE_MODULES="$SR_MODULES $SR_CLUSTER_MODULES"
SR_VM_TIMEOUT=${SR_VM_TIMEOUT:-150}     # seconds one VM may live (TCG on a loaded host)
SR_PIDS=()                              # qemu wrappers we started, killed on exit
SR_LOGDIR=""

sr_log() { echo "softroce: $*" >&2; }
sr_skip() { echo "SKIP: $*"; exit 77; }
sr_fail() { echo "FAIL: $*"; [ -n "$SR_LOGDIR" ] && echo "logs kept in $SR_LOGDIR"; exit 1; }

# Kill only the VMs this script started; drop the log dir unless something failed.
sr_cleanup() {
	local rc=$? p
	for p in "${SR_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${SR_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	if [ -n "$SR_LOGDIR" ] && [ "$rc" -eq 0 ] && [ -z "${SR_KEEP_LOGS:-}" ]; then
		rm -rf "$SR_LOGDIR"
	fi
	return $rc
}

sr_init() {
	SR_LOGDIR=$(mktemp -d /tmp/softroce.XXXXXX)
	trap sr_cleanup EXIT
}

# Tools a bed needs on the host, TOOL:PACKAGE (SR_TOOLS: a bed's own list; the default is
# the Soft-RoCE bed's); installed with apt when missing, skip when impossible.
SR_VM_TOOLS="qemu-system-x86_64:qemu-system-x86 busybox:busybox-static xz:xz-utils cpio:cpio
depmod:kmod timeout:coreutils"
sr_need_tools() {
	local missing=() t pkg
	for t in ${SR_TOOLS:-$SR_VM_TOOLS ib_write_bw:perftest ibv_devinfo:ibverbs-utils rdma:iproute2}; do
		command -v "${t%%:*}" >/dev/null 2>&1 || missing+=("${t#*:}")
	done
	# the static busybox is what runs as init: a dynamic one would need its libs
	if command -v busybox >/dev/null &&
		ldd "$(command -v busybox)" 2>&1 | grep -q '=>'; then
		missing+=(busybox-static)
	fi
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		sr_skip "missing ${missing[*]} and not root to apt-get install them"
	fi
	sr_log "installing ${missing[*]}"
	if ! { apt-get install -y -q "${missing[@]}" >"$SR_LOGDIR/apt.log" 2>&1 ||
		{ apt-get update -q >>"$SR_LOGDIR/apt.log" 2>&1 &&
		  apt-get install -y -q "${missing[@]}" >>"$SR_LOGDIR/apt.log" 2>&1; }; }; then
		sr_skip "apt-get install ${missing[*]} failed (see $SR_LOGDIR/apt.log)"
	fi
	for t in ${SR_TOOLS:-$SR_VM_TOOLS ib_write_bw:perftest}; do
		command -v "${t%%:*}" >/dev/null || sr_skip "${t%%:*} still missing after install"
	done
}

# Download and unpack the kernel once into $SR_CACHE; sets SR_KVER, SR_VMLINUX, SR_MODDIR.
sr_fetch_kernel() {
	local pkg deb off keep=() m
	if [ -f "$SR_CACHE/kernel.ready" ]; then
		SR_KVER=$(cat "$SR_CACHE/kernel.ready")
		# a cache made before a bed's modules joined the keep list lacks them: fetch again
		for m in $SR_CACHE_MODULES; do
			[ -n "$(find "$SR_CACHE/k/lib/modules/$SR_KVER" -name "$m.ko" 2>/dev/null |
				head -1)" ] || { rm -f "$SR_CACHE/kernel.ready"; break; }
		done
	fi
	if [ -f "$SR_CACHE/kernel.ready" ]; then
		SR_KVER=$(cat "$SR_CACHE/kernel.ready")
	else
		mkdir -p "$SR_CACHE" || return 1
		pkg=$(apt-cache depends "$SR_KPKG_META" 2>/dev/null |
			awk '/Depends: linux-image-6\.1/ {print $2; exit}')
		if [ -z "$pkg" ]; then
			apt-get update -q >/dev/null 2>&1
			pkg=$(apt-cache depends "$SR_KPKG_META" 2>/dev/null |
				awk '/Depends: linux-image-6\.1/ {print $2; exit}')
		fi
		[ -n "$pkg" ] || { sr_log "no linux-image-6.1 package known to apt"; return 1; }
		pkg=${pkg%-amd64}-amd64-unsigned
		# stale package lists name a kernel the mirror dropped: update once and retry
		if ! (cd "$SR_CACHE" && rm -f linux-image-*.deb &&
			apt-get download "$pkg" >"$SR_CACHE/download.log" 2>&1); then
			apt-get update -q >>"$SR_CACHE/download.log" 2>&1
			pkg=$(apt-cache depends "$SR_KPKG_META" 2>/dev/null |
				awk '/Depends: linux-image-6\.1/ {print $2; exit}')
			pkg=${pkg%-amd64}-amd64-unsigned
			(cd "$SR_CACHE" && apt-get download "$pkg" >>"$SR_CACHE/download.log" 2>&1) ||
				{ sr_log "apt-get download $pkg failed"; return 1; }
		fi
		deb=$(ls "$SR_CACHE"/linux-image-*.deb | head -1)
		rm -rf "$SR_CACHE/k" && dpkg -x "$deb" "$SR_CACHE/k" || return 1
		SR_KVER=$(ls "$SR_CACHE/k/lib/modules" | head -1)
		# Debian 12 compresses bzImage payloads with xz (CONFIG_KERNEL_XZ); find the
		# stream magic like scripts/extract-vmlinux does and keep the ELF for PVH boot.
		off=$(LC_ALL=C grep -abo $'\xfd7zXZ\x00' "$SR_CACHE/k/boot/vmlinuz-$SR_KVER" |
			head -1 | cut -d: -f1)
		[ -n "$off" ] || { sr_log "no xz stream in vmlinuz-$SR_KVER"; return 1; }
		tail -c +$((off + 1)) "$SR_CACHE/k/boot/vmlinuz-$SR_KVER" |
			xz -dcq >"$SR_CACHE/vmlinux" 2>/dev/null
		[ "$(head -c 4 "$SR_CACHE/vmlinux" | od -An -c | tr -d ' ')" = '177ELF' ] ||
			{ sr_log "vmlinux extraction failed"; return 1; }
		# keep only the modules the VMs load (the package holds ~400 MB of them)
		for m in $SR_CACHE_MODULES; do keep+=(! -name "$m.ko"); done
		find "$SR_CACHE/k/lib/modules/$SR_KVER" -name '*.ko' "${keep[@]}" -delete
		rm -rf "$SR_CACHE/k/usr"
		depmod -b "$SR_CACHE/k" "$SR_KVER" || return 1
		rm -f "$deb"
		echo "$SR_KVER" >"$SR_CACHE/kernel.ready"
	fi
	SR_VMLINUX=$SR_CACHE/vmlinux
	SR_MODDIR=$SR_CACHE/k/lib/modules/$SR_KVER
}

# Copy an ELF and the shared libraries ldd names into root $1, keeping their paths. It
# replaces a busybox applet of the same name (rm first: cp would write through the link).
sr_copy_elf() {
	local root=$1 bin=$2 dst=${3:-$2} lib
	rm -f "$root$dst"
	mkdir -p "$root$(dirname "$dst")" && cp -L "$bin" "$root$dst" || return 1
	for lib in $(ldd "$bin" 2>/dev/null | awk '/=>/ {print $3} /^\t\// {print $1}'); do
		[ -f "$lib" ] || continue
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib" || return 1
	done
}

# sr_build_initramfs OUT SCENARIO BIN... : cpio.gz whose /init loads the modules of
# SR_VM_MODULES (default SR_MODULES, in load order), brings up rxe0 when the VM has a NIC, and
# runs /scenario.sh ROLE PEER; BIN is a host path copied to the same path, or SRC=DST, with the
# libraries ldd names. Files listed in SR_FILES land in /work (the scenario's cwd).
sr_build_initramfs() {
	local out=$1 scenario=$2 root m b mods=${SR_VM_MODULES:-$SR_MODULES}
	shift 2
	root=$(mktemp -d "$SR_LOGDIR/root.XXXX")
	mkdir -p "$root"/{bin,sbin,proc,sys,dev,tmp,run,var,etc/libibverbs.d,lib/modules,usr/bin}
	mkdir -p "$root"/{usr/sbin,work}
	ln -s /run "$root/var/run" # ip netns keeps its namespaces in /var/run/netns
	cp "$(command -v busybox)" "$root/bin/busybox" || return 1
	for b in sh ash mount insmod ip ifconfig sleep cat echo grep sed awk poweroff reboot \
		ls dmesg seq timeout wait kill ps date hostname tr cut head tail wc sync mkdir rm \
		readlink mktemp id sysctl sort uniq tar gzip base64 unshare env uname nproc mv cp \
		ln basename dirname printf chmod touch find xargs expr uptime tee stat du; do
		ln -s busybox "$root/bin/$b"
	done
	for m in $mods; do
		cp "$(find "$SR_MODDIR" -name "$m.ko" | head -1)" "$root/lib/modules/" ||
			{ sr_log "module $m not found"; return 1; }
	done
	case " $mods " in
	*" rdma_rxe "*)
		# the verbs userspace: rdma tool, rxe provider (dlopened, so ldd cannot see it)
		sr_copy_elf "$root" "$(command -v rdma)" /bin/rdma || return 1
		sr_copy_elf "$root" /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so ||
			return 1
		cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/" ;;
	esac
	for b in "$@"; do
		case $b in
		*=*) sr_copy_elf "$root" "${b%%=*}" "${b#*=}" ;;
		*) sr_copy_elf "$root" "$b" ;;
		esac || { sr_log "cannot copy $b"; return 1; }
	done
	for b in ${SR_FILES:-}; do
		cp "$b" "$root/work/" || return 1
	done
	cp "$scenario" "$root/scenario.sh"
	echo "SR_MODULES='$(echo $mods)'" >"$root/etc/sr_modules"
	cp "$SR_DIR/vm_init.sh" "$root/init"
	chmod +x "$root/init" "$root/scenario.sh"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out" || return 1
	rm -rf "$root"
}

# sr_boot NAME INITRD NETDEV_ARGS APPEND : start one VM in the background, console to
# $SR_LOGDIR/NAME.log; its wrapper pid is appended to SR_PIDS.
sr_boot() {
	local name=$1 initrd=$2 net=$3 append=$4 accel
	# TCG on purpose: nested KVM on the CI hosts dies with "emulation failure" in this
	# kernel's early boot (the build host too: "KVM internal error. Suberror: 1" at a lock
	# cmpxchg16b with the default CPU, an MSR 0x10a assertion with -cpu host, no console at
	# all with -cpu host,-arch-capabilities); SR_ACCEL="-accel kvm" overrides where KVM is real.
	accel=${SR_ACCEL:--accel tcg}
	# shellcheck disable=SC2086
	timeout -k 5 "$SR_VM_TIMEOUT" qemu-system-x86_64 $accel -bios /usr/share/qemu/qboot.rom \
		-m "${SR_VM_MEM:-512M}" -smp "${SR_VM_CPUS:-1}" -no-reboot -nographic \
		-nodefaults -serial stdio -kernel "$SR_VMLINUX" -initrd "$initrd" \
		$net -append "console=ttyS0 panic=-1 quiet loglevel=3 $append ${SR_APPEND:-}" \
		</dev/null >"$SR_LOGDIR/$name.log" 2>&1 &
	SR_PIDS+=($!)
}

# sr_nic N NETDEV : a virtio NIC on -netdev NETDEV; MAC ...:0N, so each VM's link-local
# GID differs.
sr_nic() {
	echo "-device virtio-net-pci,netdev=n0,mac=52:54:00:00:00:0$1 -netdev $2"
}

# sr_boot_pair INITRD APPEND_A APPEND_B : vm_a (10.0.0.1, role a) and vm_b (10.0.0.2, role
# b, peer 10.0.0.1) joined by one unix stream socket: vm_a listens, vm_b connects. A stream
# pushes back on a full peer (qemu waits for the socket to drain) by construction. The dgram
# pair used before (SR_LINK=dgram keeps it) sends to an unconnected socket, whose poll does
# not see a full peer; a guest's transmit queue stalled for good on it once (NETDEV WATCHDOG,
# stop 42's CI), whether for that reason is not shown. sr_wait_pair catches such a stall.
sr_boot_pair() {
	local a=$SR_LOGDIR/a.sock b=$SR_LOGDIR/b.sock net_a net_b i
	if [ "${SR_LINK:-stream}" = dgram ]; then
		net_a=dgram,id=n0,local.type=unix,local.path=$a,remote.type=unix,remote.path=$b
		net_b=dgram,id=n0,local.type=unix,local.path=$b,remote.type=unix,remote.path=$a
	else
		rm -f "$a"
		net_a=stream,id=n0,server=on,addr.type=unix,addr.path=$a
		net_b=stream,id=n0,server=off,addr.type=unix,addr.path=$a
	fi
	sr_boot vm_a "$1" "$(sr_nic 1 "$net_a")" "gs.ip=10.0.0.1/24 gs.role=a $2"
	# qemu 7.2's stream client connects once, at start: vm_b waits for vm_a's socket to listen
	case $net_b in stream,*)
		for i in $(seq 100); do
			[ -S "$a" ] && break
			sleep 0.1
		done
		[ -S "$a" ] || sr_log "vm_a: no listening socket $a after 10 s; vm_b starts anyway"
		sleep 0.2 ;;
	esac
	sr_boot vm_b "$1" "$(sr_nic 2 "$net_b")" "gs.ip=10.0.0.2/24 gs.role=b gs.peer=10.0.0.1 $3"
}

# sr_wait_pair : wait for vm_a and vm_b (the last two VMs started). 0 when both scenarios
# exited 0; 3 when a guest's NIC stopped transmitting for good (the guest kernel's "NETDEV
# WATCHDOG" on its console: a stall of the emulated NIC or link, below anything a scenario
# runs), in which case both VMs are stopped at once rather than at their timeout; else 1.
sr_wait_pair() {
	local pa=${SR_PIDS[-2]} pb=${SR_PIDS[-1]} rc=0 line
	while kill -0 "$pa" 2>/dev/null || kill -0 "$pb" 2>/dev/null; do
		line=$(grep -h -m1 'NETDEV WATCHDOG' "$SR_LOGDIR/vm_a.log" "$SR_LOGDIR/vm_b.log" \
			2>/dev/null | tr -d '\r' | head -1)
		if [ -n "$line" ]; then
			sr_log "$line"
			sr_log "a guest's NIC stalled (the emulated link, not the code under test);" \
				"both VMs stopped"
			kill "$pa" "$pb" 2>/dev/null
			wait "$pa" "$pb" 2>/dev/null
			return 3
		fi
		sleep 1
	done
	sr_wait "$pa" vm_a || rc=1
	sr_wait "$pb" vm_b || rc=1
	return $rc
}

# sr_wait PID NAME : wait for one VM; its scenario's exit is the "GS_EXIT n" console line.
sr_wait() {
	local pid=$1 name=$2 rc
	wait "$pid"
	rc=$(tr -d '\r' <"$SR_LOGDIR/$name.log" | awk '/^GS_EXIT / {print $2}' | tail -1)
	if [ -z "$rc" ]; then
		sr_log "$name: no GS_EXIT line (timeout or crash); console tail:"
		tail -n 30 "$SR_LOGDIR/$name.log" >&2
		return 1
	fi
	# a scenario's results sent back over the console (base64) are no log to read
	[ "$rc" -eq 0 ] || { sr_log "$name: scenario exit $rc"; tr -d '\r' <"$SR_LOGDIR/$name.log" |
		sed '/^GS_OUT_BEGIN$/,/^GS_OUT_END$/d' | tail -n 40 >&2; }
	return "$rc"
}
