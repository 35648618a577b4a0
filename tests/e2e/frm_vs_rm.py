#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""frm against GNU rm, side by side.

Each case builds the same fixture twice, in two fresh directories under one
directory this test made (mkdtemp), runs GNU rm in one and frm -- invoked
with argv[0] = "rm", as when installed as rm -- in the other, and compares
exit status, stdout, stderr and the tree left behind.  Cases that need root
(a process that is not root, immutable files, mount points) skip with a
reason when they cannot run.

usage: frm_vs_rm.py FRM [GNU_RM]

FRM_ARGS in the environment: options given to frm before each case's own.
Unless --jobs=1 is there, subtrees and arguments are removed at once,
so messages between different subtrees may come in another order: stdout
and stderr are then compared as sets of lines, and every "removed
directory" line must come after the lines of everything inside it.
"""
import os
import pty
import shutil
import stat
import subprocess
import sys
import tempfile

from e2e_common import order_kept, test_base

FRM = os.path.abspath(sys.argv[1])
GNU_RM = sys.argv[2] if len(sys.argv) > 2 else shutil.which("rm")
IS_ROOT = os.geteuid() == 0
NOBODY = 65534
FRM_ARGS = os.environ.get("FRM_ARGS", "").split()
ENV = {"LC_ALL": "C", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
# frm's default is --jobs=auto: workers, unless --jobs=1 is given
UNORDERED = "--jobs=1" not in FRM_ARGS


def lines_as_set(out):
    return sorted(out.split(b"\n"))


def can_unshare():
    if not IS_ROOT or not shutil.which("unshare"):
        return False
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", "true"],
                       capture_output=True)
    return r.returncode == 0


CAN_MOUNT = can_unshare()


def can_chattr(base):
    if not IS_ROOT or not shutil.which("chattr"):
        return False
    d = tempfile.mkdtemp(prefix="fastrm-test.", dir=base)
    f = os.path.join(d, "f")
    open(f, "w").close()
    ok = subprocess.run(["chattr", "+i", f], capture_output=True).returncode == 0
    if ok:
        subprocess.run(["chattr", "-i", f])
    shutil.rmtree(d)
    return ok


# ---------------------------------------------------------------- fixtures
# A fixture is a list of steps, applied in order inside the case directory:
#   ("f", path[, data])  file      ("d", path)     directory
#   ("l", path, target)  symlink   ("p", path)     fifo
#   ("m", path, mode)    chmod     ("i", path)     chattr +i (root)
#   ("D", path, depth, name)  a chain of `depth` directories called `name`
#                        below path, built through directory fds, so that
#                        its paths may run far past PATH_MAX; a file "f" at
#                        every level

def build(root, steps):
    for s in steps:
        p = os.path.join(root, s[1])
        if s[0] == "f":
            with open(p, "w") as fh:
                fh.write(s[2] if len(s) > 2 else "")
        elif s[0] == "d":
            os.makedirs(p, exist_ok=True)
        elif s[0] == "l":
            os.symlink(s[2], p)
        elif s[0] == "p":
            os.mkfifo(p)
        elif s[0] == "m":
            os.chmod(p, s[2])
        elif s[0] == "i":
            subprocess.run(["chattr", "+i", p], check=True)
        elif s[0] == "D":
            os.makedirs(p, exist_ok=True)
            fd = os.open(p, os.O_RDONLY | os.O_DIRECTORY)
            for _ in range(s[2]):
                os.mkdir(s[3], dir_fd=fd)
                os.close(os.open("f", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
                nfd = os.open(s[3], os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = nfd
            os.close(fd)


def listing(root):
    """The tree as text: path, type, mode (and link target)."""
    out = []
    # through directory fds: paths may be longer than PATH_MAX
    for dirpath, dirnames, filenames, dfd in os.fwalk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            st = os.lstat(name, dir_fd=dfd)
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            extra = (" -> " + os.readlink(name, dir_fd=dfd)
                     if stat.S_ISLNK(st.st_mode) else "")
            out.append("%r %o%s" % (rel, st.st_mode, extra))
    return "\n".join(out)


def unfreeze(root):
    """Undo chattr +i and unreadable modes so the fixture can be removed."""
    if IS_ROOT and shutil.which("chattr"):
        subprocess.run(["chattr", "-R", "-i", root], capture_output=True)
    for _, dirnames, _, dfd in os.fwalk(root):
        for d in dirnames:
            try:
                os.chmod(d, 0o755, dir_fd=dfd)  # fwalk lists no symlinks here
            except OSError:
                pass


# ------------------------------------------------------------------- cases

class Case:
    def __init__(self, name, args, fixture=(), stdin=None, tty=False,
                 nobody=False, mount=None, needs=None, argv0="rm"):
        self.name, self.args, self.fixture = name, args, list(fixture)
        self.stdin, self.tty, self.nobody = stdin, tty, nobody
        self.mount, self.needs, self.argv0 = mount, needs, argv0


TREE = [("d", "t/a/b"), ("f", "t/a/b/f1", "x"), ("f", "t/a/f2"), ("d", "t/e"),
        ("l", "t/ln", "a"), ("l", "t/dangling", "nowhere"), ("p", "t/fifo"),
        ("f", "t/.hidden")]
ODD = [("f", "sp ace"), ("f", "it's"), ("f", "it's $x"), ("f", "nl\nname"),
       ("f", "bad\xffutf8".encode("latin-1").decode("utf-8", "surrogateescape")),
       ("f", "tab\tname"), ("f", "-dash"), ("f", "ok:colon")]
FILES4 = [("f", "a"), ("f", "b"), ("f", "c"), ("f", "d")]
# 30 levels of 200-byte names: paths of about 6,000 bytes (PATH_MAX 4,096)
LONGNAME = "L" * 200
LONG = [("d", "t"), ("f", "t/top"), ("D", "t", 30, LONGNAME)]
LONGARG = "t/" + "/".join([LONGNAME] * 25)

CASES = [
    Case("file", ["a"], FILES4),
    Case("missing", ["nothere"]),
    Case("missing -f", ["-f", "nothere"]),
    Case("missing and present", ["nothere", "a"], FILES4),
    Case("no operand", []),
    Case("no operand -f", ["-f"]),
    Case("dir without -r", ["t"], TREE),
    Case("empty dir without -r", ["t/e"], TREE),
    Case("-d empty dir", ["-d", "t/e"], TREE),
    Case("-d non-empty dir", ["-d", "t/a"], TREE),
    Case("-dv empty and file", ["-dv", "t/e", "t/a/f2"], TREE),
    Case("-r tree", ["-r", "t"], TREE),
    Case("-R tree", ["-R", "t"], TREE),
    Case("--recursive --verbose", ["--recursive", "--verbose", "t"], TREE),
    Case("-rf tree and missing", ["-rf", "t", "nothere"], TREE),
    Case("-r dot", ["-r", "."], TREE),
    Case("-r dotdot", ["-r", ".."], TREE),
    Case("-r t/.", ["-r", "t/."], TREE),
    Case("-r t/..", ["-r", "t/.."], TREE),
    Case("-r t/a/./", ["-r", "t/a/./"], TREE),
    Case("-r trailing slash", ["-r", "t/a/"], TREE),
    Case("-r trailing slashes", ["-r", "t/a///"], TREE),
    Case("-r symlink to dir", ["-r", "t/ln"], TREE),
    Case("-r symlink to dir, slash", ["-r", "t/ln/"], TREE),
    Case("dangling symlink", ["t/dangling"], TREE),
    Case("fifo", ["-v", "t/fifo"], TREE),
    Case("-r double slashes", ["-rv", "t//a//b//", ".//t//e"], TREE),
    Case("double slash file", ["-v", "t//a//f2"], TREE),
    Case("-r tree deeper than PATH_MAX", ["-r", "t"], LONG),
    Case("-r argument longer than PATH_MAX", ["-r", LONGARG], LONG),
    Case("-f file argument longer than PATH_MAX", ["-f", LONGARG + "/f"], LONG),
    Case("repeated and nested args", ["-r", "t/a", "t/a/b", "t/a"], TREE),
    Case("empty string", [""]),
    Case("empty string -f", ["-f", ""]),
    Case("lone dash", ["-v", "-"], [("f", "-")]),
    Case("double dash", ["-v", "--", "-dash"], [("f", "-dash")]),
    Case("option permutation", ["a", "-v", "b", "-f", "nothere"], FILES4),
    Case("invalid option", ["-x", "a"], FILES4),
    Case("invalid option, file named like it", ["-dash"], [("f", "-dash")]),
    Case("invalid long option", ["--bogus", "a"], FILES4),
    Case("odd names verbose", ["-v", "--"] + [s[1] for s in ODD], ODD),
    Case("odd names missing", ["x y", "q'", "n\nl", "$v", "a\\b", "~t", "t~",
                               "#h", "h#", "a\x01b", "\x01", "z\x7f"]),
    Case("--interactive=never", ["--interactive=never", "a"], FILES4),
    Case("--interactive=n (prefix)", ["--interactive=n", "a"], FILES4),
    Case("--interactive=bogus", ["--interactive=bogus", "a"], FILES4),
    Case("--interactive=o", ["--interactive=o", "a"], FILES4, stdin=""),
    Case("--preserve-root=bogus", ["--preserve-root=bogus", "a"], FILES4),
    Case("--preserve-root=all", ["-r", "--preserve-root=all", "t"], TREE),
    Case("--no-preserve abbreviated", ["--no-preserve", "-r", "t"], TREE),
    Case("--no-preserve-root", ["--no-preserve-root", "-r", "t"], TREE),
    Case("--one-file-system, one fs", ["-r", "--one-file-system", "t"], TREE),
    Case("-I three files: no prompt", ["-I", "a", "b", "c"], FILES4, stdin="n\n"),
    Case("-I four files, no", ["-I", "a", "b", "c", "d"], FILES4, stdin="n\n"),
    Case("-I four files, yes", ["-I", "a", "b", "c", "d"], FILES4, stdin="y\n"),
    Case("-I recursive, no", ["-I", "-r", "t"], TREE, stdin="no\n"),
    Case("-I recursive, yes", ["-rI", "t"], TREE, stdin="Yes\n"),
    Case("-I recursive, EOF", ["-rI", "t"], TREE, stdin=""),
    Case("-i files", ["-i", "a", "b", "c"], FILES4, stdin="y\nn\ny\n"),
    Case("-i empty dir with -d", ["-i", "-d", "t/e"], TREE, stdin="y\n"),
    Case("-ri tree, mixed answers", ["-ri", "t"], TREE,
         stdin="y\ny\ny\nn\ny\ny\ny\ny\ny\ny\ny\ny\n"),
    Case("-ri tree, all yes", ["-ri", "t"], TREE, stdin="y\n" * 20),
    Case("--interactive tree", ["-r", "--interactive", "t"], TREE, stdin="n\n"),
    Case("-fi: last wins", ["-f", "-i", "a"], FILES4, stdin="n\n"),
    Case("-if: last wins", ["-i", "-f", "a"], FILES4, stdin="n\n"),
    Case("-ri on a terminal", ["-ri", "t/a"], TREE, stdin="y\ny\nn\ny\n", tty=True),
    Case("presume tty, -I", ["---presume-input-tty", "-I", "-r", "t"], TREE,
         stdin="y\n"),
    Case("write-protected file, tty", ["---presume-input-tty", "a", "b"],
         FILES4 + [("m", "a", 0o444)], stdin="n\n", nobody=True),
    Case("write-protected file, no tty", ["a"], FILES4 + [("m", "a", 0o444)],
         nobody=True),
    Case("write-protected file, -f", ["-f", "a"], FILES4 + [("m", "a", 0o444)],
         nobody=True),
    Case("write-protected dir, tty", ["---presume-input-tty", "-r", "t"],
         TREE + [("m", "t/a", 0o555)], stdin="y\n" * 10, nobody=True),
    Case("unwritable dir", ["-rf", "t"], TREE + [("m", "t/a", 0o555)],
         nobody=True),
    Case("unreadable dir", ["-rf", "t"], TREE + [("m", "t/a", 0o000)],
         nobody=True),
    Case("unsearchable dir", ["-r", "t"], TREE + [("m", "t/a", 0o600)],
         nobody=True),
    Case("immutable file", ["-rf", "t"], TREE + [("i", "t/a/f2")],
         needs="chattr"),
    Case("mount point inside", ["-r", "t"], TREE, mount="t/a/b"),
    Case("--one-file-system, mount inside", ["-r", "--one-file-system", "t"],
         TREE, mount="t/a/b"),
    Case("--preserve-root=all, mount point argument",
         ["-r", "--preserve-root=all", "t/a/b"], TREE, mount="t/a/b"),
    Case("program name frm", ["nothere"], argv0="frm"),
    Case("program name with directory", ["nothere"], argv0="/usr/local/bin/rm"),
]


def run_one(tool, argv0, case, root, extra=()):
    """Run one tool on a built fixture; returns (status, out, err)."""
    cmd = [tool] + list(extra) + case.args
    prefix = []
    if case.mount:
        # A private mount namespace: the tmpfs vanishes with the process.
        script = ('mount -t tmpfs -o size=1m fastrm-test "$1" && '
                  'echo x > "$1/on-tmpfs" && shift && exec "$@"')
        prefix = ["unshare", "--mount", "--propagation", "private",
                  "sh", "-c", script, "sh", os.path.join(root, case.mount)]
    if case.nobody:
        prefix += ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                   "--clear-groups"]
    # argv[0] of the tool is chosen through exec -a in a tiny shell.
    full = prefix + ["bash", "-c", 'exec -a "$0" "$@"', argv0] + cmd
    stdin_data = (case.stdin or "").encode()
    if case.tty:
        # A terminal has no end of file but ^D at the start of a line.
        master, slave = pty.openpty()
        os.write(master, stdin_data + b"\x04")
        p = subprocess.run(full, cwd=root, env=ENV, stdin=slave,
                           capture_output=True, timeout=60)
        os.close(slave)
        os.close(master)
    else:
        p = subprocess.run(full, cwd=root, env=ENV, input=stdin_data,
                           capture_output=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def main():
    base = test_base()
    top = tempfile.mkdtemp(prefix="fastrm-test.", dir=base)
    os.chmod(top, 0o755)
    chattr_ok = can_chattr(base)
    passed = failed = skipped = 0
    try:
        for n, case in enumerate(CASES):
            why = None
            if case.nobody and not IS_ROOT:
                why = "needs root to run as another user"
            elif case.mount and not CAN_MOUNT:
                why = "needs root and mount namespaces"
            elif case.needs == "chattr" and not chattr_ok:
                why = "needs root and a file system with chattr +i"
            if why:
                print("SKIP %s: %s" % (case.name, why))
                skipped += 1
                continue
            results = []
            for label, tool in (("rm", GNU_RM), ("frm", FRM)):
                root = os.path.join(top, "%03d-%s" % (n, label))
                os.mkdir(root)
                build(root, case.fixture)
                if case.nobody:
                    subprocess.run(["chown", "-R", "-h", "%d:%d" % (NOBODY, NOBODY),
                                    root], check=True)
                argv0 = case.argv0 if label == "frm" else case.argv0.replace("frm", "rm")
                st, out, err = run_one(tool, argv0, case, root,
                                       FRM_ARGS if label == "frm" else ())
                if label == "frm" and case.argv0 != "rm":
                    err = err.replace(case.argv0.encode(), case.argv0.replace("frm", "rm").encode())
                unfreeze(root)
                results.append((st, out, err, listing(root)))
            a, b = results
            order_ok = True
            if UNORDERED:
                order_ok = order_kept(b[1])
                a = (a[0], lines_as_set(a[1]), lines_as_set(a[2]), a[3])
                b = (b[0], lines_as_set(b[1]), lines_as_set(b[2]), b[3])
            if not order_ok:
                failed += 1
                print("FAIL %s: a directory reported before its entries: %r"
                      % (case.name, results[1][1]))
            elif a == b:
                passed += 1
                print("ok   %s" % case.name)
            else:
                failed += 1
                print("FAIL %s  (args %r)" % (case.name, case.args))
                for what, x, y in zip(("status", "stdout", "stderr", "tree"), a, b):
                    if x != y:
                        print("  %s differs:\n    rm:  %r\n    frm: %r" % (what, x, y))
    finally:
        unfreeze(top)
        shutil.rmtree(top)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
