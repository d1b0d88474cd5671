#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch the kernel the QEMU guest boots (tools/vmtest/vmtest.sh): Debian's
# linux-image package of exactly the ABI and version of the installed
# linux-headers-amd64, so that the valor.ko built against those headers
# always loads in the guest (same vermagic, same symbol versions).
#
# The package is downloaded and unpacked with `dpkg -x`, never installed:
# installing a linux-image builds a host initramfs (about a minute) and
# touches the host's /boot, and the host does not boot this kernel anyway.
#
# Usage: tools/fetch-guest-kernel.sh [OUTDIR]    (default: build/vm)
#
# Writes OUTDIR/vmlinuz, OUTDIR/vmlinux (see below), OUTDIR/config and
# OUTDIR/kernel.id ("<package>=<version>").  Idempotent: when kernel.id
# already names the package the headers call for, nothing is downloaded.
# Debian's System.map is a stub (the real one is in the -dbg package; the
# guest has /proc/kallsyms).  The kernel's module tree is not kept: everything the guest needs
# (devtmpfs, tmpfs, debugfs, tracefs, kprobes, the 8250 console, THP) is
# built into Debian's kernel, and the tree is ~400 MB.

set -euo pipefail

outdir=${1:-build/vm}
meta=linux-headers-amd64

die()
{
	echo "fetch-guest-kernel: $*" >&2
	exit 1
}

# linux-headers-amd64 depends on exactly one linux-headers-<ABI>-amd64 of
# its own version; the image of that ABI and version is the guest kernel.
depends=$(dpkg-query -W -f='${Depends}' "$meta" 2>/dev/null) ||
	die "$meta is not installed; run 'make deps' (or tools/install-deps.sh as root) first"
headers=$(sed -n 's/^\(linux-headers-[^ ,]*-amd64\) (= \([^)]*\)).*/\1/p' <<<"$depends")
version=$(sed -n 's/^\(linux-headers-[^ ,]*-amd64\) (= \([^)]*\)).*/\2/p' <<<"$depends")
[ -n "$headers" ] && [ -n "$version" ] ||
	die "cannot read the headers package from $meta's dependency '$depends'"
abi=${headers#linux-headers-}
image=linux-image-$abi
want="$image=$version"

if [ -s "$outdir/vmlinuz" ] && [ -s "$outdir/config" ] && [ -f "$outdir/kernel.id" ] &&
   [ "$(cat "$outdir/kernel.id")" = "$want" ]; then
	echo "fetch-guest-kernel: $outdir/vmlinuz is up to date ($want)"
	exit 0
fi

started=$SECONDS
mkdir -p "$outdir"
tmp=$(mktemp -d "$outdir/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# apt's download sandbox user (_apt) may not be able to write into the
# build tree (a root-owned or private checkout): download as the caller.
apt_download()
{
	(cd "$tmp" && apt-get -q -o APT::Sandbox::User="$(id -un)" \
		download "$want") >"$tmp/apt.log" 2>&1
}

echo "fetch-guest-kernel: downloading $want"
if ! apt_download; then
	# A machine whose package lists predate the headers it has (or that
	# never ran apt-get update) does not know the image yet.
	if [ "$(id -u)" -eq 0 ]; then
		echo "fetch-guest-kernel: download failed; running apt-get update and retrying"
		apt-get -q update >"$tmp/update.log" 2>&1 ||
			{ cat "$tmp/update.log" >&2; die "apt-get update failed"; }
		apt_download || true
	fi
fi
deb=$(find "$tmp" -maxdepth 1 -name "${image}_*.deb" | head -n 1)
if [ -z "$deb" ]; then
	cat "$tmp/apt.log" >&2
	die "could not download $want from the configured Debian mirrors.
  The guest kernel must match the installed headers ($headers $version).
  If the mirror has moved on to a newer kernel, upgrade the headers
  (as root: apt-get update && apt-get install linux-headers-amd64) and
  run this again; if apt-get update itself fails, check the network and
  /etc/apt/sources.list."
fi

echo "fetch-guest-kernel: unpacking $(basename "$deb")"
# Only ./boot: the module tree is most of the package and is not used.
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" ./boot
for f in vmlinuz config; do
	src=$tmp/boot/$f-$abi
	[ -s "$src" ] || die "$(basename "$deb") has no boot/$f-$abi"
	mv -f "$src" "$outdir/$f"
done

# The uncompressed kernel, booted through its PVH entry point (QEMU loads
# the ELF itself): under TCG, the bzImage's own xz decompression takes
# about 4 of the 10 s to /init.  Optional: without it vmtest.sh boots
# vmlinuz.
rm -f "$outdir/vmlinux"
off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$outdir/vmlinuz" | head -n 1 | cut -d: -f1)
# (Through a file: xz stops reading at the end of its stream, which
# would make a pipe's writer fail.)
if [ -n "$off" ] &&
   tail -c +$((off + 1)) "$outdir/vmlinuz" >"$tmp/vmlinux.xz" &&
   xz -dc --single-stream "$tmp/vmlinux.xz" >"$tmp/vmlinux" 2>/dev/null &&
   # The PVH entry is an ELF note of type 18 (XEN_ELFNOTE_PHYS32_ENTRY).
   readelf -n "$tmp/vmlinux" 2>/dev/null | grep -q '^ *Xen .*(0x00000012)'; then
	mv -f "$tmp/vmlinux" "$outdir/vmlinux"
	extracted=", vmlinux"
else
	echo "fetch-guest-kernel: no PVH-bootable vmlinux in vmlinuz;" \
	     "the guest boots the slower vmlinuz"
	extracted=
fi

echo "$want" >"$outdir/kernel.id"
echo "fetch-guest-kernel: wrote $outdir/vmlinuz${extracted}, config" \
     "($want, $((SECONDS - started))s)"
