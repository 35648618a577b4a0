#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""frm interrupted: SIGINT, SIGTERM and SIGHUP stop it promptly, with a
message, and it dies of the signal; what it did not reach is left in place.
A signal ignored when frm started stays ignored, as with GNU rm: under
nohup a SIGHUP, in a background job of a non-interactive shell a SIGINT,
does not stop it; it removes everything and exits 0.  A closed
pipe on stdout or stderr (SIGPIPE) neither kills frm nor loses its exit
status: it removes everything it can and exits 1.

Each unlink is slowed to 1 ms by the fault library's DELAY mode, so that
the signal finds frm at work however fast the machine is.

usage: signals.py FRM FAULT_LIB
"""
import os
import signal
import subprocess
import sys
import time

from e2e_common import frm_env, test_dir

FRM = os.path.abspath(sys.argv[1])
FAULT = os.path.abspath(sys.argv[2])
passed = failed = 0


def make_tree(top, dirs, files):
    """top/t: @dirs directories of @files empty files each."""
    t = os.path.join(top, "t")
    os.mkdir(t)
    for i in range(dirs):
        d = os.path.join(t, "d%03d" % i)
        os.mkdir(d)
        for j in range(files):
            open(os.path.join(d, "f%03d" % j), "w").close()
    return t


for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    with test_dir() as top:
        t = make_tree(top, 300, 300)
        # frm as a shell starts it in the foreground: the signal at its
        # default, whatever this test inherited (run under nohup, or in
        # the background, it would be ignored, and frm leaves it so)
        p = subprocess.Popen(["frm", "-r", "t"], executable=FRM, cwd=top,
                             stderr=subprocess.PIPE,
                             preexec_fn=lambda sig=sig: signal.signal(sig, signal.SIG_DFL),
                             env=frm_env(FAULT,
                                         FASTRM_FAULT="unlinkat:DELAY:f:0:1000"))
        time.sleep(0.3)
        t0 = time.monotonic()
        p.send_signal(sig)
        err = p.communicate(timeout=30)[1].decode()
        took = time.monotonic() - t0
        name = signal.Signals(sig).name
        ok = (p.returncode == -sig and ("interrupted by %s: " % name) in err
              and took < 5 and os.path.isdir(t))
        print("%s %s: exit %s, stopped in %.2f s, stderr %r" %
              ("ok  " if ok else "FAIL", name, p.returncode, took, err.strip()[:120]))
        passed, failed = passed + ok, failed + (not ok)


# Ignored when it started: nohup (SIGHUP), and a background job of a
# non-interactive shell (sh ignores SIGINT and SIGQUIT for it).
for how, sig in (("nohup", signal.SIGHUP), ("background job", signal.SIGINT)):
    with test_dir() as top:
        t = make_tree(top, 20, 50)
        env = frm_env(FAULT, FASTRM_FAULT="unlinkat:DELAY:f:0:1000")
        # one worker: 1,000 unlinks of 1 ms each, so that frm is still
        # at work when the signal comes
        if how == "nohup":
            p = subprocess.Popen(["nohup", FRM, "-rf", "--jobs=1", "t"], cwd=top,
                                 env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
            pid = p.pid  # nohup execs frm
        else:
            p = subprocess.Popen(["sh", "-c", '"$0" -rf --jobs=1 t & echo $!; wait $!',
                                  FRM], cwd=top, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
            pid = int(p.stdout.readline())
        time.sleep(0.3)
        try:
            os.kill(pid, sig)
            running = p.poll() is None
        except ProcessLookupError:
            running = False  # frm ended before the signal: proves nothing
        out, err = p.communicate(timeout=120)
        err = err.decode()
        name = signal.Signals(sig).name
        ok = (running and p.returncode == 0 and not os.path.exists(t)
              and "interrupted" not in err)
        print("%s %s, %s sent%s: exit %s, tree %s, stderr %r" %
              ("ok  " if ok else "FAIL", how, name,
               "" if running else " (frm had ended before it)", p.returncode,
               "gone" if not os.path.exists(t) else "left", err.strip()[:120]))
        passed, failed = passed + ok, failed + (not ok)

# SIGPIPE: stdout, stderr or both are pipes whose reader has gone.
for which in ("stdout", "stderr", "both"):
    with test_dir() as top:
        t = make_tree(top, 50, 20)
        open(os.path.join(top, "sentinel"), "w").close()
        r, w = os.pipe()
        os.close(r)                      # nobody will ever read
        out = w if which in ("stdout", "both") else subprocess.DEVNULL
        err = w if which in ("stderr", "both") else subprocess.PIPE
        # -v writes a line per entry; "nothere" makes an error message
        args = ["frm", "-rv", "t", "nothere"]
        p = subprocess.run(args, executable=FRM, cwd=top, stdout=out, stderr=err,
                           env=frm_env(), timeout=60)
        os.close(w)
        msg = (p.stderr or b"").decode()
        ok = (p.returncode == 1 and not os.path.exists(t)
              and os.path.exists(os.path.join(top, "sentinel")))
        if which == "stdout":
            # the error and the failed write of stdout are both reported (as
            # gnulib's close_stdout does: "write error", the errno is gone)
            ok = ok and "nothere" in msg and "write error" in msg
        print("%s SIGPIPE on %s: exit %s, tree %s, stderr %r" %
              ("ok  " if ok else "FAIL", which, p.returncode,
               "gone" if not os.path.exists(t) else "left", msg.strip()[:120]))
        passed, failed = passed + ok, failed + (not ok)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
