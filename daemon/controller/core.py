"""The daemon's brain, free of GUI and OS specifics.

Keystrokes come in (:meth:`Controller.on_key`), the :class:`InputTracker`
follows the text before the caret, the :class:`~daemon.worker.SuggestionWorker`
is asked for a completion, and results that still fit the text are shown
through a :class:`UiSink`.  While ghost text is visible the
:class:`~daemon.frontends.base.KeySuppressor` is armed, so the accept keys are
swallowed and reported to :meth:`Controller.on_suppressed_key`; at any other
time they reach the application untouched.

Rules worth knowing:

* **Consistency.**  A result is for the buffer as it was when the request was
  made.  It is shown only if it is for the newest request and the buffer has
  since only grown by characters the suggestion itself predicted (typing
  through it); then the part not yet typed is shown.
* **Typing through.**  A typed character equal to the next ghost character
  advances the ghost text at once, with no model call.
* **Our own keys.**  Text we inject comes back through the keyboard listener
  (:class:`~daemon.capture.tracker.InjectionEcho` drops it), and a swallowed
  accept key may be seen by the listener too (:class:`SwallowLedger` pairs
  each swallowed press with at most one listener event).
* **The field is the truth.**  Where accessibility exposes the focused field's
  text, a suggestion is shown only once the field's text before the caret
  agrees with the key buffer (re-read for a bounded time while the
  application catches up with the key); when it still disagrees (select-all
  and BackSpace, paste, undo, autocorrect) the buffer is reset from the
  field.  A shown suggestion is tied to a :class:`~daemon.controller.anchor.FieldAnchor`
  (field, caret offset, text before it): accessibility events that break it
  hide the suggestion, and an accept key inserts only while it holds (a Tab
  is typed instead).  Where text follows the caret on its line nothing is
  suggested (the ghost text would cover it).
* **Privacy.**  Disabled, paused, a denylisted application or a password field
  (or an unidentifiable field with ``unknown_fields = "skip"``): the buffer is
  cleared, nothing is captured and nothing is suggested.  Nothing here logs
  text, only lengths.

Threads: ``on_key`` runs on the keyboard listener thread, ``on_result`` and
``on_backend_status`` on the worker thread, ``on_suppressed_key`` on the
suppressor's thread, ``set_enabled`` / ``set_paused`` on the Qt thread and
``apply_config`` / ``on_config_error`` on the config watcher's thread and
``on_field_event`` on the accessibility event pump's thread.  One
re-entrant lock guards all state; the sink, the suppressor and the worker are
called with it held (they must only queue work, never block or call back), while
the focus query, the caret query and text injection (which may take tens of
milliseconds) run without it and their outcome is re-validated afterwards.
The suppressor's thread reads the field once, never waits for it to settle:
other threads may be waiting for that thread to arm or disarm.
"""

from __future__ import annotations

import collections
import dataclasses
import logging
import re
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional, Protocol

from daemon.capture.events import KeyEvent, Kind
from daemon.capture.keyboard import KeySpecError, normalize_key_spec
from daemon.capture.tracker import RESET_KINDS, InjectionEcho, InputTracker, Snapshot
from daemon.config import Config
from daemon.cpc.suggestion import Suggestion
from daemon.controller.anchor import FieldAnchor, field_agrees
from daemon.logsetup import STATUS_LOGGER
from daemon.frontends.base import CaretLocator, FieldLook, FocusInfo, FocusState, KeySuppressor, Rect, TextInjector
from daemon.worker import describe_exception

log = logging.getLogger(__name__)
STATUS_LOG = logging.getLogger(STATUS_LOGGER)

Clock = Callable[[], float]

#: Keys after which the focused widget may be a different one (re-query focus).
_FOCUS_KINDS = frozenset({Kind.FOCUS_CHANGED, Kind.CARET_MOVED, Kind.SHORTCUT, Kind.TAB, Kind.ENTER})
_TEXT_KINDS = frozenset({Kind.CHAR, Kind.BACKSPACE, Kind.ENTER, Kind.TAB})
_WORD = re.compile(r"\s*(?:\w+|[^\w\s]+)")

#: How long a reading of the focused field may be repeated while the
#: application catches up with a key (its accessibility tree lags its input),
#: and the pause between readings.
SETTLE_S = 0.25
SETTLE_POLL_S = 0.01
#: Pixels a single-line field must have right of the caret for ghost text
#: (it is elided to fit inside the field; less than this shows nothing, and
#: then Tab is not swallowed either).
MIN_GHOST_ROOM_PX = 24


class UiSink(Protocol):
    """Where the controller sends what the user should see.  Implementations
    must be callable from any thread and must not block (the Qt one posts to
    a mailbox)."""

    def show(self, text: str, caret: Optional[Rect], look: Optional[FieldLook] = None) -> None:
        """Show ``text`` as ghost text at ``caret`` (None: position unknown),
        in the field's font and inside its box when ``look`` says so."""

    def hide(self) -> None: ...

    def set_status(self, state: str, message: str) -> None:
        """``loading`` | ``ready`` | ``disabled`` | ``paused`` | ``error``."""


class WorkerLike(Protocol):
    """What the controller needs of :class:`~daemon.worker.SuggestionWorker`."""

    def submit(self, request_id: int, text: str, params: object) -> None: ...

    def prefill(self, text: str, params: object) -> None: ...

    def cancel(self) -> None: ...

    def set_debounce(self, debounce_ms: float) -> None: ...


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


class SwallowLedger:
    """Pairs key presses the suppressor swallowed with the listener's view of
    the same press, so each physical press is handled exactly once.

    Used only with suppressors whose swallowed keys also reach the listener
    (``KeySuppressor.listener_sees_swallowed``): on X11 the listener records
    a grabbed key in either order relative to the suppressor's report; on
    macOS it reports it first.  Unpaired reports expire after ``ttl_s``.
    With ``pairs=False`` (the listener never sees a swallowed key) it pairs
    nothing: every key the listener reports is a real one.
    """

    def __init__(self, clock: Clock, ttl_s: float = 1.0, pairs: bool = True) -> None:
        self._clock = clock
        self._ttl = ttl_s
        self._pairs = pairs
        self._reported: dict[str, collections.deque[float]] = collections.defaultdict(collections.deque)
        self._seen: dict[str, int] = collections.defaultdict(int)

    def reported(self, spec: str) -> None:
        """The suppressor swallowed a press of ``spec``."""
        if not self._pairs:
            return
        if self._seen[spec] > 0:
            self._seen[spec] -= 1
        else:
            self._reported[spec].append(self._clock() + self._ttl)

    def listener_saw(self, spec: str, armed_for: frozenset[str]) -> bool:
        """The listener saw ``spec``; True when that press was (or is being)
        swallowed and the event must be ignored."""
        if not self._pairs:
            return False
        q = self._reported.get(spec)
        now = self._clock()
        while q and q[0] < now:
            q.popleft()
        if q:
            q.popleft()
            return True
        if spec in armed_for:
            self._seen[spec] += 1
            return True
        return False

    def clear(self) -> None:
        self._reported.clear()
        self._seen.clear()


@dataclass(frozen=True)
class ControllerState:
    """A copy of the controller's state, for tests and diagnostics."""

    ghost: str
    buffer_chars: int
    armed: bool
    enabled: bool
    paused: bool
    blocked: str  #: why capture is off in this field ("" = it is on)
    status: tuple[str, str]


class Controller:
    """See the module docstring.  Construct, then :meth:`attach_worker`."""

    def __init__(
        self,
        config: Config,
        sink: UiSink,
        *,
        worker: Optional[WorkerLike] = None,
        injector: Optional[TextInjector] = None,
        suppressor: Optional[KeySuppressor] = None,
        focus: Optional[FocusInfo] = None,
        caret: Optional[CaretLocator] = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self._lock = threading.RLock()
        self._config = config
        self._params = config.beam_params()
        self._sink = sink
        self._worker = worker
        self._injector = injector
        self._suppressor = suppressor
        self._focus_info = focus
        self._caret_locator = caret
        self._clock = clock
        self.tracker = InputTracker(config.buffer_chars)
        self._echo = InjectionEcho(clock)
        #: pairs only where the listener reports what the suppressor swallowed (X11, macOS)
        self._ledger = SwallowLedger(clock, pairs=bool(getattr(suppressor, "listener_sees_swallowed", True)))
        self._enabled = config.enabled
        self._paused = False
        self._blocked = ""
        self._focus = FocusState()
        self._request_id = 0
        self._pending: Optional[tuple[int, Snapshot]] = None  #: newest request and the buffer it saw
        self._pending_done = False  #: its final result has arrived
        self._ghost = ""
        self._armed = False
        self._backend: tuple[str, str] = ("ready", "") if worker is not None else ("loading", "")
        self._config_error = ""
        self._status: Optional[tuple[str, str]] = None
        #: (generation, focus, caret) of the settled reading for a buffer state
        self._caret_cache: Optional[tuple[int, FocusState, Optional[Rect]]] = None
        self._anchor: Optional[FieldAnchor] = None  #: the field state the visible ghost continues
        #: the anchors since the ghost was shown, oldest first: the application
        #: may not have caught up yet with characters typed through it
        self._trail: list[FieldAnchor] = []
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
            if getattr(worker, "load_error", None):
                self._backend = ("error", str(worker.load_error))  # type: ignore[attr-defined]
            else:
                self._backend = ("ready", "") if getattr(worker, "ready", True) else ("loading", "")
            self._publish_status()

    def start(self) -> None:
        """Publish the initial status and look at the focused widget."""
        with self._lock:
            self._publish_status()
        self.on_focus()

    def close(self) -> None:
        """Hide, stop swallowing keys and forget the buffer."""
        with self._lock:
            self._reset("close")
            self._disarm()

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
                buffer_chars=len(self.tracker),
                armed=self._armed,
                enabled=self._enabled,
                paused=self._paused,
                blocked=self._blocked,
                status=self._status or ("", ""),
            )

    def _active(self) -> bool:
        return self._enabled and not self._paused and not self._blocked and self._backend[0] == "ready"

    # ------------------------------------------------------------------ keyboard thread

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
                self._set_ghost(rest)
                return (self.tracker.generation, rest)
            self._hide()
            if self._pending is None or self._pending_done:
                self._request()
            # else: the request still running will adapt its final result
            return None
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

    # ------------------------------------------------------------------ suppressor thread

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
            if self._ghost and self._active():
                piece = self._ghost if spec == cfg.accept_key else next_word(self._ghost)
                self.counters["accepted" if spec == cfg.accept_key else "accepted_word"] += 1
            elif spec == "tab":
                # Swallowed, but nothing is visible any more (a fast double
                # Tab): the user meant a real Tab, so type one.
                piece = "\t"
                self.counters["tab_passed_on"] += 1
            else:
                return False
            log.debug("accepting %d characters", len(piece))
            if getattr(self._injector, "echoes", True):  # the IBus engine's commits never come back as keys
                self._echo.expect(piece)
            if self._enabled and not self._paused and not self._blocked:
                self.tracker.accept(piece)
            rest = self._ghost[len(piece):] if self._ghost.startswith(piece) else ""
            if self._anchor is not None:
                self._advance_anchor(piece)
            if rest:
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

    # ------------------------------------------------------------------ worker thread

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
            self._set_ghost(rest)
            generation = self.tracker.generation
        self._present(generation, rest)

    def on_backend_status(self, state: str, message: str = "") -> None:
        """The worker reports ``loading`` / ``ready`` / ``error``."""
        with self._lock:
            self._backend = (state, message)
            if state != "ready":
                self._reset("backend-" + state)
            self._publish_status()

    # ------------------------------------------------------------------ focus

    def on_focus(self, state: Optional[FocusState] = None, only_if_changed: bool = False) -> None:
        """The focused widget may have changed: query it (unless ``state`` is
        given, e.g. by a platform focus watcher) and apply the privacy rules."""
        with self._lock:
            generation = self.tracker.generation
            previous = self._focus
        if state is None:
            if self._focus_info is None:
                return
            try:
                state = self._focus_info.current()
            except Exception as e:
                log.warning("focus query failed: %s", describe_exception(e))
                state = FocusState()
        with self._lock:
            if (only_if_changed and state.window_id == previous.window_id
                    and state.field_id == previous.field_id and state.is_password == previous.is_password):
                self._focus = state
                return
            self._focus = state
            if self._update_block():
                return
            if state.text_before_caret is not None and self.tracker.generation == generation:
                self._hide()
                self.tracker.replace(state.text_before_caret)
                self._pending = None
                if self._worker is not None and self._active() and self.tracker.text.strip():
                    self._worker.prefill(self.tracker.text, self._params)
            elif state.window_id != previous.window_id and self.tracker.generation == generation:
                self._reset("focus")

    def _update_block(self) -> bool:
        """Apply the privacy rules to the focused widget (lock held); True
        when capture is off there."""
        blocked = self._block_reason(self._focus)
        if blocked != self._blocked:
            log.info("capture %s in this window%s", "off" if blocked else "on", f" ({blocked})" if blocked else "")
        self._blocked = blocked
        if blocked:
            self._reset("blocked")
        return bool(blocked)

    def _block_reason(self, state: FocusState) -> str:
        if self._config.is_denied(state.app_id):
            return "denylisted application"
        if state.is_password:
            return "password field"
        if state.is_password is None and self._config.unknown_fields == "skip":
            return "unidentified field"
        return ""

    # ------------------------------------------------------------------ tray / config

    def set_enabled(self, enabled: bool) -> None:
        with self._lock:
            self._enabled = bool(enabled)
            if not self._enabled:
                self._reset("disabled")
            self._publish_status()

    def set_paused(self, paused: bool) -> None:
        with self._lock:
            self._set_paused_locked(bool(paused))

    def toggle_pause(self) -> None:
        with self._lock:
            self._set_paused_locked(not self._paused)

    def _set_paused_locked(self, paused: bool) -> None:
        self._paused = paused
        if paused:
            self._reset("paused")
        self._publish_status()

    def apply_config(self, config: Config) -> None:
        """A new valid configuration (from the watcher).  ``enabled`` follows
        the file when the file's value changed; the tray may override it."""
        with self._lock:
            old = self._config
            self._config = config
            self._params = config.beam_params()
            self._config_error = ""
            if config.buffer_chars != old.buffer_chars:
                kept = self.tracker.text
                self.tracker = InputTracker(config.buffer_chars)
                self.tracker.replace(kept)
                self._pending = None
            if config.enabled != old.enabled:
                self._enabled = config.enabled
                if not self._enabled:
                    self._reset("disabled")
            if self._worker is not None and config.debounce_ms != old.debounce_ms:
                self._worker.set_debounce(config.debounce_ms)
            if self._armed and (config.accept_key, config.accept_word_key) != (old.accept_key, old.accept_word_key):
                self._disarm()  # re-arm with the new keys at the next show
                self._hide()
            self._update_block()  # the denylist or unknown_fields may have changed
            self._publish_status()

    def on_config_error(self, message: str) -> None:
        """The config file became invalid; the previous config stays in force."""
        with self._lock:
            self._config_error = message
            self._publish_status()

    # ------------------------------------------------------------------ internals (lock held)

    def _request(self) -> None:
        if self._worker is None or not self._active():
            return
        text = self.tracker.text
        if not text.strip() or self._focus.at_line_end is False:
            self._pending = None
            self._worker.cancel()
            return
        self._request_id += 1
        self._request_field = (self._focus.window_id, self._focus.field_id)
        self._pending = (self._request_id, self.tracker.snapshot())
        self._pending_done = False
        self.counters["requests"] += 1
        self._worker.submit(self._request_id, text, self._params)

    def _set_ghost(self, text: str) -> None:
        self._ghost = text
        if text and not self._armed and self._suppressor is not None:
            try:
                self._suppressor.arm(self.on_suppressed_key)
                self._armed = True
            except Exception as e:
                log.error("cannot grab the accept keys: %s", describe_exception(e))

    def _hide(self) -> None:
        if self._ghost:
            self._ghost = ""
            self._sink.hide()
        self._anchor = None
        self._trail = []
        self._disarm()

    def _disarm(self) -> None:
        if self._armed and self._suppressor is not None:
            try:
                self._suppressor.disarm()
            except Exception as e:
                log.error("cannot release the accept keys: %s", describe_exception(e))
        self._armed = False

    def _reset(self, why: str) -> None:
        """Hide, forget the text, drop pending work (privacy and consistency)."""
        self._hide()
        self.tracker.clear()
        self._echo.clear()
        self._ledger.clear()
        self._pending = None
        if self._worker is not None:
            self._worker.cancel()
        log.debug("buffer cleared (%s)", why)

    def _publish_status(self) -> None:
        if not self._enabled:
            status = ("disabled", "")
        elif self._paused:
            status = ("paused", "")
        elif self._backend[0] != "ready":
            status = self._backend
        elif self._config_error:
            status = ("error", self._config_error)
        else:
            status = ("ready", "")
        if status != self._status:
            self._status = status
            STATUS_LOG.info("status: %s%s", status[0], f" ({status[1]})" if status[1] else "")
            self._sink.set_status(*status)

    # ------------------------------------------------------------------ presenting

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
                    self._focus = focus
                    self._reset("field-moved")
                else:
                    self._resync(focus)
                return
            if field_text is not None and not field_agrees(field_text, self.tracker.text):
                self.counters["field_corrections"] += 1
                log.debug("the field's text disagrees with the key buffer: using the field's")
                self._resync(focus)
                return
            if focus.at_line_end is False:
                self.counters["mid_line"] += 1
                self._hide()
                return
            clip = focus.look.clip if focus.look is not None else None
            if clip is not None and caret is not None and clip.x + clip.width - caret.x < MIN_GHOST_ROOM_PX:
                self.counters["no_room"] += 1
                self._hide()
                return
            self._anchor = FieldAnchor.of(focus.field_id, focus.caret_offset, self.tracker.text)
            self._trail = [self._anchor]
            self.counters["shown"] += 1
            if self._key_time is not None:
                self.latencies_ms.append((self._clock() - self._key_time) * 1000.0)
                log.debug("ghost shown %.1f ms after the key", self.latencies_ms[-1])
                self._key_time = None
            if focus.look is not None:
                self._sink.show(text, caret, look=focus.look)
            else:
                self._sink.show(text, caret)

    def _resync(self, focus: FocusState) -> None:
        """Lock held: take the buffer from the field, hide, and ask again."""
        self._hide()
        self._focus = focus
        self.tracker.replace(focus.text_before_caret or "")
        self._echo.clear()
        self._pending = None
        if self._worker is not None:
            self._worker.cancel()
        self._request()

    # ------------------------------------------------------------------ reading the field

    def _read_focus(self) -> Optional[FocusState]:
        if self._focus_info is None:
            return None
        try:
            return self._focus_info.current()
        except Exception as e:
            log.warning("focus query failed: %s", describe_exception(e))
            return None

    def _settle(self, accept: Callable[[FocusState], bool]) -> Optional[FocusState]:
        """Read the focused field until ``accept`` holds, re-reading for at
        most ``SETTLE_S`` while it does not (the application has not caught
        up yet, or the field really changed); the last reading either way.
        A field without readable text is returned at once."""
        deadline = self._clock() + SETTLE_S
        previous: Optional[FocusState] = None
        while True:
            state = self._read_focus()
            if state is None or state.text_before_caret is None or accept(state):
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
            if self._caret_cache is not None and self._caret_cache[0] == generation:
                return self._caret_cache[1], self._caret_cache[2]
        fresh = None
        if self._focus_info is not None:
            # Always re-read: the field may have become readable (a browser
            # exposes a page's field a moment after it took focus).
            fresh = self._settle(lambda s: field_agrees(s.text_before_caret or "", expected))
            if fresh is not None:
                focus = fresh
                with self._lock:
                    if self.tracker.generation == generation:
                        self._focus = fresh
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
        wait.  True when the focused object has no readable text (it cannot
        contradict; a browser briefly reports its document focused while the
        accept key is grabbed), False for a password field."""
        state = self._read_focus()
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
            else:
                self._resync(state)
