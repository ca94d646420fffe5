"""What the desktop told IBus of the caret: the ``SetCursorLocation`` calls on IBus's own bus, as a monitor of
that bus printed them (``dbus-monitor``, started by inside/session.py once the desktop is up; IBus hands every
call to a connection whose match rule fits it).

This is the tier's outside record of the compositor's side of the caret: GNOME Shell's input method passes
each cursor rectangle an application commits (``zwp_text_input_v3.set_cursor_rectangle``, the application's
own Wayland log: :mod:`tests.desktop.wayland_log`) to its IBus input context as a ``SetCursorLocation`` call.
When the application's log holds rectangles after its first key and IBus got none of them (only the repeat
of an older one that GNOME Shell sends at each focus-in, or the empty one of a reset), the desktop lost the
caret before ghosttype could know it; when IBus got no caret at all after the one the application sent after
its last key, the desktop held that one back (Mutter 51 passes a rectangle on at the surface's next commit).
Either way nobody could draw at the caret (tests/desktop/upstream.md). Nothing here reads ghosttype's log.

dbus-monitor prints a call as ``method call time=SECONDS.MICROS sender=... member=SetCursorLocation`` and
its four ``int32`` arguments on the lines after it; the time is epoch seconds (UTC).
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass

from tests.desktop.wayland_log import DAY, AppLog

_CALL = re.compile(r"^method call time=(\d+)\.(\d+) .*member=SetCursorLocation(Relative)?\s*$")
_INT = re.compile(r"^\s*int32 (-?\d+)\s*$")


@dataclass(frozen=True)
class Caret:
    ms: int  #: epoch milliseconds of the call
    rect: tuple[int, int, int, int]
    relative: bool


def parse(text: str) -> list[Caret]:
    out: list[Caret] = []
    call, ints = None, []
    for line in text.splitlines() + ["method call time=0.0 member=end"]:
        m = _CALL.match(line.strip()) if line.startswith("method call") else None
        if line.startswith("method call") or line.startswith("signal") or line.startswith("method return"):
            if call is not None and len(ints) >= 4:
                out.append(Caret(call[0], tuple(ints[:4]), call[1]))
            call, ints = ((int(m.group(1)) * 1000 + int(m.group(2).ljust(6, "0")[:6]) // 1000, bool(m.group(3)))
                          if m else None), []
            continue
        i = _INT.match(line)
        if i and call is not None:
            ints.append(int(i.group(1)))
    return out


def read(path: pathlib.Path | None) -> list[Caret] | None:
    if path is None or not path.exists():
        return None
    return parse(path.read_text(errors="replace"))


def caret_lost(carets: list[Caret] | None, app: AppLog | None, until_ms: int | None) -> str | None:
    """Evidence that the desktop passed IBus none of the carets the application reported after its first key
    (up to ``until_ms``, epoch ms: Tab): the application committed at least two different cursor rectangles
    after that key, and every SetCursorLocation IBus got in that time is the one it had before the key or an
    empty one. None when IBus got a new caret (or either record is missing)."""
    if carets is None or app is None or until_ms is None:
        return None
    moves = app.rectangles_after_first_key()
    if moves is None or len(set(moves[1])) < 2:
        return None
    first_key_ms_of_day, rects = moves
    day_start = until_ms - until_ms % DAY
    start = day_start + first_key_ms_of_day
    if start > until_ms:  # the key came before midnight, Tab after it
        start -= DAY
    before = [c for c in carets if c.ms < start]
    during = [c for c in carets if start <= c.ms <= until_ms]
    if not before:  # the monitor saw no call at all before the key: it may not have been listening
        return None
    stale = {before[-1].rect}
    new = [c for c in during if c.rect not in stale and any(c.rect)]
    if new:
        return None
    return (f"the application committed {len(rects)} cursor rectangles after its first key ({len(set(rects))} "
            f"different: its own Wayland log) and the desktop passed IBus none of them: {len(during)} "
            f"SetCursorLocation calls on IBus's bus in that time, each {sorted(stale)[0]} or empty "
            f"(a monitor of IBus's bus)")


def last_caret_held_back(carets: list[Caret] | None, app: AppLog | None, until_ms: int | None) -> str | None:
    """Evidence that the desktop held back the caret the application reported after its last key: the
    application committed a new cursor rectangle after that key (its own Wayland log) and IBus got no
    SetCursorLocation from then until ``until_ms`` (epoch ms: Tab). None otherwise (or a record missing)."""
    if not carets or app is None or until_ms is None:
        return None
    last = app.last_caret_after_last_key()
    if last is None:
        return None
    ms_of_day, rect = last
    sent = until_ms - until_ms % DAY + ms_of_day
    if sent > until_ms:
        sent -= DAY
    if until_ms - sent < 300:  # too close to Tab to tell
        return None
    if any(sent <= c.ms <= until_ms for c in carets):
        return None
    return (f"the application committed its caret {rect} after its last key, {until_ms - sent} ms before Tab "
            f"(its own Wayland log), and IBus got no caret from then until Tab (a monitor of IBus's bus): the "
            f"desktop held it back")
