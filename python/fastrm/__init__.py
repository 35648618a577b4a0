# SPDX-License-Identifier: LGPL-2.1-or-later
"""fastrm: libfastrm's tree removal for Python.

rmtree() is a drop-in for shutil.rmtree (the signature and semantics of
Python 3.12, onerror as in 3.11): the same checks of the path given, the
same exceptions and handler calls, but the tree below is removed by
libfastrm (fastrm_rmtree(3)): every descent relative to a directory fd with
O_NOFOLLOW and checked, workers that start only when the tree is big
enough to need them, each directory in the order its file system serves
best, and the GIL released meanwhile.

    import fastrm
    fastrm.rmtree("build")                       # as shutil.rmtree
    shutil.rmtree = fastrm.rmtree                # for a whole program

remove() removes several paths in one call, as `rm -rf` does, and says
what is left instead of raising.

Ctrl-C (any signal whose Python handler raises) stops either call in the
main thread within a few milliseconds: the workers stop after the entry
in hand, the exception is raised, and what was not removed yet is left.

Where it differs from shutil.rmtree (doc/python.md in the sources; the C
call beneath is fastrm_rmtree(3)):
  - the whole tree is removed as far as it can be before the handler is
    called, once per failure, in the order met (shutil stops at the first
    failure whose handler raises); with workers, that order is not the
    order of a serial walk;
  - a directory kept because something below it failed is not reported
    again (shutil also reports its rmdir's ENOTEMPTY), but for the path
    given itself, whose rmdir is shutil's;
  - func is os.unlink, os.rmdir or os.open (a directory that could not be
    read), never os.scandir below the path given;
  - the root directory is refused (OSError EBUSY), as rm --preserve-root.
"""
import collections
import errno
import os
import stat
import sys

from . import _fastrm

__all__ = ["rmtree", "remove", "RemoveResult", "pending", "finish"]
__version__ = _fastrm.LIBRARY_VERSION


def _unreadable(name):
    """Whether directory @name cannot be opened for reading (now)."""
    try:
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as e:
        return e.errno in (errno.EACCES, errno.EPERM)
    os.close(fd)
    return False


def _func_for(what, is_dir, err, name):
    """The os function shutil.rmtree names for a failure of this kind.
    libfastrm reports a directory it could not read where its rmdir
    fails, with the read's error (as GNU rm); shutil names os.open there,
    and handlers (pytest's) treat the two apart: a directory whose rmdir
    failed with EACCES or EPERM and that cannot be opened now is that
    case."""
    if what == _fastrm.EREMOVE or what == _fastrm.EREFUSED:
        if not is_dir:
            return os.unlink
        if what == _fastrm.EREMOVE and err in (errno.EACCES, errno.EPERM) \
                and _unreadable(name):
            return os.open
        return os.rmdir
    return os.open


def _raise_into(onexc, func, path, exc):
    """Call @onexc as shutil does: inside an except clause, so that a bare
    `raise` in the handler raises @exc."""
    try:
        raise exc
    except BaseException:
        onexc(func, path, exc)


def _join(path, rel, as_bytes):
    """@path (as given: str, bytes or path-like) and @rel (bytes, b"./x/y"
    from the library) as shutil names an entry: os.path.join(path, ...)."""
    if rel == b".":
        return path
    rel = rel[2:] if rel.startswith(b"./") else rel
    if not as_bytes:
        rel = os.fsdecode(rel)
    return os.path.join(path, rel)


_FORMATS = {"json": 0, "nul": 1}
_REMOVED, _FAILED, _KEPT, _PLANNED = 1, 2, 3, 4


class _Manifest:
    """A manifest (fastrm_manifest(3)) written to @target: a path (made
    or truncated) or an object with fileno() (its buffer flushed first)."""

    def __init__(self, target, fmt, failures_only):
        if fmt not in _FORMATS:
            raise ValueError("manifest_format must be 'json' or 'nul'")
        self.own = not hasattr(target, "fileno")
        if self.own:
            self.fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC |
                              os.O_CLOEXEC, 0o666)
        else:
            if hasattr(target, "flush"):
                target.flush()
            self.fd = target.fileno()
        try:
            self.cap = _fastrm.manifest_new(self.fd, _FORMATS[fmt], failures_only)
        except BaseException:
            if self.own:
                os.close(self.fd)
            raise

    def add(self, path, mode, outcome, err=0, op=None):
        _fastrm.manifest_add(self.cap, os.fsencode(path), stat.S_IFMT(mode),
                             outcome, err, op)

    def close(self, status):
        """The summary (status None: none), and the file closed."""
        try:
            _fastrm.manifest_close(self.cap, status)
        finally:
            if self.own:
                os.close(self.fd)


def _open_manifest(manifest, manifest_format, manifest_failures):
    if manifest is None:
        return None
    return _Manifest(manifest, manifest_format, manifest_failures)


def _patterns(exclude):
    """exclude= as the library takes it: a list of bytes, or None."""
    if exclude is None:
        return None
    if isinstance(exclude, (str, bytes, os.PathLike)):
        exclude = [exclude]
    pats = [os.fsencode(p) for p in exclude]
    if any(b"\0" in p for p in pats):
        raise ValueError("embedded null byte")
    return pats


def _report(failures, path, onexc, as_bytes):
    for what, rel, err, is_dir, _level in failures:
        name = _join(path, rel, as_bytes)
        exc = OSError(err, os.strerror(err), name)
        _raise_into(onexc, _func_for(what, is_dir, err, name), name, exc)


def rmtree(path, ignore_errors=False, onerror=None, *, onexc=None, dir_fd=None,
           jobs=None, order=None, exclude=None, dry_run=False, manifest=None,
           manifest_format="json", manifest_failures=False, max_rate=None,
           latency_target=None, detach=False):
    """Recursively delete a directory tree, as shutil.rmtree does.

    If dir_fd is not None, it should be a file descriptor open to a
    directory; path is then relative to that directory.  If ignore_errors
    is set, errors are ignored; otherwise, if onexc or onerror is set, it
    is called to handle the error with arguments (func, path, exc_info)
    where func is os.open, os.unlink, os.rmdir, os.lstat, os.scandir or
    os.path.islink, path is the argument to that function that caused it
    to fail, and the value of exc_info (onerror) is a tuple returned by
    sys.exc_info(), or the exception itself (onexc).  If ignore_errors is
    false and both are None, the exception is raised.  onerror is
    deprecated in Python 3.12 and only used if onexc is None.

    jobs: the most workers (None: frm's default, 4 per CPU, at most 16,
    fitted to the device; they start only when the tree needs them).
    order: the ordering policy of every directory (frm --order), by name:
    "auto" (the default: chosen per directory by file system and
    device), "directory" (as the directory returns them), "inode" (the
    whole directory sorted by inode), "chunked" (windows within the
    memory budget, each sorted by inode), "global" (a global inode order
    within the budget, by several passes), or "gnulib" (GNU rm's: windows
    of 100,000, sorted by inode from 10,000 entries); fastrm_order(3).

    In the main thread, a signal handler that raises (Ctrl-C) stops the
    removal within a few milliseconds and its exception is raised; what
    was not removed is left as it was.

    exclude: shell patterns (a str, or a list): what matches one is kept
    with what it holds, and so is every directory above it, path included,
    without an error (frm --exclude: a pattern without '/' on the name, one
    with '/' on the path below path; ending in '/': directories only).
    dry_run: remove nothing; decide as a real call would (the handler is
    called for what would fail, as far as can be seen: frm(1), DRY RUN).
    manifest: a path or a file object: a record of each entry removed
    (planned, in a dry run), failed or kept, and a summary (frm
    --manifest; fastrm_manifest(3)); manifest_format "json" (JSON Lines)
    or "nul"; manifest_failures: only what was left, and the summary.
    max_rate: entries removed per second at most, all workers together
    (frm --max-rate); latency_target: the latency in seconds to keep the
    device's requests near (frm --latency-target, e.g. 0.05): the removal
    slows down while they wait longer; stats' paced_ms says how long the
    workers waited (frm(1), PACING).
    detach: rename the directory to a hidden name beside it and return at
    once; a finisher process (its own session, nice 19, idle I/O class,
    paced: latency_target 50 ms unless pacing is given) removes it, and a
    record in the state directory outlives a crash: finish() completes
    what is pending, pending() lists it (frm --detach; fastrm_detach(3)).
    What cannot be renamed (a mount point, no write on the directory
    above) is removed in place.  Raises OSError if the finisher could not
    start (the tree is detached: finish() removes it).  Not with dry_run,
    exclude or manifest.
    """
    if detach and (dry_run or exclude is not None or manifest is not None):
        raise ValueError("detach cannot be given with dry_run, exclude or manifest")
    sys.audit("shutil.rmtree", path, dir_fd)
    pats = _patterns(exclude)
    pace = _pace(max_rate, latency_target)
    m = _open_manifest(manifest, manifest_format, manifest_failures)
    failed = [0]
    try:
        _rmtree(path, ignore_errors, onerror, onexc, dir_fd, jobs, order, pats,
                dry_run, m, failed, pace, detach)
    except BaseException:
        if m is not None:
            m.close(None)
        raise
    if m is not None:
        m.close(1 if failed[0] else 0)


def _pace(max_rate, latency_target):
    """(max_rate, latency_target) as the library takes them: 0 for none."""
    rate = 0.0 if max_rate is None else float(max_rate)
    target = 0.0 if latency_target is None else float(latency_target)
    if max_rate is not None and not 0 < rate <= 1e9:
        raise ValueError("max_rate must be more than 0 (entries a second)")
    if latency_target is not None and not 0 < target <= 3600:
        raise ValueError("latency_target must be more than 0 seconds, at most 3600")
    return rate, target


def _rmtree(path, ignore_errors, onerror, onexc, dir_fd, jobs, order, pats,
            dry_run, m, failed, pace, detach=False):
    if ignore_errors:
        def onexc(*args):
            pass
    elif onerror is None and onexc is None:
        def onexc(*args):
            raise
    elif onexc is None:
        def onexc(*args):
            func, path, exc = args
            if exc is None:
                exc_info = None, None, None
            else:
                exc_info = type(exc), exc, exc.__traceback__
            return onerror(func, path, exc_info)

    handler = onexc

    def onexc(func, p, exc):
        # every failure counts for the manifest's exit status
        failed[0] += 1
        if m is not None and p == path and func is not os.rmdir:
            m.add(p, 0, _FAILED, getattr(exc, "errno", 0) or 0, func.__name__)
        return handler(func, p, exc)

    # As shutil's fd-based version: a bytes path is handled as str.
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    try:
        orig_st = os.lstat(path, dir_fd=dir_fd)
    except Exception as err:
        onexc(os.lstat, path, err)
        return
    if pats is not None and _fastrm.excluded(
            pats, os.path.basename(os.fsencode(path).rstrip(b"/")) or b"/",
            stat.S_ISDIR(orig_st.st_mode)):
        if m is not None:
            m.add(path, orig_st.st_mode, _KEPT, 0, "excluded")
        return
    if detach and stat.S_ISDIR(orig_st.st_mode):
        try:
            state_dir, rec = _fastrm.detach(os.fsencode(path),
                                            -100 if dir_fd is None else dir_fd, False)
        except OSError:
            pass  # not renamed: removed in place
        else:
            _fastrm.finisher(state_dir, [rec], jobs, *pace)
            return
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK, dir_fd=dir_fd)
        fd_closed = False
    except Exception as err:
        onexc(os.open, path, err)
        return
    try:
        if os.path.samestat(orig_st, os.fstat(fd)):
            excluded = 0
            if stat.S_ISDIR(orig_st.st_mode):
                if m is not None:
                    _fastrm.manifest_set_base(m.cap, os.fsencode(path))
                    path = os.fspath(path)
                failures, st = _fastrm.empty_fd(fd, jobs, order, False, pats,
                                                None if m is None else m.cap,
                                                dry_run, *pace)
                excluded = st["excluded"]
                _report(failures, path, onexc, False)
            else:
                try:
                    raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
                except OSError as err:
                    onexc(os.scandir, path, err)
            os.close(fd)
            fd_closed = True
            if excluded:
                return  # kept, as what was excluded below it: no error
            below = failed[0]
            if dry_run:
                parent = os.path.dirname(os.fspath(path).rstrip("/")) or "."
                if below:
                    err = OSError(errno.ENOTEMPTY, os.strerror(errno.ENOTEMPTY), path)
                elif not os.access(parent, os.W_OK | os.X_OK, dir_fd=dir_fd,
                                   effective_ids=os.access in os.supports_effective_ids):
                    err = PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
                else:
                    if m is not None:
                        m.add(path, stat.S_IFDIR, _PLANNED)
                    return
                if m is not None and not below:
                    m.add(path, stat.S_IFDIR, _FAILED, err.errno, "rmdir")
                _raise_into(onexc, os.rmdir, path, err)
                return
            try:
                os.rmdir(path, dir_fd=dir_fd)
            except OSError as err:
                # a failure below: the manifest says the path was kept
                if m is not None and not below:
                    m.add(path, stat.S_IFDIR, _FAILED, err.errno or 0, "rmdir")
                onexc(os.rmdir, path, err)
            else:
                if m is not None:
                    m.add(path, stat.S_IFDIR, _REMOVED)
        else:
            try:
                # symlinks to directories are forbidden, see bug #1669
                raise OSError("Cannot call rmtree on a symbolic link")
            except OSError as err:
                onexc(os.path.islink, path, err)
    finally:
        if not fd_closed:
            os.close(fd)


rmtree.avoids_symlink_attacks = True


RemoveResult = collections.namedtuple("RemoveResult", "left stats")
RemoveResult.__doc__ = """What remove() did.

left: a list of (path, OSError), one per entry that could not be removed
  (the directories above it are kept and not listed), in the order met;
  empty when every path given is gone.
stats: a dict: removed (entries removed, directories included; in a
  dry run, that would be), kept (entries left without a failure: excluded,
  or directories above what was left), excluded (kept by an exclusion),
  workers (threads that ran), workers_fitted,
  subtrees_shared, read_ahead_requests, read_ahead_bytes, index_lookups,
  inodes_read_ahead, leaves_read_ahead, paced_ms (fastrm_rmtree(3), struct
  fastrm_rmtree_stats)."""


def remove(paths, *, dir_fd=None, missing_ok=True, one_file_system=False,
           jobs=None, order=None, exclude=None, dry_run=False, manifest=None,
           manifest_format="json", manifest_failures=False, max_rate=None,
           latency_target=None):
    """Remove every path of @paths (files, symlinks, or whole trees), at
    once, as `rm -rf PATH...` does: nothing raised for what could not be
    removed; the result says what is left.

    missing_ok: a path given that does not exist is not a failure (rm -f).
    one_file_system: what is on another file system is left (and listed).
    The root directory, and a path whose last component is "." or "..",
    are refused, as GNU rm refuses them.  Raises TypeError or ValueError
    for bad arguments, OSError when the removal could not start; in the
    main thread, a signal handler's exception (KeyboardInterrupt) stops
    it, what is not removed yet left.  jobs, order, exclude, dry_run,
    the manifest's arguments and pacing (max_rate, latency_target) as in
    rmtree(); in a dry run, left says what would be left.
    """
    if isinstance(paths, (str, bytes, os.PathLike)):
        raise TypeError("remove() takes a list of paths; for one, remove([path])")
    given = [os.fspath(p) for p in paths]
    raw = [os.fsencode(p) for p in given]
    if any(b"\0" in p for p in raw):
        raise ValueError("embedded null byte")
    pats = _patterns(exclude)
    pace = _pace(max_rate, latency_target)
    m = _open_manifest(manifest, manifest_format, manifest_failures)
    try:
        failures, stats = _fastrm.remove(
            raw, -100 if dir_fd is None else dir_fd, jobs, order, one_file_system,
            missing_ok, pats, None if m is None else m.cap, dry_run, *pace) \
            if raw else ([], {})
    except BaseException:
        if m is not None:
            m.close(None)
        raise
    if m is not None:
        m.close(1 if failures else 0)
    left = []
    for _what, p, err, _is_dir, _level in failures:
        name = p if isinstance(given[0], bytes) else os.fsdecode(p)
        left.append((name, OSError(err, os.strerror(err), name)))
    return RemoveResult(left, stats)


def pending():
    """What was detached and is not removed yet: a list of dicts, one per
    record of the state directory (fastrm_pending(3)): id, path (where it
    was, bytes), hidden (where it is, bytes), dev, ino, when (seconds
    since the epoch), removed (entries so far), active (a finisher is at
    it now), failures (what the last finisher could not remove)."""
    return _fastrm.pending()[1]


def finish(ids=None, *, jobs=None, max_rate=None, latency_target=None):
    """Remove what was detached, here and now (frm --finish): the records
    @ids (a list of ids), or every one that no finisher is at now.
    Returns a RemoveResult: left, what could not be removed (paths under
    the hidden name), stats summed over the records (a record that a
    finisher holds is skipped, and counted in stats' "busy")."""
    state_dir, recs = _fastrm.pending()
    if ids is None:
        ids = [r["id"] for r in recs]
    pace = _pace(max_rate, latency_target)
    left, total = [], {"busy": 0}
    for rec in ids:
        try:
            failures, stats = _fastrm.finish(state_dir, rec, jobs, *pace)
        except OSError as err:
            if err.errno == errno.EBUSY:
                total["busy"] += 1
                continue
            raise
        for _what, p, err, _is_dir, _level in failures:
            name = os.fsdecode(p)
            left.append((name, OSError(err, os.strerror(err), name)))
        for k, v in stats.items():
            total[k] = max(total.get(k, 0), v) if k.startswith("workers") \
                else total.get(k, 0) + v
    return RemoveResult(left, total)
