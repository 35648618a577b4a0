#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""frm under injected faults: one row per (system call, errno).

Each row removes the same tree with frm while tests/fault/fault.c makes one
call fail (LD_PRELOAD), then asserts: frm did not crash, its exit status,
that the failure is reported exactly once with its path (or not at all when
it is transient or ignorable), and exactly which files are left: the
failing entry and its ancestors, nothing else.

usage: faults.py FRM LIBFAULT.so

FRM_ARGS in the environment: options given to frm before each row's own
(for example --jobs=3: the unlinks then fail in worker threads).
"""
import os
import shutil
import subprocess
import sys

from e2e_common import frm_env, make_test_dir

FRM, FAULT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
FRM_ARGS = os.environ.get("FRM_ARGS", "").split()

TREE = ["t/keep1", "t/a/f1", "t/a/victim", "t/a/f2", "t/b/g1", "t/b/g2",
        "t/vdir/h1", "t/vdir/h2"]
ALL = {"t", "t/a", "t/b", "t/vdir"} | set(TREE)
FILE_LEFT = {"t", "t/a", "t/a/victim"}
DIR_LEFT = {"t", "t/vdir", "t/vdir/h1", "t/vdir/h2"}
EMPTIED_DIR_LEFT = {"t", "t/vdir"}
NOTHING = set()
# A directory wider than one batch (1,024 entries) with a chain deeper than
# the fd window (4) in it: its fd is closed, while it is partly read, on the
# way down, and its read position must be saved (lseek) and restored.
BIG = (["t/big/b%04d" % i for i in range(1500)] +
       ["t/big/c1/c2/c3/c4/c5/f"])

# Unless FRM_ARGS has --jobs=1: what else is right for a row (the walks are
# shallower when subtrees go to other workers, so no fd needs closing)
JOBS = "--jobs=1" not in FRM_ARGS  # frm's default is --jobs=auto

# (fault, frm options, exit status, message or None, what is left[, tree
# [, another (status, message, left) that is right with --jobs]])
ROWS = [
    ("unlinkat:EACCES:victim", [], 1, "cannot remove 't/a/victim': Permission denied", FILE_LEFT),
    ("unlinkat:EPERM:victim", [], 1, "cannot remove 't/a/victim': Operation not permitted", FILE_LEFT),
    ("unlinkat:EROFS:victim", [], 1, "cannot remove 't/a/victim': Read-only file system", FILE_LEFT),
    ("unlinkat:EIO:victim", [], 1, "cannot remove 't/a/victim': Input/output error", FILE_LEFT),
    ("unlinkat:EBUSY:vdir", [], 1, "cannot remove 't/vdir': Device or resource busy", EMPTIED_DIR_LEFT),
    ("unlinkat:EINTR:victim", [], 1, "cannot remove 't/a/victim': Interrupted system call", FILE_LEFT),
    ("unlinkat:ENOMEM:victim", [], 1, "cannot remove 't/a/victim': Cannot allocate memory", FILE_LEFT),
    # the entry vanished between readdir and unlink
    ("unlinkat:ENOENT:victim:1:race", [], 1, "cannot remove 't/a/victim': No such file or directory", {"t", "t/a"}),
    ("unlinkat:ENOENT:victim:1:race", ["-f"], 0, None, NOTHING),
    # entries appeared while the directory was emptied: read it again
    ("unlinkat:ENOTEMPTY:vdir:1", [], 0, None, NOTHING),
    ("unlinkat:ENOTEMPTY:vdir:0", [], 1, "cannot remove 't/vdir': Directory not empty", EMPTIED_DIR_LEFT),
    ("openat:EACCES:vdir:0", [], 1, "cannot remove 't/vdir': Permission denied", DIR_LEFT),
    ("openat:EMFILE:vdir:0", [], 1, "cannot remove 't/vdir': Too many open files", DIR_LEFT),
    ("openat:ENFILE:vdir:0", [], 1, "cannot remove 't/vdir': Too many open files in system", DIR_LEFT),
    ("openat:ENOMEM:vdir:0", [], 1, "cannot remove 't/vdir': Cannot allocate memory", DIR_LEFT),
    ("openat:ENOENT:vdir:0", [], 1, "cannot remove 't/vdir': No such file or directory", DIR_LEFT),
    ("openat:EINTR:vdir:1", [], 0, None, NOTHING),
    ("getdents64:EIO:vdir:0", [], 1, "cannot remove 't/vdir': Input/output error", DIR_LEFT),
    ("getdents64:ENOMEM:vdir:0", [], 1, "cannot remove 't/vdir': Cannot allocate memory", DIR_LEFT),
    ("getdents64:EINTR:vdir:1", [], 0, None, NOTHING),
    ("fstat:EIO:vdir:0", [], 1, "cannot remove 't/vdir': Input/output error", DIR_LEFT),
    # the root cannot be stat'ed: FTS_NS, then unlink says what it is (as
    # GNU rm's logic does)
    ("fstatat:EACCES:t:1", [], 1, "cannot remove 't': Is a directory", ALL),
    # failing calls that are not needed do no harm: close of a directory
    # read to its end (the fd is released all the same), fstatfs (auto then
    # decides by size alone), lseek where no read position must be kept
    ("close:EIO:*:0", [], 0, None, NOTHING),
    ("fstatfs:EIO:*:0", [], 0, None, NOTHING),
    ("lseek:EIO:*:0", [], 0, None, NOTHING),
    ("lseek:EIO:big:1", [], 0, None, NOTHING, BIG),
    # the read position of a partly read directory cannot be saved: the
    # directory reports the error (FTS_ERR, as gnulib after a failed read),
    # what could be read is removed
    ("lseek:EIO:big:0", [], 1, "traversal failed: t/big: Input/output error",
     {"t", "t/big"}, BIG, (0, None, NOTHING)),
]


def left(root):
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            out.add(os.path.relpath(os.path.join(dirpath, n), root))
    return out


def main():
    top = make_test_dir()
    passed = failed = 0
    env = frm_env(FAULT)
    env["ASAN_OPTIONS"] += ":detect_leaks=1"
    try:
        for i, row in enumerate(ROWS):
            fault, opts, want_status, want_msg, want_left = row[:5]
            tree = row[5] if len(row) > 5 else TREE
            root = os.path.join(top, str(i))
            for f in tree:
                os.makedirs(os.path.join(root, os.path.dirname(f)), exist_ok=True)
                open(os.path.join(root, f), "w").close()
            p = subprocess.run(["frm", "-r"] + FRM_ARGS + opts + ["t"], executable=FRM,
                               cwd=root, capture_output=True,
                               env=dict(env, FASTRM_FAULT=fault), timeout=60)
            err = p.stderr.decode(errors="replace").splitlines()
            got = left(root)
            if JOBS and len(row) > 6 and (p.returncode, err, got) == (
                    row[6][0], ["frm: " + row[6][1]] if row[6][1] else [], row[6][2]):
                want_status, want_msg, want_left = row[6]
            problems = []
            if p.returncode < 0:
                problems.append("killed by signal %d" % -p.returncode)
            if p.returncode != want_status:
                problems.append("exit %d, want %d" % (p.returncode, want_status))
            want_err = ["frm: " + want_msg] if want_msg else []
            if err != want_err:
                problems.append("stderr %r, want %r" % (err, want_err))
            if got != want_left:
                problems.append("left %s, want %s" % (sorted(got), sorted(want_left)))
            name = "%-32s %s" % (fault, " ".join(opts))
            if problems:
                failed += 1
                print("FAIL %s: %s" % (name, "; ".join(problems)))
            else:
                passed += 1
                print("ok   %s" % name)
            subprocess.run(["chmod", "-R", "u+rwx", root])
            shutil.rmtree(root)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
