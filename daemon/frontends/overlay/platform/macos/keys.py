"""macOS key codes: key specs to virtual keycodes, and a Quartz event-tap
event to a :class:`~daemon.frontends.overlay.platform.hook_suppress.RawKey`.

Virtual keycodes name key positions (``kVK_*`` in Carbon's ``Events.h``),
not characters.  Special keys have fixed codes; for characters the table
holds the US-ANSI position, so "ctrl+e" means the key where E is on a US
keyboard.  Quartz is passed in (:func:`make_decoder`), so everything here
is tested without macOS.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from daemon.frontends.overlay.platform.hook_suppress import HookKey, RawKey, parse_hook_keys

KEY_DOWN, KEY_UP = 10, 11  #: kCGEventKeyDown, kCGEventKeyUp
RETURN, TAB = 36, 48  #: kVK_Return, kVK_Tab

#: Canonical key names -> kVK_* codes.  Mac keyboards have no Insert, Menu or
#: Pause; "insert" is the Help key, which sits where Insert is on PC layouts.
KEYCODES: dict[str, int] = {
    "tab": TAB, "enter": RETURN, "space": 49, "backspace": 51, "escape": 53,
    "delete": 117, "home": 115, "end": 119, "page_up": 116, "page_down": 121,
    "left": 123, "right": 124, "down": 125, "up": 126, "insert": 114,
    "f1": 122, "f2": 120, "f3": 99, "f4": 118, "f5": 96, "f6": 97, "f7": 98, "f8": 100,
    "f9": 101, "f10": 109, "f11": 103, "f12": 111, "f13": 105, "f14": 107, "f15": 113,
    "f16": 106, "f17": 64, "f18": 79, "f19": 80, "f20": 90,
}

#: kVK_ANSI_* codes of the character keys (US layout positions).
ANSI_KEYCODES: dict[str, int] = {
    "a": 0, "s": 1, "d": 2, "f": 3, "h": 4, "g": 5, "z": 6, "x": 7, "c": 8, "v": 9,
    "b": 11, "q": 12, "w": 13, "e": 14, "r": 15, "y": 16, "t": 17, "1": 18, "2": 19,
    "3": 20, "4": 21, "6": 22, "5": 23, "=": 24, "9": 25, "7": 26, "-": 27, "8": 28,
    "0": 29, "]": 30, "o": 31, "u": 32, "[": 33, "i": 34, "p": 35, "l": 37, "j": 38,
    "'": 39, "k": 40, ";": 41, "\\": 42, ",": 43, "/": 44, "n": 45, "m": 46, ".": 47,
    "`": 50,
}

#: Our modifiers -> CGEventFlags bits (Shift, Control, Option, Command).
#: Other bits (Caps Lock, the numeric-pad and Fn bits that arrow keys carry)
#: are ignored when comparing modifiers.
FLAG_MASKS: dict[str, int] = {"shift": 0x20000, "ctrl": 0x40000, "alt": 0x80000, "super": 0x100000}

KEYCODE_FIELD = 9  #: kCGKeyboardEventKeycode
SOURCE_PID_FIELD = 41  #: kCGEventSourceUnixProcessID


def keycode_for_key(key: str) -> Optional[int]:
    """The virtual keycode of a canonical key name, or None."""
    if key in KEYCODES:
        return KEYCODES[key]
    return ANSI_KEYCODES.get(key)


def parse_mac_keys(names: Sequence[str]) -> list[HookKey]:
    """Key specs -> :class:`HookKey` s with macOS virtual keycodes."""
    return parse_hook_keys(names, keycode_for_key, "macOS")


def modifiers_from_flags(flags: int) -> frozenset[str]:
    return frozenset(m for m, mask in FLAG_MASKS.items() if flags & mask)


def decode_tap_event(event_type: int, keycode: int, flags: int, source_pid: int,
                     own_pid: int) -> Optional[RawKey]:
    """A key event's fields as a RawKey; None for other event types (modifier
    changes, the tap-disabled notifications).  Events posted by this process
    (the injector) carry its pid and are marked ``ours``."""
    if event_type not in (KEY_DOWN, KEY_UP):
        return None
    return RawKey(int(keycode), event_type == KEY_DOWN, modifiers_from_flags(int(flags)),
                  ours=int(source_pid) == own_pid)


def make_decoder(quartz: Any, own_pid: int) -> Callable[[Any, Any], Optional[RawKey]]:
    """``decode(event_type, event)`` for the suppressor, reading the event's
    fields through ``quartz`` (pyobjc's ``Quartz`` module) only for key events."""
    get_field, get_flags = quartz.CGEventGetIntegerValueField, quartz.CGEventGetFlags

    def decode(event_type: Any, event: Any) -> Optional[RawKey]:
        if event_type not in (KEY_DOWN, KEY_UP):
            return None
        return decode_tap_event(event_type, get_field(event, KEYCODE_FIELD), get_flags(event),
                                get_field(event, SOURCE_PID_FIELD), own_pid)

    return decode
