#!/bin/bash
# Experiment (doc/benchmarks.md, "Experiment: XFS bulkstat, then remove"):
# bulkstat (xfs_io) over the inode range of the directory's entries, which
# XFS serves by reading inode clusters ahead, then frm; the wall time
# covers both.
# usage: FRM=/path/to/frm bulkstat-then-frm.sh DIR   (a fastrm-bench cmd:)
set -u
d=$1
frm=${FRM:-frm}
read lo hi < <(ls -U -i -f "$d" | awk '$2 != "." && $2 != ".." {print $1}' | sort -n | awk 'NR==1{lo=$1} {hi=$1} END{print lo, hi}')
mnt=$(stat -c %m "$d")
xfs_io -c "bulkstat -q -s $lo -e $hi" "$mnt" >/dev/null
exec "$frm" -r "$d"
