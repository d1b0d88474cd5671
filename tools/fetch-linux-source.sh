#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Extract files of the kernel tree from Debian's linux-source tarball into
# a build directory: the kselftest harness (kselftest_harness.h,
# kselftest.h) and checkpatch.pl with the data files it reads beside
# itself.  No binary package ships them and they must not be copied into
# the repository, so every build takes them from the installed source.
#
# Usage: tools/fetch-linux-source.sh OUTDIR PATH...
#
#   PATH   a file's path in the kernel tree, e.g. scripts/checkpatch.pl;
#          it is written to OUTDIR/<its base name>
#
# Idempotent: when OUTDIR already holds every file, taken from the newest
# tarball, nothing is extracted again.

set -euo pipefail

if [ $# -lt 2 ]; then
	sed -n 's/^# \{0,1\}//; /^Usage:/,/^$/p' "$0" >&2
	exit 2
fi
outdir=$1
shift
paths=("$@")

tarball=$(ls -1 /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)
if [ -z "$tarball" ]; then
	echo "fetch-linux-source: no /usr/src/linux-source-*.tar.xz found;" \
	     "run 'make deps' (or tools/install-deps.sh as root) first" >&2
	exit 1
fi

have_all=1
for p in "${paths[@]}"; do
	[ -s "$outdir/$(basename "$p")" ] || have_all=0
done
stamp="$outdir/.source"
if [ $have_all = 1 ] && [ "$(cat "$stamp" 2>/dev/null)" = "$tarball" ]; then
	echo "fetch-linux-source: $outdir is up to date ($(basename "$tarball"))"
	exit 0
fi

echo "fetch-linux-source: extracting ${paths[*]} from $tarball"
mkdir -p "$outdir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
members=()
for p in "${paths[@]}"; do
	members+=("*/$p")
done
# --touch: the extraction time, not the tarball's, so make does not see
# the files as older than this script.
tar -xJf "$tarball" -C "$tmp" --touch --wildcards "${members[@]}"
for p in "${paths[@]}"; do
	src=$(find "$tmp" -path "*/$p" -type f | head -n 1)
	if [ -z "$src" ]; then
		echo "fetch-linux-source: $p not found in $tarball" >&2
		exit 1
	fi
	mv -f "$src" "$outdir/$(basename "$p")"
done
echo "$tarball" >"$stamp"
echo "fetch-linux-source: wrote ${paths[*]##*/} into $outdir"
