"""The IBus engine's side towards the controller: one object per process.

:class:`IBusFrontend` is what the shared :class:`~daemon.controller.Controller`
talks to: its :class:`~daemon.controller.UiSink` (show / hide / status).
Everything it shows goes to the focused engine object
(:class:`daemon.frontends.ibus.engine.Engine`, one per input context) only.
Accepting needs nothing of it: the engine that has an accept key asks the
controller what it inserts and commits that itself.

Threads: results arrive on the worker thread through the sink.  The
frontend's own lock guards only which engine is focused, and is never held
while calling the controller (which may call back into the sink).
"""

from __future__ import annotations

import itertools
import threading
from typing import Optional, Protocol

from daemon.controller import Controller, Drawn
from daemon.controller.ports import Rect
from daemon.frontends.ibus import wire
from daemon.frontends.ibus.caret_reading import CaretReading


class EngineOutput(Protocol):
    """The signals of one engine object (sent by the D-Bus layer)."""

    def commit_text(self, text: str) -> None: ...

    def update_preedit(self, text: str, attrs: list[wire.Attribute], cursor: int, visible: bool) -> None: ...

    def update_auxiliary(self, text: str, visible: bool) -> None: ...

    def register_properties(self, props: list[wire.Property]) -> None: ...

    def update_property(self, prop: wire.Property) -> None: ...

    def require_surrounding_text(self) -> None: ...


class FieldEngine(Protocol):
    """What the frontend needs of an engine object (``engine.Engine``)."""

    output: EngineOutput
    carets: CaretReading

    def display(self, text: str, drawn: Optional[Drawn] = None) -> None: ...

    def focus_out(self) -> None: ...

    def publish_properties(self, update: bool) -> None: ...

    def app_changed(self) -> None: ...

    def set_cursor_location(self, x: int, y: int, w: int, h: int) -> None: ...


class IBusFrontend:
    """The controller's sink; see the module docstring.

    Construct, build the :class:`Controller` with this object as its sink,
    then :meth:`attach`.
    """

    def __init__(self, prediction_hint: bool = False) -> None:
        self._lock = threading.Lock()
        self._focused: Optional[FieldEngine] = None
        self._engines: list[FieldEngine] = []
        self._status: tuple[str, str] = ("loading", "")
        self._field_ids = itertools.count(1)
        self.controller: Optional[Controller] = None
        self.prediction_hint = prediction_hint
        #: whether a panel (GNOME Shell, ibus-ui-gtk3) draws the popup; None
        #: until the D-Bus layer knows (then a panel is assumed)
        self.panel: Optional[bool] = None
        self.shell = None  #: a ShellGhost once the session bus is reached (shell_ghost)
        #: an A11yCaret once the accessibility bus is reached (a11y_caret): the caret of a field that reports none
        self.a11y_caret = None
        #: what "Off in <application>" and "Settings..." do (``daemon.frontends.ibus.menu``)
        self.actions = None

    def attach(self, controller: Controller) -> None:
        self.controller = controller

    def add_engine(self, engine: FieldEngine) -> None:
        with self._lock:
            self._engines.append(engine)

    def drop_engine(self, engine: FieldEngine) -> None:
        with self._lock:
            if engine in self._engines:
                self._engines.remove(engine)
        engine.focus_out()

    def next_field_id(self) -> int:
        return next(self._field_ids)

    @property
    def focused(self) -> Optional[FieldEngine]:
        with self._lock:
            return self._focused

    def set_focused(self, engine: Optional[FieldEngine]) -> Optional[FieldEngine]:
        with self._lock:
            previous, self._focused = self._focused, engine
            return previous

    def unfocus(self, engine: FieldEngine) -> bool:
        with self._lock:
            if self._focused is engine:
                self._focused = None
                return True
            return False

    @property
    def status(self) -> tuple[str, str]:
        return self._status

    # -- UiSink (any thread; the controller may hold its lock) ------------------------

    def show(self, text: str, caret: Optional[Rect], look: object = None, drawn: Optional[Drawn] = None) -> None:
        engine = self.focused
        if engine is not None:
            engine.display(text, drawn)

    def hide(self) -> None:
        engine = self.focused
        if engine is not None:
            engine.display("")

    def set_status(self, state: str, message: str) -> None:
        self._status = (state, message)
        with self._lock:
            engines = list(self._engines)
        for engine in engines:
            engine.publish_properties(update=True)
