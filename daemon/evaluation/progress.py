"""Progress of long benchmark runs on stderr: ``label done/total, elapsed, ETA``.

Drawn in place (carriage return) only when the stream is a terminal; when it
is not (a pipe, a file, CI) nothing extra is written, so saved output stays
the tables alone.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional, TextIO


def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m``."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def progress_line(label: str, done: int, total: int, elapsed: float) -> str:
    """One progress line; the ETA assumes the remaining items cost what the
    finished ones did on average."""
    line = f"{label} {done}/{total}  elapsed {format_duration(elapsed)}"
    if 0 < done < total:
        line += f"  ETA {format_duration(elapsed / done * (total - done))}"
    return line


class Progress:
    """A ``(done, total)`` callback that redraws :func:`progress_line`."""

    def __init__(self, label: str, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self.label = label
        self.stream = stream
        self.clock = clock
        self.start = clock()
        self._width = 0

    def __call__(self, done: int, total: int) -> None:
        line = progress_line(self.label, done, total, self.clock() - self.start)
        pad = " " * max(0, self._width - len(line))  # erase a longer previous line
        self._width = len(line)
        end = "\n" if done >= total else ""
        self.stream.write(f"\r{line}{pad}{end}")
        self.stream.flush()


def terminal_progress(label: str, stream: Optional[TextIO] = None) -> Optional[Progress]:
    """A :class:`Progress` on ``stream`` (stderr by default) when it is a
    terminal, else None (callers skip progress entirely)."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    if isatty is None or not isatty():
        return None
    return Progress(label, stream)
