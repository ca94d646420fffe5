"""The ports of the :class:`~daemon.controller.Controller`, and the values
they exchange: what every frontend implements for it (``FocusInfo``: the
focused field, app, password?, text before the caret; ``CaretLocator``;
``UiSink``: show the suggestion), the suggestion worker it drives, and the
snapshot it gives of itself.  Inserting an accepted suggestion is no port:
the frontend asks :meth:`~daemon.controller.Controller.accept` and inserts
the answer itself.

The controller owns these; frontends implement them and import them from
here, never the other way round.  The overlay frontend implements the OS
ones once per OS (``daemon.frontends.overlay.platform``, whose selector
chooses them; nothing outside it imports Xlib, AT-SPI, Win32 or Cocoa
bindings); the IBus engine implements them over the input-method protocol
(``daemon.frontends.ibus``).  The overlay's own touchpoints for the accept
keys (the key suppressor, the text injector) are in
``daemon.frontends.overlay.platform.ports``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Protocol

@dataclass(frozen=True)
class Rect:
    """A screen rectangle in device-independent pixels (Qt's logical coordinates)."""

    x: int
    y: int
    width: int
    height: int


@dataclass(frozen=True)
class FieldLook:
    """How the focused field draws its text, as far as accessibility says.

    ``font_family`` / ``font_px`` come from the text attributes (empty / 0
    when not reported); ``clip`` is the box of a single-line field, which the
    ghost text must not run past (None for multi-line fields or when unknown).
    """

    font_family: str = ""
    font_px: float = 0.0
    clip: Optional[Rect] = None


@dataclass(frozen=True)
class FocusState:
    """What is known about the focused window/widget at one moment."""

    app_id: str = ""  #: X11 WM_CLASS class (lower-cased), exe name, or bundle id
    window_id: int = 0  #: opaque id; a change means focus moved
    is_password: Optional[bool] = None  #: None = could not tell
    text_before_caret: Optional[str] = None  #: from accessibility, when available
    caret: Optional[Rect] = None  #: caret rectangle, when available
    #: The focused field inside the window (e.g. an accessible object's bus
    #: name and path), "" when only the window is known.  Browser tabs and
    #: dialogs change it without changing ``window_id``.
    field_id: str = ""
    caret_offset: Optional[int] = None  #: the caret's offset in the field's text
    #: False when text other than whitespace follows the caret on its line
    #: (editing mid-line), None when unknown.
    at_line_end: Optional[bool] = None
    look: Optional[FieldLook] = None
    #: A terminal, which may be at a password prompt with echo off: the text
    #: its keys made goes to the worker only once a reading shows it on the
    #: caret's line (``daemon.controller.terminal_prompt``).
    terminal: bool = False


class FocusInfo(Protocol):
    def current(self) -> FocusState:
        """Describe the focused widget now.  Must not block for long (< 50 ms)."""

    def watch(self, callback: Callable[[], None]) -> bool:
        """Call ``callback`` (from any thread) whenever focus moves or the
        focused field's caret or text changes without a key, where the
        platform reports that (accessibility events); False when it does not."""


class CaretLocator(Protocol):
    def caret_rect(self, focus: FocusState) -> Optional[Rect]:
        """Best estimate of the caret rectangle: accessibility first, then a
        fallback (text cursor of the focused window, pointer position)."""


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

    ready: bool  #: its model is loaded
    load_error: Optional[str]  #: why its model failed to load (None: it did not fail)

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
    enabled: bool
    paused: bool
    blocked: str  #: why capture is off in this field ("" = it is on)
    status: tuple[str, str]

    def __repr__(self) -> str:
        return (f"ControllerState(ghost_chars={len(self.ghost)}, drawn_chars={len(self.drawn)}, "
                f"buffer_chars={self.buffer_chars}, enabled={self.enabled}, "
                f"paused={self.paused}, blocked={self.blocked!r}, status={self.status!r})")
