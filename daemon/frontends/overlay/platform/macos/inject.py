"""macOS ``TextInjector``: Quartz keyboard events carrying Unicode strings.

``CGEventKeyboardSetUnicodeString`` attaches text to a key event; the
receiving application inserts that text whatever key the event names, so
any character types without knowing the keyboard layout.  Apple documents
that only the first 20 UTF-16 units of the string are used (the limit of
``NSEvent.characters``), so longer text goes in chunks of at most 20 units,
never splitting a surrogate pair.  Newline and tab are sent as the Return
and Tab keys, which applications act on as keys rather than as text.

The plan (:func:`keystroke_plan`) is pure; :class:`MacTextInjector` posts it.
"""

from __future__ import annotations

import threading
from typing import Union

from daemon.frontends.overlay.platform.macos.keys import RETURN, TAB
from daemon.frontends.overlay.platform.text_pieces import Key, text_pieces
from daemon.frontends.overlay.platform.utf16 import utf16_chunks, utf16_len

#: Longest string one event may carry, in UTF-16 code units.
MAX_UNITS = 20

#: A step of the plan: a key code to press (Return, Tab) or a text chunk.
Step = Union[int, str]


def keystroke_plan(text: str, limit: int = MAX_UNITS) -> list[Step]:
    """What to post for ``text``: the Return and Tab keys for ``\\n`` and
    ``\\t`` (see ``text_pieces``), chunks of at most ``limit`` UTF-16 units
    for the rest."""
    plan: list[Step] = []
    for piece in text_pieces(text):
        if piece is Key.ENTER:
            plan.append(RETURN)
        elif piece is Key.TAB:
            plan.append(TAB)
        else:
            plan.extend(utf16_chunks(piece, limit))  # type: ignore[arg-type]
    return plan


class MacTextInjector:
    """``TextInjector`` for macOS; see the module docstring.

    Each event's modifier flags are cleared, so the text arrives as text
    even while the user still holds Control after Control+Right.  Text
    chunks use virtual keycode 0: the attached string, not the key, is
    what applications insert.  Posting needs the Accessibility permission;
    without it macOS drops the events silently (the platform selector checks
    the permission at start).  The events carry this process's pid, which
    is how the keyboard listener and the accept-key filter recognise them.
    """

    def __init__(self) -> None:
        import Quartz

        self._q = Quartz
        self._source = Quartz.CGEventSourceCreate(Quartz.kCGEventSourceStateHIDSystemState)
        self._lock = threading.Lock()

    def type_text(self, text: str) -> None:
        plan = keystroke_plan(text)
        with self._lock:
            for step in plan:
                if isinstance(step, int):
                    self._post(step, "")
                else:
                    self._post(0, step)

    def _post(self, keycode: int, chunk: str) -> None:
        q = self._q
        for down in (True, False):
            event = q.CGEventCreateKeyboardEvent(self._source, keycode, down)
            q.CGEventSetFlags(event, 0)
            if chunk:
                q.CGEventKeyboardSetUnicodeString(event, utf16_len(chunk), chunk)
            q.CGEventPost(q.kCGHIDEventTap, event)

    def close(self) -> None:
        pass
