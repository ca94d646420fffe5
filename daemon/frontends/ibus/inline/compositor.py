"""Which program is behind a session-bus connection, for the inline link
(:mod:`~daemon.frontends.ibus.inline.shell_ghost`).

Any program of the user can own ``org.gnome.Shell`` where GNOME Shell does not
run (on Plasma nobody owns it), or ``org.kde.KWin`` where KWin does not, and
with it ghosttype's plug-in name.  So the plug-in counts only while the
connection that owns its name belongs to the compositor's own process: the bus
daemon says which process a connection belongs to
(``GetConnectionUnixProcessID``), and :func:`program` says what that process
runs, by the executable the kernel started it from (``/proc/PID/exe``), and
only where that file is one no user can change or plant: owned by root and
writable by nobody else, as every directory on its way
(:func:`~daemon.frontends.ibus.safepath.check_path`).  A copy or a hard link
named ``gnome-shell`` in a directory of the user's does not pass, nor does a
compositor updated on disk since it started (its file is gone).
"""

from __future__ import annotations

import os
from typing import Optional

from ..safepath import UnsafePath, check_path

#: The session-bus names GNOME Shell and KWin own.
SHELL_NAME = "org.gnome.Shell"
KWIN_NAME = "org.kde.KWin"
#: The executables each desktop's name must belong to (the name of ``/proc/PID/exe``).
COMPOSITORS = {
    SHELL_NAME: frozenset({"gnome-shell"}),
    KWIN_NAME: frozenset({"kwin_wayland", "kwin_x11"}),
}
#: Compositors that make themselves not dumpable, so that their ``/proc/PID/exe`` is root's alone to read
#: (KWin: ``disablePtrace()`` in ``main_wayland.cpp``), and the desktop (``XDG_CURRENT_DESKTOP``) that runs
#: them.  There the executable cannot be shown, and such a process counts as the compositor it is named
#: after only in that desktop's session, where the compositor holds its bus name for as long as it runs: a
#: program of the user could pass only by taking ``org.kde.KWin`` while KWin is not running, which on Plasma
#: is never (the README says so).
UNDUMPABLE = {"kwin_wayland": "KDE"}


def program(pid: int, desktop: Optional[str] = None) -> Optional[str]:
    """The name of the executable process ``pid`` runs, where only root can
    change that file; None when it cannot be read (no such process, another
    user's, one that forbids it) or anyone else could have put it there.
    A compositor of :data:`UNDUMPABLE` that forbids reading it is named in its
    own desktop's session (``desktop``: ``XDG_CURRENT_DESKTOP`` by default)."""
    exe = f"/proc/{pid}/exe"
    try:
        path = os.readlink(exe)
        running = os.stat(exe)
        real = check_path(path)
        on_disk = os.stat(real)
    except PermissionError:
        return _undumpable(pid, os.environ.get("XDG_CURRENT_DESKTOP", "") if desktop is None else desktop)
    except (OSError, UnsafePath):
        return None
    if (running.st_dev, running.st_ino) != (on_disk.st_dev, on_disk.st_ino):
        return None
    return real.name


def _undumpable(pid: int, desktop: str) -> Optional[str]:
    """The name of a compositor of :data:`UNDUMPABLE`, when process ``pid`` is not dumpable, is named so,
    is this user's, and ``desktop`` is that compositor's."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8", errors="replace") as f:
            status = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
    except OSError:
        return None
    name, uids = status.get("Name", "").strip(), status.get("Uid", "").split()
    wanted = UNDUMPABLE.get(name)
    if wanted is None or not uids or int(uids[0]) != os.getuid() or wanted not in desktop.split(":"):
        return None
    return name
