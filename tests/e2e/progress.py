#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""frm --progress on a terminal (a pseudo-terminal made here): the line
shows the count, the rate and the elapsed time; it is redrawn while frm
waits on a slow unlink; messages and -v lines are never mixed into it; the
terminal is left clean when frm ends or is interrupted; the time left is
shown for a large flat directory on tmpfs; nothing is drawn when stderr is
not a terminal.  Slowness comes from the fault library's DELAY mode.

usage: progress.py FRM FAULT_LIB
"""
import fcntl
import os
import re
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time

from e2e_common import test_dir

FRM = os.path.abspath(sys.argv[1])
FAULT = os.path.abspath(sys.argv[2])
COLS = 100
# a drawn line: the count and its share of the estimate ("?": none yet)
DRAWN = re.compile(r"(\d+) removed \((\d+|\?)%\),")
passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, (": " + detail) if not ok and detail else ""))
    if ok:
        passed += 1
    else:
        failed += 1


def screen(data):
    """What a terminal shows after @data: \\r, \\n and erase-to-end (ESC [K)."""
    lines, cur, col = [], [], 0
    i = 0
    while i < len(data):
        c = data[i]
        if data.startswith("\033[K", i):
            del cur[col:]
            i += 3
            continue
        if c == "\r":
            col = 0
        elif c == "\n":
            lines.append("".join(cur))
            cur, col = [], 0
        else:
            if col < len(cur):
                cur[col] = c
            else:
                cur.append(c)
            col += 1
        i += 1
    lines.append("".join(cur))
    return lines


def run_on_pty(args, cwd, env, interrupt_after=None, stdout_pty=True, argv0="frm",
               cols=COLS):
    """Run frm (as @argv0) with stderr (and stdout) on a terminal @cols wide;
    return (exit status, everything the terminal received, stdout if a
    pipe)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
    p = subprocess.Popen([argv0] + args, executable=FRM, cwd=cwd, env=env,
                         stdin=subprocess.DEVNULL,
                         stdout=slave if stdout_pty else subprocess.PIPE,
                         stderr=slave)
    # The slave stays open here too until the end: the master then never
    # reads as hung up (EIO), which Linux may report before the last bytes
    # frm wrote have passed the tty's buffer (seen once on a loaded CI
    # machine: the final erase of the line was lost).
    out, t0, sent, quiet = b"", time.monotonic(), False, 0
    while True:
        if interrupt_after is not None and not sent and time.monotonic() - t0 > interrupt_after:
            p.send_signal(signal.SIGINT)
            sent = True
        r, _, _ = select.select([master], [], [], 0.05)
        if r:
            chunk = os.read(master, 65536)
            if not chunk:
                break
            out += chunk
            quiet = 0
        elif p.poll() is not None:
            quiet += 1
            if quiet >= 4:  # exited, and 0.2 s without a byte since
                break
        if time.monotonic() - t0 > 60:
            p.kill()
            break
    piped = p.stdout.read().decode() if p.stdout else ""
    p.wait()
    os.close(slave)
    os.close(master)
    return p.returncode, out.decode(errors="replace").replace("\r\n", "\n"), piped


def tree(top, n, name="t"):
    t = os.path.join(top, name)
    os.mkdir(t)
    for i in range(n):
        open(os.path.join(t, "f%05d" % i), "w").close()
    return t


# (under ASan the fault library comes before its runtime: allowed here)
env = dict(os.environ, LC_ALL="C",
           ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
slow = dict(env, LD_PRELOAD=FAULT, FASTRM_FAULT="unlinkat:DELAY:f0:0:100000")

# 1. 20 files, 0.1 s each: the line is drawn several times, shows the
# elapsed time, and is gone at the end.
with test_dir() as top:
    tree(top, 20)
    rc, out, _ = run_on_pty(["-r", "--progress", "t"], top, slow)
    draws = out.count("elapsed")
    check(rc == 0 and not os.path.exists(os.path.join(top, "t")), "removed, exit 0", "exit %s" % rc)
    check(draws >= 4, "the line is redrawn while unlinks are slow", "%d draws in %r" % (draws, out[-300:]))
    counts = [int(m.group(1)) for m in DRAWN.finditer(out)]
    check(counts and counts == sorted(counts) and counts[-1] >= 10,
          "the count grows", repr(counts))
    check("0:01 elapsed" in out or "0:02 elapsed" in out, "the clock moves", repr(out[-300:]))
    check(screen(out) == [""], "the terminal is left clean", repr(screen(out)))
    check(all(len(l) <= COLS - 3 for l in screen(out.replace("\r", "\n"))),
          "no drawn line is wider than the terminal less 3 columns")

# 2. -v on the same terminal: every "removed" line whole, no trace of the
# progress line on the screen.
with test_dir() as top:
    tree(top, 12)
    rc, out, _ = run_on_pty(["-rv", "--progress", "t"], top, slow)
    want = ["removed 't/f%05d'" % i for i in range(12)] + ["removed directory 't'", ""]
    got = screen(out)
    check(rc == 0 and sorted(got) == sorted(want) and got[-1] == "",
          "-v lines are whole and the line leaves no trace", repr(got))
    check("elapsed" in out, "the line was drawn between -v lines")

# 3. An error message: on a line of its own, the line cleared first.
with test_dir() as top:
    tree(top, 8)
    env_err = dict(env, LD_PRELOAD=FAULT, FASTRM_FAULT="unlinkat:EIO:f00004:1;unlinkat:DELAY:f0:0:100000")
    rc, out, _ = run_on_pty(["-r", "--progress", "t"], top, env_err)
    got = screen(out)
    check(rc == 1 and got == ["frm: cannot remove 't/f00004': Input/output error", ""],
          "an error is printed on a clean line", "exit %s, %r" % (rc, got))

# 4. SIGINT: the line is cleared before "interrupted", the terminal clean.
with test_dir() as top:
    tree(top, 100)
    rc, out, _ = run_on_pty(["-r", "--progress", "t"], top, slow, interrupt_after=0.8)
    got = screen(out)
    check(rc == -signal.SIGINT and len(got) == 2 and got[0].startswith("frm: interrupted by")
          and got[1] == "", "interrupted: only the message stays", "exit %s, %r" % (rc, got))

# 5. Not a terminal: nothing drawn.
with test_dir() as top:
    tree(top, 5)
    p = subprocess.run(["frm", "-r", "--progress", "t"], executable=FRM, cwd=top, env=slow,
                       stdin=subprocess.DEVNULL, capture_output=True)
    check(p.returncode == 0 and p.stderr == b"" and p.stdout == b"",
          "no line on a pipe", repr(p.stderr[:200]))

# 6. The time left: a flat directory of 12,000 entries on tmpfs, whose size
# says how many entries it holds.
with test_dir() as top:
    fs = subprocess.run(["stat", "-f", "-c", "%T", top], capture_output=True, text=True).stdout.strip()
    if fs != "tmpfs":
        print("skip the time left: %s is on %s, not tmpfs" % (top, fs))
    else:
        tree(top, 12000)
        slow_some = dict(env, LD_PRELOAD=FAULT, FASTRM_FAULT="unlinkat:DELAY:f0:0:150")
        rc, out, _ = run_on_pty(["-r", "--progress", "t"], top, slow_some)
        lefts = [l for l in out.split("\r") if "left" in l]
        check(rc == 0 and lefts and all("about 0:0" in l for l in lefts),
              "the time left is shown, and is seconds", repr(out[-400:]))
        check(screen(out) == [""], "clean after the estimate")
        # several arguments: the one not reached yet counts as one like
        # those read, so that removing the first of two shows half at most
        tree(top, 12000)
        tree(top, 12000, "a")
        rc, out, _ = run_on_pty(["-r", "--progress", "t", "a"], top, slow_some)
        # t and its 12,000 entries come first
        early = [(int(m.group(1)), m.group(2)) for m in DRAWN.finditer(out)
                 if int(m.group(1)) <= 12001]
        shown = [int(p) for _, p in early if p not in (None, "?")]
        check(rc == 0 and shown and max(shown) <= 55,
              "the argument not reached yet is counted", repr(early[-3:]))
        # the share never reaches 100 before the end
        every = [m.group(2) for m in DRAWN.finditer(out)]
        check(all(p == "?" or int(p) <= 99 for p in every if p), "never 100% drawn",
              repr(every[-3:]))

# 7. Started by a long path, on a narrow terminal, with the time left: the
# line starts with frm's name, and what does not fit goes field by field,
# never cut inside one.
with test_dir() as top:
    fs = subprocess.run(["stat", "-f", "-c", "%T", top], capture_output=True, text=True).stdout.strip()
    if fs != "tmpfs":
        print("skip the narrow line: %s is on %s, not tmpfs" % (top, fs))
    else:
        tree(top, 12000)
        slow_some = dict(env, LD_PRELOAD=FAULT, FASTRM_FAULT="unlinkat:DELAY:f0:0:150")
        long_name = "/usr/local/lib/some/long/place/to/keep/programs/in/bin/frm"
        rc, out, _ = run_on_pty(["-r", "--progress", "t"], top, slow_some,
                                argv0=long_name, cols=50)
        drawn = [w.replace("\033[K", "") for w in out.split("\r") if " removed" in w]
        field = re.compile(r"^frm: \d+ removed \((\d+|\?)%\)(, \d+/s)?(, \d+:\d\d elapsed)?"
                           r"(, about \d+:\d\d left)?(  .*)?$")
        check(rc == 0 and drawn and all(field.match(w) and len(w) <= 47 for w in drawn),
              "a narrow line keeps whole fields", repr([w for w in drawn if not field.match(w)][:3] or drawn[-2:]))
        check(any("left" in w for w in drawn), "the time left is kept before the rate",
              repr(drawn[-2:]))

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
