"""The one bridge from non-Qt threads into the Qt GUI thread.

Qt widgets may only be touched from the thread that runs the event loop, but
the daemon's keyboard listener, suggestion worker and config watcher all run on
their own threads.  Rather than sprinkling ``QMetaObject.invokeMethod`` calls
around, every cross-thread request is a small immutable command object posted
through a single ``pyqtSignal(object)`` with a *queued* connection: Qt copies
the reference into the GUI thread's event queue, and the dispatcher runs there,
in posting order.  The daemon never sees Qt: it talks to ``MailboxSink``, a
plain-Python object with ``show`` / ``hide`` / ``set_status``.

Privacy: commands carry suggestion text, so their ``repr`` shows lengths only.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Callable, Optional, Protocol, Union

from PyQt6.QtCore import QObject, Qt, pyqtSignal, pyqtSlot

from daemon.frontends.base import FieldLook, Rect

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- commands


@dataclass(frozen=True)
class Show:
    """Show (or update in place) the ghost text at the caret rectangle."""

    text: str
    caret: Optional[Rect] = None
    look: Optional[FieldLook] = None  #: the field's font and single-line box
    #: called with the part of ``text`` the overlay drew (see ``UiSink.show``)
    drawn: Optional[Callable[[str], None]] = field(default=None, compare=False)

    def __repr__(self) -> str:  # never put typed text or suggestions in logs
        return f"Show(len={len(self.text)}, caret={self.caret!r}, look={self.look!r})"


@dataclass(frozen=True)
class Hide:
    """Hide the ghost text."""


@dataclass(frozen=True)
class Status:
    """Report the daemon's state to the tray (``loading``, ``ready``,
    ``disabled``, ``paused`` or ``error``) with a human-readable message."""

    state: str
    message: str = ""


@dataclass(frozen=True)
class Invoke:
    """Run an arbitrary callable on the GUI thread (escape hatch for the rare
    request that is not worth its own command type, e.g. quitting)."""

    func: Callable[[], object] = field(repr=False)


Command = Union[Show, Hide, Status, Invoke]


# --------------------------------------------------------------------------- GUI side


class Mailbox(QObject):
    """Delivers posted commands to ``handler`` on the thread that owns this
    object (create it on the GUI thread).

    ``post`` is safe from any thread.  The connection is always queued, so even
    a post from the GUI thread itself is handled later, after the current
    event, which keeps the order identical whichever thread posted.
    """

    _posted = pyqtSignal(object)

    def __init__(self, handler: Callable[[Command], None], parent: Optional[QObject] = None) -> None:
        super().__init__(parent)
        self._handler = handler
        self._closed = threading.Event()
        self._posted.connect(self._dispatch, Qt.ConnectionType.QueuedConnection)

    def post(self, command: Command) -> None:
        """Queue ``command`` for the GUI thread.  After ``close()`` (or once the
        Qt object is gone at shutdown) posts are dropped silently."""
        if self._closed.is_set():
            return
        try:
            self._posted.emit(command)
        except RuntimeError:  # the C++ object was deleted during shutdown
            self._closed.set()

    def close(self) -> None:
        """Stop accepting commands; those already queued are discarded too."""
        self._closed.set()

    @pyqtSlot(object)
    def _dispatch(self, command: Command) -> None:
        if self._closed.is_set():
            return
        try:
            self._handler(command)
        except Exception:  # one bad command must not take the GUI thread down
            log.exception("UI command %r failed", command)


# --------------------------------------------------------------------------- daemon side


class MailboxSink:
    """The daemon-facing UI sink: plain Python, callable from any thread.

    The controller calls ``show(text, caret)``, ``hide()`` and
    ``set_status(state, message)``; each becomes one command in the mailbox.
    """

    def __init__(self, mailbox: Mailbox) -> None:
        self._mailbox = mailbox

    def show(self, text: str, caret: Optional[Rect], look: Optional[FieldLook] = None,
             drawn: Optional[Callable[[str], None]] = None) -> None:
        """Show ``text`` as ghost text at ``caret`` (empty text hides);
        ``drawn`` hears from the GUI thread what was drawn."""
        self._mailbox.post(Show(text, caret, look, drawn) if text else Hide())

    def hide(self) -> None:
        self._mailbox.post(Hide())

    def set_status(self, state: str, message: str = "") -> None:
        # Accept str-valued enums as well as plain strings.
        self._mailbox.post(Status(str(getattr(state, "value", state)), message))

    def call_soon(self, func: Callable[[], object]) -> None:
        """Run ``func`` on the GUI thread (e.g. ``app.quit``)."""
        self._mailbox.post(Invoke(func))


# --------------------------------------------------------------------------- routing


class GhostView(Protocol):
    def show_suggestion(self, text: str, caret: Optional[Rect], look: Optional[FieldLook] = None,
                        drawn: Optional[Callable[[str], None]] = None) -> None: ...

    def hide_suggestion(self) -> None: ...


class StatusView(Protocol):
    def set_status(self, state: str, message: str = "") -> None: ...


class UiDispatcher:
    """Routes mailbox commands to the overlay and the (optional) tray.

    Lives on the GUI thread; pass an instance as the ``Mailbox`` handler.
    """

    def __init__(self, overlay: GhostView, status: Optional[StatusView] = None) -> None:
        self._overlay = overlay
        self._status = status

    def __call__(self, command: Command) -> None:
        if isinstance(command, Show):
            if command.text:
                self._overlay.show_suggestion(command.text, command.caret, command.look, drawn=command.drawn)
            else:
                self._overlay.hide_suggestion()
        elif isinstance(command, Hide):
            self._overlay.hide_suggestion()
        elif isinstance(command, Status):
            if self._status is not None:
                self._status.set_status(command.state, command.message)
        elif isinstance(command, Invoke):
            command.func()
        else:
            log.warning("unknown UI command type %s", type(command).__name__)
