#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Extract the kernel's kselftest harness (kselftest_harness.h and
# kselftest.h) from Debian's linux-source tarball into build/kselftest/.
# No binary package ships these headers, and they must not be copied into
# the repository, so every build takes them from the installed source.
#
# Usage: tools/fetch-kselftest.sh [OUTDIR]     (default: build/kselftest)
#
# Idempotent: when OUTDIR already holds both headers taken from the newest
# tarball, nothing is extracted again.

set -euo pipefail

outdir=${1:-build/kselftest}
headers=(kselftest_harness.h kselftest.h)

tarball=$(ls -1 /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
if [ -z "$tarball" ]; then
	echo "fetch-kselftest: no /usr/src/linux-source-*.tar.xz found;" \
	     "run 'make deps' (or tools/install-deps.sh as root) first" >&2
	exit 1
fi

have_all=1
for h in "${headers[@]}"; do
	[ -s "$outdir/$h" ] || have_all=0
done
if [ $have_all -eq 1 ] && [ -f "$outdir/.source" ] &&
   [ "$(cat "$outdir/.source")" = "$tarball" ]; then
	echo "fetch-kselftest: $outdir is up to date ($(basename "$tarball"))"
	exit 0
fi

echo "fetch-kselftest: extracting ${headers[*]} from $tarball"
mkdir -p "$outdir"
tmp=$(mktemp -d "$outdir/.extract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

members=()
for h in "${headers[@]}"; do
	members+=("*/tools/testing/selftests/$h")
done
# --touch: give the files the extraction time, not the tarball's, so make
# does not keep seeing them as older than this script.
tar -xJf "$tarball" -C "$tmp" --touch --wildcards "${members[@]}"

for h in "${headers[@]}"; do
	src=$(find "$tmp" -path "*/tools/testing/selftests/$h" -type f | head -n 1)
	if [ -z "$src" ]; then
		echo "fetch-kselftest: $h not found in $tarball" >&2
		exit 1
	fi
	mv -f "$src" "$outdir/$h"
done
echo "$tarball" >"$outdir/.source"
echo "fetch-kselftest: wrote ${headers[*]/#/$outdir/}"
