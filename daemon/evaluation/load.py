"""A busy machine on demand: ``K`` processes spinning on the CPU.

Benchmarks run the typing replay beside them (``ghosttype eval --replay
--load K``) to see what a user who compiles or joins a video call gets.  The
spinners are plain Python loops at normal priority, started before the
measured run and killed after it, also when the run fails.
"""

from __future__ import annotations

import subprocess
import sys
import time
from types import TracebackType
from typing import Optional

_SPIN = "while True:\n    pass\n"


class BusyLoad:
    """Context manager: ``with BusyLoad(2): ...`` runs the block while two
    processes keep two cores busy."""

    def __init__(self, processes: int, settle_s: float = 0.5) -> None:
        if processes < 0:
            raise ValueError(f"the number of busy processes must be >= 0, got {processes}")
        self.processes = processes
        self._settle_s = settle_s
        self._procs: list[subprocess.Popen] = []

    def __enter__(self) -> "BusyLoad":
        try:
            for _ in range(self.processes):
                self._procs.append(subprocess.Popen(
                    [sys.executable, "-c", _SPIN],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                ))
        except BaseException:
            self.stop()
            raise
        if self._procs:
            time.sleep(self._settle_s)  # let the scheduler see them before measuring
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.stop()

    def running(self) -> int:
        """Spinners still alive (all of them until :meth:`stop`)."""
        return sum(p.poll() is None for p in self._procs)

    def stop(self) -> None:
        for p in self._procs:
            if p.poll() is None:
                p.kill()
        for p in self._procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL is not ignorable
                pass
        self._procs = []


__all__ = ["BusyLoad"]
