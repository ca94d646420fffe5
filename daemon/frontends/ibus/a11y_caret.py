"""The focused field's caret read from the accessibility bus (AT-SPI), for applications whose caret
rectangle never reaches the input method.

Thunderbird's compose window on Wayland sends its text-input cursor rectangles but never commits the
surface they belong to, so neither GNOME Shell nor KWin passes any of them on (tests/desktop/upstream.md),
and the inline suggestion has no caret to stand at.  The same application tells the accessibility bus
where its caret is: an ``object:text-caret-moved`` event after each key (4-7 ms after it, measured on
GNOME 51), and the extents of the character before the caret, relative to its window's surface
whatever coordinate type is asked for.  This module listens for that event only while the engine asks
(:meth:`A11yCaret.follow`: a field that reported no caret after its first keys), asks the sender for
one character's extents and the bus for the sender's process id, and hands ``on_caret(pid, x, y, w,
h)``, a thin caret right of that character relative to the surface, to the desktop's plug-in
(:meth:`~daemon.frontends.ibus.inline.shell_ghost.ShellGhost.surface_caret`), which places it where the
focused window of that process is and ignores it for any other window.

What it reads: the caret's offset (the event's number) and one character's rectangle; never the text, a
name or a role.  Listening changes what applications do (an application that exposes itself only to a
listener, as Gecko does, keeps doing so until it exits), so the event is registered with the
accessibility registry only while a field needs it and deregistered when that field loses the focus.
For as long, the session's accessibility flag (``org.a11y.Status.IsEnabled``, the switch screen readers
flip) is on: Gecko reads that flag when its window opens and, where it was off, exposes nothing until it
turns on (it then starts its accessibility in the running window: Gecko's ``accessible/atk/Platform.cpp``).
It goes back to what it was when the field loses the focus (running Qt and GTK 4 applications follow it
meanwhile).  In the desktop tier's sessions the flag was on already, so that part is not measured there.

Nothing here waits on the bus after :meth:`A11yCaret.start`: calls are sent, and their answers come to
the receiving thread.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable, Optional

from jeepney import DBusAddress, HeaderFields, MatchRule, Message, MessageType, message_bus, new_method_call
from jeepney.io.threading import DBusConnection, ReceiveStopped, open_dbus_connection

from daemon.frontends.atspi_bus import (
    EVENT_OBJECT, REGISTRY_BUS, REGISTRY_IFACE, REGISTRY_PATH, TEXT, accessibility_bus_address,
    set_toolkit_accessibility)
from daemon.frontends.base import PlatformError

log = logging.getLogger(__name__)

#: The accessibility registry, on the accessibility bus.
REGISTRY = DBusAddress(REGISTRY_PATH, bus_name=REGISTRY_BUS, interface=REGISTRY_IFACE)
EVENT = "object:text-caret-moved"
EVENT_INTERFACE = EVENT_OBJECT
EVENT_MEMBER = "TextCaretMoved"
#: AT-SPI's coordinate type "relative to the window" (on Wayland all types give the surface's coordinates).
WINDOW_COORDS = 1
CALL_TIMEOUT_S = 2.0
#: Process ids remembered, by the sender's unique name (each application has one connection), and calls
#: awaiting an answer (an application that hangs never answers: the oldest are forgotten).
MAX_SENDERS = 64
MAX_CALLS = 64
#: An answer of zeros (Gecko's first on a field it has just begun to expose) is asked again this much later,
#: this many times, unless a newer event came.
RETRY_S = 0.05
RETRIES = 3

OnCaret = Callable[[int, int, int, int, int], None]
#: Sets the session's accessibility flag on the session bus named, and says what it was.
SwitchToolkits = Callable[[bool, str], bool]


def caret_after(offset: int, extents: tuple[int, int, int, int]) -> Optional[tuple[int, int, int, int]]:
    """The caret at ``offset`` from the extents of the character before it (of the character at it where
    the caret is at the start): a thin caret (width 0) at that character's right (left) edge, as tall
    as the character; None where the extents say nothing (no height: an application that has not laid
    the field out yet answers zeros)."""
    x, y, w, h = extents
    if h <= 0 or w < 0:
        return None
    return (x + w if offset > 0 else x, y, 0, h)


class A11yCaret:
    """See the module docstring.  ``on_caret(pid, x, y, w, h)`` is called on the receiving thread."""

    def __init__(self, on_caret: OnCaret, switch_toolkits: SwitchToolkits = set_toolkit_accessibility) -> None:
        self._on_caret = on_caret
        self._switch_toolkits = switch_toolkits
        self._session_bus: Optional[str] = None  #: where the accessibility flag is (None: never switched)
        self._toolkits_lock = threading.Lock()
        self._toolkits_before: Optional[bool] = None  #: the flag before this reader turned it on
        self._conn: Optional[DBusConnection] = None
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()
        self._following = False
        self._pids: dict[str, int] = {}  #: sender's unique name -> its process id (0: the bus would not say)
        #: serial of a call awaiting its answer -> ("pid", sender, 0, "", 0) or ("extents", sender, caret offset,
        #: the text object's path, tries so far)
        self._calls: dict[int, tuple[str, str, int, str, int]] = {}
        self._latest = 0  #: the serial of the extents asked for the newest event: older answers are dropped
        #: the newest caret whose sender's process id is still being asked for: (sender, caret)
        self._waiting: Optional[tuple[str, tuple[int, int, int, int]]] = None

    def start(self, session_bus: str = "SESSION") -> None:
        """Find the accessibility bus through the session bus and connect to it; raises PlatformError when
        there is none (OSError, TimeoutError or ValueError when it cannot be reached)."""
        self.start_on(accessibility_bus_address(session_bus, timeout=CALL_TIMEOUT_S), session_bus)

    def start_on(self, address: str, session_bus: Optional[str] = None) -> None:
        """Connect to the accessibility bus at ``address`` (``session_bus``: where the session's
        accessibility flag is switched while following; None: it is left alone)."""
        self._session_bus = session_bus
        conn = open_dbus_connection(address, auth_timeout=CALL_TIMEOUT_S)
        rule = MatchRule(type="signal", interface=EVENT_INTERFACE, member=EVENT_MEMBER)
        conn.send(new_method_call(message_bus, "AddMatch", "s", (rule.serialise(),)))
        self._conn = conn
        self._thread = threading.Thread(target=self._receive, name="a11y-caret", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.follow(False)
        self._toolkits()
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        if self._thread is not None:
            self._thread.join(timeout=2)

    @property
    def following(self) -> bool:
        with self._lock:
            return self._following

    def follow(self, on: bool) -> None:
        """Listen for the focused field's caret (``on``) or stop: the registry tells applications
        whether anybody listens, and some send nothing until somebody does."""
        with self._lock:
            if on == self._following or self._conn is None:
                return
            self._following = on
            conn = self._conn
            self._waiting = None
            self._latest = 0
        msg = new_method_call(REGISTRY, "RegisterEvent", "sass", (EVENT, [], "")) if on \
            else new_method_call(REGISTRY, "DeregisterEvent", "ss", (EVENT, ""))
        self._send(conn, msg)
        log.debug("%s the caret on the accessibility bus", "following" if on else "no longer following")
        if self._session_bus is not None:  # the session bus may be slow to answer: never on the caller's thread
            threading.Thread(target=self._toolkits, name="a11y-toolkits", daemon=True).start()

    def _toolkits(self) -> None:
        """The session's accessibility flag on while following, back to what it was when not."""
        with self._toolkits_lock:
            want, before, bus = self.following, self._toolkits_before, self._session_bus
            if bus is None or want == (before is not None):
                return
            try:
                if want:
                    self._toolkits_before = self._switch_toolkits(True, bus)
                    if not self._toolkits_before:
                        log.debug("the session's accessibility flag is on while the caret is followed")
                else:
                    self._toolkits_before = None
                    if not before:
                        self._switch_toolkits(False, bus)
            except PlatformError as e:
                log.debug("the session's accessibility flag cannot be switched (%s)", e)

    @staticmethod
    def _send(conn: DBusConnection, msg: Message, serial: Optional[int] = None) -> None:
        try:
            conn.send(msg, serial=serial)
        except OSError as e:
            log.debug("cannot reach the accessibility bus (%s)", type(e).__name__)

    # -- the receiving thread -----------------------------------------------------

    def _receive(self) -> None:
        conn = self._conn
        while conn is not None:
            try:
                msg = conn.receive()
            except ReceiveStopped:
                break
            except (OSError, EOFError, ValueError) as e:
                if self._conn is not None:
                    log.info("lost the accessibility bus (%s)", type(e).__name__)
                break
            try:
                self._dispatch(conn, msg)
            except Exception as e:  # noqa: BLE001 - whatever arrives, the thread goes on
                log.debug("ignored a message from the accessibility bus (%s)", type(e).__name__)

    def _dispatch(self, conn: DBusConnection, msg: Message) -> None:
        kind, fields = msg.header.message_type, msg.header.fields
        sender = fields.get(HeaderFields.sender, "")
        if kind == MessageType.signal:
            if (fields.get(HeaderFields.interface) == EVENT_INTERFACE and fields.get(HeaderFields.member) == EVENT_MEMBER
                    and sender.startswith(":") and isinstance(msg.body[1], int)):
                self._caret_moved(conn, sender, fields.get(HeaderFields.path, ""), msg.body[1])
            return
        if kind not in (MessageType.method_return, MessageType.error):
            return
        with self._lock:
            call = self._calls.pop(fields.get(HeaderFields.reply_serial, 0), None)
        if call is None:
            return
        what, asked, offset, path, tries = call
        ok = kind == MessageType.method_return
        signature = fields.get(HeaderFields.signature, "")
        if what == "pid":
            if sender != "org.freedesktop.DBus":
                return
            self._pid_known(asked, msg.body[0] if ok and signature == "u" else 0)
        elif sender == asked and ok and signature == "iiii":
            serial = fields.get(HeaderFields.reply_serial, 0)
            if caret_after(offset, msg.body) is None and tries < RETRIES:  # not laid out yet: ask again
                timer = threading.Timer(RETRY_S, self._ask, (conn, asked, path, offset, tries + 1, serial))
                timer.daemon = True
                timer.start()
            else:
                self._extents(serial, asked, offset, msg.body)

    def _caret_moved(self, conn: DBusConnection, sender: str, path: str, offset: int) -> None:
        """An application says its caret moved to ``offset`` in the text object at ``path``: ask where."""
        self._ask(conn, sender, path, offset, 0, None)

    def _ask(self, conn: DBusConnection, sender: str, path: str, offset: int, tries: int,
             again: Optional[int]) -> None:
        """Ask ``sender`` where the caret at ``offset`` is (``again``: the serial of the newest question,
        answered with zeros, asked again; nothing if a newer one came meanwhile)."""
        with self._lock:
            if not self._following or offset < 0 or (again is not None and again != self._latest):
                return
            if len(self._calls) >= MAX_CALLS:
                self._calls.clear()
            ask_pid = sender not in self._pids and not any(c[:2] == ("pid", sender) for c in self._calls.values())
            serial = next(conn.outgoing_serial)
            self._calls[serial] = ("extents", sender, offset, path, tries)
            self._latest = serial
            pid_serial = next(conn.outgoing_serial) if ask_pid else 0
            if ask_pid:
                self._calls[pid_serial] = ("pid", sender, 0, "", 0)
        target = DBusAddress(path, bus_name=sender, interface=TEXT)
        self._send(conn, new_method_call(target, "GetCharacterExtents", "iu", (max(0, offset - 1), WINDOW_COORDS)),
                   serial)
        if ask_pid:
            self._send(conn, new_method_call(message_bus, "GetConnectionUnixProcessID", "s", (sender,)), pid_serial)

    def _extents(self, serial: int, sender: str, offset: int, extents: tuple[int, int, int, int]) -> None:
        caret = caret_after(offset, extents)
        if caret is None:
            log.debug("the accessibility bus gave the caret no place (the application answered zeros)")
        with self._lock:
            if serial != self._latest or not self._following or caret is None:
                return
            pid = self._pids.get(sender)
            if pid is None:  # told once the bus says whose it is
                self._waiting = (sender, caret)
                return
        if pid > 0:
            self._on_caret(pid, *caret)

    def _pid_known(self, sender: str, pid: int) -> None:
        with self._lock:
            if len(self._pids) >= MAX_SENDERS:
                self._pids.clear()
            self._pids[sender] = pid
            waiting = self._waiting
            if waiting is None or waiting[0] != sender:
                return
            self._waiting = None
            if not self._following:
                return
        if pid > 0:
            self._on_caret(pid, *waiting[1])
