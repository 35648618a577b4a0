# SPDX-License-Identifier: LGPL-2.1-or-later
"""frm --manifest accounts for every entry (issue 46).

As uid 65534, on a tree of FASTRM_MANIFEST_ENTRIES entries (200,000 by
default) whose names hold a newline, a tab and bytes that are not UTF-8,
with about 1 % of the entries in directories that uid 65534 cannot write:
  - the records' removed, failed and kept paths are disjoint and together
    are the tree's inventory taken before the run, exactly;
  - failed and kept together are what is still on disk; every failure is
    EACCES on an unlink;
  - the summary's counts are the records' counts, its exit status frm's;
  - the NUL format says the same;
  - frm killed with SIGKILL about half way leaves a file whose every line
    is a whole record, and every path it says was removed is gone.
Needs root (to run frm as uid 65534 and to make the tree it owns).

Usage: manifest.py FRM
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

from e2e_common import NOBODY, as_nobody, entries_below, frm_env, make_test_dir, skip

FRM = os.path.abspath(sys.argv[1])
ENTRIES = int(os.environ.get("FASTRM_MANIFEST_ENTRIES", "200000"))
NAMES = [b"plain", b"new\nline", b"tab\there", b"bad\xff\xfe", b"caf\xc3\xa9",
         b"half\xc3", b"sur\xed\xa0\x80"]


def make_tree(root, entries, seed):
    """A tree of about @entries entries below @root (bytes), owned by
    NOBODY; returns (inventory, unwritable): every path below and
    including root, and the directories NOBODY cannot write."""
    rnd = random.Random(seed)
    os.mkdir(root)
    inv = {root}
    dirs = [root]
    unwritable = []
    made = 0
    while made < entries:
        parent = dirs[rnd.randrange(len(dirs))] if len(dirs) > 1 else root
        d = os.path.join(parent, b"d%d-%s" % (made, NAMES[made % len(NAMES)]))
        os.mkdir(d)
        inv.add(d)
        dirs.append(d)
        made += 1
        n = min(entries - made, rnd.randrange(20, 200))
        for i in range(n):
            f = os.path.join(d, b"f%d-%s" % (i, NAMES[(i + made) % len(NAMES)]))
            if i % 50 == 7:
                os.symlink(b"target", f)
            else:
                os.close(os.open(f, os.O_CREAT | os.O_WRONLY, 0o644))
            inv.add(f)
        made += n
    # about 1 % of the entries below unwritable directories
    below = 0
    for d in rnd.sample(dirs[1:], len(dirs) - 1):
        if below >= entries // 100:
            break
        n = len(os.listdir(d))
        if n and below + n <= entries // 100 + 200:
            unwritable.append(d)
            below += n
    for p in inv:
        os.lchown(p, NOBODY, NOBODY)
    for d in unwritable:
        os.chmod(d, 0o555)
    return inv, unwritable


def run_frm(args, cwd):
    return subprocess.run([FRM] + args, cwd=cwd, env=frm_env(),
                          preexec_fn=as_nobody, capture_output=True)


def read_json(path):
    recs = []
    with open(path, "rb") as f:
        for line in f.read().split(b"\n"):
            if line.strip():
                recs.append(json.loads(line))
    return recs


def read_nul(path):
    recs = []
    with open(path, "rb") as f:
        for rec in f.read().split(b"\0"):
            if not rec:
                continue  # padding, or the end
            outcome, rest = rec.split(b"\t", 1)
            if outcome == b"summary":
                recs.append(json.loads(rest))
                continue
            typ, err, path = rest.split(b"\t", 2)
            recs.append({"outcome": outcome.decode(), "type": typ.decode(),
                         "errno": None if err == b"-" else err.decode(),
                         "path": path})
    return recs


def path_bytes(r):
    return r["path"] if isinstance(r["path"], bytes) else os.fsencode(r["path"])


def check_whole_run(base, fmt):
    root = os.path.join(base, b"tree")
    inv, unwritable = make_tree(root, ENTRIES, 46)
    out = os.path.join(base, b"manifest")
    p = run_frm(["-r", "--manifest=" + os.fsdecode(out),
                 "--manifest-format=" + fmt, "tree"], base)
    assert p.returncode == 1, (p.returncode, p.stderr[-2000:])
    recs = read_json(out) if fmt == "json" else read_nul(out)
    summary = recs[-1]
    assert summary["outcome"] == "summary", summary
    assert all(r["outcome"] != "summary" for r in recs[:-1])
    sets = {"removed": set(), "failed": set(), "kept": set()}
    for r in recs[:-1]:
        p_ = os.path.join(base, path_bytes(r))
        assert p_ not in sets[r["outcome"]], ("twice", r)
        sets[r["outcome"]].add(p_)
        if r["outcome"] == "failed":
            assert r["errno"] == "EACCES", r
            if fmt == "json":
                assert r["op"] in ("unlink", "rmdir"), r
    rem, fail, kept = sets["removed"], sets["failed"], sets["kept"]
    assert not (rem & fail) and not (rem & kept) and not (fail & kept)
    union = rem | fail | kept
    assert union == inv, ("not the inventory", len(union), len(inv),
                          sorted(union ^ inv)[:5])
    left = entries_below(root)
    assert fail | kept == left, ("left", sorted((fail | kept) ^ left)[:5])
    assert fail, "no failure: the tree has no unwritable directory"
    # the summary's counts are the records'
    assert summary["removed"] == len(rem), (summary, len(rem))
    assert summary["failed"] == len(fail) == summary["failed_by_errno"]["EACCES"]
    assert summary["kept"] == len(kept)
    assert sum(summary["removed_by_type"].values()) == len(rem)
    types = {}
    for r in recs[:-1]:
        if r["outcome"] == "removed":
            types[r["type"]] = types.get(r["type"], 0) + 1
    assert types == summary["removed_by_type"], (types, summary)
    assert summary["exit_status"] == 1
    # the failures, as frm said them
    assert p.stderr.count(b"Permission denied") == len(fail)
    for d in unwritable:
        os.chmod(d, 0o755)
    print("ok: %s: %d entries, %d removed, %d failed, %d kept"
          % (fmt, len(inv), len(rem), len(fail), len(kept)))


def check_killed(base):
    root = os.path.join(base, b"tree")
    inv, _ = make_tree(root, ENTRIES, 47)
    out = os.path.join(base, b"manifest")
    proc = subprocess.Popen([FRM, "-r", "--jobs=2", "--manifest=" + os.fsdecode(out),
                             "tree"], cwd=base, env=frm_env(), preexec_fn=as_nobody,
                            stderr=subprocess.DEVNULL)
    # about half way: half of the tree's records written (counted as the
    # file grows)
    deadline = time.monotonic() + 300
    records = 0
    while not os.path.exists(out) and proc.poll() is None:
        time.sleep(0.001)
    with open(out, "rb") as f:
        while proc.poll() is None and time.monotonic() < deadline:
            chunk = f.read()
            records += chunk.count(b"\n")
            if records >= len(inv) // 2:
                break
            if not chunk:
                time.sleep(0.001)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, ("it ended first", proc.returncode)
    data = open(out, "rb").read()
    lines = [ln for ln in data.split(b"\n") if ln.strip()]
    removed = 0
    for ln in lines:
        r = json.loads(ln)  # every line a whole record
        assert r["outcome"] in ("removed", "failed", "kept"), r
        if r["outcome"] == "removed":
            removed += 1
            assert not os.path.lexists(os.path.join(base, path_bytes(r))), r
    left = entries_below(root)
    assert removed > 0 and left, (removed, len(left))
    print("ok: killed: %d bytes, %d records (%d removed), %d of %d entries left"
          % (len(data), len(lines), removed, len(left), len(inv)))


def main():
    if os.geteuid() != 0:
        skip("needs root: frm runs as uid %d on a tree it owns" % NOBODY)
    for what in ("json", "nul", "kill"):
        base = os.fsencode(make_test_dir())
        try:
            os.chmod(base, 0o755)
            os.chown(base, NOBODY, NOBODY)
            if what == "kill":
                check_killed(base)
            else:
                check_whole_run(base, what)
        finally:
            for top, dirnames, _ in os.walk(base):
                for n in dirnames:
                    os.chmod(os.path.join(top, n), 0o755, follow_symlinks=False)
            shutil.rmtree(base)


if __name__ == "__main__":
    main()
