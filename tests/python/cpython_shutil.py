#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""CPython's own tests of shutil.rmtree (Lib/test/test_shutil.py, class
TestRmTree, of the Python that runs this: Debian's libpython3.X-testsuite)
with shutil.rmtree replaced by fastrm.rmtree.

Run in a directory of its own (mkdtemp; the tests make TESTFN in the
working directory), once as the user running it and, as root, once more as
uid 65534 (test_on_error needs a user whom permissions stop: root's
CAP_DAC_OVERRIDE skips it).

The one test that cannot pass, and why (run as an expected failure: if it
passes, this fails):
  test_rmtree_uses_safe_fd_version_if_available: replaces shutil's private
  _rmtree_safe_fd and expects rmtree to call it; fastrm.rmtree removes the
  tree with libfastrm, not with shutil's code.

usage: cpython_shutil.py [--as-nobody-child]   (PYTHONPATH: the module)
Exit 0 when every test passed (or failed as expected), 77 when the test
suite is not installed, 1 otherwise.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

EXPECTED_FAILURES = {
    "test_rmtree_uses_safe_fd_version_if_available":
        "tests shutil's private _rmtree_safe_fd, which fastrm.rmtree does not call",
}
NOBODY = 65534


def run_suite():
    import fastrm
    try:
        from test import test_shutil
    except ImportError as e:
        print("SKIP: CPython's test suite is not installed "
              "(Debian: libpython3.%d-testsuite): %s" % (sys.version_info[1], e))
        return 77
    shutil.rmtree = fastrm.rmtree
    cls = test_shutil.TestRmTree
    for name, why in EXPECTED_FAILURES.items():
        if hasattr(cls, name):
            setattr(cls, name, unittest.expectedFailure(getattr(cls, name)))
    suite = unittest.defaultTestLoader.loadTestsFromTestCase(cls)
    res = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    # a test that used shutil.rmtree and passed must have used fastrm's
    assert shutil.rmtree is fastrm.rmtree
    for t, why in res.skipped:
        print("skipped: %s: %s" % (t.id().split(".")[-1], why))
    for t, _ in res.expectedFailures:
        name = t.id().split(".")[-1]
        print("failed as expected: %s: %s" % (name, EXPECTED_FAILURES[name]))
    ran = res.testsRun - len(res.skipped)
    print("uid %d: %d tests, %d ran, %d passed, %d failed as expected, %d skipped"
          % (os.geteuid(), res.testsRun, ran,
             ran - len(res.failures) - len(res.errors) - len(res.expectedFailures)
             - len(res.unexpectedSuccesses),
             len(res.expectedFailures), len(res.skipped)))
    return 0 if res.wasSuccessful() else 1


def in_tmpdir(fn):
    top = tempfile.mkdtemp(prefix="fastrm-cpython-")
    cwd = os.getcwd()
    try:
        os.chdir(top)
        return fn(top)
    finally:
        os.chdir(cwd)
        shutil.rmtree(top, ignore_errors=True)  # shutil's own: ours is tested


def main():
    if "--as-nobody-child" in sys.argv:
        return run_suite()
    rc = in_tmpdir(lambda top: run_suite())
    if rc != 0 or os.geteuid() != 0:
        return rc

    import fastrm
    env = dict(os.environ,
               PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(fastrm.__file__))))

    def as_nobody(top):
        os.chown(top, NOBODY, NOBODY)
        p = subprocess.run(
            ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups",
             sys.executable, os.path.abspath(__file__), "--as-nobody-child"],
            cwd=top, env=env)
        return p.returncode
    rc = in_tmpdir(as_nobody)
    if rc == 77:
        print("SKIP as uid %d: it cannot reach the module or the test suite" % NOBODY)
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
