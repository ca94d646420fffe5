"""Replacing a file's content in one step, privately.

The new content goes into a temporary file beside the target, created with
mode 0600 and a name no other writer uses (``tempfile.mkstemp``: ``O_EXCL``,
so a file or link planted under that name is never followed), and is renamed
over the target once complete: a reader sees the old file or the new one,
never half of one.  A target that is a symbolic link (a config file kept
with one's dotfiles) is written through: the file it leads to is replaced
and the link stays.  The result keeps the permissions of the file it
replaces, or gets ``mode``.
"""

from __future__ import annotations

import os
import pathlib
import stat
import tempfile
from typing import Optional, Union

PathLike = Union[str, pathlib.Path]


def replace_text(path: PathLike, text: str, mode: Optional[int] = None) -> pathlib.Path:
    """Write ``text`` (UTF-8) to ``path``; returns the file written (``path``
    with its links resolved).  ``mode``: the file's permissions (None: those
    of the file replaced, 0600 for a new one)."""
    target = pathlib.Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = 0o600
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")  # 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
            os.fchmod(f.fileno(), mode)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return target
