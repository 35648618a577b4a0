#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The benchmark harness's emulated disk (bench/fastrm-disk): data goes to
the backing file and comes back; the hdd model counts requests and seeks
and charges each request the model's time (the busy time is computed from
the model, so it is checked exactly); the lat:T:qN model never serves more
than N requests at once; a loop device takes direct I/O on the disk file.
Root only (FUSE mount, loop device): otherwise it skips with the reason.

usage: disk.py FASTRM_DISK
"""
import math
import mmap
import os
import subprocess
import sys
import tempfile
import threading
import time

from e2e_common import skip

DISK = os.path.abspath(sys.argv[1])
passed = failed = 0

if os.geteuid() != 0 or not os.path.exists("/dev/fuse"):
    skip("needs root and /dev/fuse (mounts a FUSE file system)")


def check(ok, what, detail=""):
    global passed, failed
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, (": " + str(detail)) if not ok else ""))
    if ok:
        passed += 1
    else:
        failed += 1


def stats(fuse):
    with open(os.path.join(fuse, "stats")) as f:
        return {k: int(v) for k, v in (l.split() for l in f if l.strip())}


class Disk:
    def __init__(self, top, model, size):
        self.backing = os.path.join(top, "backing")
        with open(self.backing, "w") as f:
            f.truncate(size)
        self.fuse = os.path.join(top, "fuse")
        os.mkdir(self.fuse)
        self.p = subprocess.Popen([DISK, self.fuse, self.backing, model])
        for _ in range(200):
            if os.path.exists(os.path.join(self.fuse, "disk")):
                break
            time.sleep(0.05)
        else:
            self.p.kill()
            raise RuntimeError("fastrm-disk did not start")
        self.path = os.path.join(self.fuse, "disk")

    def close(self):
        for _ in range(100):
            if subprocess.run(["umount", self.fuse], capture_output=True).returncode == 0:
                break
            time.sleep(0.05)
        self.p.wait(timeout=30)
        os.rmdir(self.fuse)


def read_at(fd, off, size=4096):
    buf = mmap.mmap(-1, size)
    n = os.preadv(fd, [buf], off)
    return bytes(buf[:n])


# The hdd model, as fastrm-disk defines it.
SEEK_MIN, SEEK_MAX, ROT, RATE = 0.8e6, 15e6, 60e9 / 7200 / 2, 150e6


def service(head, off, size, cap):
    xfer = size / RATE * 1e9
    if off == head:
        return int(xfer)
    d = abs(off - head) / cap
    return int(SEEK_MIN + (SEEK_MAX - SEEK_MIN) * math.sqrt(min(d, 1)) + ROT + xfer)


base = "/var/tmp" if os.path.isdir("/var/tmp") else "/tmp"
with tempfile.TemporaryDirectory(prefix="fastrm-test.", dir=base) as top:
    cap = 64 << 20
    d = Disk(top, "hdd", cap)
    try:
        # data reaches the backing file and comes back
        fd = os.open(d.path, os.O_RDWR)
        data = bytes(range(256)) * 16
        os.pwrite(fd, data, 8 << 20)
        with open(d.backing, "rb") as f:
            f.seek(8 << 20)
            check(f.read(4096) == data, "a write lands in the backing file")
        check(read_at(fd, 8 << 20) == data, "and reads back through the disk")

        # one request at a time: exact counts and busy time
        s0 = stats(d.fuse)
        head = (8 << 20) + 4096  # where the last request ended
        want_busy, want_seeks = 0, 0
        for off in (head, head + 4096, 40 << 20, 4096, 8192):
            want_busy += service(head, off, 4096, cap)
            want_seeks += off != head
            read_at(fd, off)
            head = off + 4096
        s1 = stats(d.fuse)
        check(s1["reads"] - s0["reads"] == 5, "5 reads counted", s1["reads"] - s0["reads"])
        check(s1["seeks"] - s0["seeks"] == want_seeks == 2,
              "sequential reads do not seek, the others do", s1["seeks"] - s0["seeks"])
        busy = s1["busy_ns"] - s0["busy_ns"]
        check(abs(busy - want_busy) <= 5, "busy time is the model's: %.3f ms" % (busy / 1e6),
              "%d ns, model %d ns" % (busy, want_busy))
        check(s1["read_bytes"] - s0["read_bytes"] == 5 * 4096, "bytes counted")
        os.close(fd)

        # a loop device takes direct I/O on the disk file
        dev = subprocess.run(["losetup", "--direct-io=on", "-f", "--show", d.path],
                             capture_output=True, text=True)
        if dev.returncode != 0:
            check(False, "losetup on the disk file", dev.stderr.strip())
        else:
            dev = dev.stdout.strip()
            with open("/sys/block/%s/loop/dio" % os.path.basename(dev)) as f:
                check(f.read().strip() == "1", "the loop device uses direct I/O")
            subprocess.run(["losetup", "-d", dev], check=True)
    finally:
        d.close()

    # lat:2ms:q4: eight reads at once take at least two rounds of 2 ms
    d = Disk(top, "lat:2ms:q4", cap)
    try:
        fd = os.open(d.path, os.O_RDONLY)
        s0 = stats(d.fuse)
        ts = [threading.Thread(target=read_at, args=(fd, i << 20)) for i in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        s1 = stats(d.fuse)
        check(s1["reads"] - s0["reads"] == 8, "8 reads counted")
        busy = s1["busy_ns"] - s0["busy_ns"]
        check(busy >= 4e6, "at most 4 served at once: busy %.2f ms >= 4 ms" % (busy / 1e6), busy)
        os.close(fd)
    finally:
        d.close()

    bad = subprocess.run([DISK, os.path.join(top, "x"), "y", "lat:0ms:q4"], capture_output=True)
    check(bad.returncode == 2 and b"usage" in bad.stderr, "a bad model is refused")

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
