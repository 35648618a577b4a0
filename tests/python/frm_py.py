#!@PYTHON@
# SPDX-License-Identifier: LGPL-2.1-or-later
"""frm -rf done by fastrm.rmtree, for tests/e2e/test-stress.c's oracle: it
takes `-rf [--jobs=N] [--order=P] -- PATH...` and says what it could not
remove as frm does ("frm: cannot remove 'PATH': Reason"), through the
handler, so that the oracle holds the module to frm's contract: exit 0 only
when every path given is gone, every entry left named by a message.
A path given that does not exist is not a failure (-f)."""
import os
import sys

import fastrm


def main(argv):
    jobs = order = None
    paths = []
    args = iter(argv[1:])
    for a in args:
        if a == "--":
            paths.extend(args)
        elif a.startswith("--jobs="):
            jobs = int(a[7:])
        elif a.startswith("--order="):
            order = a[8:]
        elif a != "-rf":
            sys.exit("frm_py: unexpected argument %r" % a)
    status = 0

    def onexc(func, path, exc):
        nonlocal status
        if func is os.lstat and isinstance(exc, FileNotFoundError):
            return  # -f
        status = 1
        err = exc.errno if isinstance(exc, OSError) and exc.errno else 0
        why = os.strerror(err) if err else str(exc)
        sys.stderr.write("frm: cannot remove '%s': %s\n" % (path, why))
    for p in paths:
        fastrm.rmtree(p, onexc=onexc, jobs=jobs, order=order)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
