"""What an application itself said on the Wayland protocol: its libwayland debug log (``WAYLAND_DEBUG=1``,
written to its stderr; inside/session.py starts every application of the tier with it).

This is the tier's evidence from outside ghosttype for the upstream causes it may xfail on: whether the
application reported a caret at all (``zwp_text_input_v3.set_cursor_rectangle``), whether it reported one
after its last key, and whether it committed the surface KWin applies the rectangle with. Nothing here reads
ghosttype's log or its plug-ins' answers.

A line is ``[ms.us] {queue} -> interface@id.request(args)`` for a request the client sent, without the arrow
for an event it received (libwayland 1.23 and later write ``interface#id``; the queue only where it has a
name). The time is the wall clock in milliseconds, cut to 32 bits: :func:`wall_ms` gives the same for now.
"""

from __future__ import annotations

import pathlib
import re
import time
from dataclasses import dataclass

_LINE = re.compile(r"^\[\s*(\d+)\.(\d+)\]\s*(?:\{[^}]*\}\s*)?(discarded\s+)?(->\s*)?([A-Za-z_0-9]+)[@#](\d+)\.(\w+)\((.*)\)\s*$")
_OBJ = re.compile(r"([A-Za-z_0-9]+)[@#](\d+)")
WRAP = 1 << 32


def wall_ms() -> int:
    """Now, as libwayland stamps its debug lines (wall-clock milliseconds, 32 bits)."""
    return int(time.time() * 1000) % WRAP


@dataclass(frozen=True)
class Message:
    t: int  #: libwayland's stamp (ms, 32 bits)
    sent: bool  #: a request the application sent (else an event it received)
    iface: str
    oid: int
    name: str
    args: str


def parse(text: str) -> list[Message]:
    out = []
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m and not m.group(3):
            out.append(Message(int(m.group(1)), bool(m.group(4)), m.group(5), int(m.group(6)), m.group(7), m.group(8)))
    return out


def before(t: int, limit: int) -> bool:
    """Stamp ``t`` comes before ``limit`` (both 32-bit milliseconds; the two lie within a day of each other)."""
    return (limit - t) % WRAP < WRAP // 2 and t != limit


class AppLog:
    """One application's protocol log, up to a moment (e.g. the Tab key's ``wall_ms()``)."""

    def __init__(self, text: str, until: int | None = None) -> None:
        msgs = parse(text)
        self.messages = [m for m in msgs if until is None or before(m.t, until)]

    @classmethod
    def read(cls, path: pathlib.Path | None, until: int | None = None) -> "AppLog | None":
        if path is None or not path.exists():
            return None
        return cls(path.read_text(errors="replace"), until)

    @property
    def speaks_wayland(self) -> bool:
        """The log holds the application's protocol traffic (WAYLAND_DEBUG took effect): its registry."""
        return any(m.iface == "wl_registry" for m in self.messages)

    @property
    def uses_text_input(self) -> bool:
        return any(m.iface == "zwp_text_input_v3" for m in self.messages)

    def _rects(self) -> list[tuple[int, tuple[int, int, int, int]]]:
        """(index in the log, (x, y, w, h)) of every cursor rectangle the application sent."""
        out = []
        for i, m in enumerate(self.messages):
            if m.sent and m.iface == "zwp_text_input_v3" and m.name == "set_cursor_rectangle":
                x, y, w, h = (int(v) for v in m.args.split(","))
                out.append((i, (x, y, w, h)))
        return out

    def cursor_rectangles(self) -> list[tuple[int, int, int, int]]:
        """Every caret the application reported, in its surface's coordinates, in order."""
        return [r for _, r in self._rects()]

    def _key_presses(self) -> list[int]:
        """Indices of the key presses the application received (wl_keyboard.key, state pressed)."""
        out = []
        for i, m in enumerate(self.messages):
            if not m.sent and m.iface == "wl_keyboard" and m.name == "key":
                parts = [p.strip() for p in m.args.split(",")]
                if len(parts) == 4 and parts[3] == "1":
                    out.append(i)
        return out

    def text_input_surface(self) -> int | None:
        """The surface the text input entered last (zwp_text_input_v3.enter's wl_surface)."""
        sid = None
        for m in self.messages:
            if not m.sent and m.iface == "zwp_text_input_v3" and m.name == "enter":
                o = _OBJ.search(m.args)
                sid = int(o.group(2)) if o else sid
        return sid

    def _commits_after(self, index: int, surface: int) -> int:
        return sum(1 for m in self.messages[index + 1:] if m.sent and m.iface == "wl_surface" and m.oid == surface
                   and m.name == "commit")

    def no_caret_reported(self) -> str | None:
        """Evidence that the application reported no caret: its log speaks Wayland and uses text-input, and holds
        no cursor rectangle of any size; None when the log shows one (or cannot tell)."""
        if not (self.speaks_wayland and self.uses_text_input):
            return None
        if any(w or h for x, y, w, h in self.cursor_rectangles()):
            return None
        return (f"its own Wayland log holds no zwp_text_input_v3.set_cursor_rectangle of any size over "
                f"{len(self.messages)} messages")

    def no_caret_after_last_key(self) -> str | None:
        """Evidence that the application did not say where its caret went after the last key it received: no
        cursor rectangle after that key press in its log."""
        keys, rects = self._key_presses(), self._rects()
        if not (self.speaks_wayland and keys and rects):
            return None
        if rects[-1][0] > keys[-1]:
            return None
        return (f"its own Wayland log: no set_cursor_rectangle after its last key press (the last rectangle, "
                f"{rects[-1][1]}, came {keys[-1] - rects[-1][0]} messages before that key)")

    def rectangle_never_committed(self) -> str | None:
        """Evidence that a compositor applying text-input-v3 state with the surface's commit (KWin) could not know
        the last caret: after the application's last cursor rectangle, it never committed the surface its text
        input is on."""
        rects, surface = self._rects(), self.text_input_surface()
        if not (rects and surface is not None):
            return None
        index, rect = rects[-1]
        if self._commits_after(index, surface):
            return None
        return (f"its own Wayland log: its last cursor rectangle {rect} was never followed by a "
                f"wl_surface@{surface}.commit (the surface its text input is on)")
