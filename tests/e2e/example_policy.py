#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""examples/order-by-name on 2,500 files: each once, in windows of 1,000
sorted by name (the last window may be longer by one kernel buffer)."""
import os
import subprocess
import sys

from e2e_common import test_dir

with test_dir() as top:
    names = ["n%05d" % ((i * 7919) % 2500) for i in range(2500)]
    for n in names:
        open(os.path.join(top, n), "w").close()
    out = subprocess.run([sys.argv[1], top], capture_output=True, text=True, check=True)
    got = [os.path.basename(p) for p in out.stdout.splitlines()[1:]]
    ok = sorted(got) == sorted(names)
    # sorted runs: the number of descents is at most the number of windows
    descents = sum(1 for a, b in zip(got, got[1:]) if a > b)
    ok = ok and descents <= 3
    print("%s every entry once, %d descents" % ("ok" if ok else "FAIL", descents))
    print("%d passed, %d failed" % (1 if ok else 0, 0 if ok else 1))
    sys.exit(0 if ok else 1)
