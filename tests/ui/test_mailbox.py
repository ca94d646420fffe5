"""The worker -> GUI thread mailbox, its daemon-facing sink and router, and
the application/event-loop helpers it runs inside (``ui.qtapp``)."""

from __future__ import annotations

import enum
import os
import subprocess
import sys
import threading
import time
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.frontends.base import Rect

from PyQt6.QtCore import QThread, QTimer
from PyQt6.QtWidgets import QApplication

from ui.mailbox import Hide, Invoke, Mailbox, MailboxSink, Show, Status, UiDispatcher
from ui.qtapp import QtAppError, check_display, create_app, run_event_loop


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    return create_app(["ghosttype-tests", "-platform", "offscreen"])


def _pump_until(app: QApplication, done: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "timed out waiting for the GUI thread"
        app.processEvents()
        time.sleep(0.001)


class Recorder:
    """Handler that notes each command and whether it ran on the GUI thread."""

    def __init__(self, app: QApplication) -> None:
        self.app = app
        self.commands: list[object] = []
        self.on_gui_thread: list[bool] = []

    def __call__(self, command: object) -> None:
        self.commands.append(command)
        self.on_gui_thread.append(QThread.currentThread() is self.app.thread())


def test_delivers_from_a_background_thread_in_order_on_the_gui_thread(qapp: QApplication) -> None:
    rec = Recorder(qapp)
    box = Mailbox(rec)
    sent = [Show(f"s{i}", Rect(i, i, 1, 10)) if i % 3 else Hide() for i in range(300)]

    def worker() -> None:
        for c in sent:
            box.post(c)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert rec.commands == []  # queued: nothing runs until the GUI thread gets control
    _pump_until(qapp, lambda: len(rec.commands) == len(sent))
    assert rec.commands == sent
    assert all(rec.on_gui_thread)


def test_several_threads_keep_their_own_order(qapp: QApplication) -> None:
    rec = Recorder(qapp)
    box = Mailbox(rec)
    threads = [
        threading.Thread(target=lambda n=n: [box.post(Status(f"t{n}", str(i))) for i in range(100)])
        for n in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _pump_until(qapp, lambda: len(rec.commands) == 400)
    for n in range(4):
        mine = [c.message for c in rec.commands if c.state == f"t{n}"]
        assert mine == [str(i) for i in range(100)]
    assert all(rec.on_gui_thread)


def test_posts_from_the_gui_thread_are_queued_too(qapp: QApplication) -> None:
    rec = Recorder(qapp)
    box = Mailbox(rec)
    box.post(Hide())
    assert rec.commands == []
    _pump_until(qapp, lambda: len(rec.commands) == 1)


def test_a_failing_command_does_not_stop_the_next(qapp: QApplication, caplog: pytest.LogCaptureFixture) -> None:
    seen: list[object] = []

    def handler(c: object) -> None:
        if isinstance(c, Hide):
            raise ValueError("boom")
        seen.append(c)

    box = Mailbox(handler)
    box.post(Hide())
    box.post(Status("ready"))
    _pump_until(qapp, lambda: len(seen) == 1)
    assert seen == [Status("ready")]
    assert any("failed" in r.getMessage() for r in caplog.records)


def test_closed_mailbox_drops_queued_and_new_commands(qapp: QApplication) -> None:
    rec = Recorder(qapp)
    box = Mailbox(rec)
    box.post(Hide())
    box.close()
    box.post(Hide())
    for _ in range(20):
        qapp.processEvents()
    assert rec.commands == []


def test_show_repr_hides_the_text() -> None:
    r = repr(Show("secret words", Rect(1, 2, 3, 4)))
    assert "secret" not in r and "len=12" in r


class _State(str, enum.Enum):
    READY = "ready"


def test_sink_turns_calls_into_commands(qapp: QApplication) -> None:
    rec = Recorder(qapp)
    sink = MailboxSink(Mailbox(rec))
    done = []
    caret = Rect(5, 6, 1, 12)
    sink.show("abc", caret)
    sink.show("", caret)  # empty text hides
    sink.hide()
    sink.set_status(_State.READY)
    sink.set_status("error", "model failed to load")
    sink.call_soon(lambda: done.append(QThread.currentThread() is qapp.thread()))
    _pump_until(qapp, lambda: len(rec.commands) == 6)
    assert rec.commands[:5] == [
        Show("abc", caret),
        Hide(),
        Hide(),
        Status("ready", ""),
        Status("error", "model failed to load"),
    ]
    assert isinstance(rec.commands[5], Invoke)
    rec.commands[5].func()
    assert done == [True]


class FakeOverlay:
    def __init__(self) -> None:
        self.text = ""
        self.caret = None

    def show_suggestion(self, text: str, caret, look=None, drawn=None) -> None:
        self.text, self.caret, self.drawn = text, caret, drawn

    def hide_suggestion(self) -> None:
        self.text, self.caret = "", None


class FakeStatus:
    def __init__(self) -> None:
        self.status: tuple[str, str] | None = None

    def set_status(self, state: str, message: str = "") -> None:
        self.status = (state, message)


def test_dispatcher_routes_commands() -> None:
    overlay, status = FakeOverlay(), FakeStatus()
    route = UiDispatcher(overlay, status)
    told = []
    route(Show("xyz", Rect(1, 1, 1, 1), drawn=told.append))
    assert overlay.text == "xyz" and overlay.drawn == told.append  # the overlay tells what it drew
    route(Show("", None))
    assert overlay.text == ""
    route(Show("again", None))
    route(Hide())
    assert overlay.text == ""
    route(Status("paused", "by user"))
    assert status.status == ("paused", "by user")
    calls = []
    route(Invoke(lambda: calls.append(1)))
    assert calls == [1]
    UiDispatcher(overlay, None)(Status("ready"))  # no tray: ignored


_ops = st.lists(
    st.one_of(
        st.tuples(st.just("show"), st.text(max_size=12)),
        st.tuples(st.just("hide"), st.none()),
        st.tuples(st.just("status"), st.sampled_from(["loading", "ready", "disabled", "paused", "error"])),
    ),
    max_size=30,
)


@settings(max_examples=30, deadline=None)
@given(ops=_ops)
def test_overlay_state_after_any_call_sequence_matches_the_last_show_or_hide(qapp: QApplication, ops) -> None:
    """Oracle: after the GUI thread drains the mailbox, the overlay shows the
    text of the last show/hide call (hide and empty show leave nothing)."""
    overlay, status = FakeOverlay(), FakeStatus()
    received = []

    def handler(c: object) -> None:
        received.append(c)
        UiDispatcher(overlay, status)(c)

    sink = MailboxSink(Mailbox(handler))

    def worker() -> None:
        for op, arg in ops:
            if op == "show":
                sink.show(arg, Rect(0, 0, 1, 10))
            elif op == "hide":
                sink.hide()
            else:
                sink.set_status(arg)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    _pump_until(qapp, lambda: len(received) == len(ops))
    expected_text = ""
    expected_status = None
    for op, arg in ops:
        if op == "show":
            expected_text = arg
        elif op == "hide":
            expected_text = ""
        else:
            expected_status = (arg, "")
    assert overlay.text == expected_text
    assert status.status == expected_status


# --------------------------------------------------------------------------- qtapp


def test_app_is_configured_for_a_tray_daemon(qapp: QApplication) -> None:
    assert create_app() is qapp
    assert not qapp.quitOnLastWindowClosed()
    assert qapp.applicationName() == "ghosttype"
    assert qapp.desktopFileName() == "ghosttype"


def test_mailbox_and_event_loop_end_to_end(qapp: QApplication) -> None:
    """A background thread posts suggestions, then asks the loop to quit."""
    overlay = FakeOverlay()
    sink = MailboxSink(Mailbox(UiDispatcher(overlay)))
    texts = []

    def worker() -> None:
        for i in range(50):
            sink.show(f"t{i}", None)
        sink.call_soon(lambda: texts.append(overlay.text))
        sink.call_soon(qapp.quit)

    thread = threading.Thread(target=worker)
    QTimer.singleShot(0, lambda: thread.start())
    QTimer.singleShot(10_000, lambda: qapp.exit(3))  # never hang the suite
    assert run_event_loop(qapp) == 0
    thread.join()
    assert texts == ["t49"]


@pytest.mark.parametrize(
    "env, ok",
    [
        ({"DISPLAY": ":0"}, True),
        ({}, False),
        ({"WAYLAND_DISPLAY": "wayland-0"}, False),
    ],
)
def test_check_display(env: dict[str, str], ok: bool) -> None:
    if ok:
        check_display("xcb", env)
    else:
        with pytest.raises(QtAppError) as err:
            check_display("xcb", env)
        assert "DISPLAY" in str(err.value) and "\n" not in str(err.value)
    check_display("offscreen", {})  # other platforms are Qt's business


def _child(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=root,
                          capture_output=True, text=True, timeout=30)


def test_no_display_is_one_clear_error_not_an_abort() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    out = _child(
        "from ui.qtapp import create_app, QtAppError\n"
        "try:\n    create_app()\nexcept QtAppError as e:\n    print('ERR', e)\n",
        env,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("ERR no display")


def test_sigint_quits_the_loop_cleanly() -> None:
    env = {k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"}
    # The child starts with Python's own SIGINT handler whatever this process
    # inherited (a suite started in the background, e.g. with nohup ... &,
    # runs with SIGINT ignored, and so would the child).
    out = _child(
        "import os, signal\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from PyQt6.QtCore import QTimer\n"
        "from ui.qtapp import create_app, run_event_loop\n"
        "app = create_app(['t', '-platform', 'offscreen'])\n"
        "QTimer.singleShot(200, lambda: os.kill(os.getpid(), signal.SIGINT))\n"
        "QTimer.singleShot(10000, lambda: app.exit(3))\n"
        "code = run_event_loop(app)\n"
        "assert signal.getsignal(signal.SIGINT) is signal.default_int_handler\n"
        "print('exit', code)\n",
        env,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "exit 0"
    assert "Traceback" not in out.stderr and "KeyboardInterrupt" not in out.stderr
