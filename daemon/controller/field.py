"""Which field, caret and text a ghost belongs to: the part of the
:class:`~daemon.controller.Controller` that shows a suggestion only where it
fits, and takes it away when the field moves under it.

* **The field is the truth.**  Where accessibility exposes the focused
  field's text, a suggestion is shown only once the field's text before the
  caret agrees with the key buffer (re-read for up to ``SETTLE_S`` while the
  application catches up with the key); when it still disagrees (select-all
  and BackSpace, paste, undo, autocorrect) the buffer is reset from the field,
  unless the field still reads as the buffer read before the latest keys (an
  application whose accessibility lags its input by more than that: a busy
  browser): then nothing is shown until a reading of the field, at its next
  field event or focus poll, has caught up (see ``FocusRules._caught_up``), or
  ``BEHIND_MAX_S`` passed (then the field wins after all).  The same the
  other way round: a field that reads as the buffer plus the next few
  characters is ahead of a key listener that delivers late on a busy machine
  (``KEYS_LATE_CHARS``, ``KEYS_LATE_MAX_S``); taking the buffer from it would
  add those keys a second time when they come.
* **Anchors.**  A shown suggestion is tied to a
  :class:`~daemon.controller.anchor.FieldAnchor` (field, caret offset, text
  before it); typing through or accepting moves it along, keeping a short
  trail of the states the application may not have caught up with yet.
  Accessibility events that break it hide the suggestion, and an accept key
  inserts only while it holds.
* **Room.**  Where text follows the caret on its line nothing is suggested
  (the ghost text would cover it), nor where a single-line field has less
  than ``MIN_GHOST_ROOM_PX`` right of the caret.

Threads: the field and the caret are read without the lock and the outcome is
re-validated against the buffer's generation afterwards.
:meth:`on_field_event` runs on the accessibility event pump's thread, never
on the keyboard listener's; ``_present`` on whichever thread produced the
ghost text (listener, worker, suppressor).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Callable, Optional

from daemon.controller.anchor import FieldAnchor, field_agrees
from daemon.controller.ports import FocusState, Rect
from daemon.worker import describe_exception

log = logging.getLogger(__name__)

#: How long a reading of the focused field may be repeated while the
#: application catches up with a key (its accessibility tree lags its input),
#: and the pause between readings.
SETTLE_S = 0.25
SETTLE_POLL_S = 0.01
#: Settled readings without a caret box in a row after which an application
#: is taken to report none, and how many applications that is remembered for
#: (see :func:`caret_pending`).
CARET_MISSES = 3
MAX_CARET_APPS = 64
#: Pixels a single-line field must have right of the caret for ghost text
#: (it is elided to fit inside the field; less than this shows nothing, and
#: then Tab is not swallowed either).
MIN_GHOST_ROOM_PX = 24


class FieldTruth:
    """Part of :class:`~daemon.controller.Controller`: settling, anchors, field events, presenting."""

    def _present(self, generation: int, text: str) -> None:
        """Show ``text`` at the caret unless the state moved on meanwhile
        (the field is read without the lock).  Where the field's text is
        readable it must agree with the buffer the suggestion was made for;
        if it does not, the field wins: the buffer is reset from it and a new
        suggestion requested."""
        focus, caret = self._settled_field(generation)
        with self._lock:
            if self.tracker.generation != generation or self._ghost != text or not self._active():
                return
            field_text = focus.text_before_caret
            if (focus.window_id, focus.field_id) != self._request_field:
                # Another window, tab or field has focus now (a new browser
                # tab, a dialog): this suggestion belongs to the old one.
                self.counters["field_moved"] += 1
                log.debug("focus moved to another field before the suggestion was shown")
                if field_text is None:
                    if not self._adopt_focus(focus):
                        self._reset("field-moved")
                else:
                    self._end_stretch()  # another field's text does not go on with this one's
                    self._resync(focus)
                return
            if field_text is not None and not field_agrees(field_text, self.tracker.text):
                if self._field_behind(field_text) or self._keys_late(field_text):
                    # not caught up with the keys after all of SETTLE_S (or they with it): the next reading looks again
                    self.counters["field_behind"] += 1
                    log.debug("the field and the keys are apart (%d characters before its caret, the keys' %d): "
                              "nothing shown until they agree", len(field_text), len(self.tracker.text))
                    if self._behind_since is None:
                        self._behind_since = self._clock()
                    self._caret_cache = None  # that reading is no answer for this buffer: read again
                    self._hide()
                    return
                self.counters["field_corrections"] += 1
                log.debug("the field's text disagrees with the key buffer: using the field's")
                self._resync(focus)
                return
            if focus.at_line_end is False:
                self.counters["mid_line"] += 1
                self._line_wait = True  # a reading with the caret at the line's end asks again
                self._hide()
                return
            clip = focus.look.clip if focus.look is not None else None
            if clip is not None and caret is not None and clip.x + clip.width - caret.x < MIN_GHOST_ROOM_PX:
                self.counters["no_room"] += 1
                self._hide()
                return
            self._agreed()
            self._anchor = FieldAnchor.of(focus.field_id, focus.caret_offset, self.tracker.text)
            self._trail = [self._anchor]
            self.counters["shown"] += 1
            if self._key_time is not None:
                self.latencies_ms.append((self._clock() - self._key_time) * 1000.0)
                log.debug("ghost shown %.1f ms after the key", self.latencies_ms[-1])
                self._key_time = None
            self._show(text, caret, focus.look)

    def _resync(self, focus: FocusState) -> None:
        """Lock held: take the buffer from the field, hide, and ask again
        (unless the privacy rules close the field).  The stretch the memory
        learns goes on where the field still holds what it began after."""
        self._agreed()
        self._hide()
        if self._adopt_focus(focus):
            return
        if self._learner is not None:
            self._learner.resync(focus.text_before_caret or "", self.tracker.text)
        self.tracker.replace(focus.text_before_caret or "")
        self._pending = None
        if self._worker is not None:
            self._worker.cancel()
        self._request()

    def _settle(self, accept: Callable[[FocusState], bool], unreadable: bool = True) -> Optional[FocusState]:
        """Read the focused field until ``accept`` holds, re-reading for at
        most ``SETTLE_S`` while it does not (the application has not caught
        up yet, or the field really changed); the last reading either way.
        A field without readable text is returned at once when
        ``unreadable``, else put to ``accept`` like any other."""
        deadline = self._clock() + SETTLE_S
        previous: Optional[FocusState] = None
        while True:
            state = self._read_focus()
            if state is None or (unreadable and state.text_before_caret is None) or accept(state):
                return state
            if state == previous and self._clock() >= deadline:
                return state
            if self._clock() >= deadline + SETTLE_S:  # never settles: give up
                return state
            previous = state
            time.sleep(SETTLE_POLL_S)

    def _settled_field(self, generation: int) -> tuple[FocusState, Optional[Rect]]:
        """The focused field and caret once the application has caught up
        with the buffer state ``generation`` (read once per generation:
        streamed partial results of one request reuse it)."""
        with self._lock:
            focus = self._focus
            expected = self.tracker.text
            caret_misses = dict(self._caret_misses)
            if self._caret_cache is not None and self._caret_cache[0] == generation:
                return self._caret_cache[1], self._caret_cache[2]

        def settled(s: FocusState) -> bool:
            if s.text_before_caret is None:
                # Unreadable where the last reading was readable: a browser
                # answering nothing for a moment while it handles the key, or
                # focus really left the field (then this wait is the only one).
                return s.window_id != focus.window_id
            return field_agrees(s.text_before_caret, expected) and not caret_pending(s, caret_misses)

        fresh = None
        if self._focus_info is not None:
            # Always re-read: the field may have become readable (a browser
            # exposes a page's field a moment after it took focus).
            fresh = self._settle(settled, unreadable=focus.text_before_caret is None)
            if fresh is not None:
                focus = fresh
                with self._lock:
                    if fresh.app_id and fresh.text_before_caret and field_agrees(fresh.text_before_caret, expected):
                        if len(self._caret_misses) >= MAX_CARET_APPS:
                            self._caret_misses.clear()
                        misses = self._caret_misses.get(fresh.app_id, 0)
                        self._caret_misses[fresh.app_id] = 0 if fresh.caret is not None else misses + 1
                    if self.tracker.generation == generation:
                        self._adopt_focus(fresh)
        if fresh is None and focus.text_before_caret is not None:
            # Text handed over at the last focus change (e.g. by an input
            # method) is not what the field holds now: only a fresh reading
            # can contradict the buffer.
            focus = dataclasses.replace(focus, text_before_caret=None)
        if self._caret_locator is None:
            caret = focus.caret
        else:
            try:
                caret = self._caret_locator.caret_rect(focus)
            except Exception as e:
                log.warning("caret query failed: %s", describe_exception(e))
                caret = focus.caret
        with self._lock:
            self._caret_cache = (generation, focus, caret)
        return focus, caret

    def _advance_anchor(self, inserted: str) -> None:
        """Lock held: characters typed through (or accepted) move the anchor."""
        assert self._anchor is not None
        self._anchor = self._anchor.advanced(inserted, self.tracker.text)
        self._trail = (self._trail + [self._anchor])[-32:]

    def _trail_holds(self, trail: list[FieldAnchor]) -> bool:
        """Whether the focused field, read once now, is in the state of the
        visible ghost or of one the ghost went through since it was shown
        (the application has not caught up yet with characters typed
        through it, which reach it before anything we inject).  One quick
        reading: this runs on the key suppressor's thread, which must not
        wait long.  True when the focused object has no readable text (it cannot
        contradict; a browser briefly reports its document focused while the
        accept key is grabbed), False for a password field.  Where another
        object is focused, it looks once more (``_read_focus_twice``: a
        browser's document, focused for a few milliseconds while the key is
        grabbed)."""
        state = self._read_focus_twice(trail[-1].field) if trail else self._read_focus()
        if state is not None and state.is_password:
            return False
        if state is None or state.text_before_caret is None:
            return True
        return any(a.holds(state.field_id, state.caret_offset, state.text_before_caret) for a in trail)

    def on_field_event(self) -> None:
        """Accessibility says focus moved, or the focused field's caret or
        text changed (possibly without a key: a browser tab, a dialog, paste
        by mouse, autocorrect).  Follows focus changes and hides a suggestion
        whose field state no longer holds, resyncing the buffer from the
        field.  Runs on a watcher thread, never on the event listener's."""
        if self._focus_info is None:
            return
        with self._lock:
            generation = self.tracker.generation
            anchor = self._anchor if self._ghost else None
        if anchor is None:
            state = self._read_focus()
        else:
            state = self._settle(lambda s: anchor.holds(s.field_id, s.caret_offset, s.text_before_caret))
        if state is None or (state.text_before_caret is None and not state.is_password):
            # Focus on something without text (a browser's document while a
            # key grab is active, a button): nothing to compare with, and the
            # key listener sees whatever the user does next.
            return
        self.on_focus(state, only_if_changed=True)
        with self._lock:
            if (anchor is None or self._anchor is not anchor or self.tracker.generation != generation
                    or anchor.holds(state.field_id, state.caret_offset, state.text_before_caret)):
                return
            self.counters["field_changed"] += 1
            log.debug("the field changed under the suggestion: hidden")
            if state.text_before_caret is None:
                self._reset("field-changed")
            elif self._keys_late(state.text_before_caret):  # typed on: the keys are still to come
                self._hide()
                if self._behind_since is None:
                    self._behind_since = self._clock()
            else:
                self._resync(state)


def caret_pending(state: FocusState, caret_misses: dict[str, int]) -> bool:
    """Whether ``state`` is a reading taken before the application laid out
    the key it just handled: its field has text before the caret but no caret
    box yet.  Firefox answers a key's new text at once and the characters'
    boxes only after its next reflow; a ghost shown from that reading would sit
    at the pointer instead of at the caret.  ``caret_misses`` counts per
    application the settled readings without a box since its last one with a
    box: after ``CARET_MISSES`` in a row it is taken to report none (it is
    not waited for again until it reports one), so such an application costs a
    few waits, not one per suggestion.  An empty field has no character to
    measure and is never waited for."""
    return (state.caret is None and bool(state.text_before_caret)
            and caret_misses.get(state.app_id, 0) < CARET_MISSES)
