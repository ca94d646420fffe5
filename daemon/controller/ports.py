"""What the :class:`~daemon.controller.Controller` talks to besides the
frontend's OS ports (:mod:`daemon.frontends.base`): the display sink and the
suggestion worker, and the snapshot it gives of itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Protocol

from daemon.frontends.base import FieldLook, Rect

Clock = Callable[[], float]


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
