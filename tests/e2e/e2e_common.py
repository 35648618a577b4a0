# SPDX-License-Identifier: LGPL-2.1-or-later
"""Helpers shared by the end-to-end scripts (imported from their folder):
where a test makes its directory, the environment frm runs in, the skip
code, and the order check of frm's output with workers."""

import os
import sys
import tempfile

# The exit status that meson counts as a skipped test.
SKIP = 77

# The plain user the tests that need one run frm as (root makes its trees).
NOBODY = 65534


def skip(reason):
    """Leave the test as skipped, saying why."""
    print("SKIP: " + reason)
    sys.exit(SKIP)


def test_base():
    """Where a test makes its directory, as tests/common/fixture.c: $TMPDIR,
    else /dev/shm when it is writable with room (1 GiB and 2 million inodes
    free: a container's is often 64 MiB), else /tmp."""
    if os.environ.get("TMPDIR"):
        return os.environ["TMPDIR"]
    try:
        fs = os.statvfs("/dev/shm")
        room = (fs.f_bavail * fs.f_frsize >= 1 << 30
                and fs.f_favail >= 2000000)
    except OSError:
        room = False
    return "/dev/shm" if room and os.access("/dev/shm", os.W_OK) else "/tmp"


def make_test_dir():
    """A fresh directory of the test's own (the only place it deletes in)."""
    return tempfile.mkdtemp(prefix="fastrm-test.", dir=test_base())


def test_dir():
    """The same as a context manager that removes it at the end."""
    return tempfile.TemporaryDirectory(prefix="fastrm-test.", dir=test_base())


def frm_env(preload=None, **extra):
    """The environment frm runs in: the C locale, and when @preload (the
    fault library) is given, LD_PRELOAD with what ASan needs to accept it;
    @extra adds variables."""
    env = dict(os.environ, LC_ALL="C", **extra)
    if preload:
        env["LD_PRELOAD"] = preload
        env["ASAN_OPTIONS"] = (os.environ.get("ASAN_OPTIONS", "")
                               + ":verify_asan_link_order=0")
    return env


def order_kept(out):
    """frm's -v output with workers: each "removed directory 'D'" line comes
    after every line that names something under D/."""
    if isinstance(out, bytes):
        out = out.decode(errors="replace")
    lines = out.splitlines()
    for i, l in enumerate(lines):
        if l.startswith("removed directory '"):
            d = l[len("removed directory '"):-1] + "/"
            if any(d in later for later in lines[i + 1:]):
                return False
    return True


def as_nobody():
    """preexec_fn: the child runs as NOBODY, no supplementary groups."""
    os.setgroups([])
    os.setgid(NOBODY)
    os.setuid(NOBODY)


def entries_below(root):
    """Every path below and including @root (as given: str or bytes), or
    the empty set when @root is not there."""
    out = {root} if os.path.lexists(root) else set()
    for top, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            out.add(os.path.join(top, n))
    return out
