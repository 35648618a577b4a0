#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""frm -r at a terminal asks what GNU rm asks, with its workers.

The same tree, with write-protected files and directories mixed in, is
made twice in a directory of this test's own (mkdtemp) and removed once by
GNU rm -r and once by frm -r (its default: workers), each with a terminal
(a pty) as its standard input and as a user whom permissions stop (uid
65534 when root: root is never asked about write-protected entries).  Each
question is answered by the name it shows (answer()), so that the answers
do not depend on the order in which the questions come: frm's workers ask
about different directories in another order than GNU rm, and within a
directory in the same one.  Then: the same set of questions, the same
other messages (as sets of lines), the same exit status, the same entries
left; and frm's --stats says more than one worker ran.

usage: prompts.py FRM [GNU_RM]
"""
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import termios
import time
import zlib

from e2e_common import test_base

FRM = os.path.abspath(sys.argv[1])
GNU_RM = sys.argv[2] if len(sys.argv) > 2 else shutil.which("rm")
NOBODY = 65534
ENV = {"LC_ALL": "C", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
QUESTION = re.compile(rb"^\S+: (.*'(.*)'\?) $")


def answer(name):
    """y or n, by the name asked about (a third are no)."""
    return b"n\n" if zlib.crc32(name) % 3 == 0 else b"y\n"


def build(root):
    """16 directories of 40 files, three levels; every 9th file and every
    5th directory write-protected."""
    n = 0
    for a in range(4):
        for b in range(4):
            d = os.path.join(root, "t", "a%d" % a, "b%d" % b)
            os.makedirs(d)
            for f in range(40):
                p = os.path.join(d, "f%d" % f)
                open(p, "w").close()
                n += 1
                if n % 9 == 0:
                    os.chmod(p, 0o444)
    for i, (dirpath, _, _) in enumerate(sorted(os.walk(os.path.join(root, "t")))):
        if i % 5 == 4:
            os.chmod(dirpath, 0o555)


def listing(root):
    out = []
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            out.append(os.path.relpath(os.path.join(dirpath, name), root))
    return sorted(out)


def run(tool, root, extra):
    """Run @tool -r t in @root, answering each question; returns (status,
    questions, other stderr lines)."""
    master, slave = pty.openpty()
    attrs = termios.tcgetattr(slave)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(slave, termios.TCSANOW, attrs)
    prefix = []
    if os.geteuid() == 0:
        prefix = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                  "--clear-groups"]
    cmd = prefix + ["bash", "-c", 'exec -a rm "$@"', "rm"] + [tool] + extra + ["-r", "t"]
    p = subprocess.Popen(cmd, cwd=root, env=ENV, stdin=slave,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(slave)
    questions, other, buf = [], [], b""
    deadline = time.monotonic() + 120
    while True:
        if time.monotonic() > deadline:
            p.kill()
            raise SystemExit("FAIL: %s did not finish" % tool)
        r, _, _ = select.select([p.stderr, master], [], [], 1.0)
        if master in r:
            try:
                os.read(master, 4096)  # nothing is echoed; drain anyway
            except OSError:
                pass
        if p.stderr not in r:
            if p.poll() is not None:
                break
            continue
        chunk = os.read(p.stderr.fileno(), 65536)
        if not chunk:
            break
        buf += chunk
        while True:
            nl = buf.find(b"\n")
            if nl >= 0:
                other.append(buf[:nl])
                buf = buf[nl + 1:]
                continue
            # a question waits for its answer at the end of what was said
            m = QUESTION.match(buf)
            if m:
                questions.append((m.group(1), m.group(2)))
                os.write(master, answer(m.group(2)))
                buf = b""
            break
    p.wait()
    os.close(master)
    return p.returncode, questions, other


def main():
    if os.geteuid() != 0 and os.access("/", os.W_OK):
        print("SKIP: root only, or a user whom permissions stop")
        return 77
    base = test_base()
    top = tempfile.mkdtemp(prefix="fastrm-test.", dir=base)
    os.chmod(top, 0o755)
    try:
        results = []
        for label, tool, extra in (("rm", GNU_RM, []), ("frm", FRM, ["--stats"])):
            root = os.path.join(top, label)
            os.mkdir(root)
            build(root)
            if os.geteuid() == 0:
                subprocess.run(["chown", "-R", "%d:%d" % (NOBODY, NOBODY), root],
                               check=True)
            st, questions, other = run(tool, root, extra)
            results.append((st, questions, other, listing(root)))
            subprocess.run(["chmod", "-R", "u+w", root])
        (rst, rq, ro, rl), (fst, fq, fo, fl) = results
        stats = [l for l in fo if l.startswith(b"rm: removed ")]
        fo = [l for l in fo if not l.startswith(b"rm: removed ")]
        failed = 0

        def check(what, ok, detail=""):
            nonlocal failed
            print(("ok   " if ok else "FAIL ") + what + ("" if ok else ": " + detail))
            failed += not ok
        check("questions asked (%d by GNU rm)" % len(rq), len(rq) > 0 and sorted(rq) == sorted(fq),
              "rm only: %r; frm only: %r" % (sorted(set(rq) - set(fq))[:5],
                                            sorted(set(fq) - set(rq))[:5]))
        check("messages", sorted(ro) == sorted(fo), "rm %r, frm %r" % (ro[:5], fo[:5]))
        check("exit status %d" % rst, rst == fst, "frm %d" % fst)
        check("entries left (%d)" % len(rl), rl == fl,
              "rm only %r, frm only %r" % (sorted(set(rl) - set(fl))[:5],
                                           sorted(set(fl) - set(rl))[:5]))
        m = re.search(rb"(\d+) workers?", stats[0]) if stats else None
        check("frm --stats: more than one worker (%s)" % (stats[0].decode() if stats else
                                                          "no --stats line"),
              m is not None and int(m.group(1)) > 1)
        answers = {answer(name) for _, name in rq}
        check("some answered no, some yes", answers == {b"n\n", b"y\n"})
    finally:
        subprocess.run(["chmod", "-R", "u+w", top])
        shutil.rmtree(top)
    print("%d passed, %d failed" % (6 - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
