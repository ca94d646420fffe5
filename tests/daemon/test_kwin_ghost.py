"""The engine's link to ghosttype's KWin effect (:mod:`daemon.frontends.ibus.inline.shell_ghost`) over a
private ``dbus-daemon``: the effect counts only while KWin's own connection owns its name, the engine
asks it for the focused field's carets (``Watch``), hears them as ``Caret`` signals sent to it alone
(KWin gives an input method no caret on Plasma's IBus route), and the real engine draws with the
effect, learning from those carets where the next character goes, as on GNOME.

KWin's side is a second connection that owns ``org.kde.KWin`` and the effect's name, and answers the
way ghosteffect.cpp does.  The effect itself runs in KWin 6.7 in the desktop tier (tests/desktop).
"""

from __future__ import annotations

import time

import pytest
from jeepney import DBusAddress, HeaderFields, new_signal

from daemon.frontends.ibus.inline.shell_ghost import BUS_NAME, KWIN_NAME, OBJECT_PATH, STALE_ERROR, ShellGhost
from tests.daemon.test_ibus_bus_order import bus_address  # noqa: F401  (the private dbus-daemon)
from tests.daemon.test_ibus_engine import TAB, press, type_text
from tests.daemon.test_shell_ghost import Peer, linked_engine, runs, wait_until


class KWin(Peer):
    """KWin with ghosttype's effect loaded: it owns ``org.kde.KWin`` and the effect's name on one
    connection, and tells the caret to whoever called ``Watch`` last."""

    def __init__(self, address: str, names: tuple[str, ...] = (KWIN_NAME, BUS_NAME)) -> None:
        self.last: tuple[int, int, int, int] | None = None  #: the caret it told the watcher last
        super().__init__(address, names)

    def caret(self, x: int, y: int, w: int, h: int, to: str = "") -> None:
        """The focused field's caret moved: a Caret signal to the watcher alone (``to``: someone else)."""
        if not to:
            self.last = (x, y, w, h)
        msg = new_signal(DBusAddress(OBJECT_PATH, interface=BUS_NAME), "Caret", "iiii", (x, y, w, h))
        msg.header.fields[HeaderFields.destination] = to or self.watching
        self.conn.send(msg)

    def served(self, member: str) -> None:
        """As ghosteffect.cpp's Watch: the caret it has, told again to the watcher."""
        if member == "Watch" and self.last is not None:
            self.caret(*self.last, to=self.senders["Watch"])

    @property
    def watching(self) -> str:
        """The unique name that called Watch (the engine's connection), once each Watch is served: a caret told
        before that would be told again by :meth:`served` (a loaded machine ran the test's first caret in between)."""
        assert wait_until(lambda: "Watch" in self.senders and self.handled["Watch"] == self.received["Watch"]), \
            "nobody called Watch"
        return self.senders["Watch"]


@pytest.fixture
def kwin_peer(bus_address):
    """``kwin_peer(names)``: a connection owning ``names`` (by default KWin's and the effect's)."""
    peers = []

    def make(names=(KWIN_NAME, BUS_NAME)) -> KWin:
        p = KWin(bus_address, names)
        peers.append(p)
        return p
    yield make
    for p in peers:
        p.close()


def test_the_effect_counts_only_inside_kwin_and_only_kwins_caret_is_heard(bus_address, kwin_peer):
    carets = []
    g = ShellGhost(on_caret=lambda *c: carets.append(c), verify=runs("kwin_wayland"))
    impostor = kwin_peer((BUS_NAME,))  # the effect's name, on a connection that is not KWin's
    kwin = kwin_peer((KWIN_NAME,))
    try:
        g.start(bus_address)
        assert not g.present
        time.sleep(0.2)
        assert impostor.calls == [] and kwin.calls == []  # nobody is asked for carets
        me = g._conn.unique_name
        impostor.caret(10, 20, 1, 18, to=me)  # a caret from a connection that is not the effect: ignored
        time.sleep(0.3)
        assert carets == []
    finally:
        g.close()


def test_the_engine_asks_kwins_effect_for_carets_and_hears_them(bus_address, kwin_peer):
    carets = []
    kwin = kwin_peer()
    g = ShellGhost(on_caret=lambda *c: carets.append(c), verify=runs("kwin_wayland"))
    try:
        g.start(bus_address)
        assert g.present
        assert kwin.watching == g._conn.unique_name
        kwin.caret(120, 40, 1, 18)
        assert wait_until(lambda: carets == [(120, 40, 1, 18)])
        kwin.call("ReleaseName", "s", (BUS_NAME,))  # the user switched the effect off
        assert wait_until(lambda: not g.present)
        kwin.caret(130, 40, 1, 18, to=g._conn.unique_name)  # from a connection that no longer owns the name
        time.sleep(0.3)
        assert carets == [(120, 40, 1, 18)]
        kwin.senders.clear()
        kwin.call("RequestName", "su", (BUS_NAME, 0))  # switched on again: a new effect knows no watcher
        assert wait_until(lambda: g.present)
        assert kwin.watching == g._conn.unique_name
    finally:
        g.close()


def test_a_listener_that_comes_after_kwin_refused_the_text_hears_it_from_the_popup(bus_address, kwin_peer):
    """The engine sends Show, then asks to hear what is drawn; KWin's effect may refuse the text for a stale
    caret in between (its answer is read on another thread). The listener must then be handed to the popup,
    which draws the text, and never hear "nothing drawn": the controller would not know the suggestion is on
    screen and Tab would go to the application (seen once on a loaded CI machine)."""
    kwin = kwin_peer()
    stale: list = []
    g = ShellGhost(on_stale=lambda text, drawn: stale.append((text, drawn)), verify=runs("kwin_wayland"))
    try:
        g.start(bus_address)
        assert wait_until(lambda: g.present)
        kwin.caret(100, 40, 0, 18)
        kwin.error = STALE_ERROR
        g.show("lo world")
        assert wait_until(lambda: g.stale and stale == [("lo world", None)])  # refused before anyone listened
        heard: list = []
        g.when_drawn("lo world", heard.append)
        assert heard == [] and len(stale) == 2 and stale[1] == ("lo world", heard.append)
        g.when_drawn("another", heard.append)  # a text that was never refused: nothing of it drawn
        assert heard == [""]
        kwin.error = None
        kwin.caret(130, 40, 0, 18)  # KWin knows the caret again: nothing counts as refused any more
        assert wait_until(lambda: not g.stale)
        g.when_drawn("lo world", heard.append)
        assert heard == ["", ""] and len(stale) == 2
    finally:
        g.close()


class Nothing:
    """Stands in for the trail's shift before any caret reached the engine."""
    rect = (None,)


@pytest.fixture
def plasma(bus_address, monkeypatch):
    """An engine on Plasma's IBus route (client ``wayland``, no SetCursorLocation from IBus) linked to
    KWin's effect."""
    yield from linked_engine(bus_address, monkeypatch, KWin(bus_address), "wayland", "kwin_wayland")


def test_on_plasma_the_effect_draws_where_its_carets_say_the_next_character_goes_and_tab_inserts_it(plasma):
    """KWin's carets reach the engine as Caret signals, as GNOME's IBus hands it SetCursorLocation: the
    engine learns from them where the next character goes and tells the effect (Offset)."""
    rig, kwin, engine, out = plasma
    for i, ch in enumerate("Say hel"):
        type_text(engine, ch)
        kwin.caret(100 + 12 * (i + 1), 40, 0, 18)  # the client's caret after the key
        assert wait_until(lambda: (engine.trail.shift() or Nothing).rect[0] == 100 + 12 * (i + 1)), \
            f"the caret after {ch!r} never reached the engine"
    rig.deliver("lo world")
    assert wait_until(lambda: rig.frontend.shell.drawn("lo world"))
    assert kwin.calls[-1] == ("Show", ("lo world",))
    assert kwin.offsets[-1] == (True, 100 + 12 * 7, 40, 0, 0.0)  # at the thin caret KWin reported
    assert out.aux == "" and out.preedit == ""  # not the popup, not the preedit
    assert press(engine, TAB) is True
    assert out.committed == ["lo world"]


def test_a_caret_kwin_told_before_the_focus_in_is_told_again_and_a_late_client_is_placed_from_its_third_key(plasma):
    """GTK 3's mousepad on Plasma reports its caret as its field gets the keyboard: the one caret a late
    client's rectangles can be read against before a BackSpace. Told before IBus tells the engine of the
    focus-in, the field before hears it and the new field's trail, cleared at the focus-in, has none (and the
    effect passes no repeat). The engine asks the effect again at each focus-in (Watch), which tells the caret
    it reads then: by the third key the client is known to be late and the suggestion stands at its caret."""
    rig, kwin, engine, out = plasma
    kwin.caret(100, 40, 0, 18)  # the new field's caret before its first key, heard by the field before
    assert wait_until(lambda: (engine.trail.shift() or Nothing).rect[0] == 100)
    engine.focus_in("/org/freedesktop/IBus/InputContext_1", "wayland")  # the new field
    assert wait_until(lambda: (engine.trail.shift() or Nothing).rect[0] == 100), "the caret was not told again"
    for i, ch in enumerate("Say hel"):
        type_text(engine, ch)
        if i:  # after each key the caret before it: after the first, the one told already (KWin passes no repeat)
            kwin.caret(100 + 12 * i, 40, 0, 18)
            assert wait_until(lambda: (engine.trail.shift() or Nothing).rect[0] == 100 + 12 * i)
    assert engine.trail.late is True
    rig.deliver("lo world")
    assert wait_until(lambda: rig.frontend.shell.drawn("lo world"))
    known, x, _y, dx, _advance = kwin.offsets[-1]
    assert known and x + dx == 100 + 12 * 7  # where the caret is after the seventh key, not a character left


def test_in_a_fixed_width_field_the_effect_hears_its_characters_advance(plasma):
    """Eight characters in a row as wide (a terminal, an editor, a page's textarea): the effect is told how
    wide, to draw the suggestion in a fixed-width font as wide; the advance may be fractional."""
    rig, kwin, engine, out = plasma
    for i, ch in enumerate("Say hello, w"):
        type_text(engine, ch)
        kwin.caret(round(100 + 9.5 * (i + 1)), 40, 0, 18)
        assert wait_until(lambda: (engine.trail.shift() or Nothing).rect[0] == round(100 + 9.5 * (i + 1)))
    rig.deliver("orld")
    assert wait_until(lambda: rig.frontend.shell.drawn("orld"))
    known, x, _y, _dx, advance = kwin.offsets[-1]
    assert known and x == round(100 + 9.5 * 12) and abs(advance - 9.5) <= 0.25


def test_where_kwins_caret_is_stale_the_popup_shows_the_suggestion_until_kwin_knows_the_caret_again(plasma):
    """Firefox commits its window's surface seldom, and KWin applies a text-input cursor rectangle only
    with such a commit: the effect then refuses to draw at a caret keys behind (it would cover typed
    text). The suggestion goes to IBus's popup, Tab inserts it; once KWin says where the caret is, the
    next suggestion is drawn inline again."""
    rig, kwin, engine, out = plasma
    kwin.caret(100, 40, 0, 18)
    assert wait_until(lambda: engine.trail.shift() is not None)
    kwin.error = STALE_ERROR
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert wait_until(lambda: out.aux == "lo world")  # the popup, once the effect said its caret is stale
    assert ("Show", ("lo world",)) in kwin.calls and not rig.frontend.shell.drawn("lo world")
    assert rig.frontend.shell.stale
    assert wait_until(lambda: rig.controller.state().drawn == "lo world")  # the popup said it drew it
    assert press(engine, TAB) is True  # on screen (the popup): Tab inserts it
    assert out.committed == ["lo world"]
    kwin.error = None
    kwin.calls.clear()
    kwin.caret(100 + 12 * 15, 40, 0, 18)  # KWin applied the application's caret
    assert wait_until(lambda: not rig.frontend.shell.stale)
    type_text(engine, " ")
    rig.deliver("again")
    assert wait_until(lambda: rig.frontend.shell.drawn("again"))
    assert out.aux == "" and kwin.calls[-1] == ("Show", ("again",))
    assert press(engine, TAB) is True and out.committed == ["lo world", "again"]


def test_a_caret_from_before_tab_that_kwin_passes_on_after_it_does_not_place_the_next_suggestion(plasma):
    """A busy KWin passed on, after Tab, a caret from before the commit (the desktop tier's user session: the
    next suggestion stood over the text Tab had just inserted). The next suggestion waits for a caret past the
    inserted text, and is drawn there."""
    rig, kwin, engine, out = plasma
    for i, ch in enumerate("Say hel"):
        type_text(engine, ch)
        kwin.caret(100 + 9 * (i + 1), 40, 0, 18)
        assert wait_until(lambda: (engine.trail.shift() or Nothing).rect[0] == 100 + 9 * (i + 1))
    rig.deliver("lo world")
    assert wait_until(lambda: rig.frontend.shell.drawn("lo world"))
    before = rig.worker.last
    assert press(engine, TAB) is True and out.committed == ["lo world"]
    assert wait_until(lambda: rig.worker.last != before)  # the next suggestion is asked for at once
    kwin.caret(100 + 9 * 7, 40, 0, 18)  # the caret from before the commit
    kwin.caret(100 + 9 * 8, 40, 0, 18)  # and a character on: still short of the eight inserted
    rig.deliver(" again")
    time.sleep(0.3)
    assert not rig.frontend.shell.drawn(" again")
    kwin.caret(100 + 9 * 15, 40, 0, 18)  # KWin caught up
    assert wait_until(lambda: rig.frontend.shell.drawn(" again"))
    assert kwin.offsets[-1][:2] == (True, 100 + 9 * 15)
