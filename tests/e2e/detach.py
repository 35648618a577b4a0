#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""frm --detach and --finish, end to end, every state directory the test's
own (FASTRM_STATE_DIR):

- a detached directory is gone from its name when frm returns, its record
  is in the state directory, and a finisher removes it: the tree goes, a
  symlink in it to a directory outside is not followed, the records go,
  the exit status is 0; files given beside it are removed in place;
- the finisher runs in a session of its own (not frm's, not leading it:
  it cannot get a terminal back), at nice 19, in the idle I/O class, with
  SIGHUP ignored, and is not frm's child;
- a finisher killed with SIGKILL at about 30 % (kept slow with
  --max-rate) leaves its record: --finish --list shows it pending, with
  what was removed so far; frm --finish removes the rest, exit 0, no
  record left, and (as root, on a tmpfs of the test's own) the file
  system's used inodes are back where they were before the tree;
- a record whose hidden name now holds another directory is not touched:
  --finish leaves that directory and exits 1;
- what cannot be renamed (a mount point, as root; a parent the user may
  not write, as uid 65534) is removed in place, and frm says so;
- as uid 65534, detach and finish work in its own state directory, and
  another user's (mode 0700) cannot be listed;
- -i, --dry-run with --detach, and --list without --finish, are refused.

usage: detach.py FRM
"""
import os
import signal
import subprocess
import sys
import time

from e2e_common import NOBODY, as_nobody, frm_env, skip, test_dir

FRM = os.path.abspath(sys.argv[1])
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what)


def make_tree(t, dirs, files):
    os.mkdir(t)
    for i in range(dirs):
        d = os.path.join(t, "d%03d" % i)
        os.mkdir(d)
        for j in range(files):
            open(os.path.join(d, "f%03d" % j), "w").close()


def run(args, state, **kw):
    return subprocess.run([FRM] + args, capture_output=True, text=True,
                          env=frm_env(FASTRM_STATE_DIR=state), timeout=300, **kw)


def records(state):
    return sorted(n for n in os.listdir(state) if n.endswith(".rec"))


def wait_for(cond, secs=120):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def hidden_names(top):
    return [n for n in os.listdir(top) if n.startswith(".frm-detached-")]


def finisher_pid(out):
    for line in out.splitlines():
        if line.startswith("finisher "):
            return int(line.split()[1])
    return None


def test_detach_and_finisher(top):
    state = os.path.join(top, "state")  # made by frm, mode 0700
    os.mkdir(os.path.join(top, "outside"))
    sentinel = os.path.join(top, "outside", "keep")
    open(sentinel, "w").close()
    t = os.path.join(top, "t")
    make_tree(t, 5, 200)
    os.symlink(os.path.join(top, "outside"), os.path.join(t, "d000", "link"))
    f = os.path.join(top, "file")
    open(f, "w").close()
    # slow enough to be seen at work: 50 removals a second
    r = run(["-rv", "--detach", "--max-rate=50", t, f], state)
    check(r.returncode == 0, "detach: exit %d: %s" % (r.returncode, r.stderr))
    check(not os.path.lexists(t), "the operand's name is gone when frm returns")
    check(not os.path.lexists(f), "a file given is removed in place")
    check("detached '%s'" % t in r.stdout, "-v says it was detached: " + r.stdout)
    check(len(hidden_names(top)) == 1, "one hidden name beside it")
    pid = finisher_pid(r.stdout)
    check(pid is not None, "-v names the finisher: " + r.stdout)
    if pid is None:
        return
    try:
        with open("/proc/%d/stat" % pid) as s:
            fields = s.read().rsplit(")", 1)[1].split()
        ppid, sid, nice = int(fields[1]), int(fields[3]), int(fields[16])
        check(ppid != os.getpid(), "the finisher is not the caller's child")
        check(sid != os.getsid(0), "the finisher is in a session of its own")
        check(nice == 19, "the finisher runs at nice 19 (%d)" % nice)
        with open("/proc/%d/status" % pid) as s:
            ign = [l for l in s if l.startswith("SigIgn:")][0].split()[1]
        check(int(ign, 16) & (1 << (signal.SIGHUP - 1)), "SIGHUP ignored")
        io = subprocess.run(["ionice", "-p", str(pid)], capture_output=True, text=True)
        check(io.returncode != 0 or "idle" in io.stdout, "idle I/O class: " + io.stdout)
        lst = run(["--finish", "--list"], state)
        check(lst.returncode == 0 and "finishing" in lst.stdout and t in lst.stdout,
              "--list shows it being finished: " + lst.stdout)
        # a second finisher leaves a held record alone
        again = run(["--finish"], state)
        check(again.returncode == 0 and "being removed" in again.stderr,
              "--finish skips a record a finisher holds: %d %s"
              % (again.returncode, again.stderr))
    except (OSError, IndexError) as e:
        check(False, "the finisher was gone too early: %s" % e)
    check(wait_for(lambda: not records(state)), "the finisher ends, its record dropped")
    check(not hidden_names(top), "the detached tree is removed")
    check(os.path.exists(sentinel), "the symlink's target is kept")
    check(os.listdir(state) == [], "nothing left in the state directory: %s"
          % os.listdir(state))


def used_inodes(path):
    st = os.statvfs(path)
    return st.f_files - st.f_ffree


def test_killed_finisher(top):
    state = os.path.join(top, "state2")
    os.mkdir(state)
    # a tmpfs of the test's own (root), so that its used inodes are the
    # tree's alone; else the test's directory
    place = os.path.join(top, "kmnt")
    os.mkdir(place)
    mounted = os.geteuid() == 0 and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64m", "none", place]).returncode == 0
    try:
        killed_finisher(top, place, state, mounted)
    finally:
        if mounted:
            subprocess.run(["umount", place])


def killed_finisher(top, place, state, mounted):
    before = used_inodes(place)
    t = os.path.join(place, "k")
    make_tree(t, 4, 100)
    r = run(["-rv", "--detach", "--max-rate=100", t], state)
    check(r.returncode == 0, "detach: %s" % r.stderr)
    pid = finisher_pid(r.stdout)
    if pid is None:
        check(False, "no finisher pid")
        return
    # killed at about 30 %: its progress (written once a second) says 120
    # of the 405 entries are gone
    def far():
        lst = run(["--finish", "--list"], state).stdout.split()
        return len(lst) > 2 and lst[2].isdigit() and int(lst[2]) >= 120
    wait_for(far, 30)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: not os.path.exists("/proc/%d" % pid) or
             open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0] == "Z", 10)
    check(len(records(state)) == 1, "a killed finisher leaves its record")
    lst = run(["--finish", "--list"], state)
    line = lst.stdout.strip()
    check(" pending " in line and t in line, "--list shows it pending: " + line)
    try:
        removed = int(line.split()[2])
    except (IndexError, ValueError):
        removed = -1
    check(0 < removed < 405, "--list says how far it got: %d" % removed)
    check(removed < 300, "killed before its end: %d removed" % removed)
    fin = run(["--finish", "--stats"], state)
    check(fin.returncode == 0, "--finish: exit %d: %s" % (fin.returncode, fin.stderr))
    check(not hidden_names(place), "--finish removed the rest")
    check(records(state) == [], "--finish dropped the record")
    if mounted:
        check(used_inodes(place) == before, "the file system's used inodes back where "
              "they were: %d, %d" % (used_inodes(place), before))


def test_replaced(top):
    state = os.path.join(top, "state3")
    os.mkdir(state)
    t = os.path.join(top, "r")
    make_tree(t, 1, 3)
    # detach, then replace the hidden tree before any finisher can run: a
    # finisher killed at once, and another directory at the hidden name
    r = run(["-rv", "--detach", "--max-rate=1", t], state)
    pid = finisher_pid(r.stdout)
    if pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    hidden = hidden_names(top)
    check(len(hidden) == 1, "one hidden name")
    if not hidden:
        return
    h = os.path.join(top, hidden[0])
    time.sleep(0.2)
    if os.path.exists(h):
        os.rename(h, os.path.join(top, "moved"))
        os.mkdir(h)
        open(os.path.join(h, "other"), "w").close()
        fin = run(["--finish"], state)
        check(fin.returncode == 1, "--finish fails on another directory: %d"
              % fin.returncode)
        check("was replaced" in fin.stderr, "--finish says why: " + fin.stderr)
        check(os.path.exists(os.path.join(h, "other")), "what it holds is kept")
        check(len(records(state)) == 1, "its record is kept")


def test_in_place(top):
    state = os.path.join(top, "state4")
    os.mkdir(state)
    if os.geteuid() == 0:
        m = os.path.join(top, "m")
        os.mkdir(m)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "none", m]).returncode == 0:
            try:
                open(os.path.join(m, "x"), "w").close()
                r = run(["-r", "--detach", m], state)
                check("cannot detach '%s'" % m in r.stderr and "in place" in r.stderr,
                      "a mount point: said: " + r.stderr)
                check(os.listdir(m) == [], "a mount point's content removed in place")
                check(records(state) == [], "no record for what was not detached")
            finally:
                subprocess.run(["umount", m])
        # a plain user who may not write the parent
        p = os.path.join(top, "ro")
        os.mkdir(p)
        t = os.path.join(p, "t")
        os.mkdir(t)
        os.chown(t, NOBODY, NOBODY)
        open(os.path.join(t, "f"), "w").close()
        os.chown(os.path.join(t, "f"), NOBODY, NOBODY)
        os.chmod(top, 0o755)
        os.chown(state, NOBODY, NOBODY)
        r = run(["-r", "--detach", t], state, preexec_fn=as_nobody)
        check("cannot detach" in r.stderr, "no write on the parent: said: " + r.stderr)
        check(r.returncode == 1 and os.listdir(t) == [],
              "removed in place as far as it can (its rmdir refused): %d %s"
              % (r.returncode, os.listdir(t)))
    else:
        print("SKIP (part): mount point and uid %d cases need root" % NOBODY)


def test_plain_user(top):
    """As uid 65534: detach and finish work; another user's state
    directory (mode 0700) cannot be listed or finished."""
    if os.geteuid() != 0:
        print("SKIP (part): another uid needs root")
        return
    mine = os.path.join(top, "nobody-state")
    os.mkdir(mine)
    os.chown(mine, NOBODY, NOBODY)
    os.chmod(mine, 0o700)
    os.chmod(top, 0o777)
    home = os.path.join(top, "nb")
    os.mkdir(home)
    t = os.path.join(home, "nt")
    make_tree(t, 2, 10)
    for dirpath, dirs, files in os.walk(home):
        for n in [dirpath] + [os.path.join(dirpath, f) for f in dirs + files]:
            os.chown(n, NOBODY, NOBODY)
    r = run(["-r", "--detach", "--max-rate=20", t], mine, preexec_fn=as_nobody)
    check(r.returncode == 0 and not os.path.lexists(t),
          "uid %d detaches: %d %s" % (NOBODY, r.returncode, r.stderr))
    # root's records (another user's, to uid 65534): not to be seen
    theirs = os.path.join(top, "state")
    check(os.stat(theirs).st_mode & 0o777 == 0o700, "frm made its state directory 0700")
    lst = run(["--finish", "--list"], theirs, preexec_fn=as_nobody)
    check(lst.returncode == 1 and "Permission denied" in lst.stderr,
          "another user's state directory is refused: %d %s" % (lst.returncode, lst.stderr))
    fin = run(["--finish"], mine, preexec_fn=as_nobody)
    check(fin.returncode == 0, "uid %d finishes: %s" % (NOBODY, fin.stderr))
    check(wait_for(lambda: not records(mine) and not hidden_names(home), 60),
          "uid %d's tree is removed, its record dropped" % NOBODY)


def test_refused(top):
    state = os.path.join(top, "state5")
    os.mkdir(state)
    t = os.path.join(top, "q")
    os.mkdir(t)
    for args in (["-ri", "--detach", t], ["-r", "--detach", "--dry-run", t],
                 ["--list", t]):
        r = run(args, state, input="y\n")
        check(r.returncode == 1 and os.path.isdir(t), "refused: %s" % args)
    r = run(["--finish"], state)
    check(r.returncode == 0, "--finish with nothing pending: exit 0")
    r = run(["--finish", "nonsense"], state)
    check(r.returncode == 1, "--finish of a bad id: exit 1")


def main():
    with test_dir() as top:
        test_detach_and_finisher(top)
        test_killed_finisher(top)
        test_replaced(top)
        test_in_place(top)
        test_plain_user(top)
        test_refused(top)
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


main()
