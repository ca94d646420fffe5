"""The OS-neutral parts of the macOS and Windows backends: the accept-key
decision that runs in the keyboard hook, the keyboard adapter's pynput
options, shared caret and text helpers, and the selector's choice of the
native backends (OS modules faked)."""

from __future__ import annotations

import sys
import threading
import types

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.frontends.overlay.keyboard import hook_options
from daemon.frontends.overlay.platform import Platform, _assemble, select_platform
from daemon.controller.ports import Rect
from daemon.frontends.base import ListenerHook, PlatformError
from daemon.frontends.overlay.platform.caret_geometry import LINE_HEIGHT, pointer_caret
from daemon.frontends.overlay.platform.hook_suppress import (
    CallbackThread,
    HookKey,
    HookKeySuppressor,
    RawKey,
    parse_hook_keys,
    split_spec,
)
from daemon.frontends.overlay.platform.text_pieces import Key, text_pieces
from daemon.frontends.overlay.platform.utf16 import strip_lone_surrogates, utf16_chunks, utf16_len, utf16_prefix, utf16_units

TAB, RIGHT = 9, 39
CODES = {"tab": TAB, "right": RIGHT, "a": 65, "+": 187}

# --------------------------------------------------------------------------- key specs


@pytest.mark.parametrize("spec, mods, key", [
    ("Tab", set(), "tab"),
    ("Control+Right", {"ctrl"}, "right"),
    ("ctrl++", {"ctrl"}, "+"),
    ("+", set(), "+"),
    ("shift+cmd+A", {"shift", "super"}, "a"),
])
def test_split_spec(spec, mods, key):
    assert split_spec(spec) == (frozenset(mods), key)


def test_parse_hook_keys():
    keys = parse_hook_keys(["Tab", "ctrl+Right"], CODES.get, "Testix")
    assert keys == [HookKey(TAB, frozenset(), "Tab"), HookKey(RIGHT, frozenset({"ctrl"}), "ctrl+Right")]


@pytest.mark.parametrize("names, fragment", [
    (["hyper+x"], "unknown modifier"),
    (["f5"], "Testix has no key code for 'f5'"),
    (["Tab", "tab"], "same key"),
])
def test_parse_hook_keys_errors(names, fragment):
    with pytest.raises(ValueError, match=fragment):
        parse_hook_keys(names, CODES.get, "Testix")


# --------------------------------------------------------------------------- the decision


class Recorder:
    def __init__(self):
        self.names: list[str] = []

    def __call__(self, name: str) -> None:
        self.names.append(name)


def suppressor(keys=("Tab", "ctrl+Right"), decode=None) -> HookKeySuppressor:
    """A suppressor that dispatches synchronously and decodes ``(code, pressed)``
    pairs with the modifiers given as the second element of ``a``."""
    return HookKeySuppressor(
        keys, lambda names: parse_hook_keys(names, CODES.get, "Testix"),
        decode or (lambda a, b: RawKey(a[0], a[1], frozenset(b))), "win32",
        dispatch=lambda fn, name: fn(name))


def press(code, mods=(), ours=False):
    return RawKey(code, True, frozenset(mods), ours)


def release(code):
    return RawKey(code, False, frozenset())


def test_disarmed_passes_everything():
    s = suppressor()
    assert not s.decide(press(TAB)) and not s.decide(release(TAB))
    assert not s.decide(press(RIGHT, {"ctrl"}))


def test_armed_swallows_only_configured_keys_with_exact_modifiers():
    s, got = suppressor(), Recorder()
    s.arm(got)
    assert s.decide(press(TAB))
    assert s.decide(press(RIGHT, {"ctrl"}))
    assert not s.decide(press(TAB, {"ctrl"}))  # ctrl+Tab switches tabs: not ours
    assert not s.decide(press(RIGHT))  # plain Right moves the caret
    assert not s.decide(press(RIGHT, {"ctrl", "shift"}))  # selects a word
    assert not s.decide(press(65))
    assert got.names == ["Tab", "ctrl+Right"]


def test_release_follows_its_press():
    s, got = suppressor(), Recorder()
    s.arm(got)
    assert s.decide(press(TAB))
    s.disarm()  # disarming between press and release still swallows the release
    assert s.decide(release(TAB))
    assert not s.decide(release(TAB))  # only once
    s.arm(got)
    assert not s.decide(press(TAB, {"ctrl"}))  # a press that passed ...
    assert not s.decide(release(TAB))  # ... makes its release pass


def test_own_synthetic_keys_always_pass():
    s, got = suppressor(), Recorder()
    s.arm(got)
    assert not s.decide(press(TAB, ours=True))
    assert got.names == []


def test_each_press_reaches_the_on_key_armed_at_that_moment():
    s, first, second = suppressor(), Recorder(), Recorder()
    s.arm(first)
    s.decide(press(TAB))
    s.arm(second)
    s.decide(press(TAB))  # auto-repeat counts as a press
    assert first.names == ["Tab"] and second.names == ["Tab"]
    assert s.armed
    s.disarm()
    assert not s.armed and not s.decide(press(TAB))


def test_set_keys_replaces_and_keeps_old_keys_on_error():
    s, got = suppressor(), Recorder()
    s.arm(got)
    s.set_keys(["a"])
    assert s.keys == ["a"]
    assert not s.decide(press(TAB)) and s.decide(press(65))
    with pytest.raises(ValueError):
        s.set_keys(["nonsense-key"])
    assert s.keys == ["a"]


def test_swallow_decodes_and_never_raises(caplog):
    s = suppressor()
    s.arm(Recorder())
    assert s.listener_hook == ListenerHook("win32", s.swallow)
    assert s.swallow((TAB, True), ())
    assert not s.swallow((TAB, True), ("ctrl",))

    def broken(a, b):
        raise RuntimeError("odd event")

    bad = suppressor(decode=broken)
    bad.arm(Recorder())
    assert bad.swallow(1, 2) is False and bad.swallow(1, 2) is False
    assert sum("cannot decode" in r.getMessage() for r in caplog.records) == 1

    ignore = suppressor(decode=lambda a, b: None)  # e.g. a modifier change
    ignore.arm(Recorder())
    assert ignore.swallow(1, 2) is False


def test_listener_sees_swallowed_keys_on_macos_only():
    """pynput reports a press before macOS's intercept drops it; Windows'
    filter drops it first (the controller pairs the two views only on macOS)."""
    assert suppressor().listener_sees_swallowed is False  # "win32"
    mac = HookKeySuppressor(["Tab"], lambda names: parse_hook_keys(names, CODES.get, "Testix"),
                            lambda a, b: a, "darwin", dispatch=lambda fn, name: fn(name))
    assert mac.listener_sees_swallowed is True


def test_on_key_runs_on_the_dispatch_thread_not_the_hook():
    threads: list[str] = []
    done = threading.Event()
    s = HookKeySuppressor(["Tab"], lambda names: parse_hook_keys(names, CODES.get, "Testix"),
                          lambda a, b: a, "darwin")
    try:
        s.arm(lambda name: (threads.append(threading.current_thread().name), done.set()))
        assert s.decide(press(TAB))
        assert done.wait(2.0)
        assert threads == ["ghosttype-accept-key"]
    finally:
        s.close()


def test_callback_thread_survives_a_failing_callback():
    seen = []
    done = threading.Event()
    worker = CallbackThread("test-callbacks")
    worker(lambda name: 1 / 0, "boom")
    worker(lambda name: (seen.append(name), done.set()), "next")
    assert done.wait(2.0) and seen == ["next"]
    worker.close()


# --------------------------------------------------------------------------- keyboard adapter


class FakeListener:
    class Suppressed(Exception):
        pass

    def suppress_event(self):
        raise self.Suppressed()


def test_hook_options_none():
    assert hook_options(None, lambda: None) == {}


def test_hook_options_win32_suppresses_through_the_listener():
    listener = FakeListener()
    opts = hook_options(ListenerHook("win32", lambda msg, data: msg == "swallow"), lambda: listener)
    event_filter = opts["win32_event_filter"]
    assert event_filter("pass", None) is True
    with pytest.raises(FakeListener.Suppressed):
        event_filter("swallow", None)


def test_hook_options_darwin_returns_none_to_drop():
    opts = hook_options(ListenerHook("darwin", lambda t, e: t == 10), lambda: None)
    intercept = opts["darwin_intercept"]
    assert intercept(10, "event") is None
    assert intercept(11, "event") == "event"


def test_hook_options_let_the_key_pass_when_the_filter_fails():
    def broken(a, b):
        raise RuntimeError("bug")

    assert hook_options(ListenerHook("darwin", broken), lambda: None)["darwin_intercept"](10, "e") == "e"
    assert hook_options(ListenerHook("win32", broken), FakeListener)["win32_event_filter"](1, None) is True
    with pytest.raises(ValueError):
        hook_options(ListenerHook("beos", broken), lambda: None)


# --------------------------------------------------------------------------- caret guess

SCREENS = st.builds(Rect, st.integers(-4000, 4000), st.integers(-3000, 3000),
                    st.integers(1, 4000), st.integers(LINE_HEIGHT, 3000))


@given(SCREENS, st.integers(-5000, 9000), st.integers(-5000, 9000),
       st.one_of(st.none(), st.builds(Rect, st.integers(-5000, 5000), st.integers(-5000, 5000),
                                      st.integers(1, 3000), st.integers(1, 3000))))
def test_pointer_caret_stays_on_screen_including_negative_monitors(screen, px, py, window):
    r = pointer_caret(px, py, window, screen)
    assert screen.x <= r.x <= screen.x + screen.width - 1
    assert screen.y <= r.y <= screen.y + screen.height - LINE_HEIGHT
    assert (r.width, r.height) == (1, LINE_HEIGHT)


def test_pointer_caret_on_a_monitor_left_of_the_primary():
    monitor = Rect(-1920, -200, 1920, 1080)
    assert pointer_caret(-1000, 100, None, monitor) == Rect(-1000, 120, 1, LINE_HEIGHT)
    window = Rect(-1800, 0, 800, 600)  # pointer outside: bottom-left of the window
    assert pointer_caret(-500, 100, window, monitor) == Rect(-1792, 574, 1, LINE_HEIGHT)


# --------------------------------------------------------------------------- text helpers


@pytest.mark.parametrize("text, pieces", [
    ("", []),
    ("abc", ["abc"]),
    ("a\nb", ["a", Key.ENTER, "b"]),
    ("a\r\nb\rc", ["a", Key.ENTER, "b", Key.ENTER, "c"]),
    ("\tx\t", [Key.TAB, "x", Key.TAB]),
    ("a\x07b\x7f", ["ab"]),
    ("😀é", ["😀é"]),
])
def test_text_pieces(text, pieces):
    assert text_pieces(text) == pieces


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_text_pieces_keep_every_printable_character(text):
    pieces = text_pieces(text)
    kept = "".join(p for p in pieces if isinstance(p, str))
    expected = "".join(ch for ch in text if not (ord(ch) < 0x20 or ord(ch) == 0x7F))
    assert kept == expected
    assert sum(p is Key.TAB for p in pieces) == text.count("\t")
    assert sum(p is Key.ENTER for p in pieces) == text.replace("\r\n", "\n").count("\n") + \
        text.replace("\r\n", "\n").count("\r")


def test_utf16_helpers():
    s = "a😀b"
    assert utf16_len(s) == 4 and utf16_units(s) == [0x61, 0xD83D, 0xDE00, 0x62]
    assert utf16_prefix(s, 1) == "a"
    assert utf16_prefix(s, 2) == "a"  # mid-pair: the half character is dropped
    assert utf16_prefix(s, 3) == "a😀"
    assert utf16_prefix(s, 99) == s and utf16_prefix(s, -1) == ""
    assert strip_lone_surrogates("\udc00ab\ud83d") == "ab"


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=80), st.integers(2, 25))
def test_utf16_chunks(text, limit):
    chunks = utf16_chunks(text, limit)
    assert "".join(chunks) == text
    assert all(0 < utf16_len(c) <= limit for c in chunks)
    # Greedy: a chunk ends only when the next character would not fit.
    for a, b in zip(chunks, chunks[1:]):
        assert utf16_len(a) + utf16_len(b[0]) > limit


def test_utf16_chunks_rejects_a_limit_without_room_for_a_pair():
    with pytest.raises(ValueError):
        utf16_chunks("x", 1)


# --------------------------------------------------------------------------- selector


class Part:
    def __init__(self, name, log):
        self.name, self.log = name, log

    def close(self):
        self.log.append(self.name)


def fake_backend(monkeypatch, name, log, fail_at=None):
    """Install a fake ``daemon.frontends.overlay.platform.<name>.backend`` whose ``parts`` records calls."""
    module = types.ModuleType(f"daemon.frontends.overlay.platform.{name}.backend")

    def parts(accept_keys):
        log.append(("parts", tuple(accept_keys)))

        def make(kind):
            def factory():
                if kind == fail_at:
                    raise PlatformError(f"{kind} failed")
                part = Part(kind, log)
                if kind == "suppressor":
                    part.listener_hook = ListenerHook("win32" if name == "windows" else "darwin",
                                                      lambda a, b: False)
                return part
            return factory

        return [make(k) for k in ("focus", "caret", "injector", "suppressor")]

    module.parts = parts
    monkeypatch.setitem(sys.modules, f"daemon.frontends.overlay.platform.{name}.backend", module)


@pytest.mark.parametrize("os_name, name", [("darwin", "macos"), ("win32", "windows")])
def test_select_platform_builds_the_native_backend(monkeypatch, os_name, name):
    log: list = []
    fake_backend(monkeypatch, name, log)
    platform = select_platform({"DISPLAY": ":0"}, os_name=os_name, accept_keys=["Tab", "ctrl+Right"])
    assert isinstance(platform, Platform) and platform.name == name
    assert log == [("parts", ("Tab", "ctrl+Right"))]
    assert [p.name for p in (platform.focus, platform.caret, platform.injector, platform.suppressor)] == \
        ["focus", "caret", "injector", "suppressor"]
    assert platform.listener_hook is platform.suppressor.listener_hook
    platform.close()
    assert log[1:] == ["suppressor", "injector", "caret", "focus"]


def test_override_picks_windows_on_linux(monkeypatch):
    log: list = []
    fake_backend(monkeypatch, "windows", log)
    assert select_platform({"GHOSTTYPE_PLATFORM": "windows"}, os_name="linux").name == "windows"


def test_a_failing_part_closes_the_ones_built(monkeypatch):
    log: list = []
    fake_backend(monkeypatch, "macos", log, fail_at="injector")
    with pytest.raises(PlatformError, match="injector failed"):
        select_platform({}, os_name="darwin")
    assert log[1:] == ["caret", "focus"]


def test_assemble_returns_parts_in_order():
    assert _assemble([lambda: 1, lambda: 2]) == [1, 2]


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="checks the wrong-OS message")
@pytest.mark.parametrize("name, fragment", [("macos", "macOS only"), ("windows", "Windows only")])
def test_real_native_backends_refuse_other_oses(name, fragment):
    with pytest.raises(PlatformError, match=fragment):
        select_platform({"GHOSTTYPE_PLATFORM": name}, os_name="linux")
