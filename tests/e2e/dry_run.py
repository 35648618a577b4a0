# SPDX-License-Identifier: LGPL-2.1-or-later
"""frm --dry-run is the real run's twin (issue 46), a property test.

For FASTRM_DRY_RUN_TREES random trees (1,000 by default; random depth,
fan-out and names, some with a newline, a tab or bytes that are not
UTF-8; some directories unwritable for uid 65534) and random --exclude
patterns, run as uid 65534:
  - what `frm -r --dry-run --null` lists is what the real run then
    removes, and what a model of GNU rm's rules with the exclusions says
    it removes;
  - every entry that matches a pattern survives, and so does every
    directory above one;
  - no "Directory not empty" is said for a kept directory;
  - both exit with the status GNU rm would give for the entries it was
    asked to remove (1 when an entry not excluded could not be removed),
    and say the same messages.
Needs root (to run frm as uid 65534 on trees it owns).

Usage: dry_run.py FRM [SEED]
"""
import fnmatch
import os
import random
import shutil
import subprocess
import sys

from e2e_common import NOBODY, as_nobody, entries_below, frm_env, make_test_dir, skip

FRM = os.path.abspath(sys.argv[1])
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 46
TREES = int(os.environ.get("FASTRM_DRY_RUN_TREES", "1000"))
NAMES = [b"a", b"b.c", b"x y", b"n\nl", b"t\tb", b"\xff\xfe", b"d1", b"keep",
         b".hid", b"caf\xc3\xa9.c", b"zz"]
PATTERNS = [b"*.c", b"keep*", b"d1*", b"a*/", b"*/b*", b"d1*/*.c", b"\xff*",
            b"n\nl*", b"*1", b"x?y*", b"/keep*", b"*/*/zz*", b"t\tb*/", b".*"]


class Node:
    def __init__(self, name, kind, children=None):
        self.name, self.kind = name, kind
        self.children = children or []
        self.writable = True


def gen(rnd, depth):
    kids = []
    used = set()
    for i in range(rnd.randrange(0, 6)):
        name = rnd.choice(NAMES) + b"%d" % i
        if name in used:
            continue
        used.add(name)
        r = rnd.random()
        if depth > 0 and r < 0.3:
            node = gen(rnd, depth - 1)
            node.name = name
        elif r < 0.4:
            node = Node(name, "link")
        else:
            node = Node(name, "file")
        kids.append(node)
    d = Node(None, "dir", kids)
    d.writable = rnd.random() > 0.15
    return d


def build(node, path):
    if node.kind == "dir":
        os.mkdir(path)
        for c in node.children:
            build(c, os.path.join(path, c.name))
    elif node.kind == "link":
        os.symlink(b"nowhere", path)
    else:
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
    os.lchown(path, NOBODY, NOBODY)


def lock(node, path):
    if node.kind != "dir":
        return
    for c in node.children:
        lock(c, os.path.join(path, c.name))
    if not node.writable:
        os.chmod(path, 0o555)


def match(pats, name, rel, is_dir):
    """The exclusion rule as frm(1) states it (fnmatch(3): '*' matches a
    leading '.', and with a '/' in the pattern does not match '/')."""
    for p in pats:
        dir_only = len(p) > 1 and p.endswith(b"/")
        p = p.rstrip(b"/") or p
        if dir_only and not is_dir:
            continue
        if b"/" not in p:
            if fnmatch.fnmatchcase(name, p):
                return True
        elif rel is not None:
            pp = p.lstrip(b"/").split(b"/")
            rr = rel.split(b"/")
            if len(pp) == len(rr) and all(fnmatch.fnmatchcase(r, q)
                                          for r, q in zip(rr, pp)):
                return True
    return False


def model(node, path, rel, pats, parent_writable, out):
    """GNU rm's rules with the exclusions: fills out["removed"],
    out["excluded"], out["failed"]; returns whether @node is gone."""
    name = os.path.basename(path)
    if match(pats, name, rel, node.kind == "dir"):
        out["excluded"].append(path)
        return False
    if node.kind == "dir":
        gone = True
        for c in node.children:
            crel = c.name if rel is None else rel + b"/" + c.name
            gone &= model(c, os.path.join(path, c.name), crel, pats,
                          node.writable, out)
        if not gone:
            return False  # kept, without a word
    if not parent_writable:
        out["failed"].append(path)
        return False
    out["removed"].add(path)
    return True


def frm(args, cwd):
    return subprocess.run([FRM] + args, cwd=cwd, env=frm_env(),
                          preexec_fn=as_nobody, capture_output=True)


def one(base, rnd, n):
    tree = gen(rnd, rnd.randrange(1, 5))
    tree.name = b"t"
    root = os.path.join(base, b"t")
    build(tree, root)
    lock(tree, root)
    pats = rnd.sample(PATTERNS, rnd.randrange(0, 4))
    args = [b"--exclude=" + p for p in pats]
    want = {"removed": set(), "excluded": [], "failed": []}
    model(tree, b"t", None, pats, True, want)
    before = {os.path.relpath(p, base) for p in entries_below(root)}
    dry = frm([b"-r", b"--dry-run", b"--null"] + args + [b"t"], base)
    listed = set(p for p in dry.stdout.split(b"\0") if p)
    real = frm([b"-r"] + args + [b"t"], base)
    after = {os.path.relpath(p, base) for p in entries_below(root)} \
        if os.path.lexists(root) else set()
    removed = before - after
    ctx = (n, pats, sorted(want["removed"] ^ listed)[:4],
           sorted(removed ^ listed)[:4], dry.stderr[:300], real.stderr[:300])
    assert listed == removed, ("dry run != real run", ctx)
    assert listed == want["removed"], ("dry run != model", ctx)
    for p in want["excluded"]:
        assert os.path.lexists(os.path.join(base, p)), ("excluded gone", p, ctx)
        up = os.path.dirname(p)
        while up:
            assert os.path.lexists(os.path.join(base, up)), ("above gone", up, ctx)
            up = os.path.dirname(up)
    rc = 1 if want["failed"] else 0
    assert dry.returncode == real.returncode == rc, \
        ("status", dry.returncode, real.returncode, rc, ctx)
    for p in (dry, real):
        assert b"Directory not empty" not in p.stderr, ("ENOTEMPTY said", ctx)
    assert sorted(dry.stderr.splitlines()) == sorted(real.stderr.splitlines()), \
        ("messages differ", ctx)
    assert real.stderr.count(b"Permission denied") == len(want["failed"]), ctx
    return len(before), len(removed), len(want["failed"])


def prompts(base):
    """A prompt is answered no, without reading stdin (here "y"), as a
    real run answered no: the same removals, messages and status."""
    base = os.path.join(base, b"prompts")
    os.mkdir(base)
    os.chown(base, NOBODY, NOBODY)
    root = os.path.join(base, b"p")
    os.mkdir(root)
    for n in (b"ro", b"rw"):
        os.close(os.open(os.path.join(root, n), os.O_CREAT | os.O_WRONLY, 0o644))
    os.chmod(os.path.join(root, b"ro"), 0o444)
    for p in (root, os.path.join(root, b"ro"), os.path.join(root, b"rw")):
        os.lchown(p, NOBODY, NOBODY)
    dry = subprocess.run([FRM, "-r", "---presume-input-tty", "--dry-run", "p"], cwd=base,
                         env=frm_env(), preexec_fn=as_nobody, capture_output=True,
                         input=b"y\ny\ny\n")
    assert dry.stdout == b"p/rw\n", dry
    # as GNU rm: the directory that keeps the entry declined fails
    assert b"remove write-protected regular empty file 'p/ro'? n (--dry-run)\n" \
        in dry.stderr and dry.stderr.endswith(b"cannot remove 'p': Directory not empty\n"), \
        dry.stderr
    assert os.path.exists(os.path.join(root, b"rw"))
    real = subprocess.run([FRM, "-r", "---presume-input-tty", "p"], cwd=base,
                          env=frm_env(), preexec_fn=as_nobody, capture_output=True,
                          input=b"n\n")
    assert real.returncode == dry.returncode == 1, (real, dry)
    assert real.stderr == dry.stderr.replace(b"n (--dry-run)\n", b""), (real, dry)
    assert os.listdir(root) == [b"ro"], os.listdir(root)
    print("ok: a prompt in a dry run is answered no")


def main():
    if os.geteuid() != 0:
        skip("needs root: frm runs as uid %d on trees it owns" % NOBODY)
    rnd = random.Random(SEED)
    totals = [0, 0, 0]
    base = os.fsencode(make_test_dir())
    try:
        os.chmod(base, 0o755)
        prompts(base)
        for n in range(TREES):
            sub = os.path.join(base, b"%d" % n)
            os.mkdir(sub)
            os.chown(sub, NOBODY, NOBODY)
            for i, v in enumerate(one(sub, rnd, n)):
                totals[i] += v
    finally:
        for top, dirs, _ in os.walk(base):
            for d in dirs:
                os.chmod(os.path.join(top, d), 0o755, follow_symlinks=False)
        shutil.rmtree(base)
    print("ok: %d trees, %d entries, %d removed, %d failures"
          % (TREES, totals[0], totals[1], totals[2]))


if __name__ == "__main__":
    main()
