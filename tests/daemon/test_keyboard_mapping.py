"""Key mapping from pynput-shaped keys to our events, without a display:
pynput's Key is an enum, so stand-ins are an Enum and a small KeyCode class
with the attributes pynput's has."""

from __future__ import annotations

import enum
import importlib
import subprocess
import sys
import unicodedata
from typing import Optional

import pytest

from daemon.capture.events import Kind
from daemon.capture.keymap import KeyMapper, KeySpecError, normalize_key_spec
from tests.e2e.xserver import xvfb  # noqa: F401  (fixture)


class Key(enum.Enum):  # names as in pynput.keyboard.Key
    alt = 1; alt_l = 2; alt_gr = 3; backspace = 4; caps_lock = 5; cmd = 6; ctrl = 7; ctrl_l = 8
    ctrl_r = 9; delete = 10; down = 11; end = 12; enter = 13; esc = 14; f1 = 15; home = 16; left = 17
    page_down = 18; page_up = 19; right = 20; shift = 21; shift_r = 22; space = 23; tab = 24; up = 25
    insert = 26; media_play_pause = 27


class KeyCode:
    def __init__(self, char: Optional[str] = None, vk: Optional[int] = None, is_dead: bool = False):
        self.char, self.vk, self.is_dead = char, vk, is_dead


def kinds(mapper: KeyMapper, keys) -> list:
    out = []
    for k in keys:
        ev = mapper.press(k)
        out.append(None if ev is None else (ev.kind, ev.char or ev.name))
    return out


def test_printable_unicode_and_special_keys():
    m = KeyMapper()
    got = kinds(m, [KeyCode("a"), KeyCode("Ж"), KeyCode("😀"), Key.space, Key.backspace, Key.delete,
                    Key.enter, Key.tab, Key.esc, Key.left, Key.home, Key.page_down, Key.f1,
                    Key.media_play_pause, KeyCode(vk=12345), None])
    assert got == [
        (Kind.CHAR, "a"), (Kind.CHAR, "Ж"), (Kind.CHAR, "😀"), (Kind.CHAR, " "), (Kind.BACKSPACE, "backspace"),
        (Kind.DELETE, "delete"), (Kind.ENTER, "enter"), (Kind.TAB, "tab"), (Kind.ESCAPE, "escape"),
        (Kind.CARET_MOVED, "left"), (Kind.CARET_MOVED, "home"), (Kind.CARET_MOVED, "page_down"),
        (Kind.OTHER, "f1"), (Kind.OTHER, "media_play_pause"), (Kind.OTHER, "unknown"), (Kind.OTHER, "unknown"),
    ]


def test_shift_produces_chars_but_ctrl_alt_super_make_shortcuts():
    m = KeyMapper()
    assert kinds(m, [Key.shift, KeyCode("A")]) == [(Kind.MODIFIER, "shift"), (Kind.CHAR, "A")]
    m.release(Key.shift)
    assert kinds(m, [Key.ctrl_l, KeyCode("a")]) == [(Kind.MODIFIER, "ctrl_l"), (Kind.SHORTCUT, "ctrl+a")]
    assert kinds(m, [Key.right, Key.backspace, Key.tab]) == [
        (Kind.SHORTCUT, "ctrl+right"), (Kind.SHORTCUT, "ctrl+backspace"), (Kind.SHORTCUT, "ctrl+tab")]
    m.release(Key.ctrl_l)
    assert kinds(m, [KeyCode("a")]) == [(Kind.CHAR, "a")]
    assert kinds(m, [Key.alt, Key.shift, KeyCode("G")]) == [
        (Kind.MODIFIER, "alt"), (Kind.MODIFIER, "shift"), (Kind.SHORTCUT, "alt+shift+g")]
    m.release(Key.alt), m.release(Key.shift)
    # AltGr composes characters (e.g. "@" on German layouts): not a shortcut.
    assert kinds(m, [Key.alt_gr, KeyCode("@")]) == [(Kind.MODIFIER, "alt_gr"), (Kind.CHAR, "@")]
    # Shift+arrow selects: the caret moved.
    assert kinds(m, [Key.shift, Key.left]) == [(Kind.MODIFIER, "shift"), (Kind.CARET_MOVED, "shift+left")]


def test_dead_keys_compose():
    m = KeyMapper()
    acute = "\u00b4"  # the spacing acute a dead key reports
    assert kinds(m, [KeyCode(acute, is_dead=True), KeyCode("e")]) == [None, (Kind.CHAR, "é")]
    assert kinds(m, [KeyCode(acute, is_dead=True), Key.space]) == [None, (Kind.CHAR, acute)]
    assert kinds(m, [KeyCode("^", is_dead=True), KeyCode("^", is_dead=True)]) == [None, (Kind.CHAR, "^")]
    assert kinds(m, [KeyCode(acute, is_dead=True), KeyCode("x")]) == [None, (Kind.CHAR, "x")]
    assert unicodedata.normalize("NFC", "e\u0301") == "é"


def test_repr_never_shows_the_character():
    ev = KeyMapper().press(KeyCode("s"))
    assert "s" not in repr(ev).replace("KeyEvent", "").replace("char", "")


@pytest.mark.parametrize("spec,norm", [
    ("Tab", "tab"), ("Control+Right", "ctrl+right"), ("shift+ctrl+a", "ctrl+shift+a"), ("esc", "escape"),
    ("cmd+alt+G", "alt+super+g"), ("ctrl++", "ctrl++"), ("PgUp", "page_up"),
])
def test_key_specs_normalise(spec, norm):
    assert normalize_key_spec(spec) == norm


@pytest.mark.parametrize("spec", ["", "ctrl+", "hyper+a", "ctrl+banana", "  "])
def test_bad_key_specs(spec):
    with pytest.raises(KeySpecError):
        normalize_key_spec(spec)


def test_mapper_names_match_specs():
    """What the mapper emits for a special key is the normalised spec."""
    m = KeyMapper()
    m.press(Key.ctrl)
    assert m.press(Key.right).name == normalize_key_spec("Ctrl+Right")


def test_real_pynput_classes(xvfb, monkeypatch):
    monkeypatch.setenv("DISPLAY", xvfb)  # pynput's X backend needs a display to import
    kb = importlib.import_module("pynput.keyboard")
    m = KeyMapper()
    assert m.press(kb.KeyCode.from_char("q")).char == "q"
    assert m.press(kb.Key.backspace).kind is Kind.BACKSPACE
    assert m.press(kb.Key.esc).kind is Kind.ESCAPE
    assert m.press(kb.KeyCode.from_dead("~")) is None
    assert m.press(kb.KeyCode.from_char("n")).char == "ñ"


def test_module_imports_without_pynput():
    code = "import sys, daemon.frontends.overlay.keyboard; print('pynput' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin", "PYTHONPATH": "."})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


class FakeListener:
    def __init__(self) -> None:
        self.alive = True

    def is_alive(self) -> bool:
        return self.alive

    def stop(self) -> None:
        self.alive = False


def test_watchdog_restarts_a_dead_listener():
    from daemon.frontends.overlay.keyboard import KeyboardSource

    events = []
    src = KeyboardSource(events.append, mouse=False)
    started = []

    def fake_start():
        src._keyboard = FakeListener()
        started.append(src._keyboard)

    src._start_keyboard = fake_start  # no display needed
    src.start()
    assert src.is_alive() and not src.watchdog()
    started[-1].alive = False  # the listener thread died
    assert not src.is_alive()
    assert src.watchdog() and src.is_alive() and src.restarts == 1
    assert [e.kind for e in events] == [Kind.FOCUS_CHANGED]  # keys may have been missed
    src.stop()
    assert not src.is_alive() and not src.watchdog()


def test_handler_exceptions_do_not_reach_pynput():
    from daemon.frontends.overlay.keyboard import KeyboardSource

    def boom(event):
        raise RuntimeError("handler bug")

    src = KeyboardSource(boom, mouse=False)
    src._on_press(KeyCode("a"))  # would end pynput's thread if it raised
    src._on_press(KeyCode("a"), injected=True)
