#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Where frm follows a GNU rm newer than 9.1: -d on an empty directory that
cannot be read or searched (GNU rm 9.2 on; coreutils' tests/rm/empty-inacc.sh
checks it, and fails for 9.1).  As a plain user: as root, frm runs as uid
65534 (setpriv) in a directory of the test's own given to that uid.

  - rm -rf removes an empty inaccessible directory, and one inside a tree;
  - rm -d removes an empty directory that cannot be read, or read nor
    searched (9.1: "Directory not empty");
  - rm -di asks "attempt removal of inaccessible directory 'D'?" once, and
    keeps it on "n" (exit 0) or removes it on "y";
  - rm -d on such a directory that is not empty fails, with the error of
    reading it (as GNU rm says for a directory it could not read).

usage: newer_rm.py FRM
"""
import os
import shutil
import subprocess
import sys

from e2e_common import make_test_dir, skip

FRM = os.path.abspath(sys.argv[1])
NOBODY = 65534
IS_ROOT = os.geteuid() == 0
failures = []


def check(cond, what):
    print("%s %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        failures.append(what)


def run(args, cwd, stdin=""):
    prefix = []
    if IS_ROOT:
        prefix = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                  "--clear-groups"]
    p = subprocess.run(prefix + [FRM] + args, cwd=cwd, input=stdin.encode(),
                       capture_output=True, timeout=60,
                       env={"LC_ALL": "C", "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    # frm's messages start with its name as invoked: its path here
    err = p.stderr.decode().replace(FRM + ": ", "rm: ")
    return p.returncode, err


def mkdir(top, path, mode, files=()):
    p = os.path.join(top, path)
    os.makedirs(p)
    for f in files:
        open(os.path.join(p, f), "w").close()
    if IS_ROOT:
        for dirpath, dirs, names in os.walk(os.path.join(top, path.split("/")[0])):
            for n in dirs + names + [""]:
                os.chown(os.path.join(dirpath, n), NOBODY, NOBODY)
    os.chmod(p, mode)


def main():
    if IS_ROOT and not shutil.which("setpriv"):
        skip("root without setpriv: cannot run frm as a plain user")
    top = make_test_dir()
    try:
        if IS_ROOT:
            os.chown(top, NOBODY, NOBODY)
        os.chmod(top, 0o755)
        gone = lambda p: not os.path.lexists(os.path.join(top, p))

        mkdir(top, "inacc", 0)
        st, err = run(["-rf", "inacc"], top)
        check(st == 0 and err == "" and gone("inacc"), "rm -rf: empty, mode 0 (%d %r)" % (st, err))

        mkdir(top, "a/unreadable", 0o333)
        st, err = run(["-rf", "a"], top)
        check(st == 0 and err == "" and gone("a"), "rm -rf: a tree with an unreadable empty directory (%d %r)" % (st, err))

        mkdir(top, "unreadable2", 0o333)
        st, err = run(["-d", "unreadable2"], top)
        check(st == 0 and err == "" and gone("unreadable2"), "rm -d: empty, unreadable (%d %r)" % (st, err))

        mkdir(top, "inacc2", 0)
        st, err = run(["-d", "inacc2"], top)
        check(st == 0 and err == "" and gone("inacc2"), "rm -d: empty, mode 0 (%d %r)" % (st, err))

        mkdir(top, "inacc3", 0)
        want = "rm: attempt removal of inaccessible directory 'inacc3'? "
        st, err = run(["---presume-input-tty", "-di", "inacc3"], top, "n\n")
        check(st == 0 and err == want and not gone("inacc3"), "rm -di, declined (%d %r)" % (st, err))
        st, err = run(["---presume-input-tty", "-di", "inacc3"], top, "y\n")
        check(st == 0 and err == want and gone("inacc3"), "rm -di, accepted (%d %r)" % (st, err))

        mkdir(top, "full", 0o333, ["f"])
        st, err = run(["-d", "full"], top)
        check(st == 1 and err == "rm: cannot remove 'full': Permission denied\n" and
              not gone("full"), "rm -d: not empty, unreadable (%d %r)" % (st, err))
    finally:
        subprocess.run(["chmod", "-R", "u+rwx", top])
        shutil.rmtree(top)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
