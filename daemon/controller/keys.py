"""Key handling and accepting: the part of the
:class:`~daemon.controller.Controller` that takes keys in and says what an
accept key inserts.

* **Typing through.**  A typed character equal to the next ghost character
  advances the ghost text at once, with no model call; any other text key
  hides the ghost and asks for a new suggestion; caret moves, clicks and
  shortcuts reset the buffer.
* **Accepting is a question the frontend asks.**  When an accept key comes
  while the frontend shows a suggestion, it asks :meth:`accept`, which
  decides under the lock what the key inserts (the part of the suggestion
  the sink drew, or its next word; nothing when the field no longer holds
  the ghost's anchor or nothing readable is left) and updates the state as
  if it were inserted.  The frontend inserts it (the IBus engine commits it,
  the overlay types it) and then calls :meth:`inserted`, which shows the
  rest of the suggestion, or forgets the buffer when inserting failed.
  Each hop calls down; nothing calls back.  Which keys are swallowed, and
  when, is the frontend's business.

Threads: :meth:`on_key` runs on the frontend's key thread (pynput's listener,
the IBus engine's D-Bus loop); :meth:`accept` on whichever thread the
frontend has the key on (the suppressor's, which must never wait for the
field to settle: it reads the field once).
"""

from __future__ import annotations

import logging
import re
from typing import Optional

from daemon.capture.events import KeyEvent, Kind
from daemon.capture.tracker import RESET_KINDS

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
            if not self._blocked:  # else nothing is captured; only a focus change can end this
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
        learner = self._learner
        if learner is not None:
            if kind in RESET_KINDS:
                learner.flush()  # the tracker forgets the text with this key: the stretch ends
            elif kind is Kind.ENTER and self._echo_wait:
                learner.drop()  # a terminal line its terminal never showed (see below)
            elif kind is Kind.ENTER and self._focus.terminal:
                learner.flush()  # a command line ends; the next one is a stretch of its own
            elif kind is Kind.ENTER:
                learner.line_end()  # the lines so far go into the stretch's piece; it goes on
                learner.typed(1)
            else:
                learner.typed(-1 if kind is Kind.BACKSPACE else 1 if kind in _TEXT_KINDS else 0)
        if kind in _TEXT_KINDS:
            self._passing()
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
            self._pending = None
            if self._worker is not None:
                self._worker.cancel()
        elif kind in _TEXT_KINDS:
            self._request()
        return None

    def accept(self, spec: str) -> Optional[str]:
        """An accept key (``spec``, a key spec) came while a suggestion may
        be on the screen: the text it inserts, with the state already
        updated as if it were inserted (the buffer, the anchor, the rest of
        the suggestion); None when ``spec`` is not an accept key or there is
        nothing readable to insert (the field changed under the suggestion,
        it was hidden or replaced as the key came): the key is then the
        application's.  The frontend inserts the text, then calls
        :meth:`inserted`."""
        with self._lock:
            cfg = self._config
            if spec not in (cfg.accept_key, cfg.accept_word_key) or not self._ghost:
                return None
            anchor = self._anchor
            trail = list(self._trail)
        holds = True if anchor is None else self._trail_holds(trail)  # reads the field once, unlocked
        with self._lock:
            if self._ghost and not holds and self._anchor is anchor:
                # The field, its caret or its text changed under the
                # suggestion: insert nothing old.
                self.counters["accept_refused"] += 1
                log.debug("accept key refused: the field changed under the suggestion")
                self._hide()
            if not (self._drawn and self._active()):
                return None
            # what the user can read, not what was cut off or not drawn yet
            piece = self._drawn if spec == cfg.accept_key else next_word(self._drawn)
            self.counters["accepted" if spec == cfg.accept_key else "accepted_word"] += 1
            self.counters["accepted_chars"] += len(piece)
            log.debug("accepting %d characters", len(piece))
            self._passing()
            self.tracker.accept(piece)
            if self._learner is not None:
                self._learner.typed(len(piece))
            rest = self._ghost[len(piece):] if self._ghost.startswith(piece) else ""
            if self._anchor is not None:
                self._advance_anchor(piece)
            if rest:
                self._drawn = self._drawn[len(piece):]
                self._set_ghost(rest)
            else:
                self._hide()
                self._request()
            self._accepted = (self.tracker.generation, rest)
            return piece

    def inserted(self, ok: bool = True) -> None:
        """The frontend inserted what :meth:`accept` returned (``ok``), or
        could not: then what the field holds is unknown, and the buffer is
        forgotten.  Shows the rest of the suggestion (after an accept-word)."""
        with self._lock:
            accepted, self._accepted = self._accepted, None
            if not ok:
                self._reset("insert-failed")
                return
        if accepted is not None and accepted[1]:
            self._present(*accepted)
