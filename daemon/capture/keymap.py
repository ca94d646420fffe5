"""Key specs and the key mapper: what every frontend's keys become.

Key specs ("tab", "ctrl+right", "ctrl+alt+g") are the configuration's and the
suppressor's vocabulary for keys; :func:`normalize_key_spec` gives every
spelling one canonical form, and :class:`KeyMapper` names special keys and
shortcuts in that same form, so the controller compares plain strings.

:class:`KeyMapper` turns pynput-shaped keys into
:class:`daemon.capture.events.KeyEvent` s.  It is a pure function of the
attributes pynput's ``Key`` / ``KeyCode`` objects carry (``name``, ``char``,
``is_dead``), so it is tested without pynput and without a display, and the
IBus engine maps its keysyms through it too.  pynput itself is imported only
by the overlay frontend's listener (:mod:`daemon.frontends.overlay.keyboard`).
"""

from __future__ import annotations

import enum
import logging
import unicodedata
from typing import Any, Optional

from daemon.capture.events import KeyEvent, Kind

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- key specs

#: Modifiers in canonical order, with their accepted spellings.
MODIFIERS: tuple[str, ...] = ("ctrl", "alt", "shift", "super")
_MODIFIER_ALIASES = {
    "ctrl": "ctrl", "control": "ctrl", "ctl": "ctrl",
    "alt": "alt", "option": "alt", "opt": "alt",
    "shift": "shift",
    "super": "super", "cmd": "super", "command": "super", "meta": "super", "win": "super",
    "windows": "super", "mod4": "super",
}
#: Canonical names of the non-character keys, with accepted spellings.
_KEY_ALIASES = {
    "tab": "tab", "escape": "escape", "esc": "escape", "enter": "enter", "return": "enter",
    "space": "space", "backspace": "backspace", "delete": "delete", "del": "delete",
    "left": "left", "right": "right", "up": "up", "down": "down", "home": "home", "end": "end",
    "page_up": "page_up", "pageup": "page_up", "pgup": "page_up", "prior": "page_up",
    "page_down": "page_down", "pagedown": "page_down", "pgdn": "page_down", "next": "page_down",
    "insert": "insert", "ins": "insert", "menu": "menu", "pause": "pause",
    **{f"f{i}": f"f{i}" for i in range(1, 25)},
}
SPECIAL_KEYS: frozenset[str] = frozenset(_KEY_ALIASES.values())


class KeySpecError(ValueError):
    """A key spec that names no key; the message says what is wrong."""


def normalize_key_spec(spec: str) -> str:
    """Canonical form of a key spec: modifiers in :data:`MODIFIERS` order, then
    the key, joined by ``+`` ("Control+Right" -> "ctrl+right").  A key is a
    special key name (:data:`SPECIAL_KEYS`) or one printable character."""
    if not isinstance(spec, str) or not spec.strip():
        raise KeySpecError("empty key spec")
    parts = [p.strip() for p in spec.strip().split("+")]
    if len(parts) >= 2 and parts[-1] == parts[-2] == "":  # "+" or "ctrl++": the key is "+"
        parts = [*parts[:-2], "+"]
    *mods, key = parts
    canon_mods: set[str] = set()
    for m in mods:
        c = _MODIFIER_ALIASES.get(m.lower())
        if c is None:
            raise KeySpecError(f"unknown modifier {m!r} (use {', '.join(MODIFIERS)})")
        canon_mods.add(c)
    low = key.lower()
    if low in _KEY_ALIASES:
        name = _KEY_ALIASES[low]
    elif len(key) == 1 and key.isprintable() and not key.isspace():
        name = key.lower()
    else:
        raise KeySpecError(f"unknown key {key!r} (a key name like tab, right, f5, or one character)")
    return "+".join([m for m in MODIFIERS if m in canon_mods] + [name])


# --------------------------------------------------------------------------- mapping

#: pynput ``Key`` names -> canonical modifier (None: a modifier that does not
#: make shortcuts, e.g. AltGr, which composes characters).
_PYNPUT_MODIFIERS: dict[str, Optional[str]] = {
    "ctrl": "ctrl", "ctrl_l": "ctrl", "ctrl_r": "ctrl",
    "alt": "alt", "alt_l": "alt", "alt_r": "alt",
    "cmd": "super", "cmd_l": "super", "cmd_r": "super",
    "shift": "shift", "shift_l": "shift", "shift_r": "shift",
    "alt_gr": None, "caps_lock": None, "num_lock": None,
}
_SHORTCUT_MODIFIERS = frozenset({"ctrl", "alt", "super"})
_CARET_KEYS = frozenset({"left", "right", "up", "down", "home", "end", "page_up", "page_down"})
_PYNPUT_NAMES = {"esc": "escape"}  # pynput spelling -> ours, where they differ


def _combining(dead_char: str) -> Optional[str]:
    """The combining mark a dead key applies ("´" -> U+0301), if there is one."""
    try:
        return unicodedata.lookup("COMBINING " + unicodedata.name(dead_char))
    except (KeyError, ValueError):
        return None


class KeyMapper:
    """Turns backend key presses/releases into :class:`KeyEvent` s.

    Stateful but pure: it tracks held modifiers (so "a" with Ctrl held is the
    shortcut "ctrl+a", not typing) and a pending dead key (pynput on X11
    reports dead keys and the following letter separately; the application's
    input method composes them, so we compose them the same way).

    ``key`` is anything shaped like pynput's ``Key`` (an enum member with a
    ``name``) or ``KeyCode`` (``char``, ``is_dead``); ``None`` (unknown key)
    maps to OTHER.
    """

    def __init__(self) -> None:
        self.held: set[str] = set()
        self._dead: Optional[str] = None

    def press(self, key: Any) -> Optional[KeyEvent]:
        """The event for one key press (None: nothing worth reporting)."""
        if key is None:
            return KeyEvent(Kind.OTHER, name="unknown")
        is_special = isinstance(key, enum.Enum) or getattr(key, "char", None) is None and hasattr(key, "name")
        if is_special and str(key.name) != "space":
            return self._special(str(key.name))
        char = " " if is_special else getattr(key, "char", None)
        if char is None:  # a KeyCode with only a virtual key code
            return KeyEvent(Kind.OTHER, name="unknown")
        if getattr(key, "is_dead", False):
            if self._dead is not None:  # dead key twice: the spacing accent itself
                pending, self._dead = self._dead, None
                return self._char(pending)
            self._dead = char
            return None
        if self._dead is not None:
            dead, self._dead = self._dead, None
            if char == " ":
                return self._char(dead)
            mark = _combining(dead)
            composed = unicodedata.normalize("NFC", char + mark) if mark else ""
            if len(composed) == 1:
                return self._char(composed)
            # Not combinable: input methods type the accent and then the char;
            # we report the char (the accent is dropped rather than guessed).
        return self._char(char)

    def release(self, key: Any) -> None:
        """Forget a released modifier."""
        name = getattr(key, "name", None)
        if isinstance(name, str) and name in _PYNPUT_MODIFIERS:
            mod = _PYNPUT_MODIFIERS[name]
            if mod is not None:
                self.held.discard(mod)

    def reset(self) -> None:
        """Forget held modifiers and dead keys (after the listener restarts)."""
        self.held.clear()
        self._dead = None

    # ------------------------------------------------------------------ helpers

    def _shortcut_mods(self) -> list[str]:
        return [m for m in MODIFIERS if m in self.held]

    def _char(self, char: str) -> KeyEvent:
        if self.held & _SHORTCUT_MODIFIERS:
            key = char.lower() if len(char) == 1 else "unknown"
            return KeyEvent(Kind.SHORTCUT, name="+".join(self._shortcut_mods() + [key]))
        if not char.isprintable() and char not in "\t\n\r":
            return KeyEvent(Kind.OTHER, name="control-char")
        if char in "\r\n":
            return KeyEvent(Kind.ENTER, name="enter")
        if char == "\t":
            return KeyEvent(Kind.TAB, name="tab")
        return KeyEvent(Kind.CHAR, char=char)

    def _special(self, pynput_name: str) -> Optional[KeyEvent]:
        if pynput_name in _PYNPUT_MODIFIERS:
            mod = _PYNPUT_MODIFIERS[pynput_name]
            if mod is not None:
                self.held.add(mod)
            return KeyEvent(Kind.MODIFIER, name=pynput_name)
        self._dead = None
        name = _PYNPUT_NAMES.get(pynput_name, pynput_name)
        mods = self._shortcut_mods()
        spec = "+".join(mods + [name])
        if self.held & _SHORTCUT_MODIFIERS:
            # Ctrl+BackSpace deletes a word, Ctrl+Tab switches tabs, Alt+Left goes
            # back...: the text before the caret changed in unknown ways.
            return KeyEvent(Kind.SHORTCUT, name=spec)
        kind = {
            "backspace": Kind.BACKSPACE,
            "delete": Kind.DELETE,
            "enter": Kind.ENTER,
            "tab": Kind.TAB,
            "escape": Kind.ESCAPE,
        }.get(name)
        if kind is None:
            kind = Kind.CARET_MOVED if name in _CARET_KEYS else Kind.OTHER
        return KeyEvent(kind, name=spec)
