#!/bin/bash
# Experiment (doc/benchmarks.md, "XFS trees"): bulkstat (xfs_io) over every
# inode of the file system the tree is on, which XFS serves by reading the
# inode clusters ahead in inode order, then frm; the wall time covers both.
# On the harness's images the tree is all there is, so this is what reading
# every directory's inode cluster in the order they lie on the disk, before
# the walk needs them, can gain at most.
# usage: FRM=/path/to/frm bulkstat-all-then-frm.sh DIR   (a fastrm-bench cmd:)
set -u
d=$1
frm=${FRM:-frm}
xfs_io -c "bulkstat -q" "$(stat -c %m "$d")" >/dev/null
exec "$frm" -r "$d"
