"""The IBus engine's state machine, with no IBus at all: the real Controller,
a worker whose results the test delivers by hand, and a recording of the
signals the engine would send."""

from __future__ import annotations

import pytest

from daemon.config import Config
from daemon.controller import Controller
from daemon.cpc.suggestion import Suggestion
from daemon.frontends.ibus import wire
from daemon.frontends.ibus.engine import GHOST_COLOUR, app_from_client, continues, new_engine
from daemon.frontends.ibus.frontend import IBusFrontend
from daemon.frontends.ibus.menu import PROP_ENABLED, PROP_PAUSED, PROP_STATUS
from tests.daemon.fakes import ManualWorker

TAB, ESC, LEFT, RIGHT, BACKSPACE = 0xFF09, 0xFF1B, 0xFF51, 0xFF53, 0xFF08
REPORTS_TEXT = 0x7F  #: preedit, auxiliary text, lookup table, focus, properties, surrounding text
ALL_BUT_TEXT = REPORTS_TEXT & ~wire.CAP_SURROUNDING_TEXT


class RecordingOutput:
    """What one engine object would signal to ibus-daemon."""

    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.committed: list[str] = []
        self.preedit = ""
        self.preedit_attrs: list[wire.Attribute] = []
        self.preedit_cursor = -1
        self.aux = ""
        self.props: dict[str, wire.Property] = {}
        self.surrounding_requests = 0

    def commit_text(self, text: str) -> None:
        self.events.append(("commit", text))
        self.committed.append(text)

    def update_preedit(self, text, attrs, cursor, visible) -> None:
        self.events.append(("preedit", text, visible))
        self.preedit = text if visible else ""
        self.preedit_attrs = list(attrs)
        self.preedit_cursor = cursor

    def update_auxiliary(self, text, visible) -> None:
        self.events.append(("aux", text, visible))
        self.aux = text if visible else ""

    def register_properties(self, props) -> None:
        self.props = {p.key: p for p in props}

    def update_property(self, prop) -> None:
        self.props[prop.key] = prop

    def require_surrounding_text(self) -> None:
        self.surrounding_requests += 1


class Rig:
    def __init__(self, config: Config = Config(debounce_ms=0)) -> None:
        self.frontend = IBusFrontend()
        self.worker = ManualWorker()
        self.controller = Controller(config, self.frontend, worker=self.worker)
        self.frontend.attach(self.controller)
        self.controller.start()

    def engine(self, client: str = "gtk3-im:gedit", caps: int = ALL_BUT_TEXT):
        """A focused engine; by default its client reports no text of the
        field (each key reaches the controller at once, ``unknown_fields``
        decides); with ``caps=REPORTS_TEXT`` the field is unidentified, its
        keys held, until its text is reported."""
        out = RecordingOutput()
        engine = new_engine(self.frontend, out)
        engine.set_capabilities(caps)
        engine.focus_in("/org/freedesktop/IBus/InputContext_1", client)
        return engine, out

    def deliver(self, text: str, final: bool = True) -> None:
        rid, _ = self.worker.last
        self.controller.on_result(rid, Suggestion(text, 0.9), final)


def answer(engine, keyval: int, state: int = 0) -> bool:
    """One ProcessKeyEvent as the D-Bus layer handles it: the engine decides,
    the answer goes back (recorded as a ``reply`` event: from here on the
    application has the key), then :meth:`key_done`."""
    engine.output.events.append(("key", keyval, state))
    consumed = engine.process_key(keyval, 0, state)
    engine.output.events.append(("reply", consumed))
    engine.key_done()
    return consumed


def press(engine, keyval: int, state: int = 0) -> bool:
    """Press and release; returns whether the press was consumed (and checks
    that the release is treated the same way)."""
    consumed = answer(engine, keyval, state)
    assert answer(engine, keyval, state | wire.RELEASE_MASK) is consumed
    return consumed


def type_text(engine, text: str) -> None:
    for ch in text:
        assert press(engine, ord(ch)) is False, "typed keys must reach the application"


@pytest.fixture
def rig() -> Rig:
    return Rig()


def test_typed_keys_pass_through_and_the_suggestion_appears_grey_after_the_caret(rig):
    engine, out = rig.engine()
    type_text(engine, "Say hel")
    assert rig.worker.last[1] == "Say hel"
    rig.deliver("lo world")
    assert out.preedit == "lo world"
    assert out.preedit_cursor == 0  # the caret stays before the suggestion
    kinds = {(a.type, a.value, a.start, a.end) for a in out.preedit_attrs}
    assert (wire.ATTR_TYPE_FOREGROUND, GHOST_COLOUR, 0, 8) in kinds
    assert (wire.ATTR_TYPE_UNDERLINE, wire.ATTR_UNDERLINE_NONE, 0, 8) in kinds
    assert out.committed == []


def test_tab_commits_the_suggestion_once_and_is_swallowed(rig):
    engine, out = rig.engine()
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert press(engine, TAB) is True
    assert out.committed == ["lo world"]
    assert out.preedit == ""
    assert rig.controller.buffer_text == "Say hello world"
    # Nothing visible any more: the next Tab is the application's.
    assert press(engine, TAB) is False
    assert out.committed == ["lo world"]


def test_a_commit_that_fails_forgets_the_buffer(rig):
    engine, out = rig.engine()
    type_text(engine, "Say hel")
    rig.deliver("lo world")

    def lost(text):
        raise ConnectionError("the bus went away")

    out.commit_text = lost
    assert press(engine, TAB) is True  # asked and answered: the key was the suggestion's
    assert rig.controller.buffer_text == "" and not rig.controller.visible


def test_tab_without_a_suggestion_reaches_the_application(rig):
    engine, out = rig.engine()
    type_text(engine, "abc")
    assert press(engine, TAB) is False
    assert out.committed == []


def test_ctrl_right_commits_the_next_word_and_keeps_the_rest(rig):
    engine, out = rig.engine()
    type_text(engine, "The qu")
    rig.deliver("ick brown fox")
    assert press(engine, RIGHT, wire.CONTROL_MASK) is True
    assert out.committed == ["ick"]
    assert out.preedit == " brown fox"
    assert press(engine, RIGHT, wire.CONTROL_MASK) is True
    assert out.committed == ["ick", " brown"]
    assert out.preedit == " fox"


def test_escape_dismisses_without_committing(rig):
    engine, out = rig.engine()
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert press(engine, ESC) is True
    assert out.preedit == "" and out.committed == []
    assert press(engine, ESC) is False  # nothing to dismiss: the application's Esc


def test_typing_the_next_character_advances_the_suggestion_without_a_model_call(rig):
    engine, out = rig.engine()
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    requests = len(rig.worker.requests)
    type_text(engine, "lo")
    assert out.preedit == " world"
    assert len(rig.worker.requests) == requests


def test_any_other_key_clears_the_suggestion(rig):
    engine, out = rig.engine()
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert press(engine, LEFT) is False
    assert out.preedit == ""
    assert rig.controller.buffer_text == ""  # the caret moved: the text before it is unknown


def test_backspace_clears_and_asks_again(rig):
    engine, out = rig.engine()
    type_text(engine, "Say helx")
    rig.deliver("yz")
    assert press(engine, BACKSPACE) is False
    assert out.preedit == ""
    assert rig.worker.last[1] == "Say hel"


def test_reset_clears_the_suggestion(rig):
    engine, out = rig.engine()
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    engine.reset()
    assert out.preedit == ""
    assert press(engine, TAB) is False


def test_a_late_result_never_paints_into_another_field(rig):
    first, out1 = rig.engine("gtk3-im:gedit")
    type_text(first, "Say hel")
    rid, _ = rig.worker.last
    first.focus_out()
    second, out2 = rig.engine("gtk3-im:mousepad")
    rig.controller.on_result(rid, Suggestion("lo world", 0.9), True)
    assert out1.preedit == "" and out2.preedit == ""
    assert out2.aux == "" and out1.aux == ""
    # And a field focused again starts afresh.
    first.focus_in("/ic", "gtk3-im:gedit")
    rig.controller.on_result(rid, Suggestion("lo world", 0.9), True)
    assert out1.preedit == ""


def test_focus_out_hides_and_cancels(rig):
    engine, out = rig.engine()
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    cancels = rig.worker.cancels
    engine.focus_out()
    assert out.preedit == ""
    assert rig.worker.cancels > cancels
    assert rig.controller.buffer_text == ""


def test_surrounding_text_at_focus_in_gives_the_context(rig):
    engine, out = rig.engine()
    assert out.surrounding_requests >= 1
    engine.set_surrounding_text("Dear Sir, thank you for your", 28, 28)
    type_text(engine, " he")
    assert rig.worker.last[1] == "Dear Sir, thank you for your he"


def test_a_jump_in_the_surrounding_text_replaces_the_tracked_text(rig):
    engine, out = rig.engine()
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    # The user clicked elsewhere: the client reports the new caret before the next key.
    engine.set_surrounding_text("Say hel and more", 3, 3)
    type_text(engine, "x")
    assert out.preedit == ""
    assert rig.worker.last[1] == "Sayx"


def test_surrounding_text_that_continues_the_tracked_text_changes_nothing(rig):
    engine, out = rig.engine()
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    engine.set_surrounding_text("Say hel", 7, 7)
    assert press(engine, ord("l")) is False  # typed through
    assert out.preedit == "o world"


def test_a_selection_counts_from_its_start(rig):
    engine, out = rig.engine()
    engine.set_surrounding_text("one two three", 13, 4)  # "two three" selected, typing replaces it
    type_text(engine, "x")
    assert rig.worker.last[1] == "one x"


@pytest.mark.parametrize("purpose,hints", [(wire.PURPOSE_PASSWORD, 0), (wire.PURPOSE_PIN, 0),
                                           (wire.PURPOSE_FREE_FORM, wire.HINT_PRIVATE)])
def test_private_fields_get_no_capture_and_no_suggestion(rig, purpose, hints):
    engine, out = rig.engine()
    engine.set_content_type(purpose, hints)
    requests = len(rig.worker.requests)
    type_text(engine, "hunter2 secret")
    assert len(rig.worker.requests) == requests
    assert rig.controller.buffer_text == ""
    assert out.preedit == ""
    assert rig.controller.state().blocked


def test_a_private_field_that_becomes_normal_suggests_again(rig):
    engine, out = rig.engine()
    engine.set_content_type(wire.PURPOSE_PASSWORD, 0)
    type_text(engine, "pw")
    engine.set_content_type(wire.PURPOSE_FREE_FORM, 0)
    type_text(engine, "Hi")
    assert rig.worker.last[1] == "Hi"


@pytest.mark.parametrize("setting,backend,suggests", [
    ("suggest", "local", True), ("skip", "local", False), ("auto", "local", False), ("auto", "server", False),
    ("suggest", "server", True)])
def test_terminal_fields_follow_the_config(setting, backend, suggests):
    """A terminal that cannot report its text: ``auto`` never sees its keys echoed
    (tests/daemon/test_ibus_terminal.py has terminals that report theirs)."""
    server = {"server_url": "https://models.example:8443"} if backend == "server" else {}
    rig = Rig(Config(debounce_ms=0, ibus_terminals=setting, backend=backend, **server))
    engine, out = rig.engine("gtk3-im:gnome-terminal-server")
    engine.set_content_type(wire.PURPOSE_TERMINAL, 0)
    type_text(engine, "ls -")
    assert bool(rig.worker.requests) is suggests


def test_denylisted_client_gets_nothing():
    rig = Rig(Config(debounce_ms=0, denylist=["keepassxc"]))
    engine, out = rig.engine("gtk3-im:KeePassXC")
    type_text(engine, "secret")
    assert rig.worker.requests == []
    assert rig.controller.buffer_text == ""


def test_applications_the_desktops_plugin_names():
    from daemon.frontends.ibus.clients import app_from_plugin
    denied = Config().is_denied
    assert app_from_plugin(["org.gnome.texteditor", "gnome-text-editor"], denied) == "gnome-text-editor"
    assert app_from_plugin(["firefox", "firefox-esr"], denied) == "firefox-esr"
    # the denylist holds a reverse-DNS app id's last part, or the program's file name
    assert app_from_plugin(["org.keepassxc.keepassxc", "keepassxc-proxy"], denied) == "keepassxc"
    assert app_from_plugin(["", "seahorse"], denied) == "seahorse"
    # an interpreter's file name says nothing: the app id names the application
    for program in ("python3.13", "python3", "gjs", "node", "java", "bash"):
        assert app_from_plugin(["org.example.notes", program], denied) == "org.example.notes"
    assert app_from_plugin([], denied) == "" and app_from_plugin(["", ""], denied) == ""
    assert app_from_plugin(["Org.Example.App"], denied) == "org.example.app"


def test_client_names():
    assert app_from_client("gtk3-im:gedit") == "gedit"
    assert app_from_client("gtk4-im:/usr/bin/Foo") == "foo"
    assert app_from_client("gnome-shell") == ""
    assert app_from_client("") == ""


def test_gnome_shell_clients_get_the_popup_instead_of_colourless_preedit(rig):
    engine, out = rig.engine("gnome-shell")
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert out.aux == "lo world" and out.preedit == ""
    assert press(engine, TAB) is True
    assert out.committed == ["lo world"] and out.aux == ""


@pytest.mark.parametrize("display,client,expect", [("preedit", "gnome-shell", "preedit"),
                                                   ("popup", "gtk3-im:gedit", "aux")])
def test_the_display_can_be_forced(display, client, expect):
    rig = Rig(Config(debounce_ms=0, ibus_display=display))
    engine, out = rig.engine(client)
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert (out.preedit if expect == "preedit" else out.aux) == "lo world"
    assert (out.aux if expect == "preedit" else out.preedit) == ""


def test_properties_toggle_enabled_and_pause_and_show_the_status(rig):
    engine, out = rig.engine()
    assert set(out.props) == {PROP_ENABLED, PROP_PAUSED, PROP_STATUS}
    assert out.props[PROP_STATUS].label == "ghosttype: ready"
    engine.property_activate(PROP_PAUSED, wire.PROP_STATE_CHECKED)
    assert out.props[PROP_STATUS].label == "ghosttype: paused"
    type_text(engine, "Hello")
    assert rig.worker.requests == []
    engine.property_activate(PROP_PAUSED, wire.PROP_STATE_UNCHECKED)
    engine.property_activate(PROP_ENABLED, wire.PROP_STATE_UNCHECKED)
    assert out.props[PROP_STATUS].label == "ghosttype: disabled"
    assert out.props[PROP_ENABLED].state == wire.PROP_STATE_UNCHECKED
    engine.property_activate(PROP_ENABLED, wire.PROP_STATE_CHECKED)
    type_text(engine, "Hi")
    assert rig.worker.last[1] == "Hi"


def test_a_config_reload_applies_at_once(rig):
    engine, out = rig.engine()
    rig.controller.apply_config(Config(debounce_ms=0, ibus_display="popup"))
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert out.aux == "lo world"
    rig.controller.apply_config(Config(debounce_ms=0, enabled=False))
    assert out.aux == ""
    assert out.props[PROP_STATUS].label == "ghosttype: disabled"


def test_a_backend_that_failed_to_load_leaves_keys_untouched(rig):
    engine, out = rig.engine()
    rig.controller.on_backend_status("error", "model file is broken")
    type_text(engine, "Say hel")
    assert press(engine, TAB) is False
    assert out.props[PROP_STATUS].label.startswith("ghosttype: error")


def test_continues():
    assert continues("Say hel", "Say hel")
    assert continues("hel", "Say hel")  # our buffer is shorter
    assert continues("long text. Say hel", "Say hel")  # the client sends one paragraph
    assert continues("abc", "")  # a new paragraph starts
    assert not continues("", "abc")  # learn what the field knows
    assert not continues("Say hel", "Say")




def test_a_result_arriving_during_a_focus_switch_paints_nowhere(rig):
    first, out1 = rig.engine("gtk3-im:gedit")
    type_text(first, "Say hel")
    rid, _ = rig.worker.last
    second = RecordingOutput()
    engine2 = new_engine(rig.frontend, second)
    real_on_focus = rig.controller.on_focus

    def on_focus_with_a_result_racing_in(*args, **kwargs):
        # The worker thread gets the controller's lock first and shows its
        # result for the old field while the D-Bus thread switches fields.
        rig.controller.on_result(rid, Suggestion("lo world", 0.9), True)
        return real_on_focus(*args, **kwargs)

    rig.controller.on_focus = on_focus_with_a_result_racing_in
    engine2.focus_in("/ic/2", "gtk3-im:mousepad")
    rig.controller.on_focus = real_on_focus
    assert [e for e in second.events if e[0] in ("preedit", "aux") and e[1]] == []  # not even for a moment
    assert out1.preedit == ""


# --------------------------------------------------------------------------- what the application sees, in order


def shown_before_reply(out) -> list[tuple]:
    """Display events with text sent while the last key press was being
    handled, i.e. before its answer (the application would get them before
    the key)."""
    keys = [i for i, e in enumerate(out.events) if e[0] == "key"]
    start = keys[-2]  # the press; the release comes last
    end = next(i for i in range(start, len(out.events)) if out.events[i][0] == "reply")
    return [e for e in out.events[start:end] if e[0] in ("preedit", "aux") and e[1]]


def test_typing_through_a_preedit_closes_it_before_the_key_and_shows_the_rest_after(rig):
    engine, out = rig.engine("gtk3-im:gedit")
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert out.preedit == "lo world"
    mark = len(out.events)
    assert press(engine, ord("l")) is False
    events = [e for e in out.events[mark:] if e[0] not in ("aux", "key")]
    # The open preedit goes before the key does, and comes back after it.
    assert events[:3] == [("preedit", "", False), ("reply", False), ("preedit", "o world", True)]
    assert out.preedit == "o world"
    assert rig.controller.visible == "o world"


@pytest.mark.parametrize("key", [BACKSPACE, TAB, ESC])
def test_a_preedit_the_key_closed_is_closed_again_after_the_answer(rig, key):
    """A client in IBus's sync mode (GTK 4's module) gets what the engine sends
    while it handles a key together with the key's answer (ibus-daemon's
    PostProcessKeyEvent), and applies it before a preedit signal sent earlier
    that it has not dispatched yet: that suggestion would come back after the
    key and stay.  The last word on the preedit is therefore said after the
    answer, where it queues behind anything sent before."""
    engine, out = rig.engine("gtk4-im:gnome-text-editor")
    rig.frontend.panel = False  # the preedit is the display
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert out.preedit == "lo world"
    mark = len(out.events)
    press(engine, key)
    events = [e for e in out.events[mark:] if e[0] in ("preedit", "reply")]
    assert events[:3] == [("preedit", "", False), ("reply", key != BACKSPACE),
                          ("preedit", "", False)]
    assert out.preedit == ""


def test_a_key_that_leaves_the_preedit_closed_says_nothing_more(rig):
    engine, out = rig.engine("gtk4-im:gnome-text-editor")
    rig.frontend.panel = False
    type_text(engine, "Say hel")
    mark = len(out.events)
    press(engine, BACKSPACE)  # nothing shown: nothing to repeat
    assert [e for e in out.events[mark:] if e[0] == "preedit"] == []


def test_typing_through_the_popup_updates_it_only_after_the_key(rig):
    engine, out = rig.engine("wayland")
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert out.aux == "lo world"
    mark = len(out.events)
    assert press(engine, ord("l")) is False
    # The popup is not the application's text: it stays up while the key goes on.
    assert out.events[mark + 1:mark + 3] == [("reply", False), ("aux", "o world", True)]
    assert out.preedit == "" and out.aux == "o world"


def test_a_result_arriving_while_a_key_is_handled_waits_for_the_answer(rig):
    engine, out = rig.engine("gtk3-im:gedit")
    type_text(engine, "Say hel")
    assert engine.process_key(ord("l"), 0, 0) is False
    rid, _ = rig.worker.last
    rig.controller.on_result(rid, Suggestion("lo world", 0.9), True)  # the worker thread, meanwhile
    assert out.preedit == "" and rig.controller.visible == "lo world"
    engine.key_done()
    assert out.preedit == "lo world"


def test_a_modifier_leaves_the_preedit_alone(rig):
    engine, out = rig.engine("gtk3-im:gedit")
    type_text(engine, "Say hel")
    rig.deliver("lo World")
    mark = len(out.events)
    assert answer(engine, 0xFFE1) is False  # Shift_L press
    assert [e for e in out.events[mark:] if e[0] == "preedit"] == []
    assert out.preedit == "lo World"


def test_no_key_ever_shows_anything_before_its_answer(rig):
    engine, out = rig.engine("gtk3-im:gedit")
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    for key in [ord(c) for c in "lo w"] + [0xFFE1, ord("x"), BACKSPACE]:
        press(engine, key)
        assert shown_before_reply(out) == []


def test_a_key_other_than_a_modifier_redraws_the_kept_preedit_after_it(rig):
    engine, out = rig.engine("gtk3-im:gedit")
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert press(engine, 0xFFC2) is False  # F5: the controller keeps the suggestion
    assert rig.controller.visible == "lo world" and out.preedit == "lo world"
    assert shown_before_reply(out) == []


@pytest.mark.parametrize("client,panel,expect", [
    ("gnome-shell", None, "popup"),             # GNOME Shell forwards no colours
    ("wayland", True, "popup"),                 # KWin's text-input clients: the same
    ("gtk3-im:gedit", True, "preedit"),         # GTK 3's module draws it grey
    ("gtk3-im:firefox-esr", True, "popup"),     # a page would read the preedit
    ("gtk3-im:chromium", True, "popup"),
    ("gtk4-im:gnome-text-editor", True, "popup"),  # GTK 4 draws it like typed text
    ("QIBusInputContext", True, "popup"),       # Qt draws it black
    ("wayland", False, "preedit"),              # no panel: nothing would draw a popup
    ("gtk4-im:gnome-text-editor", False, "preedit"),
])
def test_auto_display_shows_the_suggestion_where_it_cannot_pass_for_typed_text(rig, client, panel, expect):
    rig.frontend.panel = panel
    engine, out = rig.engine(client)
    assert engine.display_mode() == expect
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    assert (out.preedit if expect == "preedit" else out.aux) == "lo world"
    assert (out.aux if expect == "preedit" else out.preedit) == ""


def test_a_field_reporting_its_text_a_key_late_keeps_the_suggestion(rig):
    """Firefox on KWin sends the surrounding text of the key before the last."""
    engine, out = rig.engine("wayland")
    type_text(engine, "Say he")
    engine.set_surrounding_text("Say h", 5, 5)
    type_text(engine, "l")
    rig.deliver("lo world")
    engine.set_surrounding_text("Say he", 6, 6)  # one key behind
    assert press(engine, TAB) is True
    assert out.committed == ["lo world"]
    assert rig.controller.buffer_text == "Say hello world"


def type_echoed(engine, text: str) -> None:
    """Type as Firefox on KWin answers: right after each key, the text it had before that key."""
    for ch in text:
        before = engine.controller.buffer_text
        type_text(engine, ch)
        engine.set_surrounding_text(before, len(before), len(before))


def test_a_field_whose_report_after_backspaces_is_three_keys_old_keeps_the_suggestion(rig):
    """Firefox on KWin, as recorded: no report after BackSpace, then after the next key the text
    from before the BackSpaces; the suggestion stays, and Tab inserts it after the real text."""
    engine, out = rig.engine("wayland")
    type_echoed(engine, "Vim is a text edi")
    press(engine, BACKSPACE)
    press(engine, BACKSPACE)
    type_text(engine, "d")
    engine.set_surrounding_text("Vim is a text edi", 17, 17)  # the text from before both BackSpaces
    type_echoed(engine, "i")
    rig.deliver("tor")
    assert out.aux == "tor"
    assert rig.controller.buffer_text == "Vim is a text edi"
    assert press(engine, TAB) is True
    assert out.committed == ["tor"]


def test_a_field_further_behind_than_the_lag_allows_is_taken_as_changed(rig):
    engine, out = rig.engine("wayland")
    type_text(engine, "Say hel")
    rig.deliver("lo world")
    engine.set_surrounding_text("Say it", 6, 6)  # not a state of the last keys: an edit
    assert press(engine, TAB) is False
    assert out.committed == []


def test_a_field_that_echoes_twice_after_a_key_keeps_the_suggestion(rig):
    """Firefox on KWin at times sends two reports right after one key, both of earlier states."""
    engine, out = rig.engine("wayland")
    type_echoed(engine, "Say he")
    type_text(engine, "l")
    engine.set_surrounding_text("Say h", 5, 5)
    engine.set_surrounding_text("Say he", 6, 6)
    type_text(engine, "l")
    rig.deliver("o world")
    assert rig.controller.buffer_text == "Say hell" and out.aux == "o world"


def test_a_report_with_no_key_just_before_it_is_the_fields_news(rig):
    """A report that comes later than a late echo could (a click back into the word just typed) is an
    edit even though it equals an earlier state: the field's text wins."""
    engine, out = rig.engine("wayland")
    type_echoed(engine, "Say hel")
    now = engine.echoes.clock()
    engine.echoes.clock = lambda: now + 1.0
    engine.set_surrounding_text("Say hel", 4, 4)  # the caret clicked back after "Say "
    type_text(engine, "x")
    assert rig.controller.buffer_text == "Say x"


@pytest.mark.parametrize("mask", ["\u25cf", "\u2022", "*"])
def test_a_field_whose_text_is_all_mask_characters_is_a_password_field(rig, mask):
    """Firefox on Wayland reports its password inputs with their masked text
    and no password purpose: nothing is captured or suggested there."""
    engine, out = rig.engine("gnome-shell")
    requests = len(rig.worker.requests)
    engine.set_surrounding_text(mask, 1, 1)
    type_text(engine, "orrect")
    for n in range(2, 6):
        engine.set_surrounding_text(mask * n, n, n)
        type_text(engine, "x")
    assert len(rig.worker.requests) == requests
    assert rig.controller.buffer_text == "" and rig.controller.state().blocked
    assert out.aux == "" and out.preedit == ""
    # The next field is normal again.
    engine.focus_in("/ic/2", "gnome-shell")
    type_text(engine, "Say hel")
    assert rig.worker.last[1] == "Say hel" and not rig.controller.state().blocked


def test_the_hidden_text_hint_is_private(rig):
    engine, out = rig.engine()
    engine.set_content_type(wire.PURPOSE_FREE_FORM, wire.HINT_HIDDEN_TEXT)
    type_text(engine, "hunter2")
    assert rig.controller.buffer_text == "" and rig.controller.state().blocked


def type_reporting_late(engine, text: str, field: str = "", mask: str = "") -> str:
    """Firefox on KWin: right after each key the field reports the text it
    had before that key (its password inputs: mask characters, and no
    password purpose).  Returns the field's text."""
    for ch in text:
        assert press(engine, ord(ch)) is False, "typed keys must reach the application"
        engine.set_surrounding_text(field, len(field), len(field))
        field += mask or ch
    return field


@pytest.mark.parametrize("mask", ["\u25cf", "*"])
def test_no_key_of_an_undeclared_password_field_reaches_the_model_before_its_mask_shows(rig, mask):
    engine, out = rig.engine("wayland", caps=REPORTS_TEXT)
    engine.set_surrounding_text("", 0, 0)  # the empty field at focus-in tells nothing
    type_reporting_late(engine, "hunter2 secret", mask=mask)
    assert rig.worker.requests == [] and rig.worker.prefills == []
    assert rig.controller.buffer_text == "" and rig.controller.state().blocked
    assert out.aux == "" and out.preedit == "" and out.committed == []


def test_the_held_keys_of_a_plain_field_go_on_once_its_text_shows(rig):
    engine, out = rig.engine("wayland", caps=REPORTS_TEXT)
    engine.set_surrounding_text("", 0, 0)
    field = type_reporting_late(engine, "S")
    press(engine, ord("a"))
    assert rig.worker.requests == []  # nothing known yet
    engine.set_surrounding_text(field, 1, 1)  # "S", a key late: not masked
    assert [text for _, text in rig.worker.requests] == ["S", "Sa"]  # the held keys, in order
    type_reporting_late(engine, "y hel", field="Sa")
    assert rig.worker.last[1] == "Say hel" and rig.controller.buffer_text == "Say hel"  # no key lost
    rig.deliver("lo world")
    assert out.aux == "lo world" and press(engine, TAB) is True
    assert out.committed == ["lo world"]


def test_a_field_with_text_at_focus_in_is_identified_at_once(rig):
    engine, out = rig.engine("gtk3-im:gedit", caps=REPORTS_TEXT)
    engine.set_surrounding_text("Dear Bob, ", 10, 10)
    type_text(engine, "th")
    assert rig.worker.last[1] == "Dear Bob, th"


def test_held_keys_are_dropped_when_the_field_declares_a_password_late(rig):
    engine, out = rig.engine("wayland", caps=REPORTS_TEXT)
    type_text(engine, "hunter2")
    engine.set_content_type(wire.PURPOSE_PASSWORD, 0)
    engine.set_surrounding_text("\u25cf" * 7, 7, 7)
    engine.set_content_type(wire.PURPOSE_FREE_FORM, 0)
    assert rig.worker.requests == [] and rig.controller.buffer_text == ""


@pytest.mark.parametrize("setting,suggests", [("suggest", True), ("skip", False)])
def test_a_client_that_reports_no_text_leaves_the_field_to_the_unknown_fields_setting(setting, suggests):
    rig = Rig(Config(debounce_ms=0, unknown_fields=setting))
    engine, out = rig.engine("wayland", caps=REPORTS_TEXT)
    type_text(engine, "Hel")  # held: the client may still report
    assert rig.worker.requests == []
    engine.set_capabilities(ALL_BUT_TEXT)  # GTK drops the capability where the widget has no text to give
    assert rig.controller.state().blocked is not suggests
    type_text(engine, "lo")
    assert bool(rig.worker.requests) is suggests
    if suggests:
        assert rig.worker.last[1] == "Hello"


def test_a_client_that_offers_text_and_never_reports_it_gets_nothing(rig):
    """konsole on KWin: surrounding text offered, never sent, no purpose
    declared.  Its field cannot be told from a password field whose text
    comes late, so however many keys it takes nothing reaches the
    controller (test_ibus_late_text.py has the masked field behind it)."""
    engine, out = rig.engine("wayland", caps=REPORTS_TEXT)
    type_text(engine, "ls -la /etc/ && cat /etc/hostname")
    assert rig.worker.requests == [] and rig.controller.buffer_text == ""


def test_a_client_that_reported_once_is_waited_for(rig):
    """Firefox: the empty field reported at focus-in tells nothing, and its
    text comes a key or more late; however long, its keys stay held."""
    engine, out = rig.engine("wayland", caps=REPORTS_TEXT)
    engine.set_surrounding_text("", 0, 0)
    type_text(engine, "correct horse")
    assert rig.worker.requests == [] and rig.controller.buffer_text == ""
