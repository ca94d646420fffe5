"""The Windows backend's pure parts, tested on any OS: key codes, the hook
event decoder, SendInput sequences, DPI conversion, executable names and
password verdicts.  The last tests touch Win32 and run on Windows only."""

from __future__ import annotations

import ctypes
import sys
import types

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.controller.ports import Rect
from daemon.frontends.overlay.platform.hook_suppress import HookKeySuppressor, RawKey
from daemon.frontends.overlay.platform.windows.api import (
    GUITHREADINFO,
    INPUT,
    INPUT_KEYBOARD,
    KEYBDINPUT,
    MONITORINFO,
    RECT,
    rect_of,
)
from daemon.frontends.overlay.platform.windows.caret import caret_on_screen, to_logical
from daemon.frontends.overlay.platform.windows.focus import edit_password, exe_stem, password_verdict
from daemon.frontends.overlay.platform.windows.inject import (
    KEYEVENTF_EXTENDEDKEY,
    KEYEVENTF_KEYUP,
    KEYEVENTF_UNICODE,
    VK_MASK,
    Stroke,
    text_strokes,
    to_inputs,
    with_modifiers_released,
)
from daemon.frontends.overlay.platform.windows.keys import (
    INJECTED_TAG,
    WM_KEYDOWN,
    WM_KEYUP,
    WM_SYSKEYDOWN,
    WM_SYSKEYUP,
    decode_hook_event,
    held_modifiers,
    parse_vk_keys,
    vk_for_key,
)

windows_only = pytest.mark.skipif(sys.platform != "win32", reason="needs Windows")
U, UP = KEYEVENTF_UNICODE, KEYEVENTF_KEYUP

# --------------------------------------------------------------------------- key codes


@pytest.mark.parametrize("key, vk", [
    ("tab", 0x09), ("enter", 0x0D), ("escape", 0x1B), ("space", 0x20), ("backspace", 0x08),
    ("delete", 0x2E), ("left", 0x25), ("up", 0x26), ("right", 0x27), ("down", 0x28),
    ("home", 0x24), ("end", 0x23), ("page_up", 0x21), ("page_down", 0x22), ("insert", 0x2D),
    ("f1", 0x70), ("f12", 0x7B), ("f24", 0x87), ("a", 0x41), ("z", 0x5A), ("0", 0x30), ("9", 0x39),
])
def test_vk_for_key(key, vk):
    assert vk_for_key(key) == vk


def test_layout_dependent_characters_use_vk_key_scan():
    scan = {"+": 0x01BB, "é": -1, "ü": 0xFFFF}.get  # VkKeyScanW: shift state in the high byte
    assert vk_for_key("+", scan) == 0xBB
    assert vk_for_key("é", scan) is None and vk_for_key("ü", scan) is None
    assert vk_for_key("+") is None  # no layout to ask
    assert vk_for_key("nonsense") is None


def test_parse_vk_keys():
    keys = parse_vk_keys(["Tab", "Control+Right"])
    assert [(k.code, set(k.modifiers), k.name) for k in keys] == \
        [(0x09, set(), "Tab"), (0x27, {"ctrl"}, "Control+Right")]
    with pytest.raises(ValueError, match="Windows has no key code"):
        parse_vk_keys(["ctrl+§"])


def test_held_modifiers_from_async_key_state():
    down = {0x11, 0x5C}  # VK_CONTROL, right Windows key
    assert held_modifiers(down.__contains__) == frozenset({"ctrl", "super"})
    assert held_modifiers(lambda vk: False) == frozenset()


# --------------------------------------------------------------------------- hook events


def hook_data(vk, extra=None):
    return types.SimpleNamespace(vkCode=vk, scanCode=0, flags=0, time=0, dwExtraInfo=extra)


@pytest.mark.parametrize("msg, pressed", [(WM_KEYDOWN, True), (WM_SYSKEYDOWN, True),
                                          (WM_KEYUP, False), (WM_SYSKEYUP, False)])
def test_decode_hook_event(msg, pressed):
    raw = decode_hook_event(msg, hook_data(0x09), lambda: frozenset({"alt"}))
    assert raw == RawKey(0x09, pressed, frozenset({"alt"}) if pressed else frozenset(), False)


def test_decode_marks_our_own_events_and_ignores_other_messages():
    calls = []
    raw = decode_hook_event(WM_KEYDOWN, hook_data(0x09, INJECTED_TAG), lambda: calls.append(1))
    assert raw is not None and raw.ours and calls == []  # no key-state read for our keys
    assert decode_hook_event(0x0200, hook_data(0x09), frozenset) is None  # not a key message


def test_windows_filter_end_to_end():
    """The suppressor as windows.parts() builds it, fed hook events."""
    mods: set[str] = set()
    s = HookKeySuppressor(["tab", "ctrl+right"], parse_vk_keys,
                          lambda msg, data: decode_hook_event(msg, data, lambda: frozenset(mods)),
                          "win32", dispatch=lambda fn, name: fn(name))
    got: list[str] = []
    s.arm(got.append)
    assert s.swallow(WM_KEYDOWN, hook_data(0x09)) and s.swallow(WM_KEYUP, hook_data(0x09))
    assert not s.swallow(WM_KEYDOWN, hook_data(0x09, INJECTED_TAG))  # the injector's Tab
    mods.add("ctrl")
    assert s.swallow(WM_KEYDOWN, hook_data(0x27))
    assert not s.swallow(WM_KEYDOWN, hook_data(0x09))  # ctrl+Tab
    assert got == ["tab", "ctrl+right"]
    s.disarm()
    assert not s.swallow(WM_KEYDOWN, hook_data(0x27))


# --------------------------------------------------------------------------- SendInput sequences


def unicode(unit):
    return [Stroke(0, unit, U), Stroke(0, unit, U | UP)]


def test_bmp_text_is_one_unicode_pair_per_character():
    assert text_strokes("hé") == unicode(0x68) + unicode(0xE9)


def test_astral_character_is_its_surrogate_pair():
    assert text_strokes("😀") == unicode(0xD83D) + unicode(0xDE00)


def test_newline_and_tab_are_keys():
    ret, tab = [Stroke(0x0D, 0, 0), Stroke(0x0D, 0, UP)], [Stroke(0x09, 0, 0), Stroke(0x09, 0, UP)]
    assert text_strokes("a\nb") == unicode(0x61) + ret + unicode(0x62)
    assert text_strokes("\r\n") == ret
    assert text_strokes("\t") == tab
    assert text_strokes("\x07") == [] and text_strokes("") == []


@given(st.text(alphabet=st.characters(min_codepoint=0x20, blacklist_categories=("Cs",)).filter(
    lambda c: c != "\x7f"), max_size=40))
def test_unicode_strokes_round_trip(text):
    strokes = text_strokes(text)
    downs = [s.scan for s in strokes if not s.flags & UP]
    assert all(s.vk == 0 and s.flags & U for s in strokes)
    assert b"".join(u.to_bytes(2, "little") for u in downs).decode("utf-16-le") == text
    assert len(strokes) == 2 * len(downs)


def test_held_modifiers_are_released_around_the_text():
    text = unicode(0x61)
    assert with_modifiers_released(text, []) == text
    ctrl = with_modifiers_released(text, [0xA2])  # left Ctrl
    assert ctrl == [Stroke(0xA2, 0, UP)] + text + [Stroke(0xA2, 0, 0)]
    right_ctrl = with_modifiers_released(text, [0xA3])  # right Ctrl is an extended key
    assert right_ctrl[0] == Stroke(0xA3, 0, UP | KEYEVENTF_EXTENDEDKEY)
    assert right_ctrl[-1] == Stroke(0xA3, 0, KEYEVENTF_EXTENDEDKEY)


def test_releasing_alt_or_win_is_masked_so_no_menu_opens():
    seq = with_modifiers_released(unicode(0x61), [0xA2, 0xA4])  # Ctrl + left Alt
    assert seq[:2] == [Stroke(VK_MASK, 0, 0), Stroke(VK_MASK, 0, UP)]
    assert seq[2:4] == [Stroke(0xA2, 0, UP), Stroke(0xA4, 0, UP)]
    assert seq[-2:] == [Stroke(0xA4, 0, 0), Stroke(0xA2, 0, 0)]  # pressed again in reverse
    win = with_modifiers_released([], [0x5B])
    assert win[0].vk == VK_MASK and win[2] == Stroke(0x5B, 0, UP | KEYEVENTF_EXTENDEDKEY)


def test_input_structure_layout_matches_the_windows_headers():
    pointer = ctypes.sizeof(ctypes.c_void_p)
    assert ctypes.sizeof(INPUT) == (40 if pointer == 8 else 28)
    assert ctypes.sizeof(KEYBDINPUT) == (24 if pointer == 8 else 16)


def test_to_inputs_fills_keyboard_inputs_tagged_as_ours():
    strokes = [Stroke(0, 0xD83D, U), Stroke(0x0D, 0, UP)]
    array = to_inputs(strokes)
    assert len(array) == 2
    assert [(i.type, i.ki.wVk, i.ki.wScan, i.ki.dwFlags, i.ki.dwExtraInfo) for i in array] == [
        (INPUT_KEYBOARD, 0, 0xD83D, U, INJECTED_TAG), (INPUT_KEYBOARD, 0x0D, 0, UP, INJECTED_TAG)]


# --------------------------------------------------------------------------- coordinates


def test_physical_to_logical_at_96_dpi_is_unchanged():
    r = Rect(100, 200, 2, 20)
    assert to_logical(r, Rect(0, 0, 1920, 1080), 96) is r
    assert to_logical(r, Rect(0, 0, 1920, 1080), 0) is r


def test_physical_to_logical_scales_around_the_monitor_origin():
    primary = Rect(0, 0, 3840, 2160)  # 200 %
    assert to_logical(Rect(200, 100, 2, 40), primary, 192) == Rect(100, 50, 1, 20)
    right = Rect(3840, 0, 2880, 1620)  # 150 %, right of the primary
    assert to_logical(Rect(3840 + 300, 150, 3, 30), right, 144) == Rect(3840 + 200, 100, 2, 20)


def test_physical_to_logical_on_a_monitor_left_of_and_above_the_primary():
    left = Rect(-2560, -400, 2560, 1440)  # 125 %
    assert to_logical(Rect(-2560 + 500, -400 + 250, 1, 25), left, 120) == Rect(-2560 + 400, -400 + 200, 1, 20)


@given(st.integers(-8000, 8000), st.integers(-8000, 8000), st.integers(0, 7000), st.integers(0, 4000),
       st.sampled_from([96, 120, 144, 168, 192, 240, 288]))
def test_monitor_origin_is_a_fixed_point_and_points_stay_on_their_monitor(mx, my, dx, dy, dpi):
    monitor = Rect(mx, my, 7001, 4001)
    origin = to_logical(Rect(mx, my, 1, 1), monitor, dpi)
    assert (origin.x, origin.y) == (mx, my)
    r = to_logical(Rect(mx + dx, my + dy, 1, 20), monitor, dpi)
    assert mx <= r.x <= mx + dx and my <= r.y <= my + dy


def test_caret_on_screen():
    assert caret_on_screen((10, 5, 1, 16), (-1000, 300)) == Rect(-990, 305, 1, 16)
    assert caret_on_screen((10, 5, 0, 16), (0, 0)) == Rect(10, 5, 1, 16)  # 0-wide carets are common
    assert caret_on_screen((0, 0, 0, 0), (50, 50)) is None  # no caret


def test_rect_of_win32_rect():
    assert rect_of(RECT(-1920, 10, -1000, 610)) == (-1920, 10, 920, 600)


def test_gui_thread_info_layout():
    pointer = ctypes.sizeof(ctypes.c_void_p)
    assert ctypes.sizeof(GUITHREADINFO) == (72 if pointer == 8 else 48)
    assert ctypes.sizeof(MONITORINFO) == 40


# --------------------------------------------------------------------------- focus


@pytest.mark.parametrize("path, stem", [
    ("C:\\Program Files\\KeePassXC\\KeePassXC.exe", "keepassxc"),
    ("C:\\Users\\me\\AppData\\Local\\1Password\\app\\8\\1Password.EXE", "1password"),
    ("\\\\?\\C:\\tools\\putty", "putty"),
    ("", ""),
])
def test_exe_stem(path, stem):
    assert exe_stem(path) == stem


@pytest.mark.parametrize("cls, style, verdict", [
    ("Edit", 0x20, True), ("Edit", 0x0, False), ("RichEdit20W", 0x20, True), ("RICHEDIT50W", 0, False),
    ("WindowsForms10.EDIT.app.0.2bf8098_r6_ad1", 0x20, True),
    ("Chrome_RenderWidgetHostHWND", 0x20, None), ("ConsoleWindowClass", 0, None),
])
def test_edit_password(cls, style, verdict):
    assert edit_password(cls, style) is verdict


@pytest.mark.parametrize("uia, edit, verdict", [
    (True, None, True), (None, True, True), (False, True, True), (True, False, True),
    (False, None, False), (None, False, False), (False, False, False), (None, None, None),
])
def test_password_verdict(uia, edit, verdict):
    assert password_verdict(uia, edit) is verdict


# --------------------------------------------------------------------------- on Windows


@windows_only
def test_real_windows_backend_builds_and_reads_focus():  # pragma: no cover - Windows only
    from daemon.frontends.overlay.platform.windows import backend as windows

    factories = windows.parts(["tab", "ctrl+right"])
    parts = [f() for f in factories]
    try:
        focus, caret, _injector, suppressor = parts
        state = focus.current()
        assert isinstance(state.app_id, str)
        caret.caret_rect(state)  # must not raise
        assert suppressor.listener_hook.backend == "win32"
    finally:
        for part in reversed(parts):
            part.close()
