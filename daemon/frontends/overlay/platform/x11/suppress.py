"""X11 ``KeySuppressor``: passive key grabs on the root window for the
accept keys, installed only while a suggestion is visible."""

from __future__ import annotations

import logging
import os
import queue
import select
import threading
import time
from typing import Callable, Optional, Sequence

from Xlib import X, error
from Xlib.ext import xtest

from daemon.frontends.base import PlatformError
from daemon.frontends.overlay.platform.x11.common import ModifierBits, open_display
from daemon.frontends.overlay.platform.x11.keys import KeySpec, ignored_mask_combinations, modifier_mask, parse_keys

log = logging.getLogger(__name__)

#: Accept keys used when the caller does not configure any.
DEFAULT_KEYS = ("Tab", "ctrl+Right")




class X11KeySuppressor:
    """``KeySuppressor`` for X11: passive ``XGrabKey`` grabs on the root window
    for the accept keys, installed only while armed.

    A passive grab matches the modifier state exactly, so each key is grabbed
    once per combination of the lock modifiers (CapsLock, NumLock,
    ScrollLock); otherwise Tab would stop being accepted whenever NumLock is
    on.

    One thread owns the connection: it waits on the X socket and a wake-up
    pipe, runs ``arm``/``disarm``/``set_keys``/``close`` requests in order
    (callers block until the server has confirmed them), and on a grabbed key
    press first releases the keyboard grab that the press activated (so the
    text typed in response reaches the application, not us) and then calls
    ``on_key(name)`` with the key's name as configured.  ``on_key`` runs on that
    thread; it may call ``arm``/``disarm`` itself.  If it returns ``False``
    (meaning "nothing to accept after all"), the key is replayed to the
    focused application through XTEST.

    The disarm race: a grabbed key pressed while ``disarm()`` is on its way to
    the server is still delivered to us.  Such presses, read after the disarm
    was requested, are not reported to ``on_key``; they are replayed to the
    focused window (after the grab is gone), so a fast second Tab still inserts
    a tab once the suggestion is gone.  Every ``on_key`` call happens before
    ``disarm()`` returns; none after, except the one already running when
    another thread disarms: that ``disarm()`` does not wait for it (the
    handler may be waiting for the disarming thread, e.g. for a lock it
    holds), and the handler finds nothing left to accept.

    No grab outlives this object: ``close()`` ungrabs and closes the
    connection (the server also drops every grab of a closed connection),
    and the thread ungrabs in a ``finally`` if it dies.
    """

    #: XRecord (pynput's listener) records a grabbed key press too
    listener_sees_swallowed = True

    #: How long a key to be passed on may still be held before it is replayed anyway.
    REPLAY_WAIT_S = 0.5

    def __init__(self, keys: Sequence[str] = DEFAULT_KEYS, display_name: str | None = None,
                 request_timeout: float = 2.0) -> None:
        self._specs = parse_keys(keys)
        self._display = open_display(display_name)
        self._root = self._display.screen().root
        self._has_xtest = self._display.has_extension("XTEST")
        self._mods = ModifierBits.read(self._display)
        self._timeout = request_timeout
        self._on_key: Optional[Callable[[str], object]] = None
        self._armed = False
        self._grabbed: dict[tuple[int, int], KeySpec] = {}  # (keycode, mask) -> spec
        self._requests: "queue.Queue[tuple[str, object, threading.Event, list]]" = queue.Queue()
        self._wake_r, self._wake_w = os.pipe()
        self._closed = False
        self._in_handler = threading.Event()  #: ``on_key`` is running on the thread
        self._thread = threading.Thread(target=self._run, name="x11-key-suppressor", daemon=True)
        self._thread.start()

    # -- public API (any thread) ---------------------------------------------

    @property
    def armed(self) -> bool:
        return self._armed

    @property
    def keys(self) -> list[str]:
        return [s.name for s in self._specs]

    def arm(self, on_key: Callable[[str], None]) -> None:
        self._request("arm", on_key)

    def disarm(self) -> None:
        self._request("disarm", None)

    def set_keys(self, keys: Sequence[str]) -> None:
        """Change the accept keys (e.g. after a config reload); re-grabs if armed.
        Raises ``KeyNameError`` (a ``ValueError``) for a bad name, keeping the old keys."""
        self._request("keys", parse_keys(keys))

    def close(self) -> None:
        if self._closed:
            return
        if self._thread.is_alive():
            self._request("close", None)
            self._thread.join(self._timeout)
        self._closed = True
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    # -- request plumbing ----------------------------------------------------

    def _request(self, what: str, arg: object) -> None:
        if threading.current_thread() is self._thread:
            self._execute(what, arg)  # called from on_key: run inline
            return
        if self._closed or not self._thread.is_alive():
            if what in ("disarm", "close"):
                return  # nothing is grabbed by a dead thread's closed connection
            raise PlatformError("the X11 key suppressor is not running (X connection lost?)")
        done = threading.Event()
        failure: list[BaseException] = []
        self._requests.put((what, arg, done, failure))
        os.write(self._wake_w, b"x")
        if what == "disarm" and self._in_handler.is_set():
            return  # carried out once the running handler returns (see the class docstring)
        if not done.wait(self._timeout):
            log.warning("X11 key suppressor did not answer %s within %.1f s", what, self._timeout)
            return
        if failure:
            raise failure[0]

    def _run(self) -> None:
        fd = self._display.fileno()
        try:
            while True:
                self._handle_events()
                readable, _, _ = select.select([fd, self._wake_r], [], [])
                if self._wake_r in readable:
                    os.read(self._wake_r, 512)
                    while True:
                        try:
                            what, arg, done, failure = self._requests.get_nowait()
                        except queue.Empty:
                            break
                        try:
                            self._execute(what, arg)
                        except Exception as exc:  # reported to the caller
                            failure.append(exc)
                        finally:
                            done.set()
                        if what == "close":
                            return
        except (error.ConnectionClosedError, OSError) as exc:
            log.error("X11 key suppressor lost its X connection: %s", type(exc).__name__)
        finally:
            self._armed = False
            try:
                self._ungrab_all()
                self._display.sync()
            except Exception:
                pass
            try:
                self._display.close()
            except Exception:
                pass
            # Unblock anyone still waiting on a request.
            while True:
                try:
                    _, _, done, _ = self._requests.get_nowait()
                except queue.Empty:
                    break
                done.set()

    def _execute(self, what: str, arg: object) -> None:
        if what == "arm":
            self._on_key = arg  # type: ignore[assignment]
            if not self._armed:
                self._grab_all()
                self._armed = True
        elif what == "disarm":
            self._disarm()
        elif what == "keys":
            was_armed = self._armed
            if was_armed:
                self._disarm()
            self._specs = arg  # type: ignore[assignment]
            if was_armed:
                self._grab_all()
                self._armed = True
        elif what == "close":
            self._disarm()
        else:  # pragma: no cover - internal misuse
            raise ValueError(what)

    def _disarm(self) -> None:
        self._armed = False
        self._on_key = None
        if self._grabbed:
            self._ungrab_all()
            self._display.sync()
            self._handle_events()  # presses that raced the ungrab: replayed

    # -- grabs ---------------------------------------------------------------

    def _grab_all(self) -> None:
        self._mods = ModifierBits.read(self._display)  # layouts can change while running
        combos = ignored_mask_combinations(self._mods.lock_masks)
        for spec in self._specs:
            keycode = self._display.keysym_to_keycode(spec.keysym)
            if not keycode:
                log.warning("accept key %s has no key on this keyboard layout; not grabbed", spec.canonical)
                continue
            base = modifier_mask(spec.modifiers, self._mods.bits)
            catcher = error.CatchError(error.BadAccess)
            for extra in combos:
                self._root.grab_key(keycode, base | extra, False, X.GrabModeAsync,
                                    X.GrabModeAsync, onerror=catcher)
                self._grabbed[(keycode, base | extra)] = spec
            self._display.sync()
            if catcher.get_error() is not None:
                log.warning("accept key %s is grabbed by another application; "
                            "it will not be swallowed", spec.canonical)

    def _ungrab_all(self) -> None:
        for keycode, mask in list(self._grabbed):
            self._root.ungrab_key(keycode, mask)
        self._grabbed.clear()

    # -- events --------------------------------------------------------------

    def _handle_events(self) -> None:
        while self._display.pending_events():
            event = self._display.next_event()
            if event.type == X.MappingNotify:
                self._display.refresh_keyboard_mapping(event)
                continue
            if event.type != X.KeyPress:
                continue
            spec = self._match(event.detail, event.state)
            if spec is None:
                continue
            # The press activated a keyboard grab lasting until the key is
            # released; give the keyboard back now so that text typed in
            # response goes to the application. A round trip, not a flush: the
            # text is typed on another connection, and the server may read that
            # one first; keys it gets while the grab still holds come here and
            # are lost (an accept-word in Firefox on a busy CI machine).
            self._display.ungrab_keyboard(event.time)
            self._display.sync()
            on_key = self._on_key if self._armed else None
            consumed: object = False
            if on_key is not None:
                self._in_handler.set()
                try:
                    consumed = on_key(spec.name)
                except Exception:
                    log.exception("accept-key handler failed")
                    consumed = None
                finally:
                    self._in_handler.clear()
            if consumed is False:
                self._replay(event.detail)

    def _match(self, keycode: int, state: int) -> Optional[KeySpec]:
        for (code, mask), spec in self._grabbed.items():
            if code == keycode and mask == (state & 0xFF):
                return spec
        # After an ungrab the table is empty but a raced press may still arrive.
        for spec in self._specs:
            if self._display.keysym_to_keycode(spec.keysym) == keycode:
                want = modifier_mask(spec.modifiers, self._mods.bits)
                locks = 0
                for m in self._mods.lock_masks:
                    locks |= m
                if (state & 0xFF) & ~locks == want:
                    return spec
        return None

    def _replay(self, keycode: int) -> None:
        """Send a swallowed key on to the focused window (modifiers the user
        holds are still held, so ctrl+Right replays as ctrl+Right)."""
        if not self._has_xtest:
            log.warning("cannot pass a swallowed key on: no XTEST extension")
            return
        # A press of a key that is still down counts as auto-repeat and is not
        # delivered like a fresh press, so wait (briefly) for the release.
        deadline = time.monotonic() + self.REPLAY_WAIT_S
        while self._key_down(keycode) and time.monotonic() < deadline:
            time.sleep(0.005)
        regrab = [(c, m) for (c, m) in self._grabbed if c == keycode]
        for code, mask in regrab:
            self._root.ungrab_key(code, mask)
        xtest.fake_input(self._display, X.KeyPress, keycode)
        xtest.fake_input(self._display, X.KeyRelease, keycode)
        self._display.sync()
        for code, mask in regrab:
            self._root.grab_key(code, mask, False, X.GrabModeAsync, X.GrabModeAsync)
        if regrab:
            self._display.sync()

    def _key_down(self, keycode: int) -> bool:
        keymap = self._display.query_keymap()
        return bool(keymap[keycode // 8] & (1 << (keycode % 8)))
