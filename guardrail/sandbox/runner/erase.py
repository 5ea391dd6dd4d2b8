"""Delete what a job left in a writable folder, however it was built to resist deletion.

Runs in the reaper, as the job's own uid after all its processes were killed, so it can delete
no more than the job itself could. Iterative and relative to the working directory, one level at
a time: no recursion (a 3,000-level tree broke ``shutil.rmtree``), no path longer than one name
(PATH_MAX), no descriptor kept per level (RLIMIT_NOFILE), symbolic links unlinked and never
followed, permissions the owner took away from itself given back. Every entry is visited once,
so it ends even when something cannot be deleted; the caller checks and retries.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable

_OPEN_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_owned(folder: str, uid: int) -> None:
    """Delete every entry of ``folder`` (not the folder) owned by ``uid``."""
    try:
        os.chdir(folder)
        names = os.listdir(".")
    except OSError:
        return
    for name in names:
        with contextlib.suppress(OSError):
            info = os.lstat(name)
            if info.st_uid != uid:
                continue
            if stat.S_ISDIR(info.st_mode):
                remove_tree(name)
                os.chdir(folder)
            else:
                os.unlink(name)


def remove_tree(name: str) -> None:
    """Delete directory ``name`` of the working directory and everything under it."""
    entered: list[str] = []  # the directories we are in, from ``name`` down
    pending: list[list[str]] = [[name]]  # per level: subdirectories still to delete
    while pending:
        if pending[-1]:
            child = pending[-1].pop()
            if _enter(child):
                entered.append(child)
                pending.append(_clear_working_directory())
            else:
                _quietly(os.rmdir, child)  # empty, or beyond us: it stays and is reported
            continue
        pending.pop()
        if entered:
            left = entered.pop()
            os.chdir("..")
            _quietly(os.rmdir, left)


def _enter(name: str) -> bool:
    """chdir into the directory ``name`` (never through a symbolic link), made ours to empty."""
    try:
        fd = os.open(name, _OPEN_DIRECTORY)
    except PermissionError:  # the owner removed its own read permission
        try:
            os.chmod(name, 0o700)
            fd = os.open(name, _OPEN_DIRECTORY)
        except OSError:
            return False
    except OSError:
        return False
    try:
        os.fchmod(fd, 0o700)  # search, list and unlink in it, whatever mode the owner left
        os.fchdir(fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def _clear_working_directory() -> list[str]:
    """Unlink every non-directory here (files, links, FIFOs, sockets); return the directories."""
    try:
        with os.scandir(".") as entries:
            listed = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
    except OSError:
        return []
    directories = []
    for name, is_directory in listed:
        if is_directory:
            directories.append(name)
        else:
            _quietly(os.unlink, name)
    return directories


def _quietly(action: Callable[[str], object], name: str) -> None:
    with contextlib.suppress(OSError):
        action(name)
