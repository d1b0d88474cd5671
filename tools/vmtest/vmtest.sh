#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the guest tests (build/tests/kmod/*_test) and valor.ko in a QEMU
# guest booting Debian's own kernel (build/vm/vmlinuz, from
# tools/fetch-guest-kernel.sh).  tools/vmtest/README.md has the details.
#
# Usage: tools/vmtest/vmtest.sh [OPTION...] [TEST...]
#
#   TEST             a guest test by name (device_test) or path
#                    (build/tests/kmod/device_test); default: all of them
#   -s, --shell      a shell on the console after the named tests (none
#                    by default), before the module is unloaded
#   --results DIR    where results go (default build/vm/results)
#   -h, --help
#
# Environment:
#   VALOR_KO              the module to load (default build/kmod/valor.ko)
#   VMTEST_TIMEOUT        wall-clock limit of the whole guest run, seconds
#                         (default 1200)
#   VMTEST_TEST_TIMEOUT   limit of one test binary in the guest (default 300)
#   VMTEST_MEM, VMTEST_SMP  guest memory and CPUs (default 1G, 2)
#   VMTEST_APPEND         extra kernel command line
#   VMTEST_QEMU           the QEMU binary (default qemu-system-x86_64)
#   VMTEST_KERNEL         the kernel to boot (default build/vm/vmlinux,
#                         else build/vm/vmlinuz)
#
# Exit status: 0 when every result passed (or skipped), 1 when something
# failed or the guest did not finish, 4 (kselftest's "skip") when QEMU
# cannot run here, 2 on a usage error.  tools/run-tests.sh --vm runs this
# and counts each result's TAP like a host binary's.

set -euo pipefail

BUILD=build
VM=$BUILD/vm
results=$VM/results
shell_after=0
tests=()

usage()
{
	sed -n '/^# Usage:/,/^# and counts/s/^# \{0,1\}//p' "$0"
}

while [ $# -gt 0 ]; do
	case $1 in
	-s | --shell) shell_after=1 ;;
	--results)
		[ $# -ge 2 ] || { usage >&2; exit 2; }
		results=$2
		shift
		;;
	-h | --help) usage; exit 0 ;;
	--) shift; tests+=("$@"); break ;;
	-*) echo "vmtest: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) tests+=("$1") ;;
	esac
	shift
done

ko=${VALOR_KO:-$BUILD/kmod/valor.ko}
timeout_s=${VMTEST_TIMEOUT:-1200}
test_timeout_s=${VMTEST_TEST_TIMEOUT:-300}
mem=${VMTEST_MEM:-1G}
smp=${VMTEST_SMP:-2}
qemu=${VMTEST_QEMU:-qemu-system-x86_64}
testdir=$BUILD/tests/kmod
# The uncompressed kernel boots ~4 s faster (no decompression under TCG).
if [ -n "${VMTEST_KERNEL:-}" ]; then
	kernel=$VMTEST_KERNEL
elif [ -s "$VM/vmlinux" ]; then
	kernel=$VM/vmlinux
else
	kernel=$VM/vmlinuz
fi
root=$VM/root
initramfs=$VM/initramfs.cpio
raw=$VM/results.raw
console=$VM/console.log

for n in "$timeout_s" "$test_timeout_s" "$smp"; do
	case $n in
	'' | *[!0-9]*)
		echo "vmtest: VMTEST_TIMEOUT, VMTEST_TEST_TIMEOUT and VMTEST_SMP must be numbers" >&2
		exit 2
		;;
	esac
done

die()
{
	echo "vmtest: $*" >&2
	exit 1
}

# skip REASON: QEMU cannot run on this machine.  One skip, with the
# reason, for whoever counts (run-tests.sh reads $results/skip).
skip()
{
	echo "vmtest: SKIP: $*"
	echo "$*" >"$results/skip"
	exit 4
}

rm -rf "$results"
mkdir -p "$results"

# ---- can the guest run at all? ------------------------------------------

if ! command -v "$qemu" >/dev/null 2>&1; then
	skip "$qemu is not installed (Debian package qemu-system-x86: run make deps)"
fi
# TCG, not KVM: KVM cannot boot Debian's stock kernel on the CI machines.
if ! "$qemu" -accel help 2>/dev/null | grep -qx tcg; then
	skip "$qemu has no TCG accelerator"
fi

[ -s "$kernel" ] ||
	die "no guest kernel $kernel; run tools/fetch-guest-kernel.sh (or make vmtest)"
busybox=$(command -v busybox || true)
[ -n "$busybox" ] ||
	die "busybox is not installed; install busybox-static (make deps)"
# A dynamically linked busybox (Debian's "busybox") would find no C
# library in the guest.
if readelf -l "$busybox" 2>/dev/null | grep -q 'Requesting program interpreter'; then
	die "$busybox is dynamically linked; install busybox-static instead of busybox"
fi
[ -f "$ko" ] || die "no module $ko; run make kmod (or set VALOR_KO=)"

# ---- which tests --------------------------------------------------------

if [ ${#tests[@]} -eq 0 ] && [ $shell_after -eq 0 ]; then
	mapfile -t tests < <(find "$testdir" -maxdepth 1 -type f -name '*_test' \
				  -perm -u+x 2>/dev/null | sort)
fi
names=()
for t in "${tests[@]}"; do
	name=$(basename "$t")
	name=${name%.c}
	[ -x "$testdir/$name" ] ||
		die "no guest test binary $testdir/$name; run make vmtest (or make guest-tests)"
	names+=("$name")
done

# Every result the guest must report, in order; a missing one is a
# failure (run-tests.sh reads this list).
{
	echo insmod
	echo insmod.dmesg
	for n in "${names[@]}"; do
		echo "$n"
		echo "$n.dmesg"
	done
	echo rmmod
	echo rmmod.dmesg
} >"$results/expected"
echo "$test_timeout_s" >"$results/test-timeout"

# ---- the initramfs ------------------------------------------------------

rm -rf "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root,tests/progs}
cp "$busybox" "$root/bin/busybox"
# Every applet as a symlink where busybox itself would install it.
for applet in $("$busybox" --list-full); do
	[ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
done
cp tools/vmtest/init "$root/init"
chmod 755 "$root/init"
cp "$ko" "$root/valor.ko"
for n in "${names[@]}"; do
	cp "$testdir/$n" "$root/tests/$n"
done
if [ -d "$testdir/progs" ]; then
	find "$testdir/progs" -maxdepth 1 -type f -perm -u+x \
	     -exec cp -t "$root/tests/progs" {} +
fi
# Static test binaries cannot use NSS: tests use uid 65534 by number.
cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat >"$root/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
cat >"$root/etc/vmtest.conf" <<EOF
TESTS="${names[*]}"
TEST_TIMEOUT=$test_timeout_s
SHELL_AFTER=$shell_after
KO=/valor.ko
EOF
# The kernel hands /init the console only if the node is in the archive.
if [ "$(id -u)" -eq 0 ]; then
	mknod -m 600 "$root/dev/console" c 5 1
fi
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc -R 0:0 --quiet) >"$initramfs"

# ---- boot ---------------------------------------------------------------

append="console=ttyS0 panic=-1 quiet loglevel=4 $(printf '%s' "${VMTEST_APPEND:-}")"
qemu_args=(
	-accel tcg -cpu max -smp "$smp" -m "$mem"
	-nodefaults -display none -no-reboot
	-kernel "$kernel" -initrd "$initramfs" -append "$append"
)
: >"$raw"
echo "vmtest: booting $(cat "$VM/kernel.id" 2>/dev/null || echo "$kernel")" \
     "with $(basename "$ko") and ${#names[@]} test(s): ${names[*]:-none}" \
     "(limit ${timeout_s}s)"
started=$SECONDS
set +e
if [ $shell_after -eq 1 ]; then
	# The console is the terminal: Ctrl-A x quits QEMU.
	timeout --foreground "$timeout_s" "$qemu" "${qemu_args[@]}" \
		-serial mon:stdio -serial "file:$raw"
	qemu_rc=$?
	: >"$console"
else
	# stdin from /dev/null: nothing may wait for a terminal.  sed -u
	# drops the serial line's \r and passes each line on at once.
	timeout -k 10 "$timeout_s" "$qemu" "${qemu_args[@]}" \
		-serial stdio -serial "file:$raw" </dev/null 2>&1 |
		sed -u 's/\r$//' | tee "$console"
	qemu_rc=${PIPESTATUS[0]}
fi
set -e
wall=$((SECONDS - started))

# ---- results ------------------------------------------------------------

# The results channel into one NAME.out and NAME.rc per result.  A
# result without its end line (the guest died while it ran) has no .rc.
sed 's/\r$//' "$raw" | awk -v dir="$results" '
	function stop() { if (cur != "") close(cur); cur = "" }
	/^@@VMTEST@@ begin / { stop(); cur = dir "/" $3 ".out"; printf "" >cur; next }
	/^@@VMTEST@@ end / {
		stop()
		print $4 >(dir "/" $3 ".rc"); close(dir "/" $3 ".rc")
		print $5 >(dir "/" $3 ".seconds"); close(dir "/" $3 ".seconds")
		next
	}
	/^@@VMTEST@@ log / { stop(); cur = dir "/" $3; printf "" >cur; next }
	/^@@VMTEST@@ endlog/ { stop(); next }
	/^@@VMTEST@@ done/ { stop(); print "done" >(dir "/done"); next }
	cur != "" { print >cur }
'

if [ -f "$results/done" ]; then
	ending="finished"
elif [ "$qemu_rc" -eq 124 ] || [ "$qemu_rc" -eq 137 ]; then
	ending="timed out after ${timeout_s}s (VMTEST_TIMEOUT)"
elif grep -q 'Kernel panic' "$console" 2>/dev/null; then
	ending="panicked: $(grep -m 1 -o 'Kernel panic.*' "$console")"
else
	ending="ended early (QEMU exit status $qemu_rc); see $console"
fi
echo "$ending" >"$results/ending"

boot=$(sed -n 's/^# vmtest: \/init started at \([0-9.]*\)s.*/\1/p' "$console" | head -n 1)
echo "vmtest: guest $ending in ${wall}s${boot:+ (booted in ${boot}s of guest time)}"

# Pass or fail per result: the full count is run-tests.sh's.
failed=()
while read -r entry; do
	out=$results/$entry.out
	if [ ! -f "$results/$entry.rc" ]; then
		failed+=("$entry (no result)")
		continue
	fi
	rc=$(cat "$results/$entry.rc")
	if [ "$rc" != 0 ] && [ "$rc" != 4 ]; then
		failed+=("$entry (exit $rc)")
	elif grep -q '^not ok ' "$out"; then
		failed+=("$entry")
	fi
done <"$results/expected"

if [ ${#failed[@]} -gt 0 ]; then
	echo "vmtest: failed: ${failed[*]}"
	echo "vmtest: console: $console; kernel log: $results/kernel.log; results: $results/"
	exit 1
fi
if [ "$ending" != finished ]; then
	exit 1
fi
echo "vmtest: all $(wc -l <"$results/expected") results passed"
