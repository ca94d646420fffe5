"""Fields whose text comes late: nothing typed reaches the controller (and so
the worker) before the engine knows the field is not masked, however many
keys that takes; a client that cannot report text at all is left to
``unknown_fields`` at once.  The real engine and controller, the calls in the
order ibus-daemon makes them (FocusIn, then SetCapabilities, then content
type), and a worker that records what it is asked."""

from __future__ import annotations

import pytest

from daemon.config import Config
from daemon.frontends.ibus import wire
from daemon.frontends.ibus.engine import new_engine
from tests.daemon.test_ibus_engine import TAB, RecordingOutput, Rig, press

#: A GTK 3 field through IBus's module: preedit, auxiliary text, lookup table, focus, properties, surrounding text
GTK3_CAPS = 0x7F
#: A client that cannot report a field's text (XIM: focus and preedit)
NO_TEXT_CAPS = wire.CAP_FOCUS | wire.CAP_PREEDIT_TEXT
MASK = "\u25cf"
SECRET = "hunter2 correct horse battery staple 0451 " * 3  # 129 characters


def focused(rig: Rig, client: str, caps: int):
    """A new engine focused as ibus-daemon does it: FocusIn, then the
    client's capabilities, then its content type (none declared)."""
    out = RecordingOutput()
    engine = new_engine(rig.frontend, out)
    engine.focus_in("/org/freedesktop/IBus/InputContext_1", client)
    engine.set_capabilities(caps)
    engine.set_content_type(wire.PURPOSE_FREE_FORM, 0)
    return engine, out


def nothing_shown(out: RecordingOutput) -> bool:
    return all(not (e[0] in ("preedit", "aux") and e[1]) for e in out.events) and out.committed == []


@pytest.mark.parametrize("late", [9, 20, 100])
def test_a_masked_field_whose_first_report_comes_late_sends_nothing(late):
    rig = Rig()
    engine, out = focused(rig, "wayland", GTK3_CAPS)
    for ch in SECRET[:late]:
        assert press(engine, ord(ch)) is False, "typed keys must reach the application"
    assert rig.worker.requests == [] and rig.worker.prefills == [] and rig.controller.buffer_text == ""
    # The first report, a key late, all mask characters: a password field.
    engine.set_surrounding_text(MASK * (late - 1), late - 1, late - 1)
    assert rig.controller.state().blocked == "password field"
    for ch in SECRET[late:late + 5]:
        press(engine, ord(ch))
    engine.set_surrounding_text(MASK * (late + 4), late + 4, late + 4)
    # Dropped, not kept: a client that then stops offering text has nothing to hand on.
    engine.set_capabilities(NO_TEXT_CAPS)
    press(engine, ord("x"))
    assert press(engine, TAB) is False  # nothing to accept: Tab is the application's
    assert rig.worker.requests == [] and rig.worker.prefills == []
    assert rig.controller.buffer_text == "" and rig.controller.state().ghost == ""
    assert nothing_shown(out)


@pytest.mark.parametrize("late", [9, 20, 100])
def test_a_plain_field_whose_first_report_comes_late_gets_suggestions_after_it(late):
    rig = Rig()
    engine, out = focused(rig, "wayland", GTK3_CAPS)
    typed = SECRET[:late]
    for ch in typed:
        press(engine, ord(ch))
    assert rig.worker.requests == [] and rig.controller.buffer_text == ""  # not known yet: held
    engine.set_surrounding_text(typed[:-1], late - 1, late - 1)  # a key late, plain text
    assert rig.controller.buffer_text == typed and rig.worker.last[1] == typed  # every held key, in order
    assert not rig.controller.state().blocked
    press(engine, ord("z"))
    assert rig.worker.last[1] == typed + "z"
    rig.deliver("ebra")
    assert out.aux == "ebra"
    assert press(engine, TAB) is True and out.committed == ["ebra"]


@pytest.mark.parametrize("setting,suggests", [("suggest", True), ("skip", False)])
@pytest.mark.parametrize("caps", [0, NO_TEXT_CAPS])
def test_a_client_that_cannot_report_text_is_left_to_unknown_fields_at_once(caps, setting, suggests):
    """IBus said the client offers no surrounding text (caps 0: a client that
    declares nothing at all): no report can come, so no key is held and
    ``unknown_fields`` decides from the first key."""
    rig = Rig(Config(debounce_ms=0, unknown_fields=setting))
    engine, out = focused(rig, "xim", caps)
    press(engine, ord("H"))
    if suggests:
        assert rig.worker.last[1] == "H"
        for ch in "ello":
            press(engine, ord(ch))
        assert rig.worker.last[1] == "Hello" and rig.controller.buffer_text == "Hello"
    else:
        assert rig.worker.requests == [] and rig.controller.state().blocked == "unidentified field"


def test_keys_before_ibus_tells_the_capabilities_are_held():
    """Until ibus-daemon has said what the client can do, a report may still
    come: the key is held, and goes on once the client is known to report no text."""
    rig = Rig()
    out = RecordingOutput()
    engine = new_engine(rig.frontend, out)
    engine.focus_in("/org/freedesktop/IBus/InputContext_1", "xim")
    press(engine, ord("H"))
    assert rig.worker.requests == []
    engine.set_capabilities(NO_TEXT_CAPS)
    assert rig.worker.last[1] == "H"
