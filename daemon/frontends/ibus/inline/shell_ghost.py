"""The engine's end of the inline suggestion drawn by the desktop's compositor: ghosttype's GNOME Shell extension
(``gnome_shell/extension.js``) or its KWin effect on KDE Plasma (``kwin/``), spoken to on the session bus with
jeepney. Both serve the same interface under the same name (the protocol, and why each rule: the IBus
``README.md``, "The GNOME Shell extension" onwards).

Who owns that name is learned from the bus daemon alone (a ``NameOwnerChanged`` counts only from
``org.freedesktop.DBus``, with three strings).  The plug-in is present only while the connection that owns its
name also owns ``org.gnome.Shell`` or ``org.kde.KWin``, that connection's process runs that compositor
(:mod:`~daemon.frontends.ibus.inline.compositor`), its ``Version`` is at least :data:`PROTOCOL`, and it accepted
this engine (``Register``).  Every call goes to that connection's unique name; answers and signals count only
from it and with the protocol's signatures; a message the receiving thread cannot use is dropped.  While it is
present each suggestion goes to it alone, as a method call, and no popup shows; when it goes the engine is told
(``on_change``).

From KWin's effect the engine asks for the caret (``Watch``: KWin gives an input method none on Plasma's IBus
route) and hears it as ``Caret(x, y, w, h)`` (``on_caret``); an effect whose caret is keys behind answers
``Show`` with ``StaleCaret`` and the popup shows the suggestion (``on_stale``) until KWin next says where the
caret is, or the engine reads the field's caret from the accessibility bus and sends it as ``SurfaceCaret``
(:meth:`ShellGhost.surface_caret`; GNOME Shell too, for a field whose caret it never hears).  Both name the
application that has the keys (``App(ids)``; IBus names no Wayland client): :attr:`ShellGhost.app`, ``on_app``.

Nothing here waits for the compositor: :meth:`ShellGhost.show` and :meth:`ShellGhost.hide` only write to the
bus, and answers arrive on this module's receiving thread.  A text counts as drawn (:meth:`ShellGhost.drawn`)
once ``Show`` answered for it (a text that only drops characters typed through it keeps counting meanwhile),
until ``Hidden``.  ``Visible(chars)`` (the text shown was placed again and the window's edge cuts it elsewhere)
changes how much of it counts, while no ``Show`` is unanswered: Tab inserts what the screen shows.  Each
``Show`` follows ``Offset(known, x, y, dx)``: where the next character goes against the caret rectangle at (x,
y) (:mod:`~daemon.frontends.ibus.caret_trail`).  The text is never logged.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable, Optional

from jeepney import DBusAddress, HeaderFields, MatchRule, Message, MessageType, message_bus, new_method_call
from jeepney.io.threading import DBusConnection, ReceiveStopped, open_dbus_connection

from . import compositor
from .compositor import KWIN_NAME, SHELL_NAME
from ..caret_trail import Shift
from ..clients import text_follows_caret
from .protocol import BUS_NAME, MAX_TEXT_CHARS, OBJECT_PATH, PROTOCOL, SPEC, STALE_ERROR

log = logging.getLogger(__name__)

BUS_DAEMON = "org.freedesktop.DBus"
CALL_TIMEOUT_S = 2.0
#: How long start() waits for the plug-in to be checked and to accept this engine.
HANDSHAKE_TIMEOUT_S = 3.0


def _plugin(unique: str, interface: str = BUS_NAME) -> DBusAddress:
    """The plug-in's object on the connection ``unique`` (never its well-known name)."""
    return DBusAddress(OBJECT_PATH, bus_name=unique, interface=interface)


class ShellGhost:
    """See the module docstring.  ``on_change()`` is called (on the receiving thread) when the extension comes or goes,
    ``on_drawn(drawn, chars, total)`` when GNOME Shell answered for the text now wanted, ``on_caret(x, y, w, h)``
    when KWin's effect says where the focused field's caret is, ``on_stale(text, drawn)`` when it could not draw
    ``text`` for KWin's caret is stale (``drawn``: who waits to hear what of it is on screen, or None), ``on_app()``
    when the application that has the keys changed. ``verify(pid)`` names the program process ``pid`` runs, or None
    (by default :func:`~daemon.frontends.ibus.inline.compositor.program`); the plug-in counts only where it names
    the compositor whose bus name its connection owns (:data:`~daemon.frontends.ibus.inline.compositor.COMPOSITORS`)."""

    def __init__(self, on_change: Callable[[], None] = lambda: None,
                 on_drawn: Callable[[bool, int, int], None] = lambda d, c, t: None,
                 on_caret: Callable[[int, int, int, int], None] = lambda x, y, w, h: None,
                 on_stale: Callable[[str, Optional[Callable[[str], None]]], None] = lambda t, d: None,
                 on_app: Callable[[], None] = lambda: None,
                 verify: Callable[[int], Optional[str]] = compositor.program) -> None:
        self._on_change = on_change
        self._on_drawn = on_drawn
        self._on_caret = on_caret
        self._on_stale = on_stale
        self._on_app = on_app
        self._verify = verify
        self._stale = False  #: KWin's caret is behind the application's: the popup shows suggestions
        self._declined = ""  #: the text the effect refused for that (the popup has it)
        self._conn: Optional[DBusConnection] = None
        self._lock = threading.Lock()
        self._settled = threading.Condition(self._lock)  #: notified when a step of the handshake ends
        self._owners: dict[str, str] = {BUS_NAME: "", SHELL_NAME: "", KWIN_NAME: ""}  #: as the bus daemon says
        self._programs: dict[str, Optional[str]] = {}  #: unique name -> the program its process runs (None: unknown)
        self._steps: dict[int, tuple[str, str]] = {}  #: serial -> (handshake step, unique name) awaiting an answer
        self._refused = ""  #: the owner of the plug-in's name that is not used (too old, or it refused this engine)
        self._linked = ""  #: the unique name of the plug-in that accepted this engine
        self._app: tuple[str, ...] = ()  #: its last App: the focused window's application ids
        self._was_present = False
        self._starting = True  #: start() tells whether the plug-in is there; no change is announced before
        self._wanted = ""  #: the text last sent with Show ("" after Hide)
        self._serial = 0  #: the serial of that Show call
        self._serial_to = ""  #: the unique name it went to
        self._drawn = ""  #: what GNOME Shell confirmed is on screen now
        self._await_caret = False  #: text was committed: the caret is not where GNOME Shell last heard
        self._deferred = ""  #: what to show once the client says where its caret is
        self._answer: Optional[tuple[str, int]] = None  #: GNOME Shell's answer for the text wanted: chars visible
        self._provisional = False  #: ``_answer`` is what was visible before typing through, not GNOME Shell's yet
        #: who hears what of the text wanted (or deferred) is visible: GNOME Shell's answer, then each Visible
        self._listener: Optional[tuple[str, Callable[[str], None]]] = None
        self._answered = True  #: the last Show has been answered (a Visible before that is for an older text)
        self._thread: Optional[threading.Thread] = None

    # -- set-up ---------------------------------------------------------------------

    def start(self, bus: str = "SESSION") -> None:
        """Connect to the session bus and learn whether the extension is there; raises OSError (or ValueError,
        KeyError: no session bus) when it cannot."""
        conn = open_dbus_connection(bus, auth_timeout=2.0)
        for name in self._owners:
            rule = MatchRule(type="signal", sender=BUS_DAEMON, interface=BUS_DAEMON, member="NameOwnerChanged")
            rule.add_arg_condition(0, name)
            self._blocking_call(conn, new_method_call(message_bus, "AddMatch", "s", (rule.serialise(),)))
        for name in self._owners:
            reply = self._blocking_call(conn, new_method_call(message_bus, "GetNameOwner", "s", (name,)))
            ok = reply.header.message_type == MessageType.method_return \
                and reply.header.fields.get(HeaderFields.signature) == "s"
            self._owners[name] = reply.body[0] if ok else ""
        self._conn = conn
        self._thread = threading.Thread(target=self._receive, name="shell-ghost", daemon=True)
        self._thread.start()
        with self._settled:
            self._check()
            self._settled.wait_for(lambda: not self._steps, timeout=HANDSHAKE_TIMEOUT_S)
            present, desktop = self._present(), self._desktop()
            self._was_present, self._starting = present, False
        log.info("%s %s", desktop, "present: suggestions are drawn inline" if present
                 else "absent: suggestions use IBus's popup")

    @staticmethod
    def _blocking_call(conn: DBusConnection, msg: Message) -> Message:
        """A call during start(), before the receiving thread runs."""
        serial = next(conn.outgoing_serial)
        conn.send(msg, serial=serial)
        while True:
            reply = conn.receive(timeout=CALL_TIMEOUT_S)
            if reply.header.fields.get(HeaderFields.reply_serial) == serial:
                return reply

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()
        if self._thread is not None:
            self._thread.join(timeout=2)

    @property
    def present(self) -> bool:
        """The extension answers on the bus, from inside GNOME Shell."""
        with self._lock:
            return self._present()

    @property
    def stale(self) -> bool:
        """KWin's effect said its caret is behind the application's: suggestions go to IBus's popup until a Caret."""
        with self._lock:
            return self._stale

    @property
    def app(self) -> tuple[str, ...]:
        """The ids the plug-in gave the application that has the keys (see protocol.xml's App); () when none."""
        with self._lock:
            return self._app if self._present() else ()

    def _compositor(self, unique: str) -> Optional[str]:
        """(lock held) The compositor's bus name that ``unique`` owns and whose program it runs, or None."""
        program = self._programs.get(unique)
        for name in (SHELL_NAME, KWIN_NAME):
            if unique and self._owners[name] == unique and program in compositor.COMPOSITORS[name]:
                return name
        return None

    def _present(self) -> bool:
        owner = self._owners[BUS_NAME]
        return self._conn is not None and bool(owner) and owner == self._linked and self._compositor(owner) is not None

    @property
    def kwin(self) -> bool:  # the plug-in is KWin's effect (else GNOME Shell's extension, or none)
        return bool(owner := self._owners[BUS_NAME]) and owner == self._owners[KWIN_NAME]  # each owner read once

    def _desktop(self) -> str:  # whose display it is, for the log
        return "KWin effect" if self.kwin else "GNOME Shell extension"

    def _check(self) -> None:
        """(lock held) Take the next step towards the plug-in that owns the name now: which program its connection
        belongs to, then its protocol version, then registering with it."""
        owner = self._owners[BUS_NAME]
        if self._linked and self._linked != owner:
            self._linked = ""
        if self._conn is None or not owner or owner in (self._linked, self._refused) \
                or owner not in (self._owners[SHELL_NAME], self._owners[KWIN_NAME]) \
                or any(unique == owner for _step, unique in self._steps.values()):
            return
        if owner not in self._programs:
            self._call(new_method_call(message_bus, "GetConnectionUnixProcessID", "s", (owner,)), "pid", owner)
        elif self._compositor(owner) is not None:
            self._call(new_method_call(_plugin(owner, "org.freedesktop.DBus.Properties"), "Get", "ss",
                                       (BUS_NAME, "Version")), "version", owner)

    def _call(self, msg: Message, step: str, unique: str) -> None:
        """(lock held) Send a call of the handshake; its answer comes to :meth:`_handshake`."""
        serial = next(self._conn.outgoing_serial)
        self._steps[serial] = (step, unique)
        self._send(self._conn, msg, serial)

    def _settle(self) -> Optional[tuple[bool, str]]:
        """(lock held) (present, desktop) when the plug-in came or went since last asked, else None."""
        now = self._present()
        if now == self._was_present or self._starting:
            return None
        self._was_present = now
        self._stale = False
        if not now:
            self._drawn, self._wanted, self._app = "", "", ()
        return now, self._desktop()

    def _announce(self, change: Optional[tuple[bool, str]]) -> None:
        if change is None:
            return
        now, desktop = change
        log.info("%s %s", desktop, "appeared: suggestions are drawn inline" if now
                 else "gone: suggestions use IBus's popup")
        self._on_change()

    def _watch(self) -> None:
        """(lock held) Ask KWin's effect for the field's carets (``Caret``, to us alone; GNOME's: SetCursorLocation)."""
        if self._present() and self._compositor(self._linked) == KWIN_NAME:
            self._send(self._conn, new_method_call(_plugin(self._linked), "Watch"), next(self._conn.outgoing_serial))

    # -- the display (any thread; never waits) ------------------------------------

    def draw(self, text: str, surrounding: Optional[tuple[str, int, int]] = None,
             shift: Optional[Shift] = None) -> None:
        """Show ``text`` at the caret ("" hides it), ``shift`` right of the rectangle the client reported last.
        Nothing is drawn where the field's ``surrounding`` text (text, cursor, anchor) has more than blanks after
        the caret on its line: the suggestion would cover it."""
        if text and len(text) <= MAX_TEXT_CHARS and not text_follows_caret(surrounding):
            self.show(text, shift)
        else:
            self.hide()

    def caret_pending(self) -> None:
        """Text is being committed: the caret moves, and GNOME Shell hears where only when the client reports it
        (Firefox: at its next key).  Until then nothing is drawn: it would stand where the caret was, over the text."""
        with self._lock:
            self._await_caret = True

    def recall_caret(self) -> None:
        """A field got the focus: KWin's effect reads its caret and says it (it may have said none for it yet)."""
        with self._lock:
            self._watch()

    def caret_moved(self, shift: Optional[Shift] = None) -> None:
        """The client reported its caret (GNOME Shell's panel hears it too); ``shift``: where the caret really is
        against it."""
        with self._lock:
            self._await_caret = False
            text, self._deferred = self._deferred, ""
            conn = self._conn if self._wanted and self._present() else None
            unique = self._linked
        if text:
            self.show(text, shift)
        elif conn is not None:  # the shown text follows the caret in GNOME Shell: tell it the shift there
            self._offset(conn, unique, shift)

    def surface_caret(self, pid: int, x: int, y: int, w: int, h: int, shift: Optional[Shift] = None) -> None:
        """The field's caret read from the accessibility bus (:mod:`~daemon.frontends.ibus.caret_reading`), relative
        to process ``pid``'s surface: the plug-in draws there (``SurfaceCaret``), and KWin's stale caret no longer
        holds the suggestion back (``shift`` as for :meth:`caret_moved`).  One of no height: the reading stopped,
        the desktop's caret counts again."""
        with self._lock:
            conn, unique = (self._conn, self._linked) if self._present() else (None, "")
            was_stale = self._stale and h > 0
            self._stale, self._declined = (False, "") if was_stale else (self._stale, self._declined)
        if conn is not None:
            self._send(conn, new_method_call(_plugin(unique), "SurfaceCaret", SPEC.methods["SurfaceCaret"].inputs,
                                             (pid, x, y, w, h)), next(conn.outgoing_serial))
            if h > 0:
                self.caret_moved(shift)
            self._announce_caret(was_stale)

    def _announce_caret(self, was_stale: bool) -> None:
        if was_stale:  # the caret is known again: suggestions are drawn inline
            self._on_change()

    def show(self, text: str, shift: Optional[Shift] = None) -> None:
        with self._lock:
            conn = self._conn
            if conn is None or not self._present():  # the text goes to GNOME Shell only
                return
            if self._listener is not None and self._listener[0] != text:
                self._listener = None  # a newer text: nobody hears of the older one
            if self._await_caret:
                self._deferred, self._drawn, self._answer, self._provisional = text, "", None, False
                return
            if not (self._drawn and self._drawn.endswith(text)):
                self._drawn, self._answer = "", None  # on screen only once GNOME Shell says so
            else:  # typed through: what is drawn begins with it, and ends where it ended (the window's edge)
                shown = self._answer[1] if self._answer is not None and self._answer[0] == self._drawn \
                    else len(self._drawn)
                visible = shown - (len(self._drawn) - len(text))
                self._drawn, self._answer = (text, (text, visible)) if visible > 0 else ("", None)
            self._provisional = self._answer is not None
            self._wanted, self._declined = text, ""
            unique = self._serial_to = self._linked
            self._offset(conn, unique, shift)
            self._serial = next(conn.outgoing_serial)
            serial = self._serial
            self._answered = False
        self._send(conn, new_method_call(_plugin(unique), "Show", SPEC.methods["Show"].inputs, (text,)), serial)

    def _offset(self, conn: DBusConnection, unique: str, shift: Optional[Shift]) -> None:
        """Send ``Offset`` (its answer is not awaited: it is not the ``Show`` answered for)."""
        args = (True, *shift.rect[:2], shift.dx, shift.advance) if shift is not None else (False, 0, 0, 0, 0.0)
        self._send(conn, new_method_call(_plugin(unique), "Offset", SPEC.methods["Offset"].inputs, args),
                   next(conn.outgoing_serial))

    def hide(self) -> None:
        with self._lock:
            conn = self._conn
            self._deferred, self._answer, self._listener, self._provisional, self._declined = "", None, None, False, ""
            if conn is None or (not self._wanted and not self._drawn):
                return
            self._wanted = self._drawn = ""
            unique = self._serial_to = self._linked
            if not unique:  # the plug-in went: nothing of it is on screen, and nobody else hears of it
                return
            self._serial = next(conn.outgoing_serial)
            serial = self._serial
        self._send(conn, new_method_call(_plugin(unique), "Hide"), serial)

    @staticmethod
    def _send(conn: DBusConnection, msg: Message, serial: int) -> None:
        try:
            conn.send(msg, serial=serial)
        except OSError as e:
            log.warning("cannot reach GNOME Shell's extension: %s", type(e).__name__)

    def when_drawn(self, text: str, drawn: Callable[[str], None]) -> None:
        """``drawn`` hears, once GNOME Shell has answered for ``text`` (at once if it has), the part of it visible
        in full ("" when nothing was drawn); not at all when a newer text or a hide comes first.  For a text typed
        through, it hears at once what was visible of it before, and again when GNOME Shell answers (the edge may
        cut it a character apart: its font is not the application's); and again at each ``Visible``."""
        with self._lock:
            answer, refused = self._answer, bool(text) and text == self._declined
            if not refused:
                if text in (self._wanted, self._deferred):
                    self._listener = (text, drawn)
                    if answer is None or answer[0] != text:
                        return
                elif answer is None or answer[0] != text:
                    answer = (text, 0)  # not sent: nothing of it is drawn (mid-line, no extension)
        if refused:  # KWin's effect refused it (stale caret) before this listener came: the popup has it
            self._on_stale(text, drawn)
            return
        drawn(text[:answer[1]])

    def drawn(self, text: str) -> bool:
        """``text`` is what GNOME Shell confirmed is on screen now."""
        with self._lock:
            return bool(text) and self._drawn == text

    # -- the receiving thread -----------------------------------------------------

    def _receive(self) -> None:
        conn = self._conn
        while conn is not None:
            try:
                msg = conn.receive()
            except ReceiveStopped:
                break
            except (OSError, EOFError, ValueError) as e:
                if self._conn is None:  # close()
                    break
                log.warning("lost the session bus (%s): suggestions use IBus's popup", type(e).__name__)
                with self._settled:
                    self._conn = None
                    self._drawn = ""
                    self._was_present = False
                    self._settled.notify_all()
                self._on_change()
                break
            try:
                self._dispatch(msg)
            except Exception as e:  # noqa: BLE001 - whatever arrives, the link goes on (never the text)
                log.debug("ignored a message the link cannot use (%s)", type(e).__name__)

    def _dispatch(self, msg: Message) -> None:
        kind, fields = msg.header.message_type, msg.header.fields
        sender, signature = fields.get(HeaderFields.sender, ""), fields.get(HeaderFields.signature, "")
        if kind == MessageType.signal:
            member = fields.get(HeaderFields.member, "")
            if member == "NameOwnerChanged":
                # the bus daemon's alone: anyone can send this signal to this connection by its unique name
                if sender != BUS_DAEMON or signature != "sss" or msg.body[0] not in self._owners:
                    return
                with self._settled:
                    self._owners[msg.body[0]] = msg.body[2]
                    if msg.body[0] == BUS_NAME:
                        self._refused = ""  # a new owner, or the same plug-in started again: checked afresh
                    self._check()
                    change = self._settle()
                    self._settled.notify_all()
                self._announce(change)
            elif member == "Caret":
                with self._lock:
                    if sender != self._linked or signature != SPEC.signals["Caret"] or not self._present():
                        return
                    was_stale, self._stale, self._declined = self._stale, False, ""
                self._on_caret(*msg.body)
                self._announce_caret(was_stale)
            elif member == "Hidden":
                with self._lock:
                    if sender != self._linked or signature != SPEC.signals["Hidden"]:
                        return
                    self._drawn = ""
                log.debug("the desktop took the suggestion off the screen")
            elif member == "Visible":
                self._visible(sender, signature, msg.body)
            elif member == "App":
                with self._lock:
                    if sender != self._linked or signature != SPEC.signals["App"] or tuple(msg.body[0]) == self._app:
                        return
                    self._app = tuple(msg.body[0])
                self._on_app()
            return
        if kind not in (MessageType.method_return, MessageType.error):
            return
        with self._lock:
            step = self._steps.pop(fields.get(HeaderFields.reply_serial, 0), None)
        if step is not None:
            self._handshake(msg, *step)
            return
        with self._lock:
            if fields.get(HeaderFields.reply_serial) != self._serial or not self._wanted \
                    or sender != self._serial_to:  # an answer to an older call, or not from whom it went to
                return
            self._answered = True
            text, total, desktop = self._wanted, len(self._wanted), self._desktop()
            listener = self._listener if self._listener is not None and self._listener[0] == text else None
            stale = kind == MessageType.error and fields.get(HeaderFields.error_name) == STALE_ERROR
            if stale:  # nothing drawn; the popup shows it until KWin says where the caret is
                self._stale, self._declined = True, text
                self._wanted, self._drawn, self._answer, self._provisional = "", "", None, False
            else:
                ok = kind == MessageType.method_return and signature == SPEC.methods["Show"].outputs and msg.body[0]
                chars = min(msg.body[1], total) if ok else 0
                self._drawn = text if ok else ""
                self._answer = (text, chars)
                self._provisional = False
        if stale:
            log.debug("KWin's caret is behind the application's: the suggestion goes to IBus's popup")
            self._on_stale(text, listener[1] if listener is not None else None)
            return
        if ok:
            log.debug("%s drew the suggestion (%d of %d chars in full)", desktop, chars, total)
        else:
            log.debug("%s did not draw the suggestion (%s)", desktop,
                      "no room at the caret" if kind == MessageType.method_return else "the call failed")
        self._on_drawn(bool(ok), chars, total)
        if listener is not None:
            listener[1](text[:chars])

    def _visible(self, sender: str, signature: str, body: tuple) -> None:
        """``Visible(chars)``: the plug-in placed the text shown again, and ``chars`` of it are visible in full."""
        with self._lock:
            if sender != self._linked or signature != SPEC.signals["Visible"] or not self._drawn or not self._answered \
                    or self._answer is None or self._answer[0] != self._drawn:
                return  # not from the plug-in, nothing drawn, or about a text older than the Show unanswered
            text = self._drawn
            chars = min(body[0], len(text))
            if chars == self._answer[1]:
                return
            self._answer = (text, chars)
            if not chars:
                self._drawn = ""
            listener = self._listener if self._listener is not None and self._listener[0] == text else None
            desktop = self._desktop()
        log.debug("%s placed the suggestion again: %d of %d chars in full", desktop, chars, len(text))
        if listener is not None:
            listener[1](text[:chars])

    def _handshake(self, msg: Message, step: str, unique: str) -> None:
        """The answer to a step of :meth:`_check` for the plug-in on the connection ``unique``."""
        fields = msg.header.fields
        sender, signature = fields.get(HeaderFields.sender, ""), fields.get(HeaderFields.signature, "")
        answered = msg.header.message_type == MessageType.method_return
        program = None
        if step == "pid" and answered and sender == BUS_DAEMON and signature == "u":
            program = self._verify(msg.body[0])  # reads /proc: not under the lock
        with self._settled:
            desktop = self._desktop()
            if step == "pid":
                self._programs[unique] = program
                if self._compositor(unique) is None and unique == self._owners[BUS_NAME]:
                    log.info("the owner of %s is not %s: suggestions use IBus's popup", BUS_NAME,
                             "KWin" if unique == self._owners[KWIN_NAME] else "GNOME Shell")
            elif step == "version":
                version = msg.body[0][1] if answered and sender == unique and signature == "v" \
                    and msg.body[0][0] == SPEC.properties["Version"] else 0
                if version >= PROTOCOL and unique == self._owners[BUS_NAME]:
                    self._call(new_method_call(_plugin(unique), "Register"), "register", unique)
                elif unique == self._owners[BUS_NAME]:
                    self._refused = unique
                    log.info("%s of version %d is older than this engine's (%d): suggestions use IBus's popup "
                             "until it is updated (log out and in; on Plasma: ghosttype kde install)",
                             desktop, version, PROTOCOL)
            elif answered and sender == unique and not signature and unique == self._owners[BUS_NAME]:
                self._linked = unique  # registered: it serves this connection alone
                self._watch()  # a new effect (KWin restarted, the effect reloaded) knows no watcher
            elif unique == self._owners[BUS_NAME]:
                self._refused = unique
                log.info("%s did not accept this engine (%s): suggestions use IBus's popup", desktop,
                         fields.get(HeaderFields.error_name, "no answer"))
            self._check()
            change = self._settle()
            self._settled.notify_all()
        self._announce(change)
