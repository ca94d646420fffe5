"""The daemon's brain, shared by every frontend, free of GUI and OS specifics.

Keystrokes come in (:meth:`Controller.on_key`), the :class:`InputTracker`
follows the text before the caret, the :class:`~daemon.worker.SuggestionWorker`
is asked for a completion, and results that still fit the text are shown
through a :class:`~daemon.controller.ports.UiSink`.  When an accept key
comes, the frontend asks :meth:`Controller.accept` what it inserts, inserts
it and says so (:meth:`Controller.inserted`); which keys it swallows, and
when, is its own business (the IBus engine consumes the key it was asked
about; the overlay grabs the accept keys while it shows a suggestion).

**Only what is drawn.**  The sink says what it drew (``drawn``: all of the
suggestion, the part before an ellipsis, a single-line field's first line),
and the accept keys insert that part and nothing the user could not read.
A suggestion decided on but not yet drawn (the field is still being read,
the overlay has not painted) leaves Tab a Tab.

The class is assembled from one part per job:

* :mod:`~daemon.controller.keys` (``KeyHandling``): keys in, typing through,
  what an accept key inserts.
* :mod:`~daemon.controller.focus` (``FocusRules``): the focused field and the
  privacy rules.
* :mod:`~daemon.controller.field` (``FieldTruth``): which field, caret and text
  a ghost belongs to: settling, anchors, field events, presenting.
* :mod:`~daemon.controller.status` (``StatusAndSettings``): enabled, paused,
  configuration, the model's state -> one status.
* this module: all the state (declared in ``__init__``), wiring, and the
  request cycle every part uses (ask, take a result, show or hide, reset).

**Consistency.**  A result is for the buffer as it was when the request was
made.  It is shown only if it is for the newest request and the buffer has
since only grown by characters the suggestion itself predicted (typing
through it); then the part not yet typed is shown.

**Threads and the lock** (the rule every part follows; each part's module
says which threads call it).  One re-entrant lock guards all state; the sink
and the worker are called with it held (they must only queue work, never
block or call back), while the focus query and the caret query (which may
take tens of milliseconds) run without it and their outcome is re-validated
afterwards.  :meth:`Controller.on_result` runs on the
worker thread.
"""

from __future__ import annotations

import collections
import logging
import os
import threading
import time
from typing import Optional

from daemon.capture.tracker import InputTracker, Snapshot
from daemon.config import Config
from daemon.controller.anchor import FieldAnchor
from daemon.controller.field import FieldTruth
from daemon.controller.focus import PASSED_STATES, FocusRules
from daemon.controller.keys import KeyHandling
from daemon.controller.ports import (CaretLocator, Clock, ControllerState, FieldLook, FocusInfo, FocusState, Rect,
                                     UiSink, WorkerLike)
from daemon.controller.status import StatusAndSettings
from daemon.cpc.suggestion import Suggestion
from daemon.memory.learner import Learner
from daemon.memory.store import Memory

log = logging.getLogger(__name__)


class Controller(KeyHandling, FocusRules, FieldTruth, StatusAndSettings):
    """See the module docstring.  Construct, then :meth:`attach_worker`."""

    def __init__(
        self,
        config: Config,
        sink: UiSink,
        *,
        worker: Optional[WorkerLike] = None,
        focus: Optional[FocusInfo] = None,
        caret: Optional[CaretLocator] = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self._lock = threading.RLock()
        self._config = config
        self._params = config.beam_params()
        self._sink = sink
        self._worker = worker
        self._focus_info = focus
        self._caret_locator = caret
        self._clock = clock
        self.tracker = InputTracker(config.buffer_chars)
        #: what the memory learns of the text, when ``learn`` is on (:meth:`set_memory`; see
        #: :mod:`daemon.memory.learner`)
        self._learner: Optional[Learner] = None
        self._enabled = config.enabled
        self._paused = False
        self._blocked = ""
        self._focus = FocusState()
        self._request_id = 0
        self._pending: Optional[tuple[int, Snapshot]] = None  #: newest request and the buffer it saw
        self._pending_done = False  #: its final result has arrived
        self._ghost = ""
        #: the part of ``_ghost`` the sink has drawn and the user can read:
        #: what the accept keys insert (see "Only what is drawn")
        self._drawn = ""
        self._show_seq = 0  #: numbers each show, so a late ``drawn`` for an older one is ignored
        #: (generation, rest of the suggestion) of the last accept, until the frontend says it inserted it
        self._accepted: Optional[tuple[int, str]] = None
        self._backend: tuple[str, str] = ("ready", "") if worker is not None else ("loading", "")
        self._config_error = ""
        self._status: Optional[tuple[str, str]] = None
        #: (generation, focus, caret) of the settled reading for a buffer state
        self._caret_cache: Optional[tuple[int, FocusState, Optional[Rect]]] = None
        #: Per application, its settled readings without a caret box since its
        #: last one with a box (see ``field.caret_pending``).
        self._caret_misses: dict[str, int] = {}
        self._anchor: Optional[FieldAnchor] = None  #: the field state the visible ghost continues
        #: the anchors since the ghost was shown, oldest first: the application
        #: may not have caught up yet with characters typed through it
        self._trail: list[FieldAnchor] = []
        #: the buffer's texts before each key and accept since the field last agreed with it (newest last):
        #: a reading that agrees with one of them is the application not caught up yet (see field.py)
        self._passed: collections.deque[str] = collections.deque(maxlen=PASSED_STATES)
        #: since when a suggestion is held back from a field behind the keys (None: none is): the next
        #: reading of it looks again
        self._behind_since: Optional[float] = None
        #: (window, field) the newest request's buffer belongs to
        self._request_field: tuple[int, str] = (0, "")
        self._key_time: Optional[float] = None  #: when the key behind the current buffer arrived
        #: milliseconds from a key to its ghost text (most recent first out)
        self.latencies_ms: collections.deque[float] = collections.deque(maxlen=2000)
        self.counters: collections.Counter[str] = collections.Counter()

    # ------------------------------------------------------------------ wiring

    def attach_worker(self, worker: WorkerLike) -> None:
        with self._lock:
            self._worker = worker
            worker.set_debounce(self._config.debounce_ms)
            # A worker built around a ready decoder never reports a status.
            if worker.load_error:
                self._backend = ("error", worker.load_error)
            else:
                self._backend = ("ready", "") if worker.ready else ("loading", "")
            self._publish_status()

    def start(self) -> None:
        """Publish the initial status and look at the focused widget."""
        with self._lock:
            self._publish_status()
        self.on_focus()

    def close(self) -> None:
        """Hide and forget the buffer."""
        with self._lock:
            self._reset("close")

    def set_memory(self, memory: Optional[Memory]) -> None:
        """Learn into ``memory`` from now on (None: learn nothing; the
        stretch typed so far is dropped, not learned)."""
        with self._lock:
            self._learner = Learner(memory, self._config.buffer_chars) if memory is not None else None

    # ------------------------------------------------------------------ introspection

    @property
    def config(self) -> Config:
        return self._config

    @property
    def visible(self) -> str:
        with self._lock:
            return self._ghost

    @property
    def buffer_text(self) -> str:
        """The tracked text (in memory only; for tests and invariants)."""
        with self._lock:
            return self.tracker.text

    def state(self) -> ControllerState:
        with self._lock:
            return ControllerState(
                ghost=self._ghost,
                drawn=self._drawn,
                buffer_chars=len(self.tracker),
                enabled=self._enabled,
                paused=self._paused,
                blocked=self._blocked,
                status=self._status or ("", ""),
            )

    # ------------------------------------------------------------------ the request cycle (lock held unless said)

    def on_result(self, request_id: int, suggestion: Suggestion, final: bool) -> None:
        """A (partial or final) result from the worker."""
        with self._lock:
            if not self._active() or self._pending is None or self._pending[0] != request_id:
                self.counters["stale_results"] += 1
                return
            typed = self.tracker.typed_since(self._pending[1])
            if typed is None:
                self.counters["stale_results"] += 1
                return
            if final:
                self._pending_done = True
            text = suggestion.visible
            if not text.startswith(typed) or len(text) == len(typed):
                if final:
                    self._hide()
                    if typed:  # typed past what this request could know: ask again
                        self._request()
                return
            rest = text[len(typed):]
            if rest == self._ghost:
                return
            if not self._ghost:
                self.counters["new_suggestions"] += 1  # not one growing or typed through
            self._set_ghost(rest)
            generation = self.tracker.generation
        self._present(generation, rest)

    def _request(self) -> None:
        if self._worker is None or not self._active():
            return
        text = self.tracker.text
        if self._off_line_end() or not text.strip() or self._waits_for_echo(text):
            self._pending = None
            self._worker.cancel()
            return
        self._request_id += 1
        self._request_field = (self._focus.window_id, self._focus.field_id)
        self._pending = (self._request_id, self.tracker.snapshot())
        self._pending_done = False
        self.counters["requests"] += 1
        if self._learner is not None:
            self._learner.asked(text)
        self._worker.submit(self._request_id, text, self._params)

    def _set_ghost(self, text: str) -> None:
        """The suggestion is now ``text``.  What stays readable on the screen
        until the sink draws it is the part of the drawn text it shares."""
        self._ghost = text
        self._drawn = os.path.commonprefix([self._drawn, text])

    def _show(self, text: str, caret: Optional[Rect], look: Optional[FieldLook]) -> None:
        """Lock held: hand ``text`` to the sink; accepting waits for its ``drawn``."""
        self._show_seq += 1
        seq = self._show_seq
        self._sink.show(text, caret, look=look, drawn=lambda shown: self._on_drawn(seq, shown))

    def _on_drawn(self, seq: int, shown: str) -> None:
        """The sink drew ``shown`` for show number ``seq`` (any thread)."""
        with self._lock:
            if seq != self._show_seq or not self._ghost or not self._ghost.startswith(shown):
                return  # a newer show or a hide came after it, or typing went past it
            self._drawn = shown
            log.debug("drawn: %d of %d characters", len(shown), len(self._ghost))
            if not shown:
                self.counters["not_drawn"] += 1

    def _hide(self) -> None:
        if self._ghost:
            self._ghost = ""
            self._sink.hide()
        self._drawn = ""
        self._show_seq += 1
        self._anchor = None
        self._trail = []

    def _end_stretch(self) -> None:
        """Lock held: the tracked text is about to be forgotten or replaced by
        the field's; what the user typed since the last time goes into the
        memory, where ``learn`` is on."""
        if self._learner is not None:
            self._learner.flush()

    def _reset(self, why: str) -> None:
        """Hide, forget the text, drop pending work (privacy and consistency).
        The stretch typed so far ends: the memory learns it (see
        :mod:`daemon.memory.learner` for why that is never private text)."""
        self._hide()
        self._end_stretch()
        self.tracker.clear()
        self._agreed()
        self._pending = None
        if self._worker is not None:
            self._worker.cancel()
        log.debug("buffer cleared (%s)", why)
