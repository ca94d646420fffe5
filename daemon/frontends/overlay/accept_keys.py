"""The accept keys where the overlay draws the suggestion: the grab, the
question to the controller, the typing, and our own keys coming back.

:class:`AcceptKeys` stands between the controller and the overlay's sink.
Once the sink has drawn a suggestion (its ``drawn`` says what), the
platform's :class:`~daemon.frontends.overlay.platform.ports.KeySuppressor`
swallows the accept keys (X11: a passive grab; Windows and macOS: a filter
in the keyboard hook), until the suggestion is hidden or the sink draws
nothing of the one that replaced it; then they reach the application
untouched again.  (While the overlay repaints a suggestion typed through,
what it still shows stays acceptable: the controller knows which part.)  A swallowed key is a question:
:meth:`~daemon.controller.Controller.accept` says what it inserts, the
platform's :class:`~daemon.frontends.overlay.platform.ports.TextInjector`
types that, and :meth:`~daemon.controller.Controller.inserted` says it was
typed.  A Tab with nothing left to accept is typed as a plain Tab; another
accept key is handed back to the suppressor, which replays it where it can.
Each hop calls down: the suppressor calls this object, this object the
controller and then the injector.

What the keyboard listener reports passes through :meth:`on_key` on its way
to the controller: the text we typed comes back as key events
(:class:`~daemon.capture.tracker.InjectionEcho` drops them), and a swallowed
key may be reported by the listener too
(:class:`~daemon.frontends.overlay.ledger.SwallowLedger` pairs each
swallowed press with at most one listener event).

Threads: :meth:`show`, :meth:`hide` and the sink's ``drawn`` come from any
thread (the controller's callers, the Qt mailbox), :meth:`on_grabbed` on the
suppressor's thread, :meth:`on_key` on the listener's.  One lock guards what
is wanted, the echo and the ledger; the suppressor, the injector, the sink
and the controller are called without it (arming waits for the display
server, and the controller may be waiting for a thread that waits for us).
Two threads may arm and disarm at once, so whoever calls the suppressor
checks its state afterwards against what is wanted by then.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import Callable, Optional

from daemon.capture.events import KeyEvent
from daemon.capture.keymap import KeySpecError, normalize_key_spec
from daemon.capture.tracker import InjectionEcho
from daemon.controller import Controller, Drawn, UiSink, event_spec
from daemon.controller.ports import FieldLook, Rect
from daemon.frontends.overlay.ledger import SwallowLedger
from daemon.frontends.overlay.platform.ports import KeySuppressor, TextInjector
from daemon.worker import describe_exception

log = logging.getLogger(__name__)


def key_spec(name: str) -> str:
    """A suppressor's key name as the config spells accept keys."""
    try:
        return normalize_key_spec(name)
    except KeySpecError:
        return name


class AcceptKeys:
    """The overlay's accept keys; see the module docstring.  Build it on the
    sink the controller would have had, give the controller this object as
    its sink, :meth:`attach` the controller, and feed the keyboard listener's
    events to :meth:`on_key`."""

    def __init__(self, sink: UiSink, suppressor: KeySuppressor, injector: TextInjector,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._sink = sink
        self._suppressor = suppressor
        self._injector = injector
        self._controller: Optional[Controller] = None
        self._lock = threading.Lock()
        self._echo = InjectionEcho(clock)
        self._ledger = SwallowLedger(clock, pairs=suppressor.listener_sees_swallowed)
        self._show_seq = 0  #: numbers each show; a late ``drawn`` of an older one arms nothing
        self._want = False  #: the sink shows a drawn suggestion: the keys should be swallowed
        #: what happened to the keys here: ``echo``, ``swallowed``, ``tab_passed_on``
        self.counters: collections.Counter[str] = collections.Counter()

    def attach(self, controller: Controller) -> None:
        self._controller = controller

    @property
    def armed(self) -> bool:
        """Whether the accept keys are swallowed now."""
        return self._suppressor.armed

    # -- UiSink (any thread) --------------------------------------------------------

    def show(self, text: str, caret: Optional[Rect], look: Optional[FieldLook] = None,
             drawn: Optional[Drawn] = None) -> None:
        with self._lock:  # the keys stay as they are until the sink says what it drew: a suggestion
            self._show_seq += 1  # typed through stays acceptable while the overlay repaints
            seq = self._show_seq

        def on_drawn(shown: str) -> None:
            if drawn is not None:  # the controller first: a key grabbed next finds what it inserts
                drawn(shown)
            with self._lock:
                if seq == self._show_seq:
                    self._want = bool(shown)
            self._sync()

        self._sink.show(text, caret, look=look, drawn=on_drawn)

    def hide(self) -> None:
        with self._lock:
            self._show_seq += 1
            self._want = False
        self._sync()
        self._sink.hide()

    def set_status(self, state: str, message: str) -> None:
        self._sink.set_status(state, message)

    def _sync(self) -> None:
        """Arm or disarm the suppressor to match what the sink shows (a few
        tries: another thread may change what is wanted meanwhile)."""
        for _ in range(3):
            with self._lock:
                want = self._want
            if self._suppressor.armed == want:
                return
            try:
                if want:
                    self._suppressor.arm(self.on_grabbed)
                else:
                    self._suppressor.disarm()
            except Exception as e:
                log.error("cannot %s the accept keys: %s", "grab" if want else "release", describe_exception(e))
                return

    # -- the suppressor's thread ----------------------------------------------------

    def on_grabbed(self, name: str) -> Optional[bool]:
        """The suppressor swallowed a press of ``name``: False when it is the
        application's after all (not a Tab, and nothing to accept)."""
        spec = key_spec(name)
        with self._lock:
            self._ledger.reported(spec)
        controller = self._controller
        piece = controller.accept(spec) if controller is not None else None
        if piece is None:
            if spec != "tab":
                return False
            # Swallowed, but nothing is readable any more (a fast double Tab,
            # a suggestion hidden or replaced as the key came): the user meant
            # a real Tab, so type one; the listener reports it to the
            # controller as the Tab it is.
            with self._lock:
                self.counters["tab_passed_on"] += 1
                self._want = False
            self._sync()  # released first: a grab would take the Tab typed back
            self._type("\t", echo=False)
            return None
        ok = self._type(piece)
        if controller is not None:
            controller.inserted(ok)
        return None

    def _type(self, text: str, echo: bool = True) -> bool:
        """Type ``text``; its keys coming back through the listener are
        dropped (``echo``), or reach the controller as the user's."""
        if echo:
            with self._lock:
                self._echo.expect(text)
        try:
            self._injector.type_text(text)
        except Exception as e:
            log.error("inserting %d characters failed: %s", len(text), describe_exception(e))
            return False
        return True

    # -- the listener's thread -------------------------------------------------------

    def on_key(self, event: KeyEvent) -> None:
        """A key event from the keyboard listener: to the controller, unless
        it is our own typing or a press the suppressor swallowed."""
        controller = self._controller
        armed_for: frozenset[str] = frozenset()
        if controller is not None and self._suppressor.armed:
            cfg = controller.config
            armed_for = frozenset({cfg.accept_key, cfg.accept_word_key})
        with self._lock:
            if self._echo.consume(event):
                self.counters["echo"] += 1
                return
            if self._ledger.listener_saw(event_spec(event), armed_for):
                self.counters["swallowed"] += 1
                return
        if controller is not None:
            controller.on_key(event)

    def set_keys(self, keys) -> None:
        """The accept keys changed (a config reload): the suppressor swallows
        those from now on (``ValueError`` for one it cannot, keeping the old)."""
        self._suppressor.set_keys(keys)
