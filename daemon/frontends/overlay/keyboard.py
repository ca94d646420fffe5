"""The pynput adapter of the overlay frontend: the only module that imports pynput.

pynput's own types stop here; everything past this module sees
:class:`daemon.capture.events.KeyEvent`, translated by
:class:`daemon.capture.keymap.KeyMapper`.  pynput is imported lazily inside
:class:`KeyboardSource` because importing it without a display raises
``ImportError``.

On Windows and macOS the accept-key suppressor decides inside pynput's own
hook; it hands over a plain :class:`~daemon.frontends.base.ListenerHook` and
:func:`hook_options` turns it into pynput listener options, so pynput stays
in this module.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Optional

from daemon.capture.events import KeyEvent, Kind
from daemon.capture.keymap import KeyMapper
from daemon.frontends.base import ListenerHook

log = logging.getLogger(__name__)


EventCallback = Callable[[KeyEvent], None]


def hook_options(hook: Optional[ListenerHook], listener: Callable[[], Any]) -> dict[str, Any]:
    """pynput ``Listener`` keyword arguments that run ``hook`` in its OS hook.

    ``listener()`` returns the listener being built (the Windows filter needs
    it to call ``suppress_event()``, which pynput implements by raising an
    exception that makes the hook return 1).  An exception from
    ``hook.swallow`` lets the key pass: on macOS pynput would otherwise end
    the listener, on Windows it would silently pass the key anyway.

    * ``darwin_intercept(event_type, event)``: returning None drops the event.
      pynput has already reported the press to ``on_press`` by then, so the
      listener sees swallowed keys on macOS (``AcceptKeys``' ``SwallowLedger`` pairs them).
    * ``win32_event_filter(msg, data)``: ``suppress_event()`` drops it before
      ``on_press``; returning True lets pynput report it as usual.
    """
    if hook is None:
        return {}

    def swallow(a: Any, b: Any) -> bool:
        try:
            return bool(hook.swallow(a, b))
        except Exception:
            log.exception("accept-key filter failed; the key passes")
            return False

    if hook.backend == "darwin":
        def intercept(event_type: Any, event: Any) -> Any:
            return None if swallow(event_type, event) else event

        return {"darwin_intercept": intercept}
    if hook.backend == "win32":
        def event_filter(msg: Any, data: Any) -> bool:
            if swallow(msg, data):
                listener().suppress_event()  # raises: the key is dropped
            return True

        return {"win32_event_filter": event_filter}
    raise ValueError(f"no pynput hook for backend {hook.backend!r}")


class KeyboardSource:
    """Runs pynput's keyboard and mouse listeners and reports our events.

    ``on_event`` is called on pynput's listener threads (one for the keyboard,
    one for the mouse), so it must be thread-safe and quick.  A mouse button
    press is reported as CARET_MOVED (a click usually moves the caret or the
    focus).  Events pynput marks as injected (synthetic, on backends that can
    tell) are dropped here; on X11 XTest events are not marked, which is why
    the controller also filters the echo of its own injected text.

    :meth:`watchdog` restarts a listener whose thread died (pynput threads end
    when their callback raises or the display connection breaks); call it
    periodically (the composition root does, every few seconds).

    ``hook`` is the platform's accept-key filter (Windows, macOS), installed
    into every keyboard listener this source starts (see :func:`hook_options`).
    """

    def __init__(self, on_event: EventCallback, mouse: bool = True,
                 hook: Optional[ListenerHook] = None) -> None:
        self.on_event = on_event
        self.mouse = mouse
        self.hook = hook
        self.mapper = KeyMapper()
        self.restarts = 0
        self._lock = threading.Lock()
        self._keyboard: Any = None
        self._mouse: Any = None
        self._running = False

    def start(self) -> None:
        """Start listening.  Raises ``ImportError`` (pynput cannot reach a
        display) or ``RuntimeError`` from pynput; the caller reports it."""
        with self._lock:
            self._running = True
            self._start_keyboard()
            if self.mouse:
                self._start_mouse()

    def stop(self) -> None:
        with self._lock:
            self._running = False
            for listener in (self._keyboard, self._mouse):
                if listener is not None:
                    try:
                        listener.stop()
                    except Exception:  # already dead: nothing to stop
                        log.debug("listener stop failed", exc_info=True)
            self._keyboard = self._mouse = None

    def is_alive(self) -> bool:
        """True while every listener that should run is running."""
        with self._lock:
            k = self._keyboard is not None and self._keyboard.is_alive()
            m = not self.mouse or (self._mouse is not None and self._mouse.is_alive())
            return self._running and k and m

    def watchdog(self) -> bool:
        """Restart dead listeners; True when a restart happened."""
        with self._lock:
            if not self._running:
                return False
            restarted = False
            if self._keyboard is None or not self._keyboard.is_alive():
                log.warning("keyboard listener stopped; restarting it")
                self.mapper.reset()
                self._start_keyboard()
                restarted = True
            if self.mouse and (self._mouse is None or not self._mouse.is_alive()):
                log.warning("mouse listener stopped; restarting it")
                self._start_mouse()
                restarted = True
            if restarted:
                self.restarts += 1
                # Keys may have been missed: the buffer no longer matches the field.
                self._emit(KeyEvent(Kind.FOCUS_CHANGED, name="listener-restart"))
            return restarted

    # ------------------------------------------------------------------ internals

    def _emit(self, event: Optional[KeyEvent]) -> None:
        if event is None:
            return
        try:
            self.on_event(event)
        except Exception:  # an exception would end pynput's thread
            log.exception("key event handler failed for %r", event)

    def _on_press(self, key: Any, injected: bool = False) -> None:
        if injected:
            return
        self._emit(self.mapper.press(key))

    def _on_release(self, key: Any, injected: bool = False) -> None:
        if not injected:
            self.mapper.release(key)

    def _on_click(self, x: int, y: int, button: Any, pressed: bool, injected: bool = False) -> None:
        if pressed and not injected:
            self._emit(KeyEvent(Kind.CARET_MOVED, name="click"))

    def _start_keyboard(self) -> None:
        from pynput import keyboard  # lazily: fails without a display

        built: list[Any] = []
        options = hook_options(self.hook, lambda: built[0])
        self._keyboard = keyboard.Listener(on_press=self._on_press, on_release=self._on_release,
                                           **options)
        built.append(self._keyboard)
        self._keyboard.daemon = True
        self._keyboard.start()

    def _start_mouse(self) -> None:
        from pynput import mouse  # lazily: fails without a display

        self._mouse = mouse.Listener(on_click=self._on_click)
        self._mouse.daemon = True
        self._mouse.start()
