"""The privacy promises where the controller keeps them: the rules follow
every reading of the focus, whoever made it; the accept keys insert only
what the screen shows; the state the daemon logs holds no text.

The real Controller with in-memory stand-ins for its ports (tests/daemon/fakes.py).
"""

from __future__ import annotations

import logging

import pytest

from daemon.capture.events import Kind
from daemon.config import Config
from daemon.cpc.suggestion import Suggestion
from daemon.controller.ports import FocusState, Rect
from daemon.frontends.ibus import wire
from tests.daemon.test_controller import Rig, key
from tests.daemon.test_ibus_engine import TAB, Rig as IBusRig, press, type_text

LOGIN = FocusState(app_id="firefox", window_id=1, field_id="user", is_password=False, caret=Rect(10, 20, 2, 16))
#: the page moved focus to its password box by itself; the field reads as empty
PASSWORD = FocusState(app_id="firefox", window_id=1, field_id="pass", is_password=True, text_before_caret="",
                      caret_offset=0, caret=Rect(10, 60, 2, 16))
#: a password manager's window took focus (its field is not marked as a password)
MANAGER = FocusState(app_id="keepassxc", window_id=2, field_id="search", is_password=False,
                     text_before_caret="", caret_offset=0, caret=Rect(300, 60, 2, 16))


@pytest.mark.parametrize("moved_to,why", [(PASSWORD, "password field"), (MANAGER, "denylisted application")])
def test_focus_moving_without_a_key_before_a_result_is_shown_closes_the_field(moved_to, why):
    """The result arrives after focus moved: settling it reads the new field.
    That reading must be judged by the privacy rules, so the keys typed
    there next reach neither the worker nor the screen (the focus watcher,
    which finds the same field, must not be what closes it)."""
    r = Rig(focus=LOGIN)
    r.type("alice@exa")
    request = r.worker.last[0]
    r.focus.state = moved_to
    r.c.on_result(request, Suggestion("mple.com", 0.9), True)
    r.c.on_focus(only_if_changed=True)  # the housekeeping's periodic look: the same field
    assert r.c.state().blocked == why
    assert r.sink.visible == "" and not r.sup.armed
    sent = len(r.worker.requests) + len(r.worker.prefills)
    r.type("hunter2")
    assert r.c.buffer_text == ""
    assert len(r.worker.requests) + len(r.worker.prefills) == sent
    assert not any("hunter" in text for _, text in r.worker.requests)
    r.tab()
    assert r.inj.typed == []  # the Tab was the application's


@pytest.mark.parametrize("moved_to,why", [(PASSWORD, "password field"), (MANAGER, "denylisted application")])
def test_focus_moving_without_a_key_while_a_suggestion_shows_hides_it(moved_to, why):
    r = Rig(focus=LOGIN)
    r.type("alice@exa")
    r.answer("mple.com")
    assert r.sink.visible == "mple.com" and r.sup.armed
    r.focus.state = moved_to
    r.c.on_field_event()  # accessibility: focus moved
    assert r.c.state().blocked == why
    assert r.sink.visible == "" and not r.sup.armed and r.c.buffer_text == ""
    r.type("hunter2")
    assert not any("hunter" in text for _, text in r.worker.requests) and r.worker.prefills == []


def test_tab_before_the_suggestion_is_drawn_is_a_tab():
    """A result is decided on but the overlay has not painted it yet: Tab is
    not swallowed and inserts nothing the user has not seen."""
    r = Rig()
    r.sink.draws = False
    r.type("Hello wor")
    r.answer("ld and more")
    assert r.c.visible == "ld and more" and not r.sup.armed
    r.tab()
    assert r.inj.typed == [] and r.c.buffer_text == "Hello wor\t"
    r.type("x")
    r.answer("yz")
    r.sink.draw()  # now it is on the screen
    assert r.sup.armed
    r.tab()
    assert r.inj.typed == ["yz"]


def test_tab_inserts_only_the_part_before_the_ellipsis():
    """A single-line field's ghost cut to fit: Tab inserts what can be read;
    the rest is shown again after it, at the new caret."""
    r = Rig()
    r.sink.draws = lambda text: text[:6]  # what fits before the field's edge
    r.type("Hello wor")
    r.answer("ld, how are you")
    assert r.c.state().drawn == "ld, ho"
    r.tab()
    assert r.inj.typed == ["ld, ho"]
    assert r.sink.visible == "w are you"  # shown again from the new caret
    r.tab()
    assert r.inj.typed == ["ld, ho", "w are "]


def test_nothing_drawn_means_no_accept():
    r = Rig()
    r.sink.draws = lambda text: ""  # no room at all: nothing painted
    r.type("Hello wor")
    r.answer("ld")
    assert not r.sup.armed
    r.tab()
    assert r.inj.typed == []


def test_accept_word_takes_its_word_from_what_is_drawn():
    r = Rig()
    r.sink.draws = lambda text: text[:4]
    r.type("Say ")
    r.answer("something longer")
    assert r.sup.press("ctrl+right")
    assert r.inj.typed == ["some"]


def test_a_late_drawn_for_an_older_show_arms_nothing():
    r = Rig()
    r.sink.draws = False
    r.type("Hello wor")
    r.answer("ld")
    late = r.sink.pending
    r.keys.on_key(key(Kind.ESCAPE, "escape"))  # hidden before the overlay painted
    late("ld")
    assert not r.sup.armed and r.c.state().drawn == ""


def test_typing_through_keeps_what_is_on_the_screen_acceptable():
    r = Rig()
    r.type("Hello wor")
    r.answer("ld peace")
    r.sink.draws = False  # the overlay is slow to repaint after the next key
    r.type("l")
    assert r.sup.armed and r.c.state().drawn == "d peace"
    r.tab()
    assert r.inj.typed == ["d peace"]


def test_the_state_the_daemon_logs_holds_no_text(caplog):
    r = Rig()
    r.type("Zebrafinch quantum")
    r.answer("leap over")
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("daemon").debug("state: %s", r.c.state())
    assert "leap" not in caplog.text and "Zebrafinch" not in caplog.text
    assert "ghost_chars=9" in caplog.text


def test_ibus_focus_moving_to_a_password_field_without_a_key_shows_nothing():
    """Through IBus: a suggestion shows in one field; another input context
    takes focus, says it is a password and hands over its text, no key."""
    rig = IBusRig()
    login, login_out = rig.engine("gtk3-im:firefox")
    type_text(login, "alice@exa")
    rig.deliver("mple.com")
    assert login_out.preedit == "mple.com" or login_out.aux == "mple.com"
    request = rig.worker.last[0]
    password, out = rig.engine("gtk3-im:firefox")
    password.set_content_type(wire.PURPOSE_PASSWORD, 0)
    password.set_surrounding_text("hunter2", 7, 7)
    rig.controller.on_result(request, Suggestion("mple.com", 0.9), True)  # a late result for the old field
    assert (login_out.preedit, login_out.aux, out.preedit, out.aux) == ("", "", "", "")
    assert rig.controller.state().blocked == "password field" and rig.controller.buffer_text == ""
    assert not any("hunter" in text for _, text in rig.worker.requests)
    assert not any("hunter" in text for text in rig.worker.prefills)
    assert press(password, TAB) is False and out.committed == []


def test_ibus_denylisted_application_taking_focus_without_a_key_gets_nothing():
    rig = IBusRig(Config(debounce_ms=0, denylist=["keepassxc"]))
    editor, editor_out = rig.engine("gtk3-im:gedit")
    type_text(editor, "Dear Sir")
    rig.deliver(", I write")
    manager, out = rig.engine("gtk3-im:keepassxc")
    manager.set_surrounding_text("bank login", 10, 10)
    assert (editor_out.preedit, editor_out.aux, out.preedit, out.aux) == ("", "", "", "")
    assert rig.controller.state().blocked == "denylisted application"
    assert not any("bank" in text for text in rig.worker.prefills)
    type_text(manager, "pin")
    assert not any("pin" in text for _, text in rig.worker.requests[-1:])

