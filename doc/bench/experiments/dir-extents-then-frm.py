#!/usr/bin/env python3
# Experiment (doc/benchmarks.md, "Reading the directory ahead (ext4)"):
# read a directory's blocks from its block device in the order they lie
# there (extents from filefrag -e, runs merged across gaps of up to 64
# blocks, read with pread), so that ext4 finds them cached; then run frm.
# The wall time covers both.  Root only (reads the device).
# usage: FRM=/path/to/frm dir-extents-then-frm.py DIR   (a fastrm-bench cmd:)
import os
import re
import subprocess
import sys

d = sys.argv[1]
frm = os.environ.get("FRM", "frm")
st = os.stat(d)
dev = None
with open("/sys/dev/block/%d:%d/uevent" % (os.major(st.st_dev), os.minor(st.st_dev))) as f:
    for line in f:
        if line.startswith("DEVNAME="):
            dev = "/dev/" + line.strip().split("=", 1)[1]
bs = os.statvfs(d).f_bsize
out = subprocess.run(["filefrag", "-e", "-b%d" % bs, d], capture_output=True,
                     text=True).stdout
ext = []
for line in out.splitlines():
    m = re.match(r"\s*\d+:\s+\d+\.\.\s*\d+:\s+(\d+)\.\.\s*(\d+):\s+(\d+):", line)
    if m:
        ext.append((int(m.group(1)), int(m.group(3))))
ext.sort()
runs = []
for s, n in ext:
    if runs and s - (runs[-1][0] + runs[-1][1]) <= 64:
        runs[-1][1] = s + n - runs[-1][0]
    else:
        runs.append([s, n])
fd = os.open(dev, os.O_RDONLY)
for s, n in runs:
    off, left = s * bs, n * bs
    while left > 0:
        got = os.pread(fd, min(left, 1 << 20), off)
        if not got:
            break
        off += len(got)
        left -= len(got)
os.close(fd)
os.execvp(frm, [frm, "-r", d])
