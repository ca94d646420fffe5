"""In-memory stand-ins for the controller's collaborators (no Qt, no X)."""

from __future__ import annotations

import threading
import time
from typing import Callable, Optional

from daemon.cpc.lm import Cancelled
from daemon.cpc.suggestion import BeamParams, Suggestion
from daemon.controller.ports import FocusState, Rect


class FakeDecoder:
    """A decoder whose answer is ``answer(text)``, computed in ``steps`` steps
    of ``step_s`` seconds each, checking ``cancel`` between steps like the real
    one.  ``partial=True`` streams the first half of the answer first;
    ``record=False`` keeps no history (for memory measurements)."""

    def __init__(self, answer: Callable[[str], str], steps: int = 2, step_s: float = 0.0,
                 partial: bool = False, fail: Optional[Callable[[str], bool]] = None,
                 record: bool = True) -> None:
        self.answer = answer
        self.steps = steps
        self.step_s = step_s
        self.partial = partial
        self.fail = fail
        self.lock = threading.Lock()
        self.started: list[str] = []
        self.finished: list[str] = []
        self.cancelled: list[str] = []
        self.prefilled: list[str] = []
        self.record = record

    def _note(self, history: list[str], text: str) -> None:
        if self.record:
            with self.lock:
                history.append(text)

    def complete(self, text, params, cancel=None, on_partial=None) -> Suggestion:
        self._note(self.started, text)
        if self.fail is not None and self.fail(text):
            raise RuntimeError("decoder exploded on " + text)  # message must never be logged
        out = self.answer(text)
        for i in range(self.steps):
            if cancel is not None and cancel():
                self._note(self.cancelled, text)
                raise Cancelled()
            if self.step_s:
                time.sleep(self.step_s)
            if i == 0 and self.partial and on_partial is not None and len(out) > 1:
                on_partial(Suggestion(out[: len(out) // 2], 0.5))
        self._note(self.finished, text)
        return Suggestion(out, 0.9)

    def prefill(self, text, params, cancel=None) -> None:
        self._note(self.prefilled, text)


class RecordingSink:
    """Records what the controller shows.  ``draws``: how it reports what it
    drew: the whole text at once (True), or only when the test calls
    :meth:`draw` (False), or ``cut(text)`` when given a function."""

    def __init__(self, draws: "bool | Callable[[str], str]" = True) -> None:
        self.lock = threading.Lock()
        self.events: list[tuple] = []
        self.visible = ""
        self.status: tuple[str, str] = ("", "")
        self.looks: list = []
        self.draws = draws
        self.pending: Optional[Callable[[str], None]] = None

    def show(self, text: str, caret: Optional[Rect], look=None, drawn=None) -> None:
        with self.lock:
            self.events.append(("show", text, caret))
            self.looks.append(look)
            self.visible = text
            self.pending = drawn
        if self.draws is not False:
            self.draw()

    def draw(self) -> None:
        """Report the last shown text as drawn (as the overlay does after painting)."""
        with self.lock:
            drawn, self.pending = self.pending, None
            text = self.visible
        if drawn is not None:
            drawn(self.draws(text) if callable(self.draws) else text)

    def hide(self) -> None:
        with self.lock:
            self.events.append(("hide",))
            self.visible = ""
            self.pending = None

    def set_status(self, state: str, message: str) -> None:
        with self.lock:
            self.events.append(("status", state, message))
            self.status = (state, message)


class FakeSuppressor:
    listener_sees_swallowed = True  # like X11: tests send the listener's copy themselves

    def __init__(self) -> None:
        self.armed = False
        self.on_key: Optional[Callable[[str], None]] = None
        self.arms = 0

    def arm(self, on_key: Callable[[str], None]) -> None:
        assert not self.armed, "armed twice"
        self.armed = True
        self.on_key = on_key
        self.arms += 1

    def disarm(self) -> None:
        self.armed = False

    def set_keys(self, keys) -> None:
        self.keys = tuple(keys)

    def close(self) -> None:
        self.armed = False

    def press(self, name: str) -> bool:
        """A physical press: swallowed (and reported) only while armed."""
        if self.armed and self.on_key is not None:
            self.on_key(name)
            return True
        return False


def overlay(config, sink, suppressor, injector, **controller_args):
    """A controller as the overlay builds it: its sink behind
    :class:`~daemon.frontends.overlay.accept_keys.AcceptKeys`, which grabs
    with ``suppressor`` and types with ``injector``; ``(controller, keys)``.
    Listener events go to ``keys.on_key``."""
    from daemon.controller import Controller
    from daemon.frontends.overlay.accept_keys import AcceptKeys

    keys = AcceptKeys(sink, suppressor, injector)
    controller = Controller(config, keys, **controller_args)
    keys.attach(controller)
    return controller, keys


class FakeInjector:
    """Like synthetic keys: ``echo`` (where set) gets the text as the listener sees it again."""

    def __init__(self) -> None:
        self.typed: list[str] = []
        self.echo: Optional[Callable[[str], None]] = None  # called with the text, as a listener would see it

    def type_text(self, text: str) -> None:
        self.typed.append(text)
        if self.echo is not None:
            self.echo(text)


class FakeFocus:
    def __init__(self, state: FocusState = FocusState(app_id="editor", window_id=1, is_password=False)) -> None:
        self.state = state
        self.queries = 0

    def current(self) -> FocusState:
        self.queries += 1
        return self.state

    def watch(self, callback) -> bool:
        return False  # the tests call on_field_event themselves


class ManualWorker:
    """Records requests; the test delivers results by hand (deterministic)."""

    def __init__(self) -> None:
        self.requests: list[tuple[int, str]] = []
        self.prefills: list[str] = []
        self.cancels = 0
        self.debounce_ms = None
        self.ready = True
        self.load_error = None

    def submit(self, request_id: int, text: str, params: BeamParams) -> None:
        self.requests.append((request_id, text))

    def prefill(self, text: str, params: BeamParams) -> None:
        self.prefills.append(text)

    def cancel(self) -> None:
        self.cancels += 1

    def set_debounce(self, debounce_ms: float) -> None:
        self.debounce_ms = debounce_ms

    @property
    def last(self) -> tuple[int, str]:
        return self.requests[-1]
