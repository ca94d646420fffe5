"""What the :class:`~daemon.controller.Controller` talks to besides the
frontend's OS ports (:mod:`daemon.frontends.base`): the display sink and the
suggestion worker, and the snapshot it gives of itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Protocol

from daemon.frontends.base import FieldLook, Rect

Clock = Callable[[], float]
#: What a sink calls with the text it actually drew (see :meth:`UiSink.show`).
Drawn = Callable[[str], None]


class UiSink(Protocol):
    """Where the controller sends what the user should see.  Implementations
    must be callable from any thread and must not block (the Qt one posts to
    a mailbox)."""

    def show(self, text: str, caret: Optional[Rect], look: Optional[FieldLook] = None,
             drawn: Optional[Drawn] = None) -> None:
        """Show ``text`` as ghost text at ``caret`` (None: position unknown),
        in the field's font and inside its box when ``look`` says so.

        ``drawn`` is called once the text is on the screen (from any thread,
        without waiting on the caller) with the part of it the user can read
        there: all of it, the part before an ellipsis where it was cut to
        fit, the first line of a single-line field's, "" when nothing could
        be drawn.  The accept keys insert that part and nothing else, and
        are not swallowed before it is known.  A sink that is replaced by a
        newer ``show`` or a ``hide`` before drawing need not call it."""

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
    """A copy of the controller's state, for tests and diagnostics.  Its
    ``repr`` (what the daemon's debug log prints) gives the suggestion's
    length, never its text."""

    ghost: str
    drawn: str  #: the part of ``ghost`` on the screen, what the accept keys insert
    buffer_chars: int
    armed: bool
    enabled: bool
    paused: bool
    blocked: str  #: why capture is off in this field ("" = it is on)
    status: tuple[str, str]

    def __repr__(self) -> str:
        return (f"ControllerState(ghost_chars={len(self.ghost)}, drawn_chars={len(self.drawn)}, "
                f"buffer_chars={self.buffer_chars}, armed={self.armed}, enabled={self.enabled}, paused={self.paused}, blocked={self.blocked!r}, "
                f"status={self.status!r})")
