"""X11 ``TextInjector``: types text through the XTEST extension."""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import Optional

from Xlib import X, XK, error
from Xlib.ext import xtest

from daemon.frontends.base import PlatformError
from daemon.frontends.overlay.platform.x11.common import MOD_MASKS, ModifierBits, open_display, require_xtest
from daemon.frontends.overlay.platform.x11.keys import keysym_for_char

log = logging.getLogger(__name__)


_SPECIAL_KEYSYMS = {
    "\n": XK.string_to_keysym("Return"),
    "\r": XK.string_to_keysym("Return"),
    "\t": XK.string_to_keysym("Tab"),
}


class X11TextInjector:
    """``TextInjector`` for X11 through the XTEST extension.

    XTEST events are indistinguishable from the keyboard for applications
    (xterm, for one, ignores ``XSendEvent``).  A character is typed with the
    key that produces it in the current layout (holding Shift for the shifted
    level).  A character no key produces is typed, as xdotool does, by
    binding its keysym to a spare keycode (one with no symbols), pressing it,
    and later restoring the spare key.  Restoring is deferred until the
    injector has been idle for ``restore_after_s``: clients re-read the
    keyboard mapping lazily when they process the key event, and restoring
    right after the press is the race that makes xdotool type wrong
    characters under load.

    Modifiers the user still holds (Ctrl after ctrl+Right) are released for
    the duration and pressed again afterwards, and CapsLock is switched off
    and on again, so that the text arrives as written rather than as shortcuts
    or in capitals.

    XTEST keys pass through passive grabs like real ones: disarm the key
    suppressor before typing text that contains a grabbed key (a tab), or
    the grab swallows it.

    Our own keys must not be taken for the user's typing: the keyboard
    listener sees XTEST events like real ones.  ``is_injecting()`` is true
    while ``type_text`` runs and for ``grace_s`` afterwards (listener delivery
    lag); ``was_injecting(t)`` answers the same for a past ``time.monotonic()``
    instant, e.g. a ``KeyEvent.time`` read from a queue later.  A real key the
    user presses during that window is also classified as ours: typing
    during an accept is ambiguous anyway, and the tracker learns the accepted
    text directly.
    """

    def __init__(self, display_name: str | None = None, grace_s: float = 0.1,
                 restore_after_s: float = 1.0) -> None:
        self._display = open_display(display_name)
        require_xtest(self._display)
        self._root = self._display.screen().root
        self._grace = grace_s
        self._restore_after = restore_after_s
        self._lock = threading.RLock()
        info = self._display.display.info
        self._min_kc, self._max_kc = info.min_keycode, info.max_keycode
        self._width = 0
        self._codes: dict[int, tuple[int, int]] = {}  # keysym -> (keycode, level 0/1)
        self._bound: "collections.OrderedDict[int, int]" = collections.OrderedDict()  # keysym -> spare keycode
        self._spares: list[int] = []
        self._active = 0
        self._windows: "collections.deque[tuple[float, float]]" = collections.deque(maxlen=64)
        self._active_since = 0.0
        self._restore_timer: Optional[threading.Timer] = None
        with self._lock:
            self._read_mapping(find_spares=True)

    # -- injection bookkeeping -----------------------------------------------

    def is_injecting(self) -> bool:
        return self.was_injecting(time.monotonic())

    def was_injecting(self, t: float) -> bool:
        """Was ``t`` (a ``time.monotonic()`` value) inside one of our recent
        injections, counting ``grace_s`` after each?"""
        if self._active and t >= self._active_since:
            return True
        return any(start <= t <= end + self._grace for start, end in list(self._windows))

    # -- typing --------------------------------------------------------------

    def type_text(self, text: str) -> None:
        if not text:
            return
        with self._lock:
            if self._restore_timer is not None:
                self._restore_timer.cancel()
                self._restore_timer = None
            start = time.monotonic()
            if not self._active:
                self._active_since = start
            self._active += 1
            try:
                self._read_mapping()
                mods = ModifierBits.read(self._display)
                held = self._held_modifier_keys(mods)
                caps = self._caps_lock_on()
                for code in held:
                    xtest.fake_input(self._display, X.KeyRelease, code)
                if caps:
                    self._tap_keysym(XK.string_to_keysym("Caps_Lock"))
                shift = mods.keycodes[0][0] if mods.keycodes[0] else self._keycode_of("Shift_L")
                used_now: set[int] = set()
                for ch in text:
                    self._type_char(ch, shift, used_now)
                if caps:
                    self._tap_keysym(XK.string_to_keysym("Caps_Lock"))
                for code in reversed(held):
                    xtest.fake_input(self._display, X.KeyPress, code)
                self._display.sync()
            except (error.XError, error.ConnectionClosedError) as exc:
                raise PlatformError(f"typing into the focused window failed: {type(exc).__name__}") from exc
            finally:
                self._active -= 1
                self._windows.append((start, time.monotonic()))
                if self._bound:
                    self._restore_timer = threading.Timer(self._restore_after, self._restore_spares)
                    self._restore_timer.daemon = True
                    self._restore_timer.start()

    def close(self) -> None:
        with self._lock:
            if self._restore_timer is not None:
                self._restore_timer.cancel()
                self._restore_timer = None
            try:
                self._restore_spares()
            finally:
                self._display.close()

    # -- internals -----------------------------------------------------------

    def _type_char(self, ch: str, shift: int, used_now: set[int]) -> None:
        keysym = _SPECIAL_KEYSYMS.get(ch)
        if keysym is None:
            if ord(ch) < 0x20 or ord(ch) == 0x7F:
                log.debug("skipping control character U+%04X", ord(ch))
                return
            keysym = keysym_for_char(ch)
        found = self._codes.get(keysym)
        if found is None:
            keycode, level = self._bind_spare(keysym, used_now), 0
        else:
            keycode, level = found
        if level == 1 and shift:
            xtest.fake_input(self._display, X.KeyPress, shift)
        xtest.fake_input(self._display, X.KeyPress, keycode)
        xtest.fake_input(self._display, X.KeyRelease, keycode)
        if level == 1 and shift:
            xtest.fake_input(self._display, X.KeyRelease, shift)

    def _read_mapping(self, find_spares: bool = False) -> None:
        """Keysym -> (keycode, level) for levels 0 and 1 of the first group:
        the only levels reachable with Shift alone.  Our own spare bindings
        appear here too, at level 0."""
        count = self._max_kc - self._min_kc + 1
        mapping = self._display.get_keyboard_mapping(self._min_kc, count)
        self._width = len(mapping[0]) if mapping else 2
        codes: dict[int, tuple[int, int]] = {}
        spares = []
        for offset, row in enumerate(mapping):
            keycode = self._min_kc + offset
            if not any(row):
                spares.append(keycode)
            for level in (0, 1):
                sym = row[level] if level < len(row) else 0
                if sym and sym not in codes:
                    codes[sym] = (keycode, level)
        self._codes = codes
        if find_spares:
            # Use the highest keycodes first: furthest from real keys.
            self._spares = sorted(spares, reverse=True)
            if not self._spares:
                log.warning("no spare keycode: characters outside the keyboard layout cannot be typed")

    def _bind_spare(self, keysym: int, used_now: set[int]) -> int:
        if not self._spares:
            raise PlatformError("no spare keycode to type a character outside the keyboard layout")
        free = [k for k in self._spares if k not in self._bound.values()]
        if free:
            keycode = free[0]
        else:
            old_sym, keycode = self._bound.popitem(last=False)  # least recently used
            self._codes.pop(old_sym, None)
            if keycode in used_now:
                # Rebinding a key pressed moments ago: let clients catch up first.
                self._display.sync()
                time.sleep(0.05)
        row = [keysym, keysym] + [X.NoSymbol] * max(0, self._width - 2)
        self._display.change_keyboard_mapping(keycode, [row])
        self._bound[keysym] = keycode
        self._codes[keysym] = (keycode, 0)
        used_now.add(keycode)
        return keycode

    def _restore_spares(self) -> None:
        with self._lock:
            if self._active or not self._bound:
                return
            row = [X.NoSymbol] * max(2, self._width)
            try:
                for keysym, keycode in list(self._bound.items()):
                    self._display.change_keyboard_mapping(keycode, [row])
                    self._codes.pop(keysym, None)
                self._display.sync()
            except (error.XError, error.ConnectionClosedError) as exc:
                log.debug("restoring spare keycodes failed: %s", type(exc).__name__)
            self._bound.clear()

    def _held_modifier_keys(self, mods: ModifierBits) -> list[int]:
        """Keycodes of modifier keys (Shift, Ctrl, Alt, Super, AltGr) now down;
        the lock modifiers are states, not held keys, and are left alone."""
        keymap = self._display.query_keymap()
        down = []
        for index, codes in enumerate(mods.keycodes):
            if MOD_MASKS[index] in mods.lock_masks:
                continue
            for code in codes:
                if keymap[code // 8] & (1 << (code % 8)):
                    down.append(code)
        return down

    def _caps_lock_on(self) -> bool:
        return bool(self._root.query_pointer().mask & X.LockMask)

    def _keycode_of(self, name: str) -> int:
        return self._display.keysym_to_keycode(XK.string_to_keysym(name))

    def _tap_keysym(self, keysym: int) -> None:
        code = self._display.keysym_to_keycode(keysym)
        if code:
            xtest.fake_input(self._display, X.KeyPress, code)
            xtest.fake_input(self._display, X.KeyRelease, code)
