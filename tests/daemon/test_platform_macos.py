"""The macOS backend's pure parts, tested on any OS: keycodes, the event-tap
decoder (Quartz faked), the Unicode keystroke plan, AX verdicts and
geometry, and MacFocus driven by a fake Accessibility API.  The last test
touches pyobjc and runs on macOS only."""

from __future__ import annotations

import sys
from typing import Any, Optional

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.controller.ports import FocusState, Rect
from daemon.frontends.overlay.platform.hook_suppress import HookKeySuppressor, RawKey
from daemon.frontends.overlay.platform.macos.backend import permission_problems
from daemon.frontends.overlay.platform.macos.focus import (
    MacFocus,
    app_id_from,
    ax_box_to_rect,
    caret_from_ax,
    element_token,
    password_verdict,
    read_window,
    tail_text,
)
from daemon.frontends.overlay.platform.macos.inject import MAX_UNITS, keystroke_plan
from daemon.frontends.overlay.platform.macos.keys import (
    KEY_DOWN,
    KEY_UP,
    RETURN,
    TAB,
    decode_tap_event,
    keycode_for_key,
    make_decoder,
    modifiers_from_flags,
    parse_mac_keys,
)
from daemon.frontends.overlay.platform.utf16 import utf16_len

macos_only = pytest.mark.skipif(sys.platform != "darwin", reason="needs macOS")
SHIFT, CTRL, ALT, CMD = 0x20000, 0x40000, 0x80000, 0x100000
FN_AND_NUMPAD = 0x800000 | 0x200000  # arrow keys carry these; they are not modifiers
OWN_PID = 4242

# --------------------------------------------------------------------------- keycodes


@pytest.mark.parametrize("key, code", [
    ("tab", 48), ("enter", 36), ("space", 49), ("backspace", 51), ("escape", 53), ("delete", 117),
    ("left", 123), ("right", 124), ("down", 125), ("up", 126), ("home", 115), ("end", 119),
    ("page_up", 116), ("page_down", 121), ("f1", 122), ("f5", 96), ("f12", 111), ("f20", 90),
    ("a", 0), ("s", 1), ("z", 6), ("q", 12), ("1", 18), ("0", 29), ("/", 44), ("`", 50),
])
def test_keycode_for_key(key, code):
    assert keycode_for_key(key) == code


def test_keys_macs_do_not_have():
    assert keycode_for_key("f24") is None and keycode_for_key("pause") is None
    with pytest.raises(ValueError, match="macOS has no key code for 'menu'"):
        parse_mac_keys(["menu"])


def test_parse_mac_keys():
    keys = parse_mac_keys(["Tab", "ctrl+Right", "cmd+shift+a"])
    assert [(k.code, set(k.modifiers)) for k in keys] == [(48, set()), (124, {"ctrl"}), (0, {"super", "shift"})]


def test_modifiers_from_flags_ignore_caps_fn_and_numpad():
    assert modifiers_from_flags(CTRL | FN_AND_NUMPAD | 0x10000) == frozenset({"ctrl"})
    assert modifiers_from_flags(SHIFT | ALT | CMD) == frozenset({"shift", "alt", "super"})
    assert modifiers_from_flags(0) == frozenset()


def test_decode_tap_event():
    assert decode_tap_event(KEY_DOWN, 48, 0, 0, OWN_PID) == RawKey(48, True, frozenset(), False)
    assert decode_tap_event(KEY_UP, 124, CTRL, 0, OWN_PID) == RawKey(124, False, frozenset({"ctrl"}), False)
    assert decode_tap_event(KEY_DOWN, 48, 0, OWN_PID, OWN_PID).ours  # posted by our injector
    assert not decode_tap_event(KEY_DOWN, 48, 0, 999, OWN_PID).ours  # another app's synthetic key
    assert decode_tap_event(12, 56, SHIFT, 0, OWN_PID) is None  # kCGEventFlagsChanged
    assert decode_tap_event(0xFFFFFFFE, 0, 0, 0, OWN_PID) is None  # tap disabled by timeout


class FakeQuartz:
    """CGEvent field access over plain dicts."""

    def __init__(self):
        self.reads = 0

    def CGEventGetIntegerValueField(self, event, field):
        self.reads += 1
        return {9: event["keycode"], 41: event.get("pid", 0)}[field]

    def CGEventGetFlags(self, event):
        return event.get("flags", 0)


def test_make_decoder_reads_fields_of_key_events_only():
    q = FakeQuartz()
    decode = make_decoder(q, OWN_PID)
    assert decode(KEY_DOWN, {"keycode": 124, "flags": CTRL | FN_AND_NUMPAD}) == \
        RawKey(124, True, frozenset({"ctrl"}), False)
    reads = q.reads
    assert decode(12, {"keycode": 56}) is None and q.reads == reads


def test_darwin_filter_end_to_end():
    """The suppressor as macos.parts() builds it, fed tap events."""
    s = HookKeySuppressor(["tab", "ctrl+right"], parse_mac_keys, make_decoder(FakeQuartz(), OWN_PID),
                          "darwin", dispatch=lambda fn, name: fn(name))
    got: list[str] = []
    assert not s.swallow(KEY_DOWN, {"keycode": TAB})  # disarmed
    s.arm(got.append)
    assert s.swallow(KEY_DOWN, {"keycode": TAB}) and s.swallow(KEY_UP, {"keycode": TAB})
    assert not s.swallow(KEY_DOWN, {"keycode": TAB, "pid": OWN_PID})  # the injector's own Tab
    assert s.swallow(KEY_DOWN, {"keycode": 124, "flags": CTRL | FN_AND_NUMPAD})
    assert not s.swallow(KEY_DOWN, {"keycode": 124, "flags": CTRL | SHIFT})
    assert not s.swallow(KEY_DOWN, {"keycode": TAB, "flags": CMD})  # cmd+Tab switches apps
    assert got == ["tab", "ctrl+right"]


# --------------------------------------------------------------------------- injection plan


def test_plan_short_text_is_one_event():
    assert keystroke_plan("hello") == ["hello"]
    assert keystroke_plan("") == []


def test_plan_chunks_of_at_most_20_utf16_units():
    text = "x" * 45
    assert keystroke_plan(text) == ["x" * 20, "x" * 20, "x" * 5]


def test_plan_never_splits_a_surrogate_pair():
    text = "x" * 19 + "😀" + "y"  # the emoji would straddle units 20 and 21
    assert keystroke_plan(text) == ["x" * 19, "😀y"]


def test_plan_return_and_tab_are_keys():
    assert keystroke_plan("a\nb\r\nc\td\x07") == ["a", RETURN, "b", RETURN, "c", TAB, "d"]


@given(st.text(alphabet=st.characters(min_codepoint=0x20, blacklist_categories=("Cs",)).filter(
    lambda c: c != "\x7f"), max_size=120))
def test_plan_round_trips(text):
    plan = keystroke_plan(text)
    assert "".join(plan) == text  # no control characters: only text chunks
    assert all(0 < utf16_len(chunk) <= MAX_UNITS for chunk in plan)


# --------------------------------------------------------------------------- AX verdicts


@pytest.mark.parametrize("role, subrole, secure, terminal, verdict", [
    ("AXTextField", None, False, False, False),
    ("AXTextArea", None, None, False, False),
    ("AXTextField", "AXSecureTextField", False, False, True),  # Safari / Chromium password input
    ("AXSecureTextField", None, False, False, True),  # older Cocoa secure fields
    ("AXTextField", "AXSearchField", False, False, False),
    ("AXTextArea", None, True, False, True),  # Secure Event Input is on somewhere
    (None, None, True, False, True),
    (None, None, False, False, None),  # AX told us nothing
    ("AXWebArea", None, False, False, None),  # not a text field: cannot tell
    ("AXGroup", None, False, False, None),
    ("AXTextArea", None, False, True, None),  # a terminal may show a password prompt
])
def test_password_verdict(role, subrole, secure, terminal, verdict):
    assert password_verdict(role, subrole, secure, terminal) is verdict


def test_app_id_prefers_the_executable_name():
    assert app_id_from("KeePassXC", "org.keepassxc.keepassxc") == "keepassxc"
    assert app_id_from(None, "com.example.App") == "com.example.app"
    assert app_id_from("", None) == ""


def test_read_window_and_tail_text():
    assert read_window(10, 2000) == (0, 10)
    assert read_window(5000, 2000) == (1000, 4000)
    assert tail_text("\udc00abc", 10) == "abc"  # a cut through a surrogate pair
    assert tail_text("abcdef", 3) == "def" and tail_text("abc", 0) == ""


def test_ax_rect_is_rounded_not_scaled_and_keeps_negative_coordinates():
    assert ax_box_to_rect((100.4, 200.6, 1.2, 17.5)) == Rect(100, 201, 1, 18)
    assert ax_box_to_rect((-1440.0, -300.0, 0.0, 16.0)) == Rect(-1440, -300, 0, 16)
    assert ax_box_to_rect(None) is None


def test_caret_from_ax():
    # Cocoa text views answer the empty range with the insertion point.
    assert caret_from_ax((50.0, 80.0, 0.0, 17.0), None, None, "a") == Rect(50, 80, 1, 17)
    # Others answer (0, 0, 0, 0): the caret follows the character before it ...
    assert caret_from_ax((0.0, 0.0, 0.0, 0.0), (40.0, 80.0, 7.0, 17.0), None, "a") == Rect(47, 80, 1, 17)
    # ... or sits on the character after it at the start of a line.
    assert caret_from_ax(None, (90.0, 80.0, 0.0, 17.0), (-500.0, 97.0, 7.0, 17.0), "\n") == \
        Rect(-500, 97, 1, 17)
    assert caret_from_ax(None, None, None, None) is None


def test_element_token_changes_with_app_and_element():
    assert element_token(10, 5) != element_token(11, 5) != element_token(10, 6)
    assert element_token(10, -1) == element_token(10, 0xFFFFFFFF)  # CFHash may be negative


# --------------------------------------------------------------------------- MacFocus with a fake AX


class FakeAX:
    """Elements are dicts: attributes by name, plus ``text`` for the ranges."""

    def __init__(self, app: Optional[dict], pid: int = 77):
        self.system = {"AXFocusedApplication": app}
        self._pid = pid
        self.calls: list[tuple] = []

    def attr(self, element: Any, name: str) -> Any:
        self.calls.append(("attr", name))
        return None if element is None else element.get(name)

    def param(self, element: Any, name: str, location: int, length: int) -> Any:
        self.calls.append((name, location, length))
        handler = element.get(name)
        return handler(location, length) if handler else None

    def range(self, value: Any) -> Any:
        return value

    def rect(self, value: Any) -> Any:
        return value

    def pid(self, element: Any) -> int:
        return self._pid


class FakeApps:
    def __init__(self):
        self.lookups = 0

    def frontmost_pid(self) -> int:
        return 55

    def names(self, pid: int):
        self.lookups += 1
        return {77: ("TextEdit", "com.apple.TextEdit"), 55: ("Finder", "com.apple.finder"),
                78: ("Terminal", "com.apple.Terminal")}[pid]

    def element_hash(self, element: Any) -> int:
        return id(element) & 0xFFFF


def utf16_range(text: str):
    """An ``AXStringForRange`` answering from ``text`` in UTF-16 units."""
    data = text.encode("utf-16-le", "surrogatepass")
    return lambda loc, length: data[2 * loc:2 * (loc + length)].decode("utf-16-le", "surrogatepass")


def field(text: str, caret: int, role: str = "AXTextField", subrole: Optional[str] = None,
          bounds=None) -> dict:
    return {"AXRole": role, "AXSubrole": subrole, "AXValue": text, "AXSelectedTextRange": (caret, 0),
            "AXStringForRange": utf16_range(text), "AXBoundsForRange": bounds}


def focus_for(element: Optional[dict], secure: Optional[bool] = False, pid: int = 77,
              max_chars: int = 2000) -> tuple[MacFocus, FakeAX]:
    app = None if element is None else {"AXFocusedUIElement": element}
    ax = FakeAX(app, pid)
    return MacFocus(ax, FakeApps(), secure_input=lambda: secure, max_chars=max_chars), ax


def test_focus_reads_text_before_the_caret_and_the_caret():
    bounds = lambda loc, length: (300.0, 120.0, 0.0, 16.0) if length == 0 else None  # noqa: E731
    focus, _ = focus_for(field("hello world", 5, bounds=bounds))
    state = focus.current()
    assert (state.app_id, state.is_password, state.text_before_caret, state.caret) == \
        ("textedit", False, "hello", Rect(300, 120, 1, 16))


def test_focus_counts_the_caret_in_utf16_units():
    focus, ax = focus_for(field("a😀bc", 4))  # caret after "b": a(1) + 😀(2) + b(1)
    assert focus.current().text_before_caret == "a😀b"
    assert ("AXStringForRange", 0, 4) in ax.calls


def test_focus_reads_only_a_window_before_the_caret():
    text = "z" * 10_000
    focus, ax = focus_for(field(text, 9_000), max_chars=100)
    assert focus.current().text_before_caret == "z" * 100
    assert ("AXStringForRange", 8_800, 200) in ax.calls


def test_focus_falls_back_to_ax_value():
    element = field("ab😀cd", 3)
    element["AXStringForRange"] = None
    focus, _ = focus_for(element)
    assert focus.current().text_before_caret == "ab"  # the caret was mid-pair: half dropped


def test_caret_from_the_surrounding_characters_when_the_empty_range_has_no_box():
    def bounds(loc, length):
        return {(2, 0): (0.0, 0.0, 0.0, 0.0), (1, 1): (20.0, 50.0, 8.0, 16.0)}.get((loc, length))

    focus, ax = focus_for(field("abc", 2, bounds=bounds))
    assert focus.current().caret == Rect(28, 50, 1, 16)
    assert ("AXBoundsForRange", 2, 1) in ax.calls


def test_password_field_text_is_never_read():
    focus, ax = focus_for(field("hunter2", 7, subrole="AXSecureTextField"))
    state = focus.current()
    assert state.is_password is True and state.text_before_caret is None and state.caret is None
    assert not [c for c in ax.calls if c[0] in ("AXStringForRange", "AXBoundsForRange")]
    assert ("attr", "AXValue") not in ax.calls and ("attr", "AXSelectedTextRange") not in ax.calls


def test_secure_event_input_blocks_any_field():
    focus, ax = focus_for(field("text", 4), secure=True)
    state = focus.current()
    assert state == FocusState(state.app_id, state.window_id, True)
    assert ("attr", "AXValue") not in ax.calls


def test_no_accessible_application_uses_the_frontmost_one():
    focus, _ = focus_for(None)
    state = focus.current()
    assert (state.app_id, state.is_password, state.text_before_caret) == ("finder", None, None)


def test_terminal_cannot_tell_but_still_gives_text():
    focus, _ = focus_for(field("$ sudo ls", 9, role="AXTextArea"), pid=78)
    state = focus.current()
    assert (state.app_id, state.is_password, state.text_before_caret) == ("terminal", None, "$ sudo ls")


def test_no_selection_range_means_no_text():
    element = field("abc", 0)
    element["AXSelectedTextRange"] = None
    focus, _ = focus_for(element)
    state = focus.current()
    assert state.is_password is False and state.text_before_caret is None and state.caret is None


def test_window_id_changes_with_the_element_and_names_are_cached():
    first, second = field("a", 1), field("b", 1)
    app = {"AXFocusedUIElement": first}
    ax = FakeAX(app)
    apps = FakeApps()
    focus = MacFocus(ax, apps, secure_input=lambda: False)
    one = focus.current().window_id
    app["AXFocusedUIElement"] = second
    assert focus.current().window_id != one
    assert apps.lookups == 1


# --------------------------------------------------------------------------- permissions


def test_missing_accessibility_is_fatal_and_says_where():
    fatal, warnings = permission_problems(False, True, "/usr/bin/python3")
    assert fatal is not None and "Accessibility" in fatal and "/usr/bin/python3" in fatal
    assert warnings == []


def test_missing_input_monitoring_is_a_warning():
    fatal, warnings = permission_problems(True, False, "/opt/py")
    assert fatal is None and len(warnings) == 1 and "Input Monitoring" in warnings[0]
    assert permission_problems(True, None, "/opt/py") == (None, [])  # macOS before 10.15


# --------------------------------------------------------------------------- on macOS


@macos_only
def test_real_macos_backend_modules_import_pyobjc():  # pragma: no cover - macOS only
    import Quartz

    from daemon.frontends.overlay.platform.macos.ax import AX
    from daemon.frontends.overlay.platform.macos.inject import MacTextInjector

    ax = AX()
    assert ax.attr(ax.system, "AXRole") in (None, "AXSystemWide")
    MacTextInjector().close()
    decode = make_decoder(Quartz, 1)
    event = Quartz.CGEventCreateKeyboardEvent(None, TAB, True)
    raw = decode(KEY_DOWN, event)
    assert raw is not None and raw.code == TAB and raw.pressed
