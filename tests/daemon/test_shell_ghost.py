"""The engine's link to ghosttype's GNOME Shell extension (:mod:`daemon.frontends.ibus.inline.shell_ghost`)
over a private ``dbus-daemon``: the handshake (the extension's name counts only while GNOME Shell's
own connection owns it), the suggestion going to it alone, what counts as drawn, and the engine
(real engine, controller and link, started as ``ghosttype ibus run`` starts it) drawing with it
instead of IBus's popup, taking Tab only for a suggestion GNOME Shell drew.

GNOME Shell's side is a second connection that owns ``org.gnome.Shell`` and, like the extension
running inside GNOME Shell, the extension's name on the same connection, and answers ``Version``,
``Register`` and ``Show`` the way extension.js does.  That connection is this test's own process, so
the tests that stand it in for GNOME Shell say so to the engine (:func:`runs`: this process runs
``gnome-shell``); the engine's own check refuses this process (a test below).  The extension itself
runs in GNOME Shell 51 in the desktop tier (tests/desktop).
"""

from __future__ import annotations

import collections
import os
import threading
import time

import pytest
from jeepney import DBusAddress, HeaderFields, MessageType, new_error, new_method_call, new_method_return, new_signal
from jeepney.io.threading import ReceiveStopped, open_dbus_connection

from daemon.frontends.ibus import menu
from daemon.frontends.ibus.clients import text_follows_caret
from daemon.frontends.ibus.inline.shell_ghost import BUS_NAME, MAX_TEXT_CHARS, OBJECT_PATH, PROTOCOL, SHELL_NAME, ShellGhost
from daemon.frontends.ibus.service import start_shell_ghost
from daemon.user_actions import UserActions
from tests.daemon.test_ibus_bus_order import bus_address  # noqa: F401  (the private dbus-daemon)
from tests.daemon.test_ibus_engine import ESC, TAB, Rig, press, type_text

_DBUS = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus")


def wait_until(pred, timeout: float = 5.0) -> bool:
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def runs(program: str):
    """Stands in for the engine's process check: this test's own process (where every fake
    compositor's connection lives) runs ``program``; any other process runs nothing that counts."""
    me = os.getpid()
    return lambda pid: program if pid == me else None


class Peer:
    """A connection owning ``names``; answers Show with ``drawn`` and records every call it gets
    (``Offset`` calls apart, in ``offsets``; the handshake's ``Get`` of ``Version`` and ``Register``
    in ``handshake``); ``version``: the protocol it says it speaks (1: no ``Offset``)."""

    def __init__(self, address: str, names: tuple[str, ...]) -> None:
        self.conn = open_dbus_connection(address)
        self.unique = self.conn.unique_name
        self.calls: list[tuple[str, tuple]] = []
        self.handshake: list[str] = []
        self.senders: dict[str, str] = {}  #: who made the last call of each method
        #: calls of each method received, and of those answered and followed up (:meth:`served` returned)
        self.received: collections.Counter[str] = collections.Counter()
        self.handled: collections.Counter[str] = collections.Counter()
        self.offsets: list[tuple] = []
        self.version = PROTOCOL
        self.refuse = False  #: answer Register with AccessDenied (another engine registered first)
        self.show_answer: tuple | None = None  #: (signature, body) to answer Show with instead
        self.answering = True  #: False: Show calls go unanswered (GNOME Shell busy)
        self.drawn = True
        self.visible: int | None = None  #: characters visible in full (cut with an ellipsis); None: all
        self.error: str | None = None  #: answer Show with this D-Bus error (KWin's effect: a stale caret)
        self._replies: dict[int, object] = {}
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        for name in names:
            self.call("RequestName", "su", (name, 0))

    def call(self, member: str, signature: str, body: tuple):
        serial = next(self.conn.outgoing_serial)
        self.conn.send(new_method_call(_DBUS, member, signature, body), serial=serial)
        assert wait_until(lambda: serial in self._replies), f"no answer to {member}"
        return self._replies.pop(serial)

    def _answer(self, msg) -> None:
        try:
            self.conn.send(msg)
        except OSError:  # closed while answering: the test is over
            pass

    def _serve(self) -> None:
        while True:
            try:
                msg = self.conn.receive()
            except (ReceiveStopped, OSError, EOFError, ValueError):
                return
            kind = msg.header.message_type
            if kind in (MessageType.method_return, MessageType.error):
                self._replies[msg.header.fields.get(5)] = msg
            elif kind == MessageType.method_call:
                member = msg.header.fields.get(3)
                self.senders[member] = msg.header.fields.get(7)
                self.received[member] += 1
                if member in ("Get", "Register"):
                    self.handshake.append(member)
                    if member == "Get":
                        self._answer(new_method_return(msg, "v", (("u", self.version),)))
                    elif self.refuse:
                        self._answer(new_error(msg, "org.freedesktop.DBus.Error.AccessDenied"))
                    else:
                        self._answer(new_method_return(msg))
                    continue
                if member == "Offset":
                    self.offsets.append(msg.body)
                    if self.version < 2:
                        self._answer(new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod"))
                        continue
                else:
                    self.calls.append((member, msg.body))
                if member == "Show" and not self.answering:
                    continue
                if member == "Show" and self.error:
                    self._answer(new_error(msg, self.error))
                elif member == "Show" and self.show_answer is not None:
                    self._answer(new_method_return(msg, *self.show_answer))
                elif member == "Show":
                    n = len(msg.body[0]) if self.visible is None else self.visible
                    self._answer(new_method_return(msg, "bu", (self.drawn, n if self.drawn else 0)))
                else:
                    self._answer(new_method_return(msg))
                try:
                    self.served(member)
                except OSError:  # closed while following up, as in _answer: the test is over
                    pass
                self.handled[member] += 1

    def served(self, member: str) -> None:
        """Called once a call of ``member`` is answered (the plug-ins' own follow-ups)."""

    def hidden(self) -> None:
        """The text left the screen: Hidden, to the engine that registered alone (as the plug-ins send it)."""
        self.unicast(self.senders["Register"], OBJECT_PATH, BUS_NAME, "Hidden", "", ())

    def placed_again(self, chars: int) -> None:
        """The text shown was placed again (the caret moved) and ``chars`` of it are visible in full now:
        Visible, to the engine that registered alone (as the plug-ins send it)."""
        self.unicast(self.senders["Register"], OBJECT_PATH, BUS_NAME, "Visible", "u", (chars,))

    def app(self, ids: list[str], to: str | None = None) -> None:
        """The application that has the keys: App, to the engine that registered alone (as the plug-ins
        send it), or to ``to``."""
        self.unicast(to or self.senders["Register"], OBJECT_PATH, BUS_NAME, "App", "as", (ids,))

    def unicast(self, to: str, path: str, interface: str, member: str, signature: str, body: tuple) -> None:
        """A signal sent to the connection ``to`` alone (it reaches it whatever its match rules)."""
        msg = new_signal(DBusAddress(path, interface=interface), member, signature, body)
        msg.header.fields[HeaderFields.destination] = to
        self.conn.send(msg)

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def ghost(bus_address):
    events = {"changes": 0, "drawn": []}
    g = ShellGhost(on_change=lambda: events.__setitem__("changes", events["changes"] + 1),
                   on_drawn=lambda d, c, t: events["drawn"].append((d, c, t)), verify=runs("gnome-shell"))
    g.events = events
    yield g
    g.close()


def test_the_extension_counts_only_inside_gnome_shell_and_an_impostor_never_gets_the_text(bus_address, ghost):
    impostor = Peer(bus_address, (BUS_NAME,))  # takes the extension's name first, on a connection of its own
    shell = Peer(bus_address, (SHELL_NAME,))
    try:
        ghost.start(bus_address)
        assert not ghost.present
        ghost.draw("tor that allows")
        time.sleep(0.3)
        assert impostor.calls == [] and shell.calls == []
        assert not ghost.drawn("tor that allows")
    finally:
        impostor.close()
        shell.close()


def test_a_suggestion_counts_as_drawn_once_gnome_shell_says_so_and_hiding_clears_it(bus_address, ghost):
    shell = Peer(bus_address, (SHELL_NAME, BUS_NAME))
    try:
        ghost.start(bus_address)
        assert ghost.present
        ghost.draw("tor that allows")
        assert wait_until(lambda: ghost.drawn("tor that allows"))
        assert shell.calls == [("Show", ("tor that allows",))]
        assert ghost.events["drawn"] == [(True, 15, 15)]
        ghost.draw("or that allows")  # its first character typed: what is drawn still begins with it
        assert ghost.drawn("or that allows")
        ghost.draw("")
        assert not ghost.drawn("or that allows")
        assert wait_until(lambda: shell.calls[-1] == ("Hide", ()))
    finally:
        shell.close()


def test_nothing_counts_as_drawn_when_gnome_shell_had_no_room(bus_address, ghost):
    shell = Peer(bus_address, (SHELL_NAME, BUS_NAME))
    shell.drawn = False
    try:
        ghost.start(bus_address)
        ghost.draw("tor that allows")
        assert wait_until(lambda: ghost.events["drawn"] == [(False, 0, 15)])
        assert not ghost.drawn("tor that allows")
    finally:
        shell.close()


def test_hidden_by_gnome_shell_and_the_extension_going_away_are_followed(bus_address, ghost):
    shell = Peer(bus_address, (SHELL_NAME, BUS_NAME))
    try:
        ghost.start(bus_address)
        ghost.draw("tor")
        assert wait_until(lambda: ghost.drawn("tor"))
        shell.hidden()  # the focus or the caret moved
        assert wait_until(lambda: not ghost.drawn("tor"))
        ghost.draw("tor")
        assert wait_until(lambda: ghost.drawn("tor"))
        shell.call("ReleaseName", "s", (BUS_NAME,))  # the extension was disabled
        assert wait_until(lambda: not ghost.present)
        assert ghost.events["changes"] == 1
        assert not ghost.drawn("tor")
        calls = len(shell.calls)
        ghost.draw("tor")
        time.sleep(0.3)
        assert len(shell.calls) == calls  # nothing goes to a name GNOME Shell no longer owns
    finally:
        shell.close()


def test_a_suggestion_placed_again_counts_what_the_plugin_says_is_visible_and_only_from_it(bus_address, ghost):
    """Visible (the caret moved and the window's edge cuts the text elsewhere) changes the part heard by
    whoever waited for the text; from another sender, for nothing drawn, or while a Show is unanswered (it is
    about the older text) it counts for nothing."""
    shell = Peer(bus_address, (SHELL_NAME, BUS_NAME))
    other = Peer(bus_address, ())
    heard: list[str] = []
    shell.visible = 3
    try:
        ghost.start(bus_address)
        ghost.draw("lo world")
        ghost.when_drawn("lo world", heard.append)
        assert wait_until(lambda: heard == ["lo "])
        other.unicast(shell.senders["Register"], OBJECT_PATH, BUS_NAME, "Visible", "u", (8,))  # not the plug-in
        shell.placed_again(5)
        assert wait_until(lambda: heard == ["lo ", "lo wo"]), heard
        shell.placed_again(5)  # the same count again: nothing new
        shell.placed_again(99)  # never more than the text
        assert wait_until(lambda: heard == ["lo ", "lo wo", "lo world"]), heard
        assert ghost.drawn("lo world")
        shell.answering = False
        ghost.draw("new text")  # its answer has not come: a Visible now is about "lo world"
        ghost.when_drawn("new text", heard.append)
        shell.placed_again(2)
        ghost.hide()
        shell.placed_again(1)  # nothing is drawn
        time.sleep(0.3)
        assert heard == ["lo ", "lo wo", "lo world"]
        assert not ghost.drawn("new text") and not ghost.drawn("lo world")
    finally:
        shell.close()
        other.close()


def test_nothing_is_drawn_over_text_after_the_caret_on_its_line(bus_address, ghost):
    assert text_follows_caret(("ab cd", 2, 2))
    assert not text_follows_caret(("ab   \nnext line", 2, 2))
    assert not text_follows_caret(None)  # no surrounding text (terminals): the end of the line is assumed
    shell = Peer(bus_address, (SHELL_NAME, BUS_NAME))
    try:
        ghost.start(bus_address)
        ghost.draw("tor", ("text ed and more", 7, 7))
        time.sleep(0.3)
        assert shell.calls == [] and not ghost.drawn("tor")
    finally:
        shell.close()


def test_the_application_the_plugin_names_counts_only_from_it_and_goes_with_it(bus_address):
    heard = []
    ghost = ShellGhost(on_app=lambda: heard.append(ghost.app), verify=runs("gnome-shell"))
    shell = Peer(bus_address, (SHELL_NAME, BUS_NAME))
    impostor = Peer(bus_address, ())
    try:
        ghost.start(bus_address)
        assert ghost.present and ghost.app == ()
        me = shell.senders["Register"]
        impostor.app(["keepassxc", "keepassxc"], to=me)  # anyone can send a signal to the engine's name
        shell.app(["org.gnome.texteditor", "gnome-text-editor"])
        assert wait_until(lambda: heard == [("org.gnome.texteditor", "gnome-text-editor")]), heard
        shell.app(["org.gnome.texteditor", "gnome-text-editor"])  # the same again: nothing new
        shell.app([])  # GNOME Shell's own search has the keys
        assert wait_until(lambda: len(heard) == 2) and heard[1] == () and ghost.app == ()
        shell.app(["firefox", "firefox"])
        assert wait_until(lambda: ghost.app == ("firefox", "firefox"))
        shell.close()  # the extension went: it names nothing any more
        assert wait_until(lambda: not ghost.present) and ghost.app == ()
        time.sleep(0.2)
        assert all(ids != ("keepassxc", "keepassxc") for ids in heard)
    finally:
        impostor.close()
        shell.close()
        ghost.close()


# ---- the engine with the extension: the real engine, controller and link; IBus itself is recorded ----


def linked_engine(bus_address: str, monkeypatch, peer: Peer, client: str, program: str):
    """(rig, peer, engine, output): an engine of ``client`` whose link to the desktop's display (``peer``,
    in this process, which stands for ``program``) starts the way ``ghosttype ibus run`` starts it, on
    this private session bus; closes both after."""
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", bus_address)
    rig = Rig()
    link = start_shell_ghost(rig.frontend, verify=runs(program))
    try:
        assert wait_until(lambda: rig.frontend.shell is not None and rig.frontend.shell.present)
        engine, out = rig.engine(client=client)
        yield rig, peer, engine, out
    finally:
        link.close()
        peer.close()


@pytest.fixture
def gnome(bus_address, monkeypatch):
    """An engine on GNOME (client ``gnome-shell``: the popup is the display without the extension)."""
    yield from linked_engine(bus_address, monkeypatch, Peer(bus_address, (SHELL_NAME, BUS_NAME)), "gnome-shell",
                             "gnome-shell")


def test_on_gnome_the_denylist_and_off_in_follow_the_application_the_extension_names(gnome, tmp_path):
    """IBus names every Wayland client "gnome-shell": the application comes from the extension's App."""
    rig, shell, engine, out = gnome
    rig.frontend.actions = UserActions(tmp_path / "config.toml", lambda: rig.controller.config,
                                       rig.controller.apply_config)
    assert engine.app_id() == ""
    shell.app(["org.keepassxc.keepassxc", "keepassxc"])  # on the default denylist
    assert wait_until(lambda: engine.app_id() == "keepassxc")
    type_text(engine, "my secret pass")
    assert rig.worker.requests == [] and rig.controller.buffer_text == ""
    shell.app(["org.gnome.texteditor", "gnome-text-editor"])  # the user moved to the editor: suggestions again
    assert wait_until(lambda: engine.app_id() == "gnome-text-editor")
    type_text(engine, "Say hel")
    assert rig.worker.requests and rig.controller.buffer_text.endswith("Say hel")
    assert out.props[menu.PROP_OFF_IN_APP].label == "Off in gnome-text-editor"
    shell.app(["org.qtproject.pyqt", "python3.13"])  # an interpreter runs it: the app id names it
    assert wait_until(lambda: engine.app_id() == "org.qtproject.pyqt")


def test_on_gnome_the_extension_draws_the_suggestion_instead_of_the_popup_and_tab_inserts_it(gnome):
    rig, shell, engine, out = gnome
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert wait_until(lambda: rig.frontend.shell.drawn("lo world"))
    assert shell.calls == [("Show", ("lo world",))]
    assert out.aux == "" and out.preedit == ""  # never both
    assert press(engine, TAB) is True
    assert out.committed == ["lo world"]
    assert wait_until(lambda: shell.calls[-1] == ("Hide", ()))


def test_tab_and_esc_reach_the_application_while_gnome_shell_has_not_drawn_the_suggestion(gnome):
    rig, shell, engine, out = gnome
    shell.drawn = False  # no room at the caret
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert wait_until(lambda: shell.calls == [("Show", ("lo world",))])
    time.sleep(0.2)
    assert press(engine, TAB) is False
    assert out.committed == [] and out.aux == ""
    shell.drawn = True
    type_text(engine, "l")
    rig.deliver("o world")
    assert wait_until(lambda: rig.frontend.shell.drawn("o world"))
    assert press(engine, ESC) is True  # drawn: Esc dismisses it


def test_when_the_extension_goes_the_suggestion_moves_to_the_popup(gnome):
    rig, shell, engine, out = gnome
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert wait_until(lambda: rig.frontend.shell.drawn("lo world"))
    shell.call("ReleaseName", "s", (BUS_NAME,))  # the user switched it off
    assert wait_until(lambda: out.aux == "lo world")
    assert press(engine, TAB) is True
    assert out.committed == ["lo world"]


def test_after_tab_the_next_suggestion_waits_for_the_clients_new_caret(gnome):
    """A commit moves the caret; GNOME Shell learns where only from the client (Firefox: at its next key).
    The next suggestion is drawn once the client has said where its caret is, never where it was."""
    rig, shell, engine, out = gnome
    type_text(engine, "Say hel")
    rig.deliver("lo")
    assert wait_until(lambda: rig.frontend.shell.drawn("lo"))
    assert press(engine, TAB) is True
    rig.deliver(" world")
    time.sleep(0.3)
    assert ("Show", (" world",)) not in shell.calls and not rig.frontend.shell.drawn(" world")
    engine.set_cursor_location(120, 40, 0, 18)
    assert wait_until(lambda: rig.frontend.shell.drawn(" world"))
    assert shell.calls[-1] == ("Show", (" world",))
    assert press(engine, TAB) is True
    assert out.committed == ["lo", " world"]


def test_where_gnome_shell_cut_the_suggestion_at_the_windows_edge_tab_inserts_what_is_visible(gnome):
    rig, shell, engine, out = gnome
    shell.visible = 3  # "lo " and an ellipsis fit before the window's edge
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert wait_until(lambda: rig.frontend.shell.drawn("lo world"))
    assert wait_until(lambda: rig.controller.state().drawn != "")
    assert press(engine, TAB) is True
    assert out.committed == ["lo "]


def test_when_the_caret_moved_and_the_edge_cuts_elsewhere_tab_inserts_what_is_visible_now(gnome):
    """GNOME Shell drew "lo " of "lo world"; the client then reported its caret, GNOME Shell placed the text
    again and says "lo wo" is visible in full now: Tab inserts that."""
    rig, shell, engine, out = gnome
    shell.visible = 3
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert wait_until(lambda: rig.frontend.shell.drawn("lo world"))
    assert wait_until(lambda: rig.controller.state().drawn != "")
    assert rig.controller.state().drawn == "lo "
    shell.placed_again(5)
    assert wait_until(lambda: rig.controller.state().drawn == "lo wo")
    assert press(engine, TAB) is True
    assert out.committed == ["lo wo"]


def type_reporting(engine, text: str, late: bool, x0: int = 100, width: int = 12) -> None:
    """Type ``text`` into a client whose caret starts at ``x0`` and moves ``width`` px a character,
    reporting its rectangle after each key: where the caret is, or (``late``: Firefox, GTK 3 on
    GNOME) where it was before the key."""
    engine.set_cursor_location(x0, 40, 0, 18)  # at the focus, before any key
    for i, ch in enumerate(text):
        type_text(engine, ch)
        engine.set_cursor_location(x0 + width * (i if late else i + 1), 40, 0, 18)


def test_a_client_that_reports_its_caret_a_key_late_gets_the_suggestion_where_its_caret_is(gnome):
    """Firefox and GTK 3 report, after each key, the caret from before it: GNOME Shell is told to draw
    one character further right of that rectangle (the engine counted the key and learned the width
    from the client's own rectangles). A client on time: right after its caret."""
    rig, shell, engine, out = gnome
    type_reporting(engine, "Say hel", late=True)
    rig.deliver("lo world")
    assert wait_until(lambda: rig.frontend.shell.drawn("lo world"))
    # the rectangle before "l"; the next character goes one 12 px character right of it, after the thin caret
    assert shell.offsets[-1] == (True, 100 + 12 * 6, 40, 12, 0.0)  # 6 widths: too few to tell the font
    assert press(engine, TAB) is True and out.committed == ["lo world"]

    engine.focus_out()
    engine.focus_in()  # another field, on time: nothing learned from the first one holds
    type_reporting(engine, "Say hel", late=False)
    rig.deliver("lo world")
    assert wait_until(lambda: rig.frontend.shell.drawn("lo world"))
    assert shell.offsets[-1] == (True, 100 + 12 * 7, 40, 0, 0.0)


@pytest.mark.parametrize("older, refuses", [(True, False), (False, True)])
def test_an_older_extension_or_one_that_refuses_the_engine_gets_nothing(bus_address, ghost, older, refuses):
    """A GNOME Shell still running an extension older than this engine's protocol (until the next
    login: it would serve any caller), or an extension that did not accept this engine (another
    registered first), is not used: the engine keeps IBus's popup and sends it no text."""
    shell = Peer(bus_address, (SHELL_NAME, BUS_NAME))
    shell.version = PROTOCOL - 1 if older else PROTOCOL
    shell.refuse = refuses
    try:
        ghost.start(bus_address)
        assert not ghost.present
        assert shell.handshake == (["Get"] if older else ["Get", "Register"])
        ghost.draw("tor that allows")
        time.sleep(0.3)
        assert shell.calls == [] and not ghost.drawn("tor that allows")
    finally:
        shell.close()


def test_keys_that_leave_the_caret_keep_what_was_learned_and_a_client_gone_quiet_is_followed(gnome):
    """Chromium at times sends no rectangle after Esc and BackSpace: Esc (passed on, nothing shown) does
    not move the caret, so what the engine learned holds, and the characters typed since the last
    rectangle move the suggestion right of it."""
    rig, shell, engine, out = gnome
    type_reporting(engine, "Say hel", late=False)  # on time: its caret after "l" at 100 + 7 * 12
    assert press(engine, ESC) is False  # nothing shown: Esc goes to the application
    type_text(engine, "lo")  # no rectangle for these two
    rig.deliver(" world")
    assert wait_until(lambda: rig.frontend.shell.drawn(" world"))
    assert shell.offsets[-1] == (True, 100 + 7 * 12, 40, 2 * 12, 0.0)


def test_typing_through_a_suggestion_cut_at_the_windows_edge_keeps_it_cut(gnome):
    """GNOME Shell drew "lo " of "lo world" before the window's edge; the user types "l": until GNOME Shell
    answers for "o world", what shows is "o " (it still ends at the edge), so Tab inserts that, not the
    whole rest."""
    rig, shell, engine, out = gnome
    shell.visible = 3
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert wait_until(lambda: rig.frontend.shell.drawn("lo world"))
    shell.answering = False  # the answer for the advanced suggestion has not come yet
    type_text(engine, "l")
    assert wait_until(lambda: shell.calls[-1] == ("Show", ("o world",)))
    assert press(engine, TAB) is True
    assert out.committed == ["o "]


def test_when_gnome_shell_answers_for_a_typed_through_suggestion_tab_inserts_what_it_drew(gnome):
    """After typing through, GNOME Shell's own answer wins over the count carried over: in its font the
    typed character may be narrower than in the application's, and the edge cut one character more."""
    rig, shell, engine, out = gnome
    shell.visible = 3
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert wait_until(lambda: rig.frontend.shell.drawn("lo world"))
    shell.visible = 1  # "o" and the ellipsis: one character less than carried over
    type_text(engine, "l")
    assert wait_until(lambda: shell.calls[-1] == ("Show", ("o world",)))
    time.sleep(0.3)  # GNOME Shell's answer has come
    assert press(engine, TAB) is True
    assert out.committed == ["o"]
