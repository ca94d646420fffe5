"""What ghosttype saved you: counts only, never text.

Five numbers per day and in total: suggestions shown, accepted whole (the
accept key), accepted by word (the accept-word key), characters ghosttype
inserted, and keystrokes saved (characters inserted minus the key presses
that inserted them).  They are kept in ``stats.json`` in the platformdirs
user state directory (``~/.local/state/ghosttype/stats.json`` on Linux),
written with mode 0600 by replacing the file from a temporary file of its
own (:func:`daemon.atomic_write.replace_text`), so a reader never sees half
of it.  Each read-add-write holds an exclusive lock (``flock`` on
``stats.json.lock`` beside it), so the overlay daemon and the IBus engine
counting at once lose nothing.  A file that is not JSON, or a value in it
that is not a count, is warned about (without the value) and counted from
zero: a damaged file never stops ghosttype from starting.

The numbers come from the controller's own counters (``new_suggestions``,
``accepted``, ``accepted_word``, ``accepted_chars``):
:class:`StatsRecorder` reads them on a thread of its own every couple of
seconds and adds what changed since its last look.  Each write reads the
file first and adds to it, so ``ghosttype stats --reset`` (which deletes the
file) works while ghosttype runs, and the overlay daemon and the IBus engine
can count into the same file.  With ``stats = false`` in the config nothing
is counted or written.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import logging
import math
import os
import pathlib
import threading
from typing import Callable, Iterator, Mapping, Optional, Union

from daemon.atomic_write import replace_text

try:
    import fcntl
except ImportError:  # Windows: one process counts there (no IBus engine beside the daemon)
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

APP_NAME = "ghosttype"
STATS_FILENAME = "stats.json"
#: The counts, in the order they are shown.
FIELDS = ("shown", "accepted", "accepted_words", "chars_inserted", "keystrokes_saved")
LABELS = {
    "shown": "suggestions shown",
    "accepted": "accepted whole",
    "accepted_words": "accepted by word",
    "chars_inserted": "characters inserted",
    "keystrokes_saved": "keystrokes saved",
}
#: Days kept in the file (the total keeps everything).
KEEP_DAYS = 400

Counts = dict[str, int]
PathLike = Union[str, pathlib.Path]


def default_stats_path() -> pathlib.Path:
    """``<user state dir>/ghosttype/stats.json`` (platformdirs)."""
    import platformdirs

    return pathlib.Path(platformdirs.user_state_dir(APP_NAME, appauthor=False)) / STATS_FILENAME


def zero() -> Counts:
    return {k: 0 for k in FIELDS}


def counts_from_controller(counters: Mapping[str, int]) -> Counts:
    """The five counts implied by the controller's counters; every accept
    cost one key press."""
    accepts = counters.get("accepted", 0) + counters.get("accepted_word", 0)
    chars = counters.get("accepted_chars", 0)
    return {
        "shown": counters.get("new_suggestions", 0),
        "accepted": counters.get("accepted", 0),
        "accepted_words": counters.get("accepted_word", 0),
        "chars_inserted": chars,
        "keystrokes_saved": chars - accepts,
    }


def _add(a: Mapping[str, int], b: Mapping[str, int]) -> Counts:
    return {k: int(a.get(k, 0)) + int(b.get(k, 0)) for k in FIELDS}


def _count(value: object) -> Optional[int]:
    """``value`` as a count, or None when it is none (text, a list, true, NaN...)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return int(value)
    return None


def _counts(raw: object) -> tuple[Counts, int]:
    """The counts in ``raw`` (a dict read from the file) and how many of its values were not counts."""
    counts, bad = zero(), 0
    if not isinstance(raw, dict):
        return counts, 1
    for k in FIELDS:
        if k in raw:
            n = _count(raw[k])
            if n is None:
                bad += 1
            else:
                counts[k] = n
    return counts, bad


class StatsFile:
    """The counts on disk: ``{"total": {...}, "days": {"YYYY-MM-DD": {...}}}``."""

    def __init__(self, path: Optional[PathLike] = None) -> None:
        self.path = pathlib.Path(path) if path is not None else default_stats_path()

    def read(self) -> dict:
        """The file's content; empty counts when it is missing or unreadable,
        and zero for each value that is not a count (see the module docstring)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            data = {}
        except (OSError, ValueError) as e:
            log.warning("stats file %s unreadable (%s); starting from zero", self.path, type(e).__name__)
            data = {}
        if not isinstance(data, dict):
            log.warning("stats file %s holds no counts; starting from zero", self.path)
            data = {}
        total, bad = _counts(data.get("total", {}))
        days = {}
        raw_days = data.get("days", {})
        if isinstance(raw_days, dict):
            for d, c in raw_days.items():
                days[d], n = _counts(c)
                bad += n
        else:
            bad += 1
        if bad:
            log.warning("stats file %s: %d entries are not counts; counting them from zero", self.path, bad)
        return {"total": total, "days": days}

    def add(self, delta: Mapping[str, int], day: Optional[str] = None) -> dict:
        """Add ``delta`` to today's counts and the total; returns the new content."""
        day = day or datetime.date.today().isoformat()
        with self._locked():
            data = self.read()
            data["total"] = _add(data["total"], delta)
            data["days"][day] = _add(data["days"].get(day, {}), delta)
            for old in sorted(data["days"])[:-KEEP_DAYS]:
                del data["days"][old]
            replace_text(self.path, json.dumps(data, indent=1, sort_keys=True), mode=0o600)
        return data

    def reset(self) -> bool:
        """Delete the counts; True when there was a file."""
        with self._locked():
            try:
                self.path.unlink()
                return True
            except FileNotFoundError:
                return False

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the exclusive lock of ``stats.json.lock`` (where there is ``flock``)."""
        if fcntl is None:
            yield
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = self.path.with_name(self.path.name + ".lock")
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released when the file is closed
            yield
        finally:
            os.close(fd)


def summary(data: Mapping, day: Optional[str] = None) -> dict:
    """``{"today": counts, "total": counts, "days": {...}}`` for display."""
    day = day or datetime.date.today().isoformat()
    return {"today": _add(zero(), data.get("days", {}).get(day, {})), "total": _add(zero(), data.get("total", {})),
            "days": dict(data.get("days", {}))}


def short_line(counts: Mapping[str, int]) -> str:
    """One line for the tray's tooltip."""
    return (f"{counts.get('keystrokes_saved', 0)} keystrokes saved, "
            f"{counts.get('accepted', 0) + counts.get('accepted_words', 0)} of "
            f"{counts.get('shown', 0)} suggestions taken")


class StatsRecorder:
    """Adds the controller's new counts to the stats file every ``interval_s``
    (see the module docstring).  ``counters`` is the controller's Counter,
    read without its lock (one ``get`` per key, each atomic); ``enabled``
    says whether counting is on (the config's ``stats``, read at each look)."""

    def __init__(self, counters: Mapping[str, int], enabled: Callable[[], bool],
                 stats: Optional[StatsFile] = None, interval_s: float = 2.0) -> None:
        self._counters = counters
        self._enabled = enabled
        self.file = stats or StatsFile()
        self._interval_s = interval_s
        self._seen = counts_from_controller(counters)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._today: Counts = summary(self.file.read())["today"]

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="ghosttype-stats", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread and write what is left."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self.flush()

    def today(self) -> Counts:
        """Today's counts as of the last write (no file access)."""
        with self._lock:
            return dict(self._today)

    def flush(self) -> None:
        """Add what the counters gained since the last look (when counting is on)."""
        with self._lock:
            now = counts_from_controller(self._counters)
            delta = {k: now[k] - self._seen[k] for k in FIELDS}
            self._seen = now
            if not any(delta.values()) or not self._enabled():
                return
            try:
                self._today = summary(self.file.add(delta))["today"]
            except OSError as e:
                log.warning("cannot write the stats file %s: %s", self.file.path, e.strerror or e)

    def _run(self) -> None:
        while not self._stop.wait(self._interval_s):
            try:
                self.flush()
            except Exception:  # counting must never end the daemon
                log.exception("updating the stats failed")
