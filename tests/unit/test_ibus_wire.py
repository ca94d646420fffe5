"""IBus's serialized values, key translation and address lookup, checked
against the D-Bus wire format (jeepney serialises and parses them back) and
against the layouts in ibus's sources."""

from __future__ import annotations

import pytest
from jeepney import DBusAddress, Parser, new_signal

from daemon.capture.events import Kind
from daemon.frontends.ibus import wire
from daemon.frontends.ibus.bus import address_file, ibus_address
from daemon.frontends.ibus.keys import key_event, keysym_char
from daemon.frontends.ibus.service import component


def roundtrip(signature: str, body: tuple) -> tuple:
    msg = new_signal(DBusAddress("/x", interface="org.example.X"), "S", signature, body)
    parser = Parser()
    parser.add_data(msg.serialise(serial=1))
    return parser.get_next_message().body


@pytest.mark.parametrize("hint,expected", [
    (False, [(wire.ATTR_TYPE_FOREGROUND, 0x808080, 0, 3), (wire.ATTR_TYPE_UNDERLINE, 0, 0, 3)]),
    (True, [(wire.ATTR_TYPE_HINT, wire.ATTR_PREEDIT_PREDICTION, 0, 3)]),
])
def test_text_with_attributes_survives_the_wire(hint, expected):
    attrs = wire.ghost_attributes(3, 0x808080, prediction_hint=hint)
    (value,) = roundtrip("v", (wire.text("abc", attrs),))
    sig, (type_name, attachments, s, (attr_sig, attr_list)) = value
    assert sig == "(sa{sv}sv)" and type_name == "IBusText" and attachments == {} and s == "abc"
    assert attr_list[0] == "IBusAttrList"
    assert [a[1][2:] for a in attr_list[2]] == expected
    assert wire.parse_text(value) == "abc"


def test_parse_text_rejects_other_objects():
    assert wire.parse_text(wire.attr_list()) is None
    assert wire.parse_text(("s", "plain")) is None


def test_component_has_the_field_count_ibus_expects():
    (value,) = roundtrip("v", (component("/usr/bin/ghosttype ibus run --ibus").variant(),))
    sig, fields = value
    # IBusComponent: type, attachments, 8 strings, observed paths, engines
    assert fields[0] == "IBusComponent" and len(fields) == 12
    assert fields[8] == "/usr/bin/ghosttype ibus run --ibus"
    (engine_sig, engine), = fields[11]
    # IBusEngineDesc (ibus 1.5.x): type, attachments, 8 strings, rank, 8 strings
    assert engine[0] == "IBusEngineDesc" and len(engine) == 19 and engine[2] == "ghosttype"
    assert isinstance(engine[10], int)


def test_properties_serialise():
    props = [wire.Property("a", "Label", type=wire.PROP_TYPE_TOGGLE, state=wire.PROP_STATE_CHECKED)]
    (value,) = roundtrip("v", (wire.prop_list(props),))
    prop = value[1][2][0][1]
    assert prop[0] == "IBusProperty" and prop[2] == "a" and prop[3] == wire.PROP_TYPE_TOGGLE
    assert prop[9] == wire.PROP_STATE_CHECKED


@pytest.mark.parametrize("keyval,state,kind,detail", [
    (ord("a"), 0, Kind.CHAR, "a"),
    (ord("A"), wire.SHIFT_MASK, Kind.CHAR, "A"),
    (0xE9, 0, Kind.CHAR, "é"),  # Latin-1 keysym
    (0x01000000 + 0x20AC, 0, Kind.CHAR, "€"),  # Unicode keysym
    (0x20, 0, Kind.CHAR, " "),
    (0xFFB5, 0, Kind.CHAR, "5"),  # keypad 5
    (ord("a"), wire.CONTROL_MASK, Kind.SHORTCUT, "ctrl+a"),
    (0xFF53, wire.CONTROL_MASK, Kind.SHORTCUT, "ctrl+right"),
    (0xFF09, 0, Kind.TAB, "tab"),
    (0xFF0D, 0, Kind.ENTER, "enter"),
    (0xFF08, 0, Kind.BACKSPACE, "backspace"),
    (0xFF1B, 0, Kind.ESCAPE, "escape"),
    (0xFF51, 0, Kind.CARET_MOVED, "left"),
    (0xFFE1, 0, Kind.MODIFIER, "shift_l"),
    (0xFE51, 0, Kind.CARET_MOVED, "untranslated-key"),  # dead acute: the application composes
    (0x6C1, 0, Kind.CARET_MOVED, "untranslated-key"),  # legacy Cyrillic keysym
])
def test_key_events(keyval, state, kind, detail):
    event = key_event(keyval, state)
    assert event.kind is kind
    assert (event.char if kind is Kind.CHAR else event.name) == detail


def test_keysym_char_covers_latin1_and_unicode_only():
    assert keysym_char(0x7E) == "~"
    assert keysym_char(0x7F) is None
    assert keysym_char(0x0100263A) == "\u263a"


def test_address_file_follows_libibus(monkeypatch, tmp_path):
    monkeypatch.setattr("daemon.frontends.ibus.bus.machine_id", lambda: "m1")
    env = {"HOME": str(tmp_path), "DISPLAY": ":3.0"}
    assert address_file(env) == tmp_path / ".config/ibus/bus/m1-unix-3"
    assert address_file({**env, "WAYLAND_DISPLAY": "wayland-0"}).name == "m1-unix-wayland-0"
    assert address_file({**env, "DISPLAY": "host:1"}).name == "m1-host-1"
    assert address_file({**env, "XDG_CONFIG_HOME": str(tmp_path / "c")}) == tmp_path / "c/ibus/bus/m1-unix-3"
    assert address_file({"IBUS_ADDRESS_FILE": "/x/y"}).as_posix() == "/x/y"


def test_ibus_address_reads_the_file_and_ignores_a_dead_daemon(monkeypatch, tmp_path):
    import os

    monkeypatch.setattr("daemon.frontends.ibus.bus.machine_id", lambda: "m1")
    env = {"HOME": str(tmp_path), "DISPLAY": ":0"}
    f = address_file(env)
    f.parent.mkdir(parents=True)
    f.write_text(f"# comment\nIBUS_ADDRESS=unix:abstract=/tmp/x,guid=1\nIBUS_DAEMON_PID={os.getpid()}\n")
    assert ibus_address(env) == "unix:abstract=/tmp/x,guid=1"
    f.write_text("IBUS_ADDRESS=unix:abstract=/tmp/x,guid=1\nIBUS_DAEMON_PID=999999999\n")
    assert ibus_address(env) is None
    assert ibus_address({"IBUS_ADDRESS": "unix:path=/a"}) == "unix:path=/a"
