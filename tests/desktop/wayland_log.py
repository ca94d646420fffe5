"""What an application itself said on the Wayland protocol: its libwayland debug log (``WAYLAND_DEBUG=1``,
written to its stderr; inside/session.py starts every application of the tier with it).

This is the tier's evidence from outside ghosttype for the upstream causes it may xfail on: whether the
application reported a caret at all (``zwp_text_input_v3.set_cursor_rectangle``), whether it reported one
after its last key, and whether it committed the surface KWin applies the rectangle with. Nothing here reads
ghosttype's log or its plug-ins' answers.

A line is ``[stamp] {queue} -> interface#id.request(args)`` for a request the client sent, without the arrow
for an event it received (libwayland before 1.23 writes ``interface@id``; the queue only where it has a
name). The stamp is the wall clock: ``HH:MM:SS.microseconds`` of the day (libwayland 1.24, sid), or
milliseconds cut to 32 bits (``ms.us``, older libwayland). :func:`AppLog` cuts the log at a moment given as
epoch milliseconds (``int(time.time() * 1000)`` when Tab was pressed), in UTC as the tier's sessions run.
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass

_LINE = re.compile(r"^\[(?:(\d+):(\d+):(\d+)\.(\d+)|\s*(\d+)\.(\d+))\]\s*(?:\{[^}]*\}\s*)?(discarded\s+)?(->\s*)?"
                   r"([A-Za-z_0-9]+)[@#](\d+)\.(\w+)\((.*)\)\s*$")
_OBJ = re.compile(r"([A-Za-z_0-9]+)[@#](\d+)")
WRAP = 1 << 32  #: older libwayland: milliseconds cut to 32 bits
DAY = 86_400_000  #: libwayland 1.24: milliseconds of the day


@dataclass(frozen=True)
class Message:
    t: int  #: libwayland's stamp in ms (of the day, or cut to 32 bits: ``period``)
    period: int  #: DAY or WRAP: what the stamp counts modulo
    sent: bool  #: a request the application sent (else an event it received)
    iface: str
    oid: int
    name: str
    args: str


def parse(text: str) -> list[Message]:
    out = []
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if not m or m.group(7):  # not a protocol line, or a discarded one
            continue
        if m.group(1) is not None:
            h, mi, sec, frac = m.group(1, 2, 3, 4)
            t, period = ((int(h) * 60 + int(mi)) * 60 + int(sec)) * 1000 + int(frac.ljust(6, "0")[:6]) // 1000, DAY
        else:
            t, period = int(m.group(5)), WRAP
        out.append(Message(t, period, bool(m.group(8)), m.group(9), int(m.group(10)), m.group(11), m.group(12)))
    return out


def before(t: int, limit: int, period: int = WRAP) -> bool:
    """Stamp ``t`` comes before ``limit`` (both counted modulo ``period``; the two lie close together)."""
    return (limit - t) % period < period // 2 and t != limit


class AppLog:
    """One application's protocol log, up to a moment (e.g. the Tab key's ``wall_ms()``)."""

    def __init__(self, text: str, until: int | None = None) -> None:
        """``until``: epoch milliseconds (UTC); only what the application said before then counts."""
        msgs = parse(text)
        self.messages = [m for m in msgs if until is None or before(m.t, until % m.period, m.period)]

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

    def rectangles_after_first_key(self) -> tuple[int, list[tuple[int, int, int, int]]] | None:
        """(the first key press's stamp in ms of the day, the cursor rectangles sent after it), for a log with
        day stamps (libwayland 1.24) and a key press; None otherwise."""
        keys = self._key_presses()
        if not keys or self.messages[keys[0]].period != DAY:
            return None
        return self.messages[keys[0]].t, [r for i, r in self._rects() if i > keys[0]]

    def last_caret_after_last_key(self) -> tuple[int, tuple[int, int, int, int]] | None:
        """(its stamp in ms of the day, the rectangle) of the last cursor rectangle the application sent after
        its last key press, when that rectangle differs from the one it sent before (the caret moved); None
        otherwise, or for a log without day stamps."""
        keys, rects = self._key_presses(), self._rects()
        if not keys or len(rects) < 2 or rects[-1][0] < keys[-1] or rects[-1][1] == rects[-2][1]:
            return None
        msg = self.messages[rects[-1][0]]
        return (msg.t, rects[-1][1]) if msg.period == DAY else None

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
