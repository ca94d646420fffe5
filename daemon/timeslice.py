"""How long a thread runs before a thread that wakes up may take its core.

Linux's scheduler (EEVDF, a custom time slice per thread since 6.12) lets a
thread that wakes with a shorter slice than the running one take the core at
once; between equal slices the running thread keeps the core for the rest of
its slice (1.4 ms on two cores).  While the model decodes it keeps cores busy,
so each process a key passes through (the application, ibus-daemon, the
engine's D-Bus thread) could wait that long for a core, several times per
key.  So the model's threads ask for long slices (:data:`MODEL`): anything
interactive that wakes up takes the core from them at once, and they keep
their share of the CPU (a slice changes when a thread runs, not how much).
The thread that answers the keys asks for a short one (:data:`KEYS`), so it
also goes first against other programs' busy threads.

Where the kernel has no custom slices (before 6.12, not Linux) nothing
changes.  See the IBus engine's notes (daemon/frontends/ibus/README.md) for
what it was measured to change.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys

#: Slice of the suggestion worker's thread, and of the threads the model starts from it.
MODEL = 0.020
#: Slice of the thread that answers the keys.
KEYS = 0.0002

#: sched_setattr and sched_getattr per machine (x86_64's table; the generic one of arm64 and riscv64)
_SYSCALLS = {"x86_64": (314, 315), "aarch64": (274, 275), "arm64": (274, 275), "riscv64": (274, 275)}
#: struct sched_attr (its first version: 56 bytes)
_ATTR = struct.Struct("IIQiIQQQII")


def _syscalls() -> "tuple[int, int] | None":
    if not sys.platform.startswith("linux"):
        return None
    return _SYSCALLS.get(platform.machine())


def current(tid: int = 0) -> "float | None":
    """The slice of thread ``tid`` (0: this one) in seconds, None where it cannot be read."""
    calls = _syscalls()
    if calls is None:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(_ATTR.size)
    if libc.syscall(calls[1], ctypes.c_int(tid), buf, ctypes.c_uint(_ATTR.size), ctypes.c_uint(0)) != 0:
        return None
    return _ATTR.unpack(buf.raw)[5] / 1e9


def request(seconds: float) -> bool:
    """Ask for time slices of ``seconds`` (0.1 to 100 ms) for the calling
    thread and the threads it starts from now on; True when the kernel took
    it.  Only for a thread under the normal policy; its nice value stays."""
    calls = _syscalls()
    if calls is None:
        return False
    try:
        if os.sched_getscheduler(0) != os.SCHED_OTHER:
            return False
        nice = os.getpriority(os.PRIO_PROCESS, 0)  # this thread's: Linux keeps one per thread
    except OSError:
        return False
    ns = int(seconds * 1e9)
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(_ATTR.pack(_ATTR.size, os.SCHED_OTHER, 0, nice, 0, ns, 0, 0, 0, 0), _ATTR.size)
    if libc.syscall(calls[0], ctypes.c_int(0), buf, ctypes.c_uint(0)) != 0:
        return False
    return current() == ns / 1e9  # an older kernel takes the call and ignores the slice
