#!/bin/bash
# One cold removal on the emulated one-head disk with every block request
# traced (tracefs block_rq_issue), then what the requests were: reads by
# size and kind, and how many did not start where the previous one ended
# (a seek, for the disk model).  Root only; everything lives in a
# directory this script makes and removes.
#   trace-removal.sh BUILD FS [WORKLOAD:]N COMMAND...   (COMMAND gets the
#   directory; WORKLOAD is fastrm-mktree's: flat, the default, or tree)
# e.g. trace-removal.sh build xfs 200000 rm -rf
#      trace-removal.sh build xfs 200000 build/tools/frm/frm -rf
# (doc/benchmarks.md, "XFS: the directory's hash index")
set -euo pipefail
build=$(realpath "$1") fs=$2 n=$3; shift 3
shape=flat
case $n in *:*) shape=${n%%:*} n=${n#*:} ;; esac
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
w=$(mktemp -d /var/tmp/trace-removal.XXXXXX)
cleanup() {
	set +e
	umount "$w/mnt" 2>/dev/null
	[ -n "${dev:-}" ] && losetup -d "$dev" 2>/dev/null
	release_disk
	# nothing may be mounted under it any more
	mountpoint -q "$w/mnt" || mountpoint -q "$w/fuse" || rm -rf "$w"
}
# the loop device lets go of the emulated disk a moment after losetup -d
release_disk() {
	for _ in $(seq 100); do
		mountpoint -q "$w/fuse" || return 0
		umount "$w/fuse" 2>/dev/null && return 0
		sleep 0.05
	done
	umount -l "$w/fuse"
}
trap cleanup EXIT
mkdir "$w/mnt" "$w/fuse"
truncate -s 40G "$w/img"
case $fs in
xfs) mkfs.xfs -q -f -m uuid=6b6c6b6c-0000-4000-8000-000000000001 "$w/img" ;;
ext4) mkfs.ext4 -q -F -N $((n * 13 / 10 + 100000)) -U 6b6c6b6c-0000-4000-8000-000000000001 \
        -E lazy_itable_init=0,lazy_journal_init=0,hash_seed=6b6c6b6c-0000-4000-8000-000000000001 "$w/img" ;;
btrfs) mkfs.btrfs -q -f -U 6b6c6b6c-0000-4000-8000-000000000001 "$w/img" ;;
esac
mount -o loop "$w/img" "$w/mnt"
"$build/bench/fastrm-mktree" "$w/mnt/t" "$shape" "$n"
umount "$w/mnt"
"$build/bench/fastrm-disk" "$w/fuse" "$w/img" hdd &
for _ in $(seq 100); do [ -e "$w/fuse/disk" ] && break; sleep 0.05; done
dev=$(losetup --direct-io=on -f --show "$w/fuse/disk")
echo 1 > "/sys/block/$(basename "$dev")/queue/rotational"
echo 3 > /proc/sys/vm/drop_caches
mount "$dev" "$w/mnt"
T=/sys/kernel/tracing
[ -e $T/trace ] || mount -t tracefs nodev $T
echo 0 > $T/tracing_on; echo > $T/trace; echo 65536 > $T/buffer_size_kb
echo "dev == $(( ($(stat -c '0x%t' "$dev") << 20) | $(stat -c '0x%T' "$dev") ))" \
    > $T/events/block/block_rq_issue/filter
echo 1 > $T/events/block/block_rq_issue/enable
echo 1 > $T/tracing_on
t0=$(date +%s.%N)
"$@" "$w/mnt/t"
sync -f "$w/mnt"
t1=$(date +%s.%N)
echo 0 > $T/tracing_on
echo 0 > $T/events/block/block_rq_issue/enable
echo "wall+sync $(echo "$t1 - $t0" | bc) s"
python3 - $T/trace <<'PY'
import collections, re, sys
rows = []
for l in open(sys.argv[1]):
    m = re.search(r'(\d+\.\d+): block_rq_issue: \S+ (\w+) \d+ \(\) (\d+) \+ (\d+)', l)
    if m:
        rows.append((float(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4))))
n, jumps, end = collections.Counter(), collections.Counter(), None
for t, rw, s, k in rows:
    key = (rw, "%d KiB" % (k // 2) if k in (8, 32) else "other")
    n[key] += 1
    jumps[key] += s != end
    end = s + k
print("%-6s %-7s %8s %12s" % ("flags", "size", "requests", "not after"))
for key in sorted(n):
    print("%-6s %-7s %8d %12d" % (key[0], key[1], n[key], jumps[key]))
print("all: %d requests, %d not where the previous one ended" % (sum(n.values()), sum(jumps.values())))
PY
umount "$w/mnt"
losetup -d "$dev"; dev=
release_disk
wait
