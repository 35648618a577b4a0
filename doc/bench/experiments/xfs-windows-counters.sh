#!/bin/bash
# Experiment (doc/benchmarks.md, "XFS trees at 1.2M entries"): with a build
# that has xfs-windows-counters.patch applied, remove a 1.2M-entry source
# tree from a fresh 40 GiB XFS image (a loop device with direct I/O on a
# file in a new directory under /var/tmp) from a cold cache, the reads
# taken to seek, and print the windows' counters.  Root.
# usage: xfs-windows-counters.sh BUILD [N]
set -eu
build=$1
n=${2:-1200000}
t=$(mktemp -d /var/tmp/xfs-windows.XXXXXX)
dev=
cleanup() {
	if mountpoint -q "$t/m"; then umount "$t/m" || umount -l "$t/m"; fi
	[ -n "$dev" ] && losetup -d "$dev"
	rm -rf -- "$t"
}
trap cleanup EXIT
truncate -s 40G "$t/img"
mkfs.xfs -q -f "$t/img"
mkdir "$t/m"
dev=$(losetup --direct-io=on -f --show "$t/img")
mount "$dev" "$t/m"
"$build/bench/fastrm-mktree" "$t/m/t" tree "$n" > /dev/null
umount "$t/m"
mount "$dev" "$t/m"
echo 3 > /proc/sys/vm/drop_caches
FRM_XW_FORCE=1 FRM_XW_DEBUG=1 "$build/tools/frm/frm" -r --stats "$t/m/t"
