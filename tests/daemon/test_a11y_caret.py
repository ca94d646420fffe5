"""The caret read from the accessibility bus (:mod:`daemon.frontends.ibus.a11y_caret`), over a private
``dbus-daemon`` standing in for that bus: a registry that records who registers for which event, and an
application that says its caret moved and answers for its characters' extents as AT-SPI's Text interface
does (Thunderbird and Firefox, read over the real bus, are the desktop tier's: tests/desktop).

And the engine's side: it asks for that caret only for a field that reported none after its first keys.
"""

from __future__ import annotations

import functools
import os
import threading
import time

import pytest
from jeepney import DBusAddress, MessageType, new_error, new_method_call, new_method_return, new_signal
from jeepney.io.blocking import open_dbus_connection as open_blocking
from jeepney.io.threading import ReceiveStopped, open_dbus_connection

from daemon.frontends.base import PlatformError
from daemon.frontends.ibus import a11y_caret
from daemon.frontends.ibus.a11y_caret import A11yCaret, caret_after
from tests.daemon.test_ibus_bus_order import bus_address  # noqa: F401  (the private dbus-daemon)
from daemon.frontends.ibus.service import caret_read
from tests.daemon.test_ibus_engine import type_text
from tests.daemon.test_kwin_ghost import kwin_peer, plasma  # noqa: F401  (the fixtures)
from tests.daemon.test_shell_ghost import gnome, wait_until  # noqa: F401  (gnome: the fixture)

_DBUS = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus")
FIELD = "/org/a11y/atspi/accessible/42"


class Stand:
    """One connection that owns ``name`` (when given) and records every call it gets: the registry answers
    RegisterEvent and DeregisterEvent; the application answers GetCharacterExtents from ``extents``
    (offset -> (x, y, w, h)) and refuses anything else."""

    def __init__(self, address: str, name: str = "") -> None:
        self.conn = open_dbus_connection(address)
        self.unique = self.conn.unique_name
        self.calls: list[tuple[str, tuple]] = []
        self.extents: dict[int, tuple[int, int, int, int]] = {}
        self.hung = False  #: the application answers no GetCharacterExtents
        self.zeros = 0  #: so many GetCharacterExtents are answered with zeros first (not laid out yet)
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        if name:
            self.conn.send(new_method_call(_DBUS, "RequestName", "su", (name, 0)))
            assert wait_until(lambda: self.owner(address, name)), f"{name} not taken"

    @staticmethod
    def owner(address: str, name: str) -> bool:
        with open_blocking(address) as c:
            reply = c.send_and_get_reply(new_method_call(_DBUS, "NameHasOwner", "s", (name,)), timeout=2)
        return bool(reply.body[0])

    def _serve(self) -> None:
        while True:
            try:
                msg = self.conn.receive()
            except (ReceiveStopped, OSError, EOFError, ValueError):
                return
            if msg.header.message_type != MessageType.method_call:
                continue
            member = msg.header.fields.get(3)
            self.calls.append((member, msg.body))
            if member in ("RegisterEvent", "DeregisterEvent"):
                answer = new_method_return(msg)
            elif member == "GetCharacterExtents" and self.hung:
                continue
            elif member == "GetCharacterExtents" and self.zeros:
                self.zeros -= 1
                answer = new_method_return(msg, "iiii", (0, 0, 0, 0))
            elif member == "GetCharacterExtents" and msg.header.fields.get(1) == FIELD:
                answer = new_method_return(msg, "iiii", self.extents.get(msg.body[0], (0, 0, 0, 0)))
            else:
                answer = new_error(msg, "org.freedesktop.DBus.Error.UnknownMethod")
            try:
                self.conn.send(answer)
            except OSError:  # closed at the test's end
                return

    def caret_moved(self, offset: int) -> None:
        """The application's event, as atk-bridge and Gecko send it (a broadcast)."""
        signal = new_signal(DBusAddress(FIELD, interface=a11y_caret.EVENT_INTERFACE), a11y_caret.EVENT_MEMBER,
                            "siiva{sv}", ("", offset, 0, ("i", 0), {}))
        self.conn.send(signal)

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def a11y(bus_address):
    """(reader, carets it handed on, the registry, the application) on the stand-in accessibility bus."""
    registry = Stand(bus_address, "org.a11y.atspi.Registry")
    app = Stand(bus_address)
    carets: list[tuple] = []
    reader = A11yCaret(on_caret=lambda *c: carets.append(c))
    reader.start_on(bus_address)
    time.sleep(0.2)  # the match rule is in place
    yield reader, carets, registry, app
    reader.close()
    app.close()
    registry.close()


def test_the_caret_stands_right_of_the_character_before_it():
    assert caret_after(5, (100, 40, 8, 17)) == (108, 40, 0, 17)
    assert caret_after(0, (100, 40, 8, 17)) == (100, 40, 0, 17)  # at the start: the first character's left edge
    assert caret_after(3, (0, 0, 0, 0)) is None  # not laid out yet (Gecko's first answer on a fresh field)


def test_nothing_is_listened_for_or_asked_until_the_engine_follows(a11y):
    reader, carets, registry, app = a11y
    app.extents[4] = (200, 60, 9, 18)
    app.caret_moved(5)
    time.sleep(0.3)
    assert registry.calls == [] and app.calls == [] and carets == []


def test_following_registers_the_event_and_hands_on_the_caret_of_the_senders_process(a11y):
    reader, carets, registry, app = a11y
    reader.follow(True)
    assert wait_until(lambda: registry.calls == [("RegisterEvent", (a11y_caret.EVENT, [], ""))])
    app.extents[4] = (200, 60, 9, 18)
    app.caret_moved(5)
    assert wait_until(lambda: carets == [(os.getpid(), 209, 60, 0, 18)])
    # only one character's extents were asked for: never text, a name or a role
    assert app.calls == [("GetCharacterExtents", (4, a11y_caret.WINDOW_COORDS))]
    app.extents[5] = (209, 60, 8, 18)
    app.caret_moved(6)
    assert wait_until(lambda: carets[-1:] == [(os.getpid(), 217, 60, 0, 18)])
    assert {member for member, _ in app.calls} == {"GetCharacterExtents"}


def test_a_caret_with_no_extents_is_not_handed_on(a11y):
    reader, carets, registry, app = a11y
    reader.follow(True)
    app.caret_moved(3)  # the application answers zeros
    app.extents[3] = (50, 10, 7, 16)
    app.caret_moved(4)
    assert wait_until(lambda: carets == [(os.getpid(), 57, 10, 0, 16)])
    time.sleep(0.2)
    assert len(carets) == 1


def test_an_application_that_stops_answering_is_forgotten_and_read_again_when_it_answers(a11y):
    """Calls awaiting an answer are bounded (a hung application is asked at each key)."""
    reader, carets, registry, app = a11y
    reader.follow(True)
    app.hung = True
    for offset in range(1, 2 * a11y_caret.MAX_CALLS):
        app.caret_moved(offset)
    assert wait_until(lambda: len(app.calls) >= 2 * a11y_caret.MAX_CALLS - 1)
    assert len(reader._calls) <= a11y_caret.MAX_CALLS and carets == []
    app.hung = False
    app.extents[199] = (40, 8, 6, 15)
    app.caret_moved(200)
    assert wait_until(lambda: carets == [(os.getpid(), 46, 8, 0, 15)])


def test_an_answer_of_zeros_is_asked_again_until_the_field_is_laid_out(a11y):
    """Gecko's first answers on a field it has just begun to expose are zeros; asked again, right."""
    reader, carets, registry, app = a11y
    reader.follow(True)
    app.zeros = 2
    app.extents[6] = (70, 30, 8, 16)
    app.caret_moved(7)
    assert wait_until(lambda: carets == [(os.getpid(), 78, 30, 0, 16)])
    assert [m for m, _ in app.calls] == ["GetCharacterExtents"] * 3


def test_stopping_deregisters_and_later_events_are_not_asked_about(a11y):
    reader, carets, registry, app = a11y
    reader.follow(True)
    reader.follow(True)  # once is enough
    reader.follow(False)
    assert wait_until(lambda: [m for m, _ in registry.calls] == ["RegisterEvent", "DeregisterEvent"])
    assert registry.calls[1] == ("DeregisterEvent", (a11y_caret.EVENT, ""))
    app.extents[1] = (5, 5, 5, 5)
    app.caret_moved(2)
    time.sleep(0.3)
    assert app.calls == [] and carets == []


def test_the_bus_is_found_through_the_session_bus(bus_address):
    """``start`` asks org.a11y.Bus (at-spi-bus-launcher) on the session bus where the accessibility bus is;
    here one private bus is both."""
    launcher = open_dbus_connection(bus_address)
    launcher.send(new_method_call(_DBUS, "RequestName", "su", ("org.a11y.Bus", 0)))

    def serve():
        while True:
            try:
                msg = launcher.receive()
            except (ReceiveStopped, OSError, EOFError, ValueError):
                return
            if msg.header.message_type == MessageType.method_call and msg.header.fields.get(3) == "GetAddress":
                launcher.send(new_method_return(msg, "s", (bus_address,)))

    threading.Thread(target=serve, daemon=True).start()
    assert wait_until(lambda: Stand.owner(bus_address, "org.a11y.Bus"))
    reader = A11yCaret(on_caret=lambda *c: None)
    try:
        reader.start(bus_address)
        reader.follow(True)
        assert reader.following
    finally:
        reader.close()
        launcher.close()


def test_no_accessibility_bus_is_an_error_start_reports(bus_address):
    reader = A11yCaret(on_caret=lambda *c: None)
    with pytest.raises(PlatformError):
        reader.start(bus_address)  # nobody owns org.a11y.Bus there


class Follower:
    """The engine's view of the reader: whether it is following."""

    def __init__(self) -> None:
        self.following = False

    def follow(self, on: bool) -> None:
        self.following = on


def gecko(peer, engine, ids=("thunderbird", "thunderbird-bin")) -> None:
    """The plug-in names the focused application (Thunderbird as Debian runs it: Gecko's, whose caret is
    read)."""
    peer.app(list(ids))
    assert wait_until(lambda: engine.app_id() == ids[1])


@pytest.fixture
def follower(gnome):
    """An engine on GNOME whose extension answers (tests/daemon/test_shell_ghost.py) and names Thunderbird,
    with a reader it asks."""
    rig, shell, engine, out = gnome
    reader = rig.frontend.a11y_caret = Follower()
    gecko(shell, engine)
    engine.focus_in("/org/freedesktop/IBus/InputContext_1", "gnome-shell")
    return engine, reader


def test_the_caret_of_an_application_other_than_geckos_is_never_read(gnome):
    """GTK 4's extents are relative to its window widget, not the surface the plug-ins place: never read."""
    rig, shell, engine, out = gnome
    reader = rig.frontend.a11y_caret = Follower()
    gecko(shell, engine, ("org.gnome.texteditor", "gnome-text-editor"))
    engine.focus_in("/org/freedesktop/IBus/InputContext_1", "gnome-shell")
    type_text(engine, "Hello")
    assert not reader.following


def test_the_engine_follows_a_field_that_reported_no_caret_after_its_first_keys_until_it_loses_the_focus(follower):
    engine, reader = follower
    engine.set_cursor_location(0, 69, 0, 0)  # Thunderbird's compose window on GNOME: this, then nothing
    type_text(engine, "He")
    assert not reader.following  # a client a key late (Firefox, Chromium) has not reported yet
    type_text(engine, "l")
    assert reader.following
    engine.focus_out()
    assert not reader.following


def test_the_engine_does_not_follow_a_field_that_reports_its_caret(follower):
    engine, reader = follower
    engine.set_cursor_location(120, 300, 0, 18)  # at the focus-in: perhaps the last application's
    for i, ch in enumerate("Hello"):
        type_text(engine, ch)
        engine.set_cursor_location(128 + 8 * i, 300, 0, 18)  # after each key
    assert not reader.following


def test_a_field_whose_caret_stops_moving_is_followed_after_three_keys_without_one(follower):
    """Firefox on KWin: KWin applied the caret after the first key, then none (Firefox commits its window's
    surface seldom): three keys later its caret is read."""
    engine, reader = follower
    type_text(engine, "S")
    engine.set_cursor_location(108, 40, 0, 18)
    type_text(engine, "ay")
    assert not reader.following
    type_text(engine, " ")
    assert reader.following


def test_a_field_whose_caret_comes_after_all_stops_the_reading(follower):
    engine, reader = follower
    type_text(engine, "Hel")
    assert reader.following
    engine.set_cursor_location(144, 300, 0, 18)
    assert not reader.following
    type_text(engine, "lo")
    assert not reader.following


def test_the_caret_read_goes_to_the_plugin_with_the_applications_process(gnome, bus_address):
    """The reader's caret reaches the extension as SurfaceCaret (the extension places it where that process's
    focused window is)."""
    rig, shell, engine, out = gnome
    registry, app = Stand(bus_address, "org.a11y.atspi.Registry"), Stand(bus_address)
    reader = rig.frontend.a11y_caret = A11yCaret(on_caret=functools.partial(caret_read, rig.frontend))
    try:
        reader.start_on(bus_address)
        time.sleep(0.2)
        gecko(shell, engine)
        engine.focus_in("/org/freedesktop/IBus/InputContext_1", "gnome-shell")
        type_text(engine, "Hel")
        assert wait_until(lambda: registry.calls[-1:] == [("RegisterEvent", (a11y_caret.EVENT, [], ""))])
        app.extents[2] = (300, 120, 7, 17)
        app.caret_moved(3)
        assert wait_until(lambda: ("SurfaceCaret", (os.getpid(), 307, 120, 0, 17)) in shell.calls)
    finally:
        reader.close()
        app.close()
        registry.close()


def test_when_the_reading_stops_the_plugin_goes_back_to_the_desktops_caret(gnome):
    """Focus-out ends the reading, and the plug-in hears it (a SurfaceCaret of no height)."""
    rig, shell, engine, out = gnome
    reader = rig.frontend.a11y_caret = Follower()
    gecko(shell, engine)
    engine.focus_in("/org/freedesktop/IBus/InputContext_1", "gnome-shell")
    type_text(engine, "Hel")
    assert reader.following
    engine.focus_out()
    assert not reader.following
    assert wait_until(lambda: ("SurfaceCaret", (0, 0, 0, 0, 0)) in shell.calls)


def test_on_kwin_a_gecko_field_is_read_from_the_accessibility_bus_from_the_focus_on_until_focus_out(plasma):
    """Firefox and Thunderbird on KWin: KWin passes their caret on seldom (the effect found it keys behind,
    StaleCaret, and the first suggestion went to IBus's popup). Their field's caret is read from the moment
    the plug-in names the application, whatever KWin applies meanwhile, and the suggestion is drawn inline at
    the caret read; another application's is not read."""
    rig, kwin, engine, out = plasma
    reader = rig.frontend.a11y_caret = Follower()
    gecko(kwin, engine, ("org.kde.kwrite", "kwrite"))
    type_text(engine, "Sa")
    assert not reader.following
    gecko(kwin, engine, ("firefox", "firefox-bin"))
    assert wait_until(lambda: reader.following)
    kwin.caret(100, 40, 0, 18)
    type_text(engine, "y")
    kwin.caret(116, 40, 0, 18)  # KWin applied one of the field's carets: the reading goes on
    assert reader.following
    engine.carets.read(os.getpid(), 160, 12, 0, 18)  # as the reader hands it on
    assert wait_until(lambda: ("SurfaceCaret", (os.getpid(), 160, 12, 0, 18)) in kwin.calls)
    rig.deliver(" hello")
    assert wait_until(lambda: rig.frontend.shell.drawn(" hello"))
    assert out.aux == ""  # never the popup
    engine.focus_out()
    assert not reader.following
    engine.focus_in("/org/freedesktop/IBus/InputContext_1", "")
    assert reader.following  # its next field too


def test_a_caret_read_is_on_time_and_tells_a_fixed_width_fields_advance(gnome):
    """Thunderbird's plain-text body on GNOME: IBus hears only the empty field's caret of no size, which the
    engine takes for a Gecko client a key late; the carets read from the accessibility bus come after each
    key, so the suggestion starts at the last one (dx 0), in the field's fixed-width font (its advance)."""
    rig, shell, engine, out = gnome
    reader = rig.frontend.a11y_caret = Follower()
    shell.app(["thunderbird", "thunderbird"])
    assert wait_until(lambda: engine.app_id() == "thunderbird")
    engine.focus_in("/org/freedesktop/IBus/InputContext_1", "gnome-shell")
    engine.set_cursor_location(0, 69, 0, 0)
    typed = "Vim is a highly config"
    for i, ch in enumerate(typed):
        type_text(engine, ch)
        engine.carets.read(os.getpid(), 8 + round(8.8 * (i + 1)), 12, 0, 16)  # ignored until it reads
    assert reader.following
    rig.deliver("urable")
    assert wait_until(lambda: ("Show", ("urable",)) in shell.calls)
    known, x, y, dx, advance = shell.offsets[-1]
    assert known and (x, y) == (8 + round(8.8 * len(typed)), 12) and dx == 0
    assert abs(advance - 8.8) <= 0.25
    surface = [body for member, body in shell.calls if member == "SurfaceCaret"]
    assert surface[-1] == (os.getpid(), 8 + round(8.8 * len(typed)), 12, 0, 16)


@pytest.mark.parametrize("before", [False, True])
def test_the_sessions_accessibility_flag_is_on_while_following_and_as_it_was_after(bus_address, before):
    """Gecko exposes itself only where the session's flag is on (or turns on while it runs): on while a field
    is followed, back to what it was when it is not, and when the engine stops."""
    flag = [before]
    switched: list[tuple[bool, str]] = []

    def switch(on: bool, bus: str) -> bool:
        switched.append((on, bus))
        was, flag[0] = flag[0], on
        return was

    registry = Stand(bus_address, "org.a11y.atspi.Registry")
    reader = A11yCaret(on_caret=lambda *c: None, switch_toolkits=switch)
    reader.start_on(bus_address, "the session bus")
    try:
        reader.follow(True)
        assert wait_until(lambda: flag[0] is True and switched[:1] == [(True, "the session bus")])
        reader.follow(False)
        assert wait_until(lambda: flag[0] is before)
        assert len(switched) == (1 if before else 2)  # a flag that was on is left on
        reader.follow(True)
        assert wait_until(lambda: flag[0] is True and len(switched) == (2 if before else 3))
    finally:
        reader.close()
        registry.close()
    assert flag[0] is before  # the engine stopped while following: back as it was


def test_a_reader_started_on_an_accessibility_bus_alone_leaves_the_flag_alone(a11y):
    reader, carets, registry, app = a11y
    switched: list[bool] = []
    reader._switch_toolkits = lambda on, bus: switched.append(on) or False
    reader.follow(True)
    assert wait_until(lambda: registry.calls[:1] == [("RegisterEvent", (a11y_caret.EVENT, [], ""))])
    reader.follow(False)
    time.sleep(0.2)
    reader.close()
    assert switched == []
