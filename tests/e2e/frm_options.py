#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""frm's own options (those GNU rm lacks): --jobs, --order, --memory, --stats.

Bad values are refused with a message and exit status 1, before anything
is removed; --jobs=N removes a tree of many directories and files with the
same -v lines (in another order, each directory after its entries), the
same --stats counts and the same exit status as
--jobs=1, also when some files cannot be removed (a directory made
read-only, when the test is not root, or an immutable file when it is root
and chattr works; without either that case skips with a reason).  Works in
a directory made by mkdtemp.

usage: frm_options.py FRM
"""
import os
import re
import shutil
import subprocess
import sys

from e2e_common import make_test_dir, order_kept

FRM = os.path.abspath(sys.argv[1])
ENV = {"LC_ALL": "C", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
failures = []
skipped = []


def check(cond, what):
    print("%s %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        failures.append(what)


def run(args, cwd):
    p = subprocess.run(["frm"] + args, executable=FRM, cwd=cwd, env=ENV,
                       capture_output=True, timeout=120)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def make_tree(root):
    """t/dNN/fNNN: 12 directories of 150 files; in every fourth they sit in inner/."""
    for d in range(12):
        sub = os.path.join(root, "t", "d%02d" % d, "inner" if d % 4 == 0 else "")
        os.makedirs(sub, exist_ok=True)
        for f in range(150):
            open(os.path.join(sub, "f%03d" % f), "w").close()


def refusals(top):
    os.mkdir(os.path.join(top, "keep"))
    open(os.path.join(top, "keep", "file"), "w").close()
    bad = [
        (["--jobs=0"], "invalid number of jobs '0' (1 to 64, or auto)"),
        (["--jobs=65"], "invalid number of jobs '65' (1 to 64, or auto)"),
        (["--jobs=abc"], "invalid number of jobs 'abc' (1 to 64, or auto)"),
        (["--jobs=-2"], "invalid number of jobs '-2' (1 to 64, or auto)"),
        (["--jobs="], "invalid number of jobs '' (1 to 64, or auto)"),
        (["--memory=1K"], "invalid memory size '1K' (at least 64K; K, M, G, T: powers of 1024)"),
        (["--memory=1P"], "invalid memory size '1P' (at least 64K; K, M, G, T: powers of 1024)"),
        (["--order=bogus"], "invalid argument 'bogus' for '--order'"),
    ]
    for opts, msg in bad:
        st, out, err = run(["-rf"] + opts + ["keep"], top)
        lines = err.splitlines()
        check(st == 1 and lines and lines[0] == "frm: " + msg and
              lines[-1] == "Try 'frm --help' for more information." and
              os.path.exists(os.path.join(top, "keep", "file")),
              "%s refused: %r" % (" ".join(opts), err))


def sizes(top):
    """--memory takes K, M, G and T (1T: a budget, not an allocation)."""
    for size in ("64K", "8M", "1G", "1T", "65536"):
        os.mkdir(os.path.join(top, "m"))
        open(os.path.join(top, "m", "f"), "w").close()
        st, out, err = run(["-r", "--memory=" + size, "m"], top)
        check(st == 0 and err == "" and not os.path.exists(os.path.join(top, "m")),
              "--memory=%s accepted: %r" % (size, err))


def stats_counts(err):
    m = re.search(r"removed (\d+) entr(?:y|ies) \((\d+) files?, (\d+) director(?:y|ies)\), "
                  r"(\d+) failures?", err)
    return m.groups() if m else None


def stats_words(top):
    """--stats says 1 entry, 1 file, 1 failure, 1 directory (not "1 files")."""
    open(os.path.join(top, "one"), "w").close()
    st, out, err = run(["--stats", "one", "missing"], top)
    check(st == 1 and "removed 1 entry (1 file, 0 directories), 1 failure, " in err,
          "--stats in the singular: %r" % err)
    os.mkdir(os.path.join(top, "d"))
    st, out, err = run(["-r", "--stats", "d"], top)
    check(st == 0 and "removed 1 entry (0 files, 1 directory), 0 failures, " in err,
          "--stats, one directory: %r" % err)


def same_with_jobs(top):
    runs = {}
    for jobs in (1, 4, "auto"):
        root = os.path.join(top, "j%s" % jobs)
        os.mkdir(root)
        make_tree(root)
        st, out, err = run(["-rv", "--stats", "--jobs=%s" % jobs, "t"], root)
        runs[jobs] = (st, out, stats_counts(err))
        check(st == 0 and not os.path.exists(os.path.join(root, "t")),
              "--jobs=%s removes the tree (exit %d)" % (jobs, st))
    check(runs[1][2] == ("1816", "1800", "16", "0"),
          "--stats counts with --jobs=1: %r" % (runs[1][2],))
    for jobs in (4, "auto"):
        same = (runs[1][0], sorted(runs[1][1].splitlines()), runs[1][2]) == \
            (runs[jobs][0], sorted(runs[jobs][1].splitlines()), runs[jobs][2])
        check(same, "--jobs=%s: the same -v lines, counts and status" % jobs)
        check(order_kept(runs[jobs][1]),
              "--jobs=%s: each directory's line after the lines of what it held" % jobs)


def failures_with_jobs(top):
    """Some files cannot be removed: the same messages, in the same order."""
    if os.geteuid() != 0:
        how = "unwritable directory"
    elif shutil.which("chattr"):
        how = "immutable file"
    else:
        skipped.append("failures with --jobs: needs chattr as root")
        print("SKIP failures with --jobs: needs chattr as root")
        return
    runs = {}
    for jobs in (1, 3):
        root = os.path.join(top, "f%d" % jobs)
        os.mkdir(root)
        make_tree(root)
        if how == "unwritable directory":
            locked = os.path.join(root, "t", "d05")
            os.chmod(locked, 0o555)
        else:
            locked = os.path.join(root, "t", "d05", "f077")
            r = subprocess.run(["chattr", "+i", locked], capture_output=True)
            if r.returncode != 0:
                skipped.append("failures with --jobs: chattr +i fails here")
                print("SKIP failures with --jobs: chattr +i fails here")
                return
        try:
            st, out, err = run(["-rv", "--jobs=%d" % jobs, "t"], root)
        finally:
            if how == "unwritable directory":
                os.chmod(locked, 0o755)
            else:
                subprocess.run(["chattr", "-i", locked])
        runs[jobs] = (st, sorted(out.splitlines()), sorted(err.splitlines()),
                      sorted(os.listdir(os.path.join(root, "t"))))
        check(st == 1 and "cannot remove 't/d05/f" in err,
              "--jobs=%d reports the %s (exit %d)" % (jobs, how, st))
    check(runs[1] == runs[3],
          "--jobs=3 with an %s: the same lines, status and remains" % how)


def main():
    top = make_test_dir()
    try:
        refusals(top)
        sizes(top)
        stats_words(top)
        same_with_jobs(top)
        failures_with_jobs(top)
    finally:
        for dirpath, dirnames, _ in os.walk(top):
            for d in dirnames:
                os.chmod(os.path.join(dirpath, d), 0o755)
        subprocess.run(["chattr", "-R", "-i", top], capture_output=True)
        shutil.rmtree(top)
    print("%d failed, %d skipped" % (len(failures), len(skipped)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
