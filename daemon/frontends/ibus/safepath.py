"""Whether only root can change a file or directory, and what it leads to.

``ghosttype ibus install --system`` makes every user's ibus-daemon run this
installation's interpreter and package: if one user could change any of
those files, or any directory on their way, that user's code would run in
every other user's session, where it sees all they type.  So each part of a
path is checked the way sshd's ``StrictModes`` checks a user's files: owned
by root and writable by no group and nobody else, from ``/`` down, following
every symbolic link to its target (the link's own directory is what
protects it).  A sticky directory writable by everyone (``/tmp``) is
accepted on the way: there only an entry's owner can rename or remove it,
and each entry below is checked in turn.
"""

from __future__ import annotations

import os
import pathlib
import pwd
import stat
import sys
from typing import Iterable, Optional

#: Symbolic links followed before a path counts as a loop (as the kernel's limit).
MAX_LINKS = 40


class UnsafePath(Exception):
    """A path someone other than root can change; the message says which part and why."""


def _owner(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _check_entry(path: pathlib.Path, st: os.stat_result) -> None:
    if st.st_uid != 0:
        raise UnsafePath(f"{path} is owned by {_owner(st.st_uid)}, not root")
    writable = st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable and not (stat.S_ISDIR(st.st_mode) and st.st_mode & stat.S_ISVTX):
        who = "everyone" if st.st_mode & stat.S_IWOTH else "its group"
        raise UnsafePath(f"{path} is writable by {who}")


def check_path(path: os.PathLike | str, _links: int = 0) -> pathlib.Path:
    """Raise :class:`UnsafePath` unless only root can change ``path``, the
    directories above it and whatever its links lead to; return the path
    it leads to."""
    path = pathlib.Path(os.getcwd(), path)  # not normalised: ".." after a link is the link target's parent
    current = pathlib.Path("/")
    _check_entry(current, os.lstat(current))
    for name in path.parts[1:]:
        if name in ("", "."):
            continue
        if name == "..":
            current = current.parent
            continue
        candidate = current / name
        try:
            st = os.lstat(candidate)
        except OSError as e:
            raise UnsafePath(f"{candidate} cannot be read ({e.strerror})") from e
        if stat.S_ISLNK(st.st_mode):
            if _links >= MAX_LINKS:
                raise UnsafePath(f"{path}: too many symbolic links")
            target = pathlib.Path(os.readlink(candidate))
            current = check_path(target if target.is_absolute() else current / target, _links + 1)
            continue
        _check_entry(candidate, st)
        current = candidate
    return current


def check_tree(root: os.PathLike | str) -> None:
    """:func:`check_path` for ``root`` and everything below it."""
    real = check_path(root)
    for directory, dirs, files in os.walk(real):
        for name in [*dirs, *files]:
            entry = pathlib.Path(directory) / name
            st = os.lstat(entry)
            if stat.S_ISLNK(st.st_mode):
                check_path(entry)
            else:
                _check_entry(entry, st)


def first_unsafe(paths: Iterable[os.PathLike | str], trees: Iterable[os.PathLike | str] = ()) -> Optional[str]:
    """Why the first of ``paths`` (checked with their directories) or of
    ``trees`` (checked file by file) is not safe, or None when all are."""
    try:
        for p in paths:
            check_path(p)
        for t in trees:
            check_tree(t)
    except UnsafePath as e:
        return str(e)
    return None


def installation_files() -> tuple[list[pathlib.Path], list[pathlib.Path]]:
    """What this installation runs (``ghosttype``, the IBus engine's command): the interpreter, the script, the
    module path's directories (each with the directories above it), and
    the package and this environment's own module directories (every file)."""
    import daemon

    exe = pathlib.Path(sys.executable)
    script = exe.parent / "ghosttype"
    package = pathlib.Path(daemon.__file__).parent
    prefix = pathlib.Path(sys.prefix)
    entries = [pathlib.Path(p or os.getcwd()) for p in sys.path if os.path.isdir(p or os.getcwd())]
    trees = [package] + [p for p in entries if prefix in p.parents]
    return [exe, *([script] if script.exists() else []), *entries], trees
