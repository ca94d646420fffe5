"""IBus key events -> ghosttype :class:`~daemon.capture.events.KeyEvent` s.

ibus-daemon hands the engine X keysyms already translated by the user's
layout, plus the modifier state of that moment.  The translation into our
event kinds reuses :class:`~daemon.capture.keymap.KeyMapper` (the X11
frontend's key mapper): this module only names each keysym the way that mapper
expects (a special key's name or the character it types) and sets the held
modifiers from the state IBus reports, which is more reliable than following
presses and releases.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from daemon.capture.events import KeyEvent, Kind
from daemon.capture.keymap import KeyMapper
from daemon.frontends.ibus import wire

#: Non-character keysyms -> the key names KeyMapper understands (pynput spelling).
_SPECIAL: dict[int, str] = {
    0xFF08: "backspace", 0xFF09: "tab", 0xFE20: "tab", 0xFF0D: "enter", 0xFF8D: "enter",
    0xFF1B: "esc", 0xFFFF: "delete", 0xFF9F: "delete",
    0xFF50: "home", 0xFF51: "left", 0xFF52: "up", 0xFF53: "right", 0xFF54: "down",
    0xFF55: "page_up", 0xFF56: "page_down", 0xFF57: "end",
    0xFF95: "home", 0xFF96: "left", 0xFF97: "up", 0xFF98: "right", 0xFF99: "down",
    0xFF9A: "page_up", 0xFF9B: "page_down", 0xFF9C: "end",
    0xFF63: "insert", 0xFF67: "menu", 0xFF13: "pause",
    # modifiers
    0xFFE1: "shift_l", 0xFFE2: "shift_r", 0xFFE3: "ctrl_l", 0xFFE4: "ctrl_r",
    0xFFE5: "caps_lock", 0xFFE7: "cmd_l", 0xFFE8: "cmd_r", 0xFFE9: "alt_l", 0xFFEA: "alt_r",
    0xFFEB: "cmd_l", 0xFFEC: "cmd_r", 0xFE03: "alt_gr", 0xFF7E: "alt_gr", 0xFF7F: "num_lock",
    **{0xFFBE + i: f"f{i + 1}" for i in range(24)},
}
#: Keypad keys that type a character.
_KEYPAD_CHARS: dict[int, str] = {
    0xFF80: " ", 0xFFAA: "*", 0xFFAB: "+", 0xFFAC: ",", 0xFFAD: "-", 0xFFAE: ".", 0xFFAF: "/",
    0xFFBD: "=", **{0xFFB0 + i: str(i) for i in range(10)},
}
_SPACE = 0x20


@dataclass(frozen=True)
class _Special:
    """Shaped like pynput's ``Key`` for KeyMapper: a named key."""

    name: str


@dataclass(frozen=True)
class _Char:
    """Shaped like pynput's ``KeyCode`` for KeyMapper: a character."""

    char: str
    is_dead: bool = False


def keysym_char(keyval: int) -> Optional[str]:
    """The character a keysym types, for Latin-1, Unicode and keypad keysyms."""
    if 0x20 <= keyval <= 0x7E or 0xA0 <= keyval <= 0xFF:
        return chr(keyval)
    if 0x01000100 <= keyval <= 0x0110FFFF:
        return chr(keyval - 0x01000000)
    return _KEYPAD_CHARS.get(keyval)


def modifiers(state: int) -> set[str]:
    """The shortcut-relevant modifiers held in an IBus modifier state."""
    held = set()
    if state & wire.CONTROL_MASK:
        held.add("ctrl")
    if state & wire.MOD1_MASK:
        held.add("alt")
    if state & wire.SHIFT_MASK:
        held.add("shift")
    if state & (wire.SUPER_MASK | wire.MOD4_MASK):
        held.add("super")
    return held


def key_event(keyval: int, state: int) -> KeyEvent:
    """The event for one key press (releases are never passed here)."""
    mapper = KeyMapper()
    mapper.held = modifiers(state)
    if keyval == _SPACE:
        key: object = _Special("space")
    elif keyval in _SPECIAL:
        key = _Special(_SPECIAL[keyval])
    else:
        char = keysym_char(keyval)
        if char is None:
            # Dead keys, legacy non-Latin keysyms, unknown keys: the application
            # may type something we cannot name, so the text before the caret
            # is unknown until the field tells us again (surrounding text).
            if 0xFE50 <= keyval <= 0xFE8F or keyval < 0xFF00:
                return KeyEvent(Kind.CARET_MOVED, name="untranslated-key")
            return KeyEvent(Kind.OTHER, name="unknown")
        key = _Char(char)
    event = mapper.press(key)
    return event if event is not None else KeyEvent(Kind.OTHER, name="unknown")


