"""AT-SPI against a real Qt application on a private X server and buses.

Each test gets a fresh Xvfb, a private D-Bus session bus (its own HOME and
XDG dirs, so the accessibility bus that D-Bus activation starts is private
too) and the PyQt6 test app ``apps/qt_fields.py`` with accessibility forced
on.  Keys are typed with xdotool (XTest), exactly as a user's keyboard would.

Skipped, with the reason, when Xvfb, xdotool, dbus-daemon or at-spi2-core
are missing.
"""

from __future__ import annotations

import os
import signal
import statistics
import sys
import time
from pathlib import Path

import pytest
from jeepney import DBusAddress, Properties
from jeepney.io.blocking import open_dbus_connection

from daemon.frontends.overlay.platform.atspi.reader import AtspiAnswer, AtspiFocus, StallBackoff
from daemon.frontends.atspi_bus import accessibility_bus_address
from daemon.frontends.overlay.platform.atspi.bus import AtspiCallError
from daemon.frontends.overlay.platform.atspi.focus_tracker import FocusTracker
from daemon.frontends.base import PlatformError
from tests.e2e.a11y import APP, A11ySession, a11y, field_rect, inside, read_state, start_fields_app, window_rect  # noqa: F401
from tests.e2e.xserver import App, start_app, wait_until, x_env, xdotool, xvfb  # noqa: F401

pytestmark = pytest.mark.e2e



def type_and_wait(session: A11ySession, state: Path, field: str, text: str) -> None:
    xdotool(session.display, "type", "--delay", "20", text)
    assert wait_until(lambda: read_state(state)["fields"][field]["text"].endswith(text), timeout=10), \
        f"{field} holds {read_state(state)['fields'][field]['text']!r}, expected it to end with {text!r}"


def query_until(focus: AtspiFocus, predicate, timeout: float = 5.0) -> AtspiAnswer | None:
    """Query until the answer satisfies ``predicate`` (events and edits reach
    the bus asynchronously); return the last answer."""
    answer = None

    def probe() -> bool:
        nonlocal answer
        answer = focus.query()
        return answer is not None and predicate(answer)

    wait_until(probe, timeout=timeout)
    return answer


def test_normal_field_text_caret_and_password_flag(a11y: A11ySession) -> None:
    app, state = start_fields_app(a11y)
    with AtspiFocus(session_bus=a11y.address) as focus:
        typed = "Hello world, this is ghosttype"
        type_and_wait(a11y, state, "normal", typed)
        answer = query_until(focus, lambda a: a.text_before_caret == typed)
        assert answer is not None
        assert answer.is_password is False
        assert answer.text_before_caret == typed
        assert answer.app_name == "qt_fields"
        assert answer.caret is not None
        assert inside(answer.caret, field_rect(state, "normal")), (answer.caret, field_rect(state, "normal"))
        assert inside(answer.caret, window_rect(a11y.display, app.window))
        # The caret sits after the text: right of where an empty field's caret is.
        xdotool(a11y.display, "key", "Home")
        home = query_until(focus, lambda a: a.text_before_caret == "")
        assert home is not None and home.caret is not None
        assert home.caret.x < answer.caret.x

        # Tab moves focus to the password field: the focus event reaches us and
        # the field is reported as a password, its text never read.
        normal_ref = answer.object_ref
        xdotool(a11y.display, "key", "Tab")
        assert wait_until(lambda: read_state(state).get("focus") == "password", timeout=5)
        type_and_wait(a11y, state, "password", "s3cret")
        secret = query_until(focus, lambda a: a.object_ref != normal_ref)
        assert secret is not None
        assert secret.is_password is True
        assert secret.text_before_caret is None
        assert secret.object_ref != normal_ref


def test_bounded_context_and_multiline_editor(a11y: A11ySession) -> None:
    _app, state = start_fields_app(a11y)
    xdotool(a11y.display, "key", "Tab", "Tab")  # normal -> password -> editor
    assert wait_until(lambda: read_state(state).get("focus") == "editor", timeout=5)
    with AtspiFocus(session_bus=a11y.address, max_chars=8) as focus:
        # Non-ASCII on purpose.  xdotool occasionally drops a character it has
        # to remap onto a spare keycode, so compare with what the app holds.
        xdotool(a11y.display, "type", "--delay", "20", "fïrst líne")
        xdotool(a11y.display, "key", "Return")
        type_and_wait(a11y, state, "editor", "second")
        held = read_state(state)["fields"]["editor"]["text"]
        assert held.endswith("\nsecond") and len(held) > 8
        answer = query_until(focus, lambda a: (a.text_before_caret or "").endswith("second"))
        assert answer is not None and answer.is_password is False
        assert answer.text_before_caret == held[-8:] == "e\nsecond"  # the last 8 characters
        full = focus.query(max_chars=100)
        assert full is not None and full.text_before_caret == held
        assert full.caret is not None and inside(full.caret, field_rect(state, "editor"))


def test_finds_focus_set_before_start_by_walking_the_tree(a11y: A11ySession) -> None:
    _app, state = start_fields_app(a11y)
    type_and_wait(a11y, state, "normal", "abc")
    # No focus event will arrive: the field was focused before we connected.
    with AtspiFocus(session_bus=a11y.address, track_events=False) as focus:
        answer = query_until(focus, lambda a: a.text_before_caret == "abc")
        assert answer is not None and answer.is_password is False
        assert answer.text_before_caret == "abc"


def test_focus_tracker_follows_focus_events(a11y: A11ySession) -> None:
    _app, state = start_fields_app(a11y)
    address = accessibility_bus_address(a11y.address)
    tracker = FocusTracker(address)
    try:
        assert tracker.last() is None  # focus was set before it registered
        with AtspiFocus(session_bus=a11y.address, track_events=False) as probe:
            normal = probe.focused_object()
            assert normal is not None
            xdotool(a11y.display, "key", "Tab")
            assert wait_until(lambda: tracker.last() not in (None, normal), timeout=5)
            password = tracker.last()
            answer = probe.query()
            assert answer is not None and answer.object_ref == password and answer.is_password is True
            xdotool(a11y.display, "key", "shift+Tab")
            assert wait_until(lambda: tracker.last() == normal, timeout=5)
        assert tracker.generation >= 3  # focus lost + gained events were counted
        assert tracker.is_alive()
    finally:
        tracker.close()
    assert not tracker.is_alive()


def test_repeated_queries_give_the_same_answer(a11y: A11ySession) -> None:
    """Forty queries in a row all read the field right (their latency is
    printed for the README; speed limits belong to the benchmarks)."""
    _app, state = start_fields_app(a11y)
    type_and_wait(a11y, state, "normal", "latency probe")
    with AtspiFocus(session_bus=a11y.address) as focus:
        assert query_until(focus, lambda a: a.text_before_caret == "latency probe") is not None
        times = []
        for _ in range(40):
            start = time.perf_counter()
            answer = focus.query()
            times.append(time.perf_counter() - start)
            assert answer is not None and answer.text_before_caret == "latency probe"
        median = statistics.median(times)
        print(f"AT-SPI query latency: median {median * 1e3:.2f} ms, max {max(times) * 1e3:.2f} ms")


def test_hung_application_costs_one_timeout_and_recovers(a11y: A11ySession) -> None:
    """A hung application costs the first query one call timeout; later
    queries leave it alone (no call to it at all) until it answers again.
    Counted in D-Bus calls, not wall time."""
    app, state = start_fields_app(a11y)
    type_and_wait(a11y, state, "normal", "alive")
    with AtspiFocus(session_bus=a11y.address, call_timeout=0.5) as focus:
        answer = query_until(focus, lambda a: a.text_before_caret == "alive")
        assert answer is not None
        hung_bus = answer.object_ref[0]
        # "a while": longer than this test, however slow the machine; and a
        # slow answer above (a busy machine) must not count as the hang.
        focus._stalled = StallBackoff(3600.0, 3600.0)
        calls: list[tuple[str, bool]] = []  # (bus name, timed out)
        send = focus._bus._send

        def counting_send(message, timeout, bus_name=""):
            try:
                body = send(message, timeout, bus_name)
            except AtspiCallError as exc:
                calls.append((bus_name, exc.timed_out))
                raise
            calls.append((bus_name, False))
            return body

        focus._bus._send = counting_send
        os.kill(app.process.pid, signal.SIGSTOP)
        try:
            per_query = []
            for _ in range(4):
                before = len(calls)
                assert focus.query() is None
                per_query.append(calls[before:])
            print("AT-SPI calls with a hung app: " + "; ".join(str(q) for q in per_query))
            first = [c for c in per_query[0] if c[0] == hung_bus]
            assert [c for c in first if c[1]] == [(hung_bus, True)], per_query[0]  # one timeout, then avoided
            for later in per_query[1:]:
                assert [c for c in later if c[0] == hung_bus] == [], later  # left alone
        finally:
            os.kill(app.process.pid, signal.SIGCONT)
            focus._bus._send = send
        # Once it answers again (the back-off over), it is read again, and
        # late replies from the stopped app do not confuse later calls.
        focus._stalled = StallBackoff(0.0, 0.0)
        answer = query_until(focus, lambda a: a.text_before_caret == "alive")
        assert answer is not None and answer.text_before_caret == "alive"


def accessibility_flag(address: str) -> bool:
    session = open_dbus_connection(address)
    try:
        status = DBusAddress("/org/a11y/bus", bus_name="org.a11y.Bus", interface="org.a11y.Status")
        return bool(session.send_and_get_reply(Properties(status).get("IsEnabled"), timeout=2).body[0][1])
    finally:
        session.close()


def test_enable_toolkits_sets_and_restores_the_session_flag(a11y: A11ySession) -> None:
    # A Qt app started without QT_LINUX_ACCESSIBILITY_ALWAYS_ON, as users start them.
    env = dict(a11y.env)
    env.pop("QT_LINUX_ACCESSIBILITY_ALWAYS_ON")
    state = a11y.tmp / "state.json"
    app = start_app(a11y.display, [sys.executable, str(APP), "--state", str(state)],
                    wm_class="qt_fields", env=env)
    xdotool(a11y.display, "windowfocus", "--sync", str(app.window))
    assert wait_until(lambda: read_state(state).get("focus") == "normal", timeout=10)
    type_and_wait(a11y, state, "normal", "plain")
    assert accessibility_flag(a11y.address) is False
    with AtspiFocus(session_bus=a11y.address, enable_toolkits=True) as focus:
        assert accessibility_flag(a11y.address) is True
        answer = query_until(focus, lambda a: a.text_before_caret == "plain", timeout=10)
        assert answer is not None and answer.text_before_caret == "plain"
    assert accessibility_flag(a11y.address) is False


def test_missing_buses_raise_platform_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    with pytest.raises(PlatformError, match="session bus"):
        AtspiFocus()
    with pytest.raises(PlatformError, match="session bus"):
        AtspiFocus(session_bus=f"unix:path={tmp_path / 'no-such-bus'}")
