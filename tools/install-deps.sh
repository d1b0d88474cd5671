#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages Valor for Linux needs to build and test.
# Idempotent: a package that is already installed is never reinstalled,
# and when nothing is missing no apt command runs at all (so it also
# works offline and as a normal user on a prepared machine).
#
# Usage: tools/install-deps.sh        (as root when something is missing)

set -euo pipefail

# The one list of packages.  Add new needs here, one per line, with why.
PACKAGES=(
	build-essential	# gcc, make, libc headers
	gcc
	make
	linux-source	# the tarball kselftest_harness.h is extracted from
	linux-libc-dev	# <linux/types.h> and other kernel uapi headers
	clang-format	# make format, make format-check
	pkg-config
	xz-utils	# to unpack the linux-source tarball
	libdw-dev	# the runtime symbolizes report stacks with libdw
	libelf-dev	# libdw's ELF layer; valor run inspects programs with it
	g++		# valor c++ and the C++ test programs
	clang		# valor cc --compiler=clang; the corpus is built with both
	clang-14	# the clang the tests name (Debian 12's default clang)
	llvm-14-dev	# LLVM's headers and llvm-config-14, for the pass plugin
	libomp-14-dev	# clang's OpenMP runtime, for the OpenMP tests (omp_tool.c)
	linux-headers-amd64	# valor.ko is built against it; it names the guest kernel
	gcc-12		# the compiler Debian's 6.1 kernel and its Kbuild use
	perl		# the kernel's checkpatch.pl (make checkpatch)
	qemu-system-x86	# the guest that runs valor.ko and the guest tests (TCG)
	busybox-static	# the guest's whole user space
	cpio		# to pack the guest's initramfs
	python3		# the benchmark harness, tools/bench/bench.py (make bench)
	gnuplot-nox	# its bar chart, build/bench/results.png
)

is_installed()
{
	local status

	status=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) || return 1
	[ "$status" = "install ok installed" ]
}

# One dpkg-query for the whole list: this runs before every build.
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${PACKAGES[@]}" \
		       2>/dev/null | sed -n 's/ install ok installed$//p') || true
missing=()
for pkg in "${PACKAGES[@]}"; do
	grep -qxF "$pkg" <<<"$installed" || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#PACKAGES[@]} packages already installed, nothing to do"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing packages: ${missing[*]}" >&2
	echo "install-deps: run as root to install them: sudo $0" >&2
	exit 1
fi

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends "${missing[@]}"

for pkg in "${missing[@]}"; do
	if ! is_installed "$pkg"; then
		echo "install-deps: $pkg is still not installed" >&2
		exit 1
	fi
done
echo "install-deps: installed ${missing[*]}"
