"""Key handling and accepting: the part of the
:class:`~daemon.controller.Controller` that takes keys in and puts accepted
text out.

* **Typing through.**  A typed character equal to the next ghost character
  advances the ghost text at once, with no model call; any other text key
  hides the ghost and asks for a new suggestion; caret moves, clicks and
  shortcuts reset the buffer.
* **Accepting.**  While ghost text is on the screen the key suppressor is
  armed, so the accept keys are swallowed and reported to
  :meth:`on_suppressed_key`, which inserts the part of the suggestion the
  sink drew (or its next word) through the injector, but only while the
  field still holds the ghost's anchor (else a Tab is typed).
* **Our own keys.**  Text we inject comes back through the keyboard listener
  (:class:`~daemon.capture.tracker.InjectionEcho` drops it), and a swallowed
  accept key may be seen by the listener too
  (:class:`~daemon.controller.ledger.SwallowLedger` pairs each swallowed press
  with at most one listener event).

Threads: :meth:`on_key` runs on the frontend's key thread (pynput's listener,
the IBus engine's D-Bus loop); :meth:`on_suppressed_key` on the suppressor's
thread, which must never wait for the field to settle (other threads may be
waiting for that thread to arm or disarm): it reads the field once.  Text
injection runs without the lock.
"""

from __future__ import annotations

import logging
import re
from typing import Optional

from daemon.capture.events import KeyEvent, Kind
from daemon.capture.keymap import KeySpecError, normalize_key_spec
from daemon.capture.tracker import RESET_KINDS
from daemon.worker import describe_exception

log = logging.getLogger(__name__)

#: Keys after which the focused widget may be a different one (re-query focus).
_FOCUS_KINDS = frozenset({Kind.FOCUS_CHANGED, Kind.CARET_MOVED, Kind.SHORTCUT, Kind.TAB, Kind.ENTER})
_TEXT_KINDS = frozenset({Kind.CHAR, Kind.BACKSPACE, Kind.ENTER, Kind.TAB})
_WORD = re.compile(r"\s*(?:\w+|[^\w\s]+)")


def next_word(ghost: str) -> str:
    """The part of ``ghost`` that accept-word inserts: leading whitespace and
    one word (or one run of punctuation)."""
    m = _WORD.match(ghost)
    return m.group(0) if m else ghost


def event_spec(event: KeyEvent) -> str:
    """The key spec of an event, comparable with normalised config keys."""
    if event.kind is Kind.CHAR:
        return event.char.lower()
    return event.name


class KeyHandling:
    """Part of :class:`~daemon.controller.Controller`: keys in, accepted text out."""

    def on_key(self, event: KeyEvent) -> None:
        """One key event from the listener."""
        present: Optional[tuple[int, str]] = None
        refresh_focus = False
        with self._lock:
            self.counters["keys"] += 1
            self._key_time = self._clock()
            cfg = self._config
            if cfg.pause_key and event.kind is not Kind.CHAR and event.name == cfg.pause_key:
                self._set_paused_locked(not self._paused)
                return
            refresh_focus = event.kind in _FOCUS_KINDS and self._focus_info is not None
            if not (self._enabled and not self._paused):
                return
            if self._blocked:
                pass  # nothing captured; only a focus change can end this
            elif self._echo.consume(event):
                self.counters["echo"] += 1
                return
            elif self._ledger.listener_saw(event_spec(event), self._armed_specs()):
                self.counters["swallowed"] += 1
                return
            else:
                present = self._handle_key(event)
        if refresh_focus:
            # Tab / Enter may move focus to another field (forms, dialogs): the
            # text we tracked stays unless the focused window or field changed.
            self.on_focus(only_if_changed=event.kind in (Kind.TAB, Kind.ENTER) and not self._blocked)
        if present is not None:
            self._present(*present)

    def _handle_key(self, event: KeyEvent) -> Optional[tuple[int, str]]:
        """Apply a key (lock held); return (generation, ghost) to present."""
        cfg = self._config
        kind = event.kind
        if event_spec(event) == cfg.dismiss_key or kind is Kind.ESCAPE:
            if self._ghost:
                self.counters["dismissed"] += 1
            self._hide()
            if self._worker is not None:
                self._worker.cancel()
            self._pending = None
            return None
        if kind in (Kind.MODIFIER, Kind.OTHER, Kind.DELETE):
            return None
        if kind is Kind.CHAR and self._ghost and self._ghost[0] == event.char:
            self.tracker.feed(event)
            self.counters["typed_through"] += 1
            rest = self._ghost[1:]
            if self._anchor is not None:
                self._advance_anchor(event.char)
            if rest:
                self._drawn = self._drawn[1:]  # what stays readable until it is drawn again
                self._set_ghost(rest)
                return (self.tracker.generation, rest)
            self._hide()
            if self._pending is None or self._pending_done:
                self._request()
            # else: the request still running will adapt its final result
            return None
        if kind is Kind.ENTER and self._echo_wait:
            self.tracker.clear()  # a terminal line its terminal never showed: typed with echo off
        self.tracker.feed(event)
        self._hide()
        if kind in RESET_KINDS:
            self._echo.clear()
            self._pending = None
            if self._worker is not None:
                self._worker.cancel()
        elif kind in _TEXT_KINDS:
            self._request()
        return None

    def _armed_specs(self) -> frozenset[str]:
        if not self._armed:
            return frozenset()
        return frozenset({self._config.accept_key, self._config.accept_word_key})

    def on_suppressed_key(self, name: str) -> Optional[bool]:
        """The suppressor swallowed an accept key (``name`` is a key spec).
        Returns False when there was nothing for the accept-word key to
        insert after all (the suggestion was gone or its field changed): a
        suppressor that can replays the key to the application then."""
        try:
            spec = normalize_key_spec(name)
        except KeySpecError:
            spec = name
        with self._lock:
            anchor = self._anchor if self._ghost else None
            trail = list(self._trail)
        holds = True if anchor is None else self._trail_holds(trail)
        with self._lock:
            self._ledger.reported(spec)
            cfg = self._config
            if spec not in (cfg.accept_key, cfg.accept_word_key):
                return
            if self._ghost and not holds and self._anchor is anchor:
                # The field, its caret or its text changed under the
                # suggestion: insert nothing old.
                self.counters["accept_refused"] += 1
                log.debug("accept key refused: the field changed under the suggestion")
                self._hide()
            if self._drawn and self._active():
                # what the user can read, not what was cut off or not drawn yet
                piece = self._drawn if spec == cfg.accept_key else next_word(self._drawn)
                self.counters["accepted" if spec == cfg.accept_key else "accepted_word"] += 1
            elif spec == "tab":
                # Swallowed, but nothing is readable any more (a fast double
                # Tab, a suggestion hidden or replaced as the key came): the
                # user meant a real Tab, so type one.
                piece = "\t"
                self.counters["tab_passed_on"] += 1
            else:
                return False
            log.debug("accepting %d characters", len(piece))
            self.counters["injected_chars"] += len(piece)  # accepted text, and the Tabs passed on
            if self._injector is None or self._injector.echoes:
                self._echo.expect(piece)
            if self._enabled and not self._paused and not self._blocked:
                self.tracker.accept(piece)
            rest = self._ghost[len(piece):] if self._ghost.startswith(piece) else ""
            if self._anchor is not None:
                self._advance_anchor(piece)
            if rest:
                self._drawn = self._drawn[len(piece):]
                self._set_ghost(rest)
            else:
                self._hide()
                if self._active():
                    self._request()
            generation = self.tracker.generation
        self._inject(piece)
        if rest:
            self._present(generation, rest)
        return None

    def _inject(self, text: str) -> None:
        if self._injector is None:
            log.warning("no text injector: cannot insert the suggestion")
            return
        try:
            self._injector.type_text(text)
        except Exception as e:
            log.error("inserting %d characters failed: %s", len(text), describe_exception(e))
            with self._lock:  # we no longer know what the field holds
                self._reset("inject-failed")
