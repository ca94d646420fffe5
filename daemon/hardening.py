"""Keeping what ghosttype holds in memory out of crash dumps.

The daemon's memory holds the text before the caret, the prompt given to the
model and the server's token.  A crash inside llama.cpp or Qt would hand all
of it to systemd-coredump, apport or a ``core`` file.  :func:`forbid_core_dumps`
runs first thing in every ghosttype process:

* the soft ``RLIMIT_CORE`` is set to 0 (the one the kernel obeys; the hard
  limit stays, so programs ghosttype starts may raise theirs again), so the
  kernel writes no core file and a core handler that honours the limit
  (systemd-coredump does) stores nothing;
* on Linux the process is marked not dumpable (``PR_SET_DUMPABLE`` 0): the
  kernel then hands no core to any handler, pipe or file, whatever the
  limit (unless root set ``fs.suid_dumpable`` to 2, when the core is
  readable by root only), and other processes of the same user can no
  longer attach a debugger to read the process's memory (ptrace).

Windows has no such switch for one process (Windows Error Reporting is set
machine-wide); nothing is changed there.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import sys

log = logging.getLogger(__name__)

PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3


def forbid_core_dumps() -> None:
    """See the module docstring.  Never raises: a failure is logged."""
    try:
        import resource
    except ImportError:  # Windows
        return
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    except (ValueError, OSError) as exc:
        log.warning("cannot turn core dumps off: %s", exc)
    if sys.platform.startswith("linux"):
        if _prctl(PR_SET_DUMPABLE, 0) != 0:
            log.warning("cannot mark the process not dumpable (errno %d)", ctypes.get_errno())


def dumpable() -> bool:
    """Whether the kernel would dump this process's core (Linux; True elsewhere)."""
    if not sys.platform.startswith("linux"):
        return True
    return _prctl(PR_GET_DUMPABLE, 0) != 0


def _prctl(option: int, arg: int) -> int:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    libc.prctl.restype = ctypes.c_int
    return libc.prctl(option, arg, 0, 0, 0)
