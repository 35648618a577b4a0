#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""frm-mpi under mpirun (--oversubscribe; as root --allow-run-as-root):
trees removed completely with 4 ranks and with 1 (a wide tree, a chain
deeper than rank 0 reads, a directory too large for rank 0 to read, files
and symbolic links given, symbolic links inside never followed); bad
operands with the exit status and messages of frm (frm-mpi's name for
frm's); prompts refused; what cannot be removed (as uid 65534) reported
once and the status 1 on every rank.  Every tree is made in a directory of
this test's own (mkdtemp under $TMPDIR).

usage: frm_mpi.py MPIRUN FRM-MPI FRM FAULT-LIB
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

MPIRUN, FRM_MPI, FRM, FAULT = (os.path.abspath(p) if os.sep in p else p for p in sys.argv[1:5])
NOBODY = 65534
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def mpi(np, args, cwd, user=None, launch=(), env=None):
    cmd = [MPIRUN, "--quiet", "--oversubscribe"] + list(launch) + ["-np", str(np), FRM_MPI] + args
    if os.geteuid() == 0 and user is None:
        cmd.insert(1, "--allow-run-as-root")
    if user is not None:
        cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + cmd
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout, p.stderr


def make_wide(top, dirs=40, sub=4, files=12):
    for d in range(dirs):
        for s in range(sub):
            p = os.path.join(top, "d%d" % d, "s%d" % s)
            os.makedirs(p)
            for f in range(files):
                open(os.path.join(p, "f%d" % f), "w").close()
        open(os.path.join(top, "d%d" % d, "top"), "w").close()
    return dirs * (1 + sub * (1 + files) + 1)


def make_chain(top, depth, files=1):
    os.mkdir(top)
    fd = os.open(top, os.O_RDONLY)
    for _ in range(depth):
        for f in range(files):
            os.close(os.open("f%d" % f, os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
        os.mkdir("d", dir_fd=fd)
        nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    os.close(fd)


def trees(np, work):
    sentinel_dir = os.path.join(work, "outside")
    os.mkdir(sentinel_dir)
    sentinel = os.path.join(sentinel_dir, "keep")
    open(sentinel, "w").close()
    os.mkdir(os.path.join(work, "t"))
    make_wide(os.path.join(work, "t", "wide"))
    make_chain(os.path.join(work, "t", "chain"), 300, 2)
    flat = os.path.join(work, "t", "flat")
    os.mkdir(flat)
    for i in range(6000):  # more than rank 0 reads: one task
        open(os.path.join(flat, "x%d" % i), "w").close()
    os.symlink(sentinel_dir, os.path.join(work, "t", "wide", "d3", "to-outside"))
    os.symlink("/", os.path.join(work, "t", "chain", "to-root"))
    open(os.path.join(work, "file"), "w").close()
    os.symlink(sentinel_dir, os.path.join(work, "link"))
    make_wide(os.path.join(work, "second"), 5, 2, 3)
    rc, out, err = mpi(np, ["-r", "--stats", "t", "file", "link", "second"], work)
    check(rc == 0, "-np %d: exit 0 (%d: %s)" % (np, rc, err.strip()[-300:]))
    left = sorted(os.listdir(work))
    check(left == ["outside"], "-np %d: every operand gone (left: %s)" % (np, left))
    check(os.path.exists(sentinel), "-np %d: nothing outside touched" % np)
    stats = [l for l in err.splitlines() if "removed" in l]
    check(len(stats) == 1, "-np %d: --stats printed once: %s" % (np, stats))


def bad_operands(np, work):
    os.makedirs(os.path.join(work, "a", "b"))
    cases = [
        (["-r", "missing"], "missing operand"),
        (["-rf", "missing"], "missing operand, -f"),
        (["-r", "."], "'.'"),
        (["-r", "a/.."], "'a/..'"),
        (["-r", "a/b/."], "'a/b/.'"),
        (["-r"], "no operand"),
        (["-rf"], "no operand, -f"),
        (["-r", "--jobs=0", "a"], "--jobs=0"),
        (["-r", "--order=bogus", "a"], "--order=bogus"),
    ]
    for args, what in cases:
        rc, out, err = mpi(np, args, work)
        f = subprocess.run(["frm"] + args, executable=FRM, cwd=work, capture_output=True,
                           text=True)
        same = err.replace("frm-mpi: ", "frm: ").replace("frm-mpi --help", "frm --help")
        check(rc == f.returncode, "-np %d %s: exit %d as frm's %d" % (np, what, rc, f.returncode))
        check(same == f.stderr, "-np %d %s: frm's message: %r against %r"
              % (np, what, err, f.stderr))
    check(os.path.isdir(os.path.join(work, "a", "b")), "-np %d: refusals touched nothing" % np)
    for args in (["-ri", "a"], ["-rI", "a"], ["-r", "--interactive=always", "a"], ["a"]):
        rc, out, err = mpi(np, args, work)
        check(rc == 1 and err.count("\n") >= 1, "-np %d %s: refused, exit 1" % (np, args))
    check(os.path.isdir(os.path.join(work, "a", "b")), "-np %d: nothing removed" % np)


def check_left(what, t, work, msgs):
    """The contract for what is left in @t: no message twice, and every
    entry left named, or under or above one named."""
    check(len(msgs) == len(set(msgs)), "%s: no message twice" % what)
    left = []
    for root, dirs, files in os.walk(t):
        left += [os.path.relpath(os.path.join(root, n), work) for n in dirs + files]
    uncovered = [p for p in left
                 if not any(("'%s'" % p) in m or ("'%s/" % p) in m or
                            any(("'%s'" % a) in m for a in ancestors(p)) for m in msgs)]
    check(not uncovered, "%s: every entry left is named, or is under or above one "
          "named (uncovered: %s)" % (what, uncovered[:5]))


def unremovable(np, work):
    """As uid 65534: directories it cannot write keep their entries; each
    is named once, the status is 1, the rest is gone."""
    os.chown(work, NOBODY, NOBODY)
    t = os.path.join(work, "t")
    make_wide(t, 20, 3, 5)
    for root, dirs, files in os.walk(work):
        for n in dirs + files:
            os.lchown(os.path.join(root, n), NOBODY, NOBODY)
    for d in ("d2/s1", "d7", "d15/s0"):
        os.chmod(os.path.join(t, d), 0o555)
    rc, out, err = mpi(np, ["-r", "t"], work, user=NOBODY)
    msgs = [l for l in err.splitlines() if l]
    check(rc == 1, "-np %d as uid %d: exit 1 (%d)" % (np, NOBODY, rc))
    check_left("-np %d" % np, t, work, msgs)
    check(not os.path.exists(os.path.join(t, "d0")), "-np %d: the rest is gone" % np)
    for d in ("d2/s1", "d7", "d15/s0"):
        os.chmod(os.path.join(t, d), 0o755)


def sharded(np, work):
    """A directory too large for rank 0 to read, and one with many files,
    are split over the ranks by a hash of the names (frm-mpi's shards):
    every entry goes, subdirectories whole, symlinks not followed."""
    sentinel_dir = os.path.join(work, "outside")
    os.mkdir(sentinel_dir)
    open(os.path.join(sentinel_dir, "keep"), "w").close()
    big = os.path.join(work, "big")  # more than rank 0 reads (4,096)
    os.mkdir(big)
    for i in range(5000):
        open(os.path.join(big, "f%d" % i), "w").close()
    make_wide(os.path.join(big, "sub"), 3, 2, 4)
    os.symlink(sentinel_dir, os.path.join(big, "to-outside"))
    many = os.path.join(work, "many")  # read by rank 0: 100 files, a subdirectory
    os.makedirs(os.path.join(many, "d", "e"))
    for i in range(100):
        open(os.path.join(many, "g%d" % i), "w").close()
    rc, out, err = mpi(np, ["-r", "--stats", "big", "many"], work)
    check(rc == 0, "-np %d shards: exit 0 (%d: %s)" % (np, rc, err.strip()[-300:]))
    check(sorted(os.listdir(work)) == ["outside"] and
          os.listdir(sentinel_dir) == ["keep"],
          "-np %d shards: both gone, nothing outside touched (left: %s)"
          % (np, sorted(os.listdir(work))))
    m = re.search(r" 0 failures, .*; (\d+) subtrees?;", err)
    # big: one shard a rank; many: one a rank for its files (unsplit: 2)
    check(m is not None and int(m.group(1)) >= 2 * np,
          "-np %d shards: %s tasks (want %d or more)" % (np, m and m.group(1), 2 * np))


def make_deep(top, fan=5, files=20):
    """Three levels of fan directories, each with files: one subtree far
    larger than its siblings."""
    for a in range(fan):
        for b in range(fan):
            for c in range(fan):
                p = os.path.join(top, "a%d" % a, "b%d" % b, "c%d" % c)
                os.makedirs(p)
                for f in range(files):
                    open(os.path.join(p, "f%d" % f), "w").close()
            open(os.path.join(top, "a%d" % a, "b%d" % b, "g"), "w").close()


def gifts(np, work):
    """One rank's subtree far larger than the others': the ranks that ran
    dry get directories of it given away by its walk (frm-mpi's work
    stealing), all of it goes.  Then, as uid 65534, with every rank giving
    two directories of level 2 away from the start (FRM_MPI_TEST_GIVE) and
    directories it cannot write below, beside and above them: each entry
    left named once (or under or above one named), exit 1, the rest gone."""
    sentinel_dir = os.path.join(work, "outside")
    os.mkdir(sentinel_dir)
    open(os.path.join(sentinel_dir, "keep"), "w").close()
    t = os.path.join(work, "t")
    make_deep(os.path.join(t, "big"), 6)
    os.makedirs(os.path.join(t, "small", "s"))
    os.symlink(sentinel_dir, os.path.join(t, "big", "a1", "b2", "c3", "to-outside"))
    # --jobs=1: one task at a time on every rank, so rank 0 reads only the
    # top, and "big" is one rank's task; each unlink of a file (only "big"
    # has files: "f..." the fault matches) 0.3 ms slower,
    # so that the others run dry long before it is done, however late
    # they start (the fault library: tests/fault/fault.c)
    slow = {"LD_PRELOAD": FAULT, "FASTRM_FAULT": "unlinkat:DELAY:f:0:300",
            "ASAN_OPTIONS": os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0"}
    rc, out, err = mpi(np, ["-r", "--stats", "--jobs=1", "t"], work, env=slow)
    m = re.search(r"(\d+) given away", err)
    check(rc == 0 and not os.path.exists(t) and os.listdir(sentinel_dir) == ["keep"],
          "-np %d gifts: exit 0, all gone, nothing outside touched (%d: %s)"
          % (np, rc, err.strip()[-300:]))
    check(m is not None and int(m.group(1)) > 0,
          "-np %d gifts: directories given away to ranks that ran dry (%s)"
          % (np, m and m.group(1)))
    if os.geteuid() != 0:
        print("skip -np %d gifts as uid %d: needs root" % (np, NOBODY))
        return
    os.chown(work, NOBODY, NOBODY)
    make_deep(t, 4, 3)
    for root, dirs, files in os.walk(t):
        for n in dirs + files:
            os.lchown(os.path.join(root, n), NOBODY, NOBODY)
    os.lchown(t, NOBODY, NOBODY)
    # in a1's first directory, whichever of c0 and c3 its walk keeps (the
    # first two entered are given away): a failure below a directory the
    # walk kept above a gift
    locked = ("a0/b1", "a2/b3/c3", "a3") + tuple("a1/b%d/c%d" % (b, c)
                                                 for b in range(4) for c in (0, 3))
    for d in locked:
        os.chmod(os.path.join(t, d), 0o555)
    rc, out, err = mpi(np, ["-r", "--stats", "--jobs=1", "t"], work, user=NOBODY,
                       env={"FRM_MPI_TEST_GIVE": "2:2"})
    msgs = [l for l in err.splitlines() if l and "given away by a rank" not in l]
    m = re.search(r"(\d+) given away", err)
    check(rc == 1, "-np %d gifts as uid %d: exit 1 (%d)" % (np, NOBODY, rc))
    check(m is not None and int(m.group(1)) > 0,
          "-np %d gifts as uid %d: directories given away (%s)" % (np, NOBODY, m and m.group(1)))
    check_left("-np %d gifts" % np, t, work, msgs)
    gone = [d for d in ("a0/b0", "a2/b0", "a2/b3/c0") if os.path.exists(os.path.join(t, d))]
    check(not gone, "-np %d gifts: the rest is gone (left: %s)" % (np, gone))
    for d in locked:
        os.chmod(os.path.join(t, d), 0o755)


def manifest(np, work):
    """--manifest: one file for the job, whose removed, failed and kept
    records are exactly the tree as it was, failed and kept exactly what
    is left (each failure EACCES), the summary's counts the records'; as
    uid 65534, with a directory too large for rank 0 to read (shards),
    directories given away (FRM_MPI_TEST_GIVE) and unwritable ones."""
    import json
    os.chown(work, NOBODY, NOBODY)
    t = os.path.join(work, "t")
    make_deep(os.path.join(t, "deep"), 4, 3)
    make_wide(os.path.join(t, "wide"), 12, 3, 4)
    flat = os.path.join(t, "flat")
    os.mkdir(flat)
    for i in range(6000):  # more than rank 0 reads: shards
        open(os.path.join(flat, "x\n%d" % i if i % 1000 == 7 else "x%d" % i), "w").close()
    os.mkdir(os.path.join(flat, "sub"))
    open(os.path.join(flat, "sub", "f"), "w").close()
    inventory = {"t"}
    for root, dirs, files in os.walk(t):
        for n in dirs + files:
            inventory.add(os.path.relpath(os.path.join(root, n), work))
    for p_ in inventory:
        os.lchown(os.path.join(work, p_), NOBODY, NOBODY)
    locked = ("deep/a0/b1", "deep/a2", "wide/d3/s1", "wide/d9")
    for d in locked:
        os.chmod(os.path.join(t, d), 0o555)
    rc, out, err = mpi(np, ["-r", "--jobs=2", "--stats", "--manifest=m.jsonl", "t"], work,
                       user=NOBODY, env={"FRM_MPI_TEST_GIVE": "2:2"})
    check(rc == 1, "-np %d --manifest: exit 1 (%d: %s)" % (np, rc, err.strip()[-200:]))
    given = re.search(r"(\d+) given away", err)
    check(np == 1 or (given and int(given.group(1)) > 0),
          "-np %d --manifest: directories given away (%s)" % (np, given and given.group(1)))
    parts = [n for n in os.listdir(work) if ".part-" in n]
    check(not parts, "-np %d --manifest: the parts are gone (%s)" % (np, parts))
    with open(os.path.join(work, "m.jsonl")) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    summary = recs.pop()
    by = {}
    twice = []
    for r in recs:
        got = by.setdefault(r["outcome"], set())
        if r["path"] in got:
            twice.append(r["path"])
        got.add(r["path"])
    rem, fail, kept = (by.get(o, set()) for o in ("removed", "failed", "kept"))
    left = set()
    for root, dirs, files in os.walk(t):
        left |= {os.path.relpath(os.path.join(root, n), work) for n in dirs + files}
    if os.path.exists(t):
        left.add("t")
    check(not twice and not (rem & fail) and not (rem & kept) and not (fail & kept),
          "-np %d --manifest: each entry once (twice: %s)" % (np, twice[:3]))
    check(rem | fail | kept == inventory, "-np %d --manifest: the records are the tree "
          "(missing %s, more %s)" % (np, sorted(inventory - (rem | fail | kept))[:3],
                                      sorted((rem | fail | kept) - inventory)[:3]))
    check(fail | kept == left, "-np %d --manifest: failed and kept are what is left "
          "(%s)" % (np, sorted((fail | kept) ^ left)[:3]))
    check(fail and all(r["errno"] == "EACCES" for r in recs if r["outcome"] == "failed"),
          "-np %d --manifest: every failure EACCES" % np)
    check(summary["outcome"] == "summary" and summary["removed"] == len(rem) and
          summary["failed"] == len(fail) and summary["kept"] == len(kept) and
          summary["exit_status"] == 1, "-np %d --manifest: the summary counts the "
          "records (%s)" % (np, {k: summary.get(k) for k in ("removed", "failed", "kept")}))
    for d in locked:
        os.chmod(os.path.join(t, d), 0o755)


def binding(work):
    """Open MPI binds a rank of a small job to one core unless told
    otherwise: frm-mpi undoes that default (its tasks are threads), and
    keeps a binding asked for."""
    cpus = len(os.sched_getaffinity(0))
    if cpus < 2:
        print("skip binding: one CPU here")
        return
    auto = min(4 * cpus, 16)  # tools/frm/jobs.h: 4 per CPU, at most 16
    for launch, want, what in (((), auto, "Open MPI's default binding undone"),
                               (("--bind-to", "core"), 4, "--bind-to core kept")):
        os.mkdir(os.path.join(work, "t"))
        make_wide(os.path.join(work, "t"), 3, 2, 2)
        rc, out, err = mpi(1, ["-r", "--stats", "t"], work, launch=launch)
        m = re.search(r"up to (\d+) subtrees at once", err)
        got = int(m.group(1)) if m else None
        check(rc == 0 and got == want,
              "-np 1: %s: --jobs=auto is %s (want %d; exit %d)" % (what, got, want, rc))


def ancestors(p):
    parts = p.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def main():
    base = os.environ.get("TMPDIR") or "/tmp"
    for np in (4, 1):
        for case in (trees, bad_operands) + ((sharded, gifts) if np > 1 else ()):
            work = tempfile.mkdtemp(prefix="fastrm-mpi-", dir=base)
            try:
                case(np, work)
            finally:
                shutil.rmtree(work, ignore_errors=True)
        if os.geteuid() == 0:
            for case in (unremovable, manifest):
                work = tempfile.mkdtemp(prefix="fastrm-mpi-", dir=base)
                os.chmod(work, 0o755)
                try:
                    case(np, work)
                finally:
                    for root, dirs, _ in os.walk(work):
                        for d in dirs:
                            if not os.path.islink(os.path.join(root, d)):
                                os.chmod(os.path.join(root, d), 0o755)
                    shutil.rmtree(work, ignore_errors=True)
        else:
            print("skip -np %d unremovable: needs root (to run as uid %d)" % (np, NOBODY))
    work = tempfile.mkdtemp(prefix="fastrm-mpi-", dir=base)
    try:
        binding(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
