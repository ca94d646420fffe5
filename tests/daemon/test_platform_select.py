"""The platform selector, session detection, key-name parsing and the caret
heuristic: everything of ``daemon.frontends.overlay.platform`` that needs no X server."""

from __future__ import annotations

import itertools
import json
import logging
import pathlib
import subprocess
import sys

import pytest
from hypothesis import given, strategies as st

from daemon.frontends.overlay.platform import ENV_OVERRIDE, select_platform
from daemon.controller.ports import Rect
from daemon.frontends.base import PlatformError
from daemon.frontends.session import DisplayServer, detect_session

xk = pytest.importorskip("Xlib.XK")
from daemon.frontends.overlay.platform.x11 import keys as x11_keys  # noqa: E402  (needs python-xlib)
from daemon.frontends.overlay.platform.x11.caret import X11CaretLocator, _scaled  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
UNREACHABLE = ":987"  # no server listens there in the test environment

# --------------------------------------------------------------------------- session


@pytest.mark.parametrize(
    "env, server",
    [
        ({}, DisplayServer.NONE),
        ({"DISPLAY": ":0"}, DisplayServer.X11),
        ({"DISPLAY": ":0", "XDG_SESSION_TYPE": "x11"}, DisplayServer.X11),
        ({"DISPLAY": ":0", "XDG_SESSION_TYPE": "tty"}, DisplayServer.X11),
        ({"WAYLAND_DISPLAY": "wayland-0"}, DisplayServer.WAYLAND),
        ({"XDG_SESSION_TYPE": "wayland"}, DisplayServer.WAYLAND),
        ({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":1"}, DisplayServer.XWAYLAND),
        ({"XDG_SESSION_TYPE": "Wayland", "DISPLAY": ":1"}, DisplayServer.XWAYLAND),
        ({"DISPLAY": "", "WAYLAND_DISPLAY": ""}, DisplayServer.NONE),
    ],
)
def test_detect_session(env, server):
    assert detect_session(env, "linux").server is server


def test_detect_session_other_oses():
    assert detect_session({"DISPLAY": ":0"}, "darwin").server is DisplayServer.MACOS
    assert detect_session({}, "win32").server is DisplayServer.WINDOWS


# --------------------------------------------------------------------------- selector errors


def test_no_display_says_how_to_fix():
    with pytest.raises(PlatformError, match="DISPLAY is not set") as info:
        select_platform({}, os_name="linux", use_atspi=False)
    assert "DISPLAY=:0" in str(info.value)


@pytest.mark.parametrize("env", [{"WAYLAND_DISPLAY": "wayland-0"}, {"XDG_SESSION_TYPE": "wayland"}])
def test_wayland_without_xwayland_names_limitation_and_options(env):
    with pytest.raises(PlatformError) as info:
        select_platform(env, os_name="linux", use_atspi=False)
    msg = str(info.value)
    assert "Wayland" in msg and "XWayland" in msg
    assert "input-method" in msg and "ghosttype ibus install" in msg


def test_xwayland_uses_x11_and_warns(caplog):
    caplog.set_level(logging.WARNING, logger="daemon.frontends.overlay.platform")
    env = {"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": UNREACHABLE}
    with pytest.raises(PlatformError, match="cannot connect to the X server"):
        select_platform(env, os_name="linux", use_atspi=False)
    assert any("X11 applications only" in r.getMessage() for r in caplog.records)


def test_override_unknown_lists_choices():
    with pytest.raises(PlatformError) as info:
        select_platform({ENV_OVERRIDE: "beos", "DISPLAY": ":0"}, os_name="linux", use_atspi=False)
    msg = str(info.value)
    assert "beos" in msg and "x11, wayland, macos, windows" in msg


def test_override_wayland_wins_over_x11_session():
    with pytest.raises(PlatformError, match="ghosttype ibus install"):
        select_platform({ENV_OVERRIDE: "Wayland", "DISPLAY": ":0"}, os_name="linux", use_atspi=False)


def test_override_x11_without_display():
    with pytest.raises(PlatformError, match="needs DISPLAY"):
        select_platform({ENV_OVERRIDE: "x11", "WAYLAND_DISPLAY": "w"}, os_name="linux", use_atspi=False)


def test_unreachable_display_says_what_to_check():
    with pytest.raises(PlatformError) as info:
        select_platform({"DISPLAY": UNREACHABLE}, os_name="linux", use_atspi=False)
    msg = str(info.value)
    assert f"DISPLAY={UNREACHABLE}" in msg and "XAUTHORITY" in msg


def test_bad_accept_key_is_reported_before_connecting():
    with pytest.raises(PlatformError, match="invalid accept key.*'hyper'"):
        select_platform({"DISPLAY": UNREACHABLE}, os_name="linux", use_atspi=False,
                        accept_keys=["Tab", "hyper+x"])


def test_importing_platform_does_not_load_xlib():
    """``daemon.frontends.base`` is imported everywhere; it must stay light."""
    code = "import sys, json, daemon.frontends.overlay.platform, daemon.frontends.base, daemon.frontends.session;" \
           "print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    mods = json.loads(out.stdout)
    assert not [m for m in mods if m.split(".")[0] in ("Xlib", "pynput", "jeepney", "PyQt6")]


# --------------------------------------------------------------------------- key names

TAB, RIGHT = xk.string_to_keysym("Tab"), xk.string_to_keysym("Right")


@pytest.mark.parametrize(
    "name, keysym, mods",
    [
        ("Tab", TAB, set()),
        ("tab", TAB, set()),
        ("TAB", TAB, set()),
        ("ctrl+Right", RIGHT, {"ctrl"}),
        ("Control+right", RIGHT, {"ctrl"}),
        ("Ctrl + Shift + space", 0x20, {"ctrl", "shift"}),
        ("alt+F5", xk.string_to_keysym("F5"), {"alt"}),
        ("super+Return", xk.string_to_keysym("Return"), {"super"}),
        ("win+enter", xk.string_to_keysym("Return"), {"super"}),
        ("a", ord("a"), set()),
        ("A", ord("A"), set()),
        ("ctrl++", ord("+"), {"ctrl"}),
        ("ctrl+é", 0xE9, {"ctrl"}),
        ("alt+✓", 0x01002713, {"alt"}),
        ("shift+ctrl+shift+Tab", TAB, {"ctrl", "shift"}),
    ],
)
def test_parse_key(name, keysym, mods):
    spec = x11_keys.parse_key(name)
    assert (spec.keysym, set(spec.modifiers), spec.name) == (keysym, mods, name)


@pytest.mark.parametrize(
    "name, fragment",
    [
        ("", "empty key name"),
        ("   ", "empty key name"),
        ("hyper+Tab", "unknown modifier 'hyper'"),
        ("ctrl+", "empty part"),
        ("+Tab", "empty part"),
        ("ctrl+NoSuchKey", "unknown key 'NoSuchKey'"),
        ("shift", "modifier alone"),
        ("ctrl+alt", "modifier alone"),
    ],
)
def test_parse_key_errors(name, fragment):
    with pytest.raises(x11_keys.KeyNameError, match=fragment):
        x11_keys.parse_key(name)


def test_duplicate_keys_are_rejected():
    with pytest.raises(x11_keys.KeyNameError, match="same key"):
        x11_keys.parse_keys(["Tab", "tab"])
    assert [s.name for s in x11_keys.parse_keys(["Tab", "ctrl+Tab"])] == ["Tab", "ctrl+Tab"]


KEYS = ["Tab", "Right", "Left", "space", "Return", "F5", "a", "z", "0", "plus", "BackSpace", "eacute"]
MODS = ["shift", "ctrl", "alt", "super"]


@given(st.sampled_from(KEYS), st.lists(st.sampled_from(MODS), unique=True), st.randoms())
def test_canonical_round_trips(key, mods, rnd):
    written = [m.upper() if rnd.random() < 0.5 else m for m in mods]
    rnd.shuffle(written)
    spec = x11_keys.parse_key("+".join(written + [key]))
    assert spec.modifiers == frozenset(mods)
    assert spec.keysym == xk.string_to_keysym(key)
    again = x11_keys.parse_key(spec.canonical)
    assert (again.keysym, again.modifiers) == (spec.keysym, spec.modifiers)


@given(st.characters(min_codepoint=0x20, max_codepoint=0x10FFFF, blacklist_categories=("Cs",)))
def test_keysym_for_char(ch):
    sym = x11_keys.keysym_for_char(ch)
    cp = ord(ch)
    if cp <= 0x7E or 0xA0 <= cp <= 0xFF:
        assert sym == cp and xk.keysym_to_string(sym) == ch
    else:
        assert sym == 0x01000000 + cp


@given(st.lists(st.sampled_from([1 << i for i in range(8)] + [0]), max_size=5))
def test_ignored_mask_combinations_is_every_subset(masks):
    distinct = sorted({m for m in masks if m})
    oracle = {0}
    for r in range(1, len(distinct) + 1):
        for subset in itertools.combinations(distinct, r):
            value = 0
            for m in subset:
                value |= m
            oracle.add(value)
    assert x11_keys.ignored_mask_combinations(masks) == sorted(oracle)


def test_modifier_mask_uses_server_bits():
    bits = {"shift": 1, "ctrl": 4, "alt": 8, "super": 64}
    assert x11_keys.modifier_mask({"ctrl", "alt"}, bits) == 12
    assert x11_keys.modifier_mask(set(), bits) == 0


# --------------------------------------------------------------------------- caret heuristic

SCREEN_W, SCREEN_H = 1920, 1080
coords = st.integers(min_value=0, max_value=SCREEN_W - 1)
rects = st.builds(Rect, st.integers(-100, SCREEN_W), st.integers(-100, SCREEN_H),
                  st.integers(1, SCREEN_W), st.integers(1, SCREEN_H))


@given(coords, st.integers(0, SCREEN_H - 1), st.one_of(st.none(), rects))
def test_caret_heuristic(px, py, window):
    rect = X11CaretLocator.heuristic(px, py, window, SCREEN_W, SCREEN_H)
    h = X11CaretLocator.LINE_HEIGHT
    assert 0 <= rect.x < SCREEN_W and 0 <= rect.y <= SCREEN_H - h and rect.height == h
    inside = window is not None and (
        window.x <= px < window.x + window.width and window.y <= py < window.y + window.height
    )
    if window is None or inside:
        assert rect.x == px
        assert rect.y == min(py + X11CaretLocator.POINTER_GAP, SCREEN_H - h)
    else:
        m = X11CaretLocator.MARGIN
        assert rect.x == min(max(0, window.x + m), SCREEN_W - 1)
        assert rect.y == min(max(0, window.y + window.height - m - h), SCREEN_H - h)


def test_caret_scaled_to_logical_pixels():
    assert _scaled(Rect(200, 100, 2, 36), 2.0) == Rect(100, 50, 1, 18)
    assert _scaled(Rect(150, 75, 1, 18), 1.5) == Rect(100, 50, 1, 12)
    assert _scaled(Rect(3, 4, 1, 18), 1.0) == Rect(3, 4, 1, 18)


def test_accessible_caret_is_used_as_is():
    class NoDisplayLocator(X11CaretLocator):
        def __init__(self):  # the accessible caret needs no X connection
            pass

    from daemon.controller.ports import FocusState

    caret = Rect(10, 20, 2, 16)
    assert NoDisplayLocator().caret_rect(FocusState(caret=caret)) == caret
