"""Stopping the helper processes the tests start in a process group of their own (a private D-Bus daemon, a
keyring, ibus-daemon): SIGTERM to the group, SIGKILL if it outlives ``timeout``."""

from __future__ import annotations

import os
import signal
import subprocess


def stop_group(proc: subprocess.Popen, timeout: float = 10) -> None:
    """Stop ``proc`` and the rest of its process group (started with ``start_new_session``)."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=5)
