"""ghosttype's own input event types.  Backend types (pynput, Xlib) stop at
their adapter modules; everything past them speaks these."""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field


class Kind(enum.Enum):
    CHAR = "char"  #: a printable character (already composed: Shift, dead keys, IME)
    BACKSPACE = "backspace"
    DELETE = "delete"  #: forward delete: text before the caret is unchanged
    ENTER = "enter"
    TAB = "tab"
    ESCAPE = "escape"
    CARET_MOVED = "caret_moved"  #: arrows, Home/End, Page keys, mouse click
    SHORTCUT = "shortcut"  #: a Ctrl/Alt/Super combination (may edit text in unknown ways)
    FOCUS_CHANGED = "focus_changed"  #: another window or widget got focus
    MODIFIER = "modifier"  #: a bare modifier press (Shift, Ctrl, ...): no effect on text
    OTHER = "other"  #: any other key (F-keys, media keys): ignored


@dataclass(frozen=True)
class KeyEvent:
    kind: Kind
    char: str = ""  #: the character for Kind.CHAR
    name: str = ""  #: key name for diagnostics ("Left", "ctrl+a"); never typed text
    time: float = field(default_factory=time.monotonic)

    def __repr__(self) -> str:  # never print typed characters into logs
        return f"KeyEvent({self.kind.value}{', ' + self.name if self.name else ''})"
