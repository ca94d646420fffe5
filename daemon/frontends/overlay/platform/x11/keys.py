"""Key names from the config ("Tab", "ctrl+Right") to X11 keysyms and modifiers.

Pure parsing: needs python-xlib's keysym tables but no display, so it is unit
tested without an X server.  Which ``ModN`` bit Alt, Super or NumLock live on
depends on the server's modifier mapping; that resolution happens in
``daemon.frontends.overlay.platform.x11.backend`` against a live connection (``ModifierBits``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Iterable

from Xlib import XK, X

#: Modifier words accepted in key names, mapped to our canonical names.
MODIFIER_ALIASES: dict[str, str] = {
    "shift": "shift",
    "ctrl": "ctrl",
    "control": "ctrl",
    "alt": "alt",
    "meta": "alt",
    "option": "alt",
    "super": "super",
    "win": "super",
    "cmd": "super",
    "mod4": "super",
}

#: Friendly names for keys whose X keysym names people do not type.
KEY_ALIASES: dict[str, str] = {
    "enter": "Return",
    "return": "Return",
    "esc": "Escape",
    "escape": "Escape",
    "tab": "Tab",
    "space": "space",
    "backspace": "BackSpace",
    "del": "Delete",
    "delete": "Delete",
    "ins": "Insert",
    "pgup": "Prior",
    "pageup": "Prior",
    "pgdn": "Next",
    "pagedown": "Next",
    "left": "Left",
    "right": "Right",
    "up": "Up",
    "down": "Down",
    "home": "Home",
    "end": "End",
    "plus": "plus",
    "minus": "minus",
}

#: The modifier order used in canonical names ("ctrl+shift+Tab").
_ORDER = ("ctrl", "alt", "shift", "super")


class KeyNameError(ValueError):
    """A key name from the config could not be understood; the message says why."""


@dataclass(frozen=True)
class KeySpec:
    """One key combination: a keysym plus the modifiers that must be held."""

    keysym: int
    modifiers: frozenset[str]  #: subset of {"shift", "ctrl", "alt", "super"}
    name: str  #: the name as written in the config, reported back to callers

    @property
    def canonical(self) -> str:
        """A normalised spelling, e.g. ``"ctrl+Right"``, for logs and equality."""
        parts = [m for m in _ORDER if m in self.modifiers]
        parts.append(_keysym_name(self.keysym))
        return "+".join(parts)


def parse_key(name: str) -> KeySpec:
    """Parse ``"Tab"``, ``"ctrl+Right"``, ``"Ctrl+Shift+space"``, ``"alt+F5"``.

    Modifier words are case-insensitive; key names are matched exactly first
    (so ``"a"`` and ``"A"`` differ), then case-insensitively among X keysym
    names and the friendly aliases in ``KEY_ALIASES``.
    """
    if not isinstance(name, str) or not name.strip():
        raise KeyNameError("empty key name")
    parts = [p.strip() for p in name.strip().split("+")]
    # "ctrl++" means ctrl + the plus key.
    if len(parts) >= 2 and parts[-1] == "" and parts[-2] == "":
        parts = parts[:-2] + ["plus"]
    if any(p == "" for p in parts):
        raise KeyNameError(f"{name!r}: empty part between '+' signs")
    *mods, key = parts
    modifiers: set[str] = set()
    for word in mods:
        canonical = MODIFIER_ALIASES.get(word.lower())
        if canonical is None:
            raise KeyNameError(
                f"{name!r}: unknown modifier {word!r} (use one of: shift, ctrl, alt, super)"
            )
        modifiers.add(canonical)
    if key.lower() in MODIFIER_ALIASES:
        raise KeyNameError(f"{name!r}: a modifier alone cannot be an accept key")
    keysym = keysym_for_name(key)
    if keysym is None:
        raise KeyNameError(f"{name!r}: unknown key {key!r} (use an X keysym name such as Tab, Right, F5, a)")
    return KeySpec(keysym=keysym, modifiers=frozenset(modifiers), name=name)


def parse_keys(names: Iterable[str]) -> list[KeySpec]:
    """Parse several key names; duplicates (same combination) are an error."""
    specs: list[KeySpec] = []
    seen: dict[tuple[int, frozenset[str]], str] = {}
    for n in names:
        spec = parse_key(n)
        key = (spec.keysym, spec.modifiers)
        if key in seen:
            raise KeyNameError(f"{n!r} and {seen[key]!r} are the same key")
        seen[key] = n
        specs.append(spec)
    return specs


def keysym_for_name(key: str) -> int | None:
    """The keysym for a key name, or None.  Single characters map to their
    own keysym (Unicode keysyms beyond Latin-1)."""
    alias = KEY_ALIASES.get(key.lower())
    if alias is not None:
        return XK.string_to_keysym(alias)
    sym = XK.string_to_keysym(key)
    if sym != X.NoSymbol:
        return sym
    if len(key) == 1:
        return keysym_for_char(key)
    return _lowercase_names().get(key.lower())


def keysym_for_char(ch: str) -> int:
    """The keysym that types ``ch``: Latin-1 keysyms equal the code point;
    everything else uses the Unicode keysym range (0x01000000 + code point),
    which every X server since X11R6.9 understands."""
    cp = ord(ch)
    if 0x20 <= cp <= 0x7E or 0xA0 <= cp <= 0xFF:
        return cp
    return 0x01000000 | cp


def modifier_mask(modifiers: Iterable[str], bits: dict[str, int]) -> int:
    """OR together the X modifier bits for ``modifiers`` (``bits`` from the
    server's modifier mapping, e.g. ``{"shift": ShiftMask, "alt": Mod1Mask}``)."""
    mask = 0
    for m in modifiers:
        mask |= bits[m]
    return mask


def ignored_mask_combinations(ignored: Iterable[int]) -> list[int]:
    """Every OR-combination of the lock masks (CapsLock, NumLock, ...), zero
    included: a passive grab matches modifiers exactly, so the accept key must
    be grabbed once per lock state or it stops working with NumLock on."""
    masks = sorted({m for m in ignored if m})
    combos = [0]
    for m in masks:
        combos += [c | m for c in combos]
    return sorted(set(combos))


@functools.lru_cache(maxsize=1)
def _lowercase_names() -> dict[str, int]:
    table: dict[str, int] = {}
    for attr in dir(XK):
        if attr.startswith("XK_"):
            table.setdefault(attr[3:].lower(), getattr(XK, attr))
    return table


@functools.lru_cache(maxsize=256)
def _keysym_name(keysym: int) -> str:
    """X's name for a keysym ("Right", "a"); Unicode keysyms as the character."""
    if keysym < 0x80 and chr(keysym).isalnum() or 0x01000000 < keysym <= 0x0110FFFF:
        return chr(keysym & 0x00FFFFFF)
    for attr in dir(XK):
        if attr.startswith("XK_") and getattr(XK, attr) == keysym:
            return attr[3:]
    return hex(keysym)
