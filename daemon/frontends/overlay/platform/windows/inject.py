"""Windows ``TextInjector``: ``SendInput`` with ``KEYEVENTF_UNICODE``.

Unicode key events carry a UTF-16 code unit instead of a key, so any text
types the same whatever the keyboard layout; a character outside the Basic
Multilingual Plane is its surrogate pair, one event pair per unit
(applications receive two ``WM_CHAR`` messages and join them, as they do
for an IME).  Newline and tab are sent as the Return and Tab keys, because
many applications act on the key (``WM_KEYDOWN``) rather than on the
character.

The sequence is built by pure functions (:func:`text_strokes`,
:func:`with_modifiers_released`) and only :class:`WindowsTextInjector`
touches the OS.
"""

from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

from daemon.frontends.base import PlatformError
from daemon.frontends.overlay.platform.text_pieces import Key, text_pieces
from daemon.frontends.overlay.platform.utf16 import utf16_units
from daemon.frontends.overlay.platform.windows.api import (
    INPUT,
    INPUT_KEYBOARD,
    KEYEVENTF_EXTENDEDKEY,
    KEYEVENTF_KEYUP,
    KEYEVENTF_UNICODE,
    user32,
)
from daemon.frontends.overlay.platform.windows.keys import (
    EXTENDED_MODIFIER_VKS,
    INJECTED_TAG,
    MENU_MODIFIER_VKS,
    SIDED_MODIFIER_VKS,
    VK_RETURN,
    VK_TAB,
)

#: An unassigned VK code pressed before releasing a held Alt or Windows key,
#: so that the release does not open the menu bar or the Start menu (the
#: same trick as AutoHotkey's menu mask key).
VK_MASK = 0xE8


@dataclass(frozen=True)
class Stroke:
    """One keyboard ``INPUT``: a virtual key, or (``vk`` 0) a UTF-16 unit."""

    vk: int
    scan: int
    flags: int


def _key(vk: int, extra_flags: int = 0) -> list[Stroke]:
    return [Stroke(vk, 0, extra_flags), Stroke(vk, 0, extra_flags | KEYEVENTF_KEYUP)]


def text_strokes(text: str) -> list[Stroke]:
    """The key events that type ``text``: Return and Tab as keys (see
    ``text_pieces``), everything else as a down/up pair of Unicode events
    per UTF-16 code unit."""
    strokes: list[Stroke] = []
    for piece in text_pieces(text):
        if piece is Key.ENTER:
            strokes += _key(VK_RETURN)
        elif piece is Key.TAB:
            strokes += _key(VK_TAB)
        else:
            for unit in utf16_units(piece):  # type: ignore[arg-type]
                strokes += [Stroke(0, unit, KEYEVENTF_UNICODE),
                            Stroke(0, unit, KEYEVENTF_UNICODE | KEYEVENTF_KEYUP)]
    return strokes


def with_modifiers_released(strokes: Sequence[Stroke], held: Iterable[int]) -> list[Stroke]:
    """Wrap ``strokes`` so modifiers the user still holds (Ctrl after
    Ctrl+Right) are up while typing and down again afterwards; otherwise
    Return would arrive as Ctrl+Return and letters as Alt shortcuts.

    ``held`` are side-specific modifier VK codes (``SIDED_MODIFIER_VKS``).
    A masking key goes first when Alt or the Windows key is among them.
    """
    held = [vk for vk in held if vk in SIDED_MODIFIER_VKS]
    if not held:
        return list(strokes)

    def flags(vk: int) -> int:
        return KEYEVENTF_EXTENDEDKEY if vk in EXTENDED_MODIFIER_VKS else 0

    out: list[Stroke] = []
    if any(vk in MENU_MODIFIER_VKS for vk in held):
        out += _key(VK_MASK)
    out += [Stroke(vk, 0, flags(vk) | KEYEVENTF_KEYUP) for vk in held]
    out += strokes
    out += [Stroke(vk, 0, flags(vk)) for vk in reversed(held)]
    return out


def to_inputs(strokes: Sequence[Stroke]) -> ctypes.Array:
    """The ctypes ``INPUT`` array for ``SendInput``, each event tagged with
    :data:`INJECTED_TAG` so ghosttype's own hook filter lets it pass."""
    array = (INPUT * len(strokes))()
    for item, stroke in zip(array, strokes):
        item.type = INPUT_KEYBOARD
        item.ki.wVk = stroke.vk
        item.ki.wScan = stroke.scan
        item.ki.dwFlags = stroke.flags
        item.ki.time = 0
        item.ki.dwExtraInfo = INJECTED_TAG
    return array


class WindowsTextInjector:
    """``TextInjector`` for Windows (see the module docstring).

    All events of one ``type_text`` go in one ``SendInput`` call, which
    Windows inserts into the input stream without interleaving the user's
    keys.  Windows does not let a normal process send input to a window of
    a process running as administrator (UIPI); ``SendInput`` then inserts
    fewer events than given, and this raises ``PlatformError`` saying so.
    """

    def __init__(self, is_down: Optional[Callable[[int], bool]] = None) -> None:
        self._user32 = user32()
        self._is_down = is_down or (lambda vk: bool(self._user32.GetAsyncKeyState(vk) & 0x8000))
        self._lock = threading.Lock()

    def type_text(self, text: str) -> None:
        strokes = text_strokes(text)
        if not strokes:
            return
        with self._lock:
            held = [vk for vk in SIDED_MODIFIER_VKS if self._is_down(vk)]
            events = to_inputs(with_modifiers_released(strokes, held))
            sent = self._user32.SendInput(len(events), events, ctypes.sizeof(events[0]))
        if sent != len(events):
            error = ctypes.get_last_error()  # type: ignore[attr-defined]
            raise PlatformError(
                f"Windows accepted {sent} of {len(events)} synthetic key events (error {error}); "
                "the focused window probably runs as administrator, and Windows does not let "
                "a normal process type into it"
            )

    def close(self) -> None:
        pass
