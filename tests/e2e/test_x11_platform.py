"""The X11 platform layer against a real X server (Xvfb) and a real xterm.

xterm runs ``cat > FILE``, so whatever reaches the terminal as keyboard input
lands in FILE once a line is complete: the file is the ground truth for what
the application received.  Keys are pressed with xdotool (XTEST), like a user.
"""

from __future__ import annotations

import pathlib
import threading
import time

import pytest
from Xlib import X, XK, Xatom, error
from Xlib.display import Display

from daemon.controller.ports import FocusState
from daemon.frontends.base import PlatformError
from daemon.frontends.overlay.platform.x11 import backend as x11
from tests import needs
from tests.e2e.xserver import App, start_app, wait_until, xdotool, xvfb  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(60)]


class Terminal:
    """xterm running ``cat > FILE``, focused."""

    def __init__(self, display: str, path: pathlib.Path) -> None:
        needs.tool("xterm", "xterm")
        self.display = display
        self.path = path
        self.app: App = start_app(display, ["xterm", "-e", "sh", "-c", f"exec cat > '{path}'"],
                                  wm_class="xterm")
        xdotool(display, "windowfocus", "--sync", str(self.app.window))
        # Key events go to the focus window, but keep the pointer inside too.
        xdotool(display, "mousemove", "--window", str(self.app.window), "20", "20")

    def text(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    def wait_for(self, expected: str, timeout: float = 5.0) -> str:
        wait_until(lambda: self.text() == expected, timeout=timeout)
        return self.text()


@pytest.fixture
def term(xvfb: str, tmp_path: pathlib.Path) -> Terminal:
    return Terminal(xvfb, tmp_path / "typed.txt")


def _flushed(term: Terminal, marker: str = "END") -> str:
    """Type a marker line with xdotool and return the file once it arrived:
    everything typed before the marker has then been processed."""
    xdotool(term.display, "type", "--delay", "5", f"{marker}\n")
    wait_until(lambda: term.text().endswith(f"{marker}\n"), timeout=5)
    text = term.text()
    assert text.endswith(f"{marker}\n"), repr(text)
    return text[: -len(marker) - 1]


# --------------------------------------------------------------------------- focus


def test_focus_reports_xterm_wm_class(term: Terminal):
    focus = x11.X11Focus(term.display)
    try:
        state = focus.current()
        assert state.app_id == "xterm"
        assert state.window_id == term.app.window
        assert state.is_password is None and state.text_before_caret is None
    finally:
        focus.close()


def test_focus_prefers_net_active_window(term: Terminal, xvfb: str):
    """With an EWMH window manager the answer comes from _NET_ACTIVE_WINDOW,
    even when the input focus is elsewhere."""
    other = start_app(xvfb, ["xterm", "-class", "OtherTerm"], wm_class="OtherTerm")
    d = Display(xvfb)
    try:
        root = d.screen().root
        root.change_property(d.intern_atom("_NET_ACTIVE_WINDOW"), Xatom.WINDOW, 32, [other.window])
        d.sync()
        focus = x11.X11Focus(xvfb)
        try:
            state = focus.current()
            assert (state.app_id, state.window_id) == ("otherterm", other.window)
        finally:
            focus.close()
    finally:
        d.close()


def test_focus_merges_accessibility_answer(term: Terminal):
    from daemon.controller.ports import Rect

    class FakeAtspi:
        def query(self):
            return (True, "secret-free context", Rect(1, 2, 3, 4))

    focus = x11.X11Focus(term.display, atspi=FakeAtspi())
    try:
        state = focus.current()
        assert state == FocusState("xterm", term.app.window, True, "secret-free context", Rect(1, 2, 3, 4))
    finally:
        focus.close()


def test_focus_merges_atspi_answer_object(term: Terminal):
    from daemon.frontends.overlay.platform.atspi import reader as atspi
    from daemon.controller.ports import Rect

    class FakeAtspi:
        def __init__(self, answer):
            self.answer = answer

        def query(self):
            if isinstance(self.answer, Exception):
                raise self.answer
            return self.answer

    answer = atspi.AtspiAnswer(is_password=False, text_before_caret="abc", caret=Rect(5, 6, 1, 14),
                               app_name="Kate")
    focus = x11.X11Focus(term.display, atspi=FakeAtspi(answer))
    broken = x11.X11Focus(term.display, atspi=FakeAtspi(RuntimeError("bus gone")))
    try:
        assert focus.current() == FocusState("xterm", term.app.window, False, "abc", Rect(5, 6, 1, 14))
        # A failing accessibility layer leaves the X11 answer intact.
        assert broken.current() == FocusState("xterm", term.app.window)
    finally:
        focus.close()
        broken.close()


def test_caret_fallback_is_below_pointer_inside_focused_window(term: Terminal):
    focus = x11.X11Focus(term.display)
    caret = x11.X11CaretLocator(term.display, scale=2.0)
    try:
        xdotool(term.display, "mousemove", "100", "60")
        rect = caret.caret_rect(focus.current())
        gap = x11.X11CaretLocator.POINTER_GAP
        assert (rect.x, rect.y) == (50, (60 + gap) // 2)
    finally:
        focus.close()
        caret.close()


# --------------------------------------------------------------------------- injector


@pytest.mark.parametrize(
    "text",
    ["hello world\n", "héllo wörld ✓\n", "tabs\tand ÀÉÎõü ß → € 日本\nsecond line\n"],
    ids=["ascii", "latin-and-check", "mixed"],
)
def test_injector_types_exact_text(term: Terminal, text: str):
    injector = x11.X11TextInjector(term.display)
    try:
        injector.type_text(text)
        assert term.wait_for(text) == text
    finally:
        injector.close()


def test_injector_types_more_distinct_symbols_than_spare_keys(term: Terminal):
    """Xvfb's layout has about 19 spare keycodes; 40 distinct CJK characters
    force the injector to rebind spares within one call."""
    injector = x11.X11TextInjector(term.display)
    try:
        text = "".join(chr(0x4E00 + i) for i in range(40)) + "\n"
        injector.type_text(text)
        assert term.wait_for(text) == text
    finally:
        injector.close()


def test_injector_restores_spare_keycodes(term: Terminal):
    injector = x11.X11TextInjector(term.display, restore_after_s=0.2)
    d = Display(term.display)
    try:
        info = d.display.info
        count = info.max_keycode - info.min_keycode + 1
        before = [tuple(row) for row in d.get_keyboard_mapping(info.min_keycode, count)]
        injector.type_text("✓\n")
        assert term.wait_for("✓\n") == "✓\n"
        after = lambda: [tuple(row) for row in d.get_keyboard_mapping(info.min_keycode, count)]  # noqa: E731
        assert wait_until(lambda: after() == before, timeout=3)
    finally:
        injector.close()
        d.close()


def test_injector_marks_its_own_typing(term: Terminal):
    injector = x11.X11TextInjector(term.display, grace_s=0.5)
    try:
        before = time.monotonic()
        assert not injector.is_injecting()
        injector.type_text("abc\n")
        during = time.monotonic()
        assert injector.is_injecting()  # within the grace period
        assert injector.was_injecting(during)
        assert not injector.was_injecting(before - 1.0)
        assert not injector.was_injecting(time.monotonic() + 0.6)
        assert term.wait_for("abc\n") == "abc\n"
    finally:
        injector.close()


# --------------------------------------------------------------------------- suppressor


def test_armed_suppressor_swallows_tab_and_reports_it(term: Terminal):
    sup = x11.X11KeySuppressor(["Tab", "ctrl+Right"], term.display)
    got: list[str] = []
    try:
        sup.arm(got.append)
        xdotool(term.display, "type", "a")
        xdotool(term.display, "key", "Tab")
        xdotool(term.display, "key", "ctrl+Right")
        xdotool(term.display, "type", "b")
        assert _flushed(term) == "ab"
        assert wait_until(lambda: got == ["Tab", "ctrl+Right"], timeout=3), got
        sup.disarm()
        xdotool(term.display, "key", "Tab")
        assert _flushed(term, "X") == "abEND\n\t"
        assert got == ["Tab", "ctrl+Right"]
    finally:
        sup.close()


def test_suppressor_matches_with_numlock_and_capslock_on(term: Terminal):
    sup = x11.X11KeySuppressor(["Tab"], term.display)
    got: list[str] = []
    try:
        sup.arm(got.append)
        xdotool(term.display, "key", "Num_Lock")
        xdotool(term.display, "key", "Tab")
        xdotool(term.display, "key", "Caps_Lock")
        xdotool(term.display, "key", "Tab")
        assert wait_until(lambda: got == ["Tab", "Tab"], timeout=3), got
        xdotool(term.display, "key", "Caps_Lock")
        assert _flushed(term) == ""
    finally:
        sup.close()


def test_accept_word_types_plain_text_while_ctrl_is_held(term: Terminal):
    """ctrl+Right accepts a word while the user still holds Ctrl: the injected
    text must not arrive as Ctrl shortcuts (Ctrl+W would erase a word)."""
    injector = x11.X11TextInjector(term.display)
    sup = x11.X11KeySuppressor(["ctrl+Right"], term.display)
    done = threading.Event()

    def on_key(name: str) -> None:
        injector.type_text("word ")
        done.set()

    try:
        xdotool(term.display, "type", "one ")
        sup.arm(on_key)
        xdotool(term.display, "keydown", "ctrl")
        xdotool(term.display, "key", "Right")
        assert done.wait(3)
        xdotool(term.display, "keyup", "ctrl")
        sup.disarm()
        assert _flushed(term) == "one word "
    finally:
        sup.close()
        injector.close()


def test_handler_returning_false_passes_the_key_through(term: Terminal):
    sup = x11.X11KeySuppressor(["Tab"], term.display)
    calls: list[str] = []

    def on_key(name: str) -> bool:
        calls.append(name)
        return False  # nothing to accept after all

    try:
        sup.arm(on_key)
        xdotool(term.display, "key", "Tab")
        assert _flushed(term) == "\t"
        assert calls == ["Tab"]
        assert sup.armed
    finally:
        sup.close()


def test_handler_may_disarm_from_its_own_thread(term: Terminal):
    sup = x11.X11KeySuppressor(["Tab"], term.display)
    calls: list[str] = []

    def on_key(name: str) -> None:
        calls.append(name)
        sup.disarm()  # accept, hide the suggestion: must not deadlock

    try:
        sup.arm(on_key)
        xdotool(term.display, "key", "Tab")
        xdotool(term.display, "key", "Tab")  # nothing visible any more: goes through
        assert _flushed(term) == "\t"
        assert calls == ["Tab"]
    finally:
        sup.close()


def test_another_thread_disarming_while_the_handler_waits_for_it_does_not_stall(term: Terminal):
    """The controller disarms under its lock (a field event hid the suggestion)
    while the handler of a swallowed press waits for that lock: the disarm must
    not wait for the handler, and the handler then has nothing to accept."""
    sup = x11.X11KeySuppressor(["Tab"], term.display, request_timeout=5.0)
    lock = threading.Lock()
    entered = threading.Event()
    visible = [True]

    def on_key(name: str) -> bool:
        entered.set()
        with lock:
            return False if not visible[0] else None

    try:
        sup.arm(on_key)
        with lock:
            xdotool(term.display, "key", "Tab")
            assert entered.wait(5)
            visible[0] = False
            started = time.monotonic()
            sup.disarm()
            waited = time.monotonic() - started
        assert waited < 1.0, f"disarm waited {waited:.1f} s for a handler blocked on its caller"
        assert wait_until(lambda: not sup.armed, timeout=5)
        assert _flushed(term) == "\t"  # nothing to accept: the press was replayed
    finally:
        sup.close()


def test_press_racing_disarm_is_passed_through(term: Terminal):
    """Fast double Tab: the first press accepts; the second arrives while the
    handler is still accepting (so the server hands it to our grab) and the
    handler then disarms.  The second must reach the application, once."""
    sup = x11.X11KeySuppressor(["Tab"], term.display)
    second_sent = threading.Event()
    disarmed = threading.Event()
    calls: list[str] = []

    def on_key(name: str) -> None:
        calls.append(name)
        second_sent.wait(5)
        time.sleep(0.1)  # let the server queue the second press for us
        sup.disarm()
        disarmed.set()

    try:
        sup.arm(on_key)
        xdotool(term.display, "key", "Tab")
        xdotool(term.display, "key", "Tab")
        second_sent.set()
        assert disarmed.wait(5)
        # The passed-on press is delayed until the handler finished; only
        # then is the order with later typing defined.
        assert _flushed(term) == "\t"
        assert calls == ["Tab"]
    finally:
        sup.close()


def _tab_is_grabbable(display: str) -> bool:
    """Whether another client can grab Tab on the root window now (it cannot
    while anyone holds that passive grab: BadAccess)."""
    d = Display(display)
    try:
        root = d.screen().root
        code = d.keysym_to_keycode(XK.string_to_keysym("Tab"))
        catcher = error.CatchError(error.BadAccess)
        root.grab_key(code, 0, False, X.GrabModeAsync, X.GrabModeAsync, onerror=catcher)
        d.sync()
        ok = catcher.get_error() is None
        root.ungrab_key(code, 0)
        d.sync()
        return ok
    finally:
        d.close()


def test_close_leaves_no_grab(term: Terminal):
    sup = x11.X11KeySuppressor(["Tab"], term.display)
    sup.arm(lambda name: None)
    assert not _tab_is_grabbable(term.display)
    sup.close()
    assert _tab_is_grabbable(term.display)
    xdotool(term.display, "key", "Tab")
    assert _flushed(term) == "\t"
    sup.close()  # idempotent
    with pytest.raises(PlatformError):
        sup.arm(lambda name: None)


def test_disarm_and_rearm_regrab(term: Terminal):
    sup = x11.X11KeySuppressor(["Tab"], term.display)
    try:
        for _ in range(3):
            sup.arm(lambda name: None)
            assert not _tab_is_grabbable(term.display)
            sup.disarm()
            assert _tab_is_grabbable(term.display)
        sup.set_keys(["ctrl+Right"])
        sup.arm(lambda name: None)
        assert _tab_is_grabbable(term.display)
    finally:
        sup.close()


# --------------------------------------------------------------------------- selector


def test_select_platform_builds_x11(term: Terminal):
    from daemon.frontends.overlay.platform import select_platform

    platform = select_platform({"DISPLAY": term.display}, use_atspi=False)
    try:
        assert platform.name == "x11"
        assert platform.focus.current().app_id == "xterm"
        platform.suppressor.arm(lambda name: None)
    finally:
        platform.close()
    assert _tab_is_grabbable(term.display)


def test_select_platform_reports_unreachable_display():
    from daemon.frontends.overlay.platform import select_platform

    with pytest.raises(PlatformError, match="cannot connect to the X server"):
        select_platform({"DISPLAY": ":987"}, use_atspi=False)
