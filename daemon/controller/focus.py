"""Which field has focus, and whether capture is allowed there: the part of
the :class:`~daemon.controller.Controller` that applies the privacy rules.

Disabled, paused, a denylisted application or a password field (or an
unidentifiable field where ``unknown_fields`` says skip): the buffer is
cleared, nothing is captured and nothing is suggested.  Nothing here logs
text, only lengths.

A focus change with the field's text (accessibility, or the surrounding text
an input method hands over) replaces the key buffer and warms the model's
cache for it; moving to another window without readable text forgets it.

A terminal (``FocusState.terminal``) may be at a password prompt with echo
off: the text its keys made goes to the worker only once a reading of it
shows that text on the caret's line
(:mod:`~daemon.controller.terminal_prompt`), and a line it never showed is
forgotten at its Return.

A reading of its own (a poll, a key) that finds another object of the same
window focused looks once more after ``FOCUS_CONFIRM_S`` before it acts: a
browser reports its document focused for a few milliseconds while an accept
key is grabbed.

A reading of the same field after a suggestion was held back because the
field was behind the keys (``FieldTruth._present``) looks again whether it
caught up: every reading counts, a field event's or the housekeeping poll's,
so an application that sends no event when it catches up is not waited for
forever.

Threads: :meth:`on_focus` is called by the key handling after keys that may
move focus, by the frontend's housekeeping and focus watchers, and by
:meth:`~daemon.controller.field.FieldTruth.on_field_event`.  The focus query
runs without the lock and may take tens of milliseconds.
"""

from __future__ import annotations

import logging
import time
from typing import Optional

from daemon.controller.anchor import field_agrees
from daemon.controller.ports import FocusState
from daemon.controller.terminal_prompt import terminal_shows
from daemon.worker import describe_exception

log = logging.getLogger(__name__)

#: How long a reading that finds another object of the same window focused waits before it looks again
#: (a browser's document takes the focus for a few milliseconds while an accept key is grabbed).
FOCUS_CONFIRM_S = 0.05
#: How many of the buffer's earlier texts (before each key since the field last agreed) a lagging field's
#: reading is compared with (see ``_field_behind``).
PASSED_STATES = 16
#: How long a field may read as before the latest keys and still count as behind them; longer, and the
#: field wins: the keys were the listener's, late, after the buffer was taken from a field already past
#: them (a busy machine), or the application refused them.
BEHIND_MAX_S = 1.0
#: The other way round: how many characters, and for how long, a field may read as the buffer plus a few
#: more and count as ahead of the key listener (a busy machine delivers the keys late; taking the buffer
#: from the field then would add those keys to it a second time when they come).  More, or longer, and the
#: text came from elsewhere (a paste, the application's own completion): the field wins.
KEYS_LATE_CHARS = 48
KEYS_LATE_MAX_S = 2.0


class FocusRules:
    """Part of :class:`~daemon.controller.Controller`: the focused field and the privacy rules."""

    #: A request for a terminal's text waits for a reading that shows it (see :meth:`_waits_for_echo`).
    _echo_wait = False
    #: A request for a field whose caret read as inside a line waits too (see :meth:`_off_line_end`).
    _line_wait = False

    def on_focus(self, state: Optional[FocusState] = None, only_if_changed: bool = False) -> None:
        """The focused widget may have changed: query it (unless ``state`` is
        given, e.g. by a platform focus watcher) and apply the privacy rules."""
        with self._lock:
            generation = self.tracker.generation
            previous = self._focus
        if state is None:
            if self._focus_info is None:
                return
            state = (self._read_focus_twice(previous.field_id, previous.window_id) if only_if_changed
                     else self._read_focus()) or FocusState()
        with self._lock:
            if (only_if_changed and state.window_id == previous.window_id
                    and state.field_id == previous.field_id and state.is_password == previous.is_password):
                if (not self._adopt_focus(state) and self._behind_since is not None
                        and self.tracker.generation == generation):
                    self._caught_up(state)
                return
            if state.field_id != previous.field_id or state.window_id != previous.window_id:
                log.debug("focus moved: window %s -> %s, field %s -> %s", previous.window_id, state.window_id,
                          previous.field_id or "-", state.field_id or "-")
            if self._adopt_focus(state):
                return
            if state.text_before_caret is not None and self.tracker.generation == generation:
                self._hide()
                self._end_stretch()
                self.tracker.replace(state.text_before_caret)
                self._agreed()
                self._pending = None
                if self._worker is not None and self._active() and self.tracker.text.strip():
                    self._worker.prefill(self.tracker.text, self._params)
            elif state.window_id != previous.window_id and self.tracker.generation == generation:
                self._reset("focus")

    def _adopt_focus(self, state: FocusState) -> bool:
        """Lock held: ``state`` is the focused field now.  Every reading of
        the focus that the controller keeps passes here, whoever read it (a
        focus watcher, the settling of a suggestion, a field event), so the
        privacy rules always judge the field whose text is kept.  True when
        capture is off there (the buffer is then cleared and work dropped)."""
        self._focus = state
        if self._update_block():
            return True
        if self._echo_wait or (self._line_wait and state.at_line_end is not False):  # a request waited for it
            self._request()
        return False

    def _off_line_end(self) -> bool:
        """Lock held: whether a request waits because the last reading of the focused field had text after
        its caret on the line (typing inside a line, or a reading torn by the next key: its caret offset read
        before the application handled it, its text after, so that the key's own character followed the
        caret); the next reading with the caret at the line's end asks again (:meth:`_adopt_focus`)."""
        self._line_wait = self._focus.at_line_end is False
        return self._line_wait

    def _waits_for_echo(self, text: str) -> bool:
        """Lock held: whether a request for ``text`` waits because the focused
        field is a terminal whose last reading does not show the typed
        characters on its caret's line (not echoed yet, or typed at a prompt
        with echo off); the reading that shows them asks again
        (:meth:`_adopt_focus`), and a Return before it drops the line's keys
        (:meth:`~daemon.controller.keys.KeyHandling._handle_key`)."""
        self._echo_wait = self._focus.terminal and not terminal_shows(self._focus.text_before_caret, text)
        return self._echo_wait

    def _update_block(self) -> bool:
        """Apply the privacy rules to the focused widget (lock held); True
        when capture is off there."""
        blocked = self._block_reason(self._focus)
        changed = blocked != self._blocked
        if changed:
            log.info("capture %s in this window%s", "off" if blocked else "on", f" ({blocked})" if blocked else "")
        self._blocked = blocked
        if blocked and (changed or self._ghost or self._pending is not None or len(self.tracker)):
            self._reset("blocked")
        return bool(blocked)

    def _block_reason(self, state: FocusState) -> str:
        if self._config.is_denied(state.app_id):
            return "denylisted application"
        if state.is_password:
            return "password field"
        if state.is_password is None and self._config.skips_unknown_fields:
            return "unidentified field"
        return ""

    def _read_focus(self) -> Optional[FocusState]:
        if self._focus_info is None:
            return None
        try:
            return self._focus_info.current()
        except Exception as e:
            log.warning("focus query failed: %s", describe_exception(e))
            return None

    def _read_focus_twice(self, field_id: str, window_id: Optional[int] = None) -> Optional[FocusState]:
        """The focused widget, read once more after FOCUS_CONFIRM_S where it is another object than
        ``field_id`` (in window ``window_id``, where given): a browser reports its document focused for a few
        milliseconds while an accept key is grabbed (Firefox ESR)."""
        state = self._read_focus()
        if (state is not None and field_id and state.field_id != field_id
                and (window_id is None or state.window_id == window_id)):
            time.sleep(FOCUS_CONFIRM_S)
            state = self._read_focus()
        return state

    def _caught_up(self, state: FocusState) -> None:
        """Lock held: a reading of the field (a field event, the focus poll) after a suggestion was held back
        from it (behind the keys then). Caught up with the keys: ask again (the worker's cache answers at
        once); caught up with something else (select-all and BackSpace), or behind for longer than
        BEHIND_MAX_S: take the buffer from it; still behind: wait for the next reading."""
        text = state.text_before_caret
        if text is None or state.is_password or self._field_behind(text) or self._keys_late(text):
            return
        if field_agrees(text, self.tracker.text):
            self._behind_since = None
            if self._pending is None or self._pending_done:  # else its answer is still to come, and shows
                self._request()
        else:
            self.counters["field_corrections"] += 1
            log.debug("the field caught up with something other than the keys, or stayed behind them: using "
                      "the field's")
            self._resync(state)

    def _passing(self) -> None:
        """Lock held: the buffer is about to change by a key or an accept; the field may read as it is now
        for a while yet."""
        if self.tracker.text:
            self._passed.append(self.tracker.text)

    def _agreed(self) -> None:
        """Lock held: the field read as the buffer is now; it is past every earlier text."""
        self._passed.clear()
        self._behind_since = None

    def _field_behind(self, field_text: str) -> bool:
        """Lock held: whether the field reads as the buffer read before one of the latest keys, and has not
        done so for longer than BEHIND_MAX_S."""
        if self._behind_since is not None and self._clock() - self._behind_since >= BEHIND_MAX_S:
            return False
        return any(field_agrees(field_text, earlier) for earlier in self._passed)

    def _keys_late(self, field_text: str) -> bool:
        """Lock held: whether the field reads as the buffer followed by at most KEYS_LATE_CHARS more
        characters, and has not done so for longer than KEYS_LATE_MAX_S: keys the listener has not
        delivered yet."""
        buffer = self.tracker.text
        if not buffer or (self._behind_since is not None and self._clock() - self._behind_since >= KEYS_LATE_MAX_S):
            return False
        # the buffer ends 1 to KEYS_LATE_CHARS characters before the field's end: one search, no slices
        end = len(field_text) - 1
        return field_text.find(buffer, max(0, end + 1 - KEYS_LATE_CHARS - len(buffer)), end) >= 0
