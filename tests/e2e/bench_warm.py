#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bench/fastrm-bench's warm(): find -ls again until a pass reads at most
WARM_READS_LEFT blocks from the device or no fewer than the pass before
(XFS reads its buffers back each pass), at most WARM_PASSES passes, and
one pass where there is no device (tmpfs); the dentries and inodes are
dropped before every pass but the first.  The device's counters and the
find are stood in for: nothing is read or removed."""
import importlib.machinery
import importlib.util
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the harness
path = sys.argv[1]
loader = importlib.machinery.SourceFileLoader("fastrm_bench", path)
spec = importlib.util.spec_from_loader("fastrm_bench", loader)
bench = importlib.util.module_from_spec(spec)
loader.exec_module(bench)
real_blockstat = bench.blockstat  # reads nothing for no device


class Place:
    def __init__(self, dev):
        self.dev = dev


def run_warm(dev, reads):
    """warm() on a device whose passes read reads[0], reads[1], ... blocks;
    returns what it returned and the passes the find ran."""
    state = {"count": 0, "finds": 0, "drops": 0, "reads": list(reads)}

    def blockstat(d):
        assert d == dev
        return [state["count"]] + [0] * 10

    def run(cmd, **kw):
        assert cmd[0] == "find" and cmd[-1] == "-ls", cmd
        # every pass but the first reads the inodes again
        assert state["drops"] == state["finds"], (state["drops"], state["finds"])
        state["finds"] += 1
        state["count"] += state["reads"].pop(0) if state["reads"] else 0

    def drop_inodes():
        state["drops"] += 1

    bench.blockstat = blockstat if dev else real_blockstat
    bench.drop_inodes = drop_inodes
    bench.subprocess.run = run
    got = bench.warm(Place(dev), "/nonexistent/t")
    return got, state["finds"]


cases = [
    # (device, reads per pass, expected (passes, left), finds run)
    ("loop7", [14777, 187, 12], (3, 12), 3),
    ("loop7", [3000, 50], (2, 50), 2),                    # the bound is inclusive
    ("loop7", [0], (1, 0), 1),                            # already warm
    ("loop7", [5000, 4000, 3000, 2000, 1000, 900], (5, 1000), 5),  # gives up
    ("loop7", [9000, 6802, 6802, 6802], (3, 6802), 3),   # XFS: no fewer, stops
    ("loop7", [6000, 6805, 100], (2, 6805), 2),           # more than before: stops
    ("loop7", [3000, 2999, 2998, 40], (4, 40), 4),        # fewer each pass: goes on
    (None, [], (1, 0), 1),                                # tmpfs: no device
]
passed = failed = 0
for dev, reads, want, finds in cases:
    got, ran = run_warm(dev, reads)
    ok = got == want and ran == finds
    print("%s %s %s: warm() %s, %d finds (want %s, %d)" % (
        "ok" if ok else "FAIL", dev, reads, got, ran, want, finds))
    passed += ok
    failed += not ok
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
