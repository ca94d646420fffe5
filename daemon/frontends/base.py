"""The ports every frontend implements for the Controller, and the values they exchange.

``FocusInfo`` (the focused field: app, password?, text before the caret),
``CaretLocator``, ``KeySuppressor`` (swallow the accept keys while a
suggestion shows) and ``TextInjector`` (insert the accepted text).  The
overlay frontend implements them once per OS (``daemon.frontends.overlay.platform``,
whose selector chooses them; nothing outside it imports Xlib, AT-SPI, Win32
or Cocoa bindings); the IBus engine implements them over the input-method
protocol (``daemon.frontends.ibus.engine``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol, Sequence


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


class KeySuppressor(Protocol):
    """Swallows the accept keys, and only while a suggestion is visible.

    ``listener_sees_swallowed``: whether the keyboard listener still reports a
    press this suppressor swallowed (X11: the grabbed key is recorded too;
    macOS: pynput reports it before the intercept drops it; Windows: the
    hook drops it before pynput reports it).  The controller pairs the two
    views of one press only when both exist.
    """

    listener_sees_swallowed: bool

    def arm(self, on_key: Callable[[str], None]) -> None:
        """Start swallowing the configured keys; call ``on_key(name)`` (from a
        backend thread) for each swallowed press."""

    def disarm(self) -> None:
        """Stop swallowing: the keys reach applications untouched again."""

    def set_keys(self, keys: Sequence[str]) -> None:
        """Swallow these accept keys from now on (a config reload); raises
        ``ValueError`` for a key it cannot grab, keeping the old ones."""

    def close(self) -> None: ...


@dataclass(frozen=True)
class ListenerHook:
    """A key filter that must run inside the keyboard listener's own OS hook.

    On Windows (low-level keyboard hook) and macOS (event tap) the only way to
    swallow a key is to decide inside the hook that already delivers every key
    to pynput: a second hook would race the first.  A suppressor for those
    systems therefore hands the keyboard adapter (``daemon.frontends.overlay.keyboard``,
    the only module that knows pynput) this plain callable, and the adapter
    installs it through pynput's ``win32_event_filter`` / ``darwin_intercept``
    listener options.  Nothing here depends on pynput.

    ``swallow(a, b)`` receives the backend's raw event pair, ``(msg,
    KBDLLHOOKSTRUCT)`` on ``"win32"`` and ``(event_type, CGEventRef)`` on
    ``"darwin"``, and returns True to drop the event before any application
    sees it.  It runs on the hook thread with a system deadline, so it must
    decide in microseconds and never block.
    """

    backend: str  #: "win32" or "darwin": whose raw events ``swallow`` understands
    swallow: Callable[[Any, Any], bool]


class TextInjector(Protocol):
    #: Whether typed text comes back through the keyboard listener as key
    #: events (synthetic keys do; an input method's commit does not).
    echoes: bool

    def type_text(self, text: str) -> None:
        """Type ``text`` into the focused application as if from the keyboard
        (any Unicode; ``\\n`` as Return)."""


class PlatformError(RuntimeError):
    """The platform cannot be used; the message says how to fix it."""
