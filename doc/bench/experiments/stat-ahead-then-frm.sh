#!/bin/bash
# Experiment (doc/benchmarks.md, "Experiment: stat ahead, then remove"):
# read what the removal will need with 8 readers at once (stat of every
# name, in inode order), then remove with frm; the wall time covers both.
# usage: FRM=/path/to/frm stat-ahead-then-frm.sh DIR   (a fastrm-bench cmd:)
set -u
d=$1
frm=${FRM:-frm}
cd "$d" && ls -U -i -f . | sort -n | awk '$2 != "." && $2 != ".." {print $2}' |
	xargs -P 8 -n 512 stat --format=%i -- > /dev/null
exec "$frm" -r "$d"
