"""Feedback without a tray: the start line, status lines at the default log
level, and desktop notifications once per distinct error, sent to a real
notification server (dunst) on a private session bus when one is installed."""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import threading

import pytest

from daemon.config import Config
from daemon.frontends.overlay.event_pump import EventPump
from daemon.logsetup import STATUS_LOGGER, set_level
from daemon.notices import Notices, startup_line
from tests import needs


class Recorder:
    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def notify(self, summary: str, body: str = "", urgency: int = 2) -> bool:
        self.sent.append((summary, body))
        return True


def test_startup_line_names_the_keys_pause_and_quit() -> None:
    line = startup_line(Config(), "x11")
    assert line.startswith("ghosttype running on x11")
    for part in ("Tab accepts", "Ctrl+Right accepts one word", "Escape dismisses", "Ctrl+Alt+G pauses",
                 "quits"):
        assert part in line, line


def test_status_lines_show_at_the_default_level() -> None:
    root = logging.getLogger()
    before = root.level
    try:
        set_level("warning")
        assert logging.getLogger(STATUS_LOGGER).isEnabledFor(logging.INFO)
        assert not logging.getLogger("daemon.controller").isEnabledFor(logging.INFO)
        set_level("error")
        assert not logging.getLogger(STATUS_LOGGER).isEnabledFor(logging.INFO)
    finally:
        set_level(before)


def test_each_error_is_notified_once_per_distinct_message() -> None:
    rec = Recorder()
    n = Notices(rec)
    for _ in range(19):  # the same broken file, reported again and again
        n.config_error("config.toml:2: max_tokens: must be >= 1")
    assert len(rec.sent) == 1 and "config file invalid" in rec.sent[0][0]
    n.config_error("config.toml:3: beam_width: must be >= 1")
    assert len(rec.sent) == 2
    n.config_ok()
    n.config_error("config.toml:3: beam_width: must be >= 1")  # broken again after a fix
    assert len(rec.sent) == 3
    n.backend_status("loading")
    n.backend_status("error", "cannot load truncated.gguf")
    n.backend_status("error", "cannot load truncated.gguf")
    assert len(rec.sent) == 4 and "model failed" in rec.sent[-1][0]
    n.startup_failed("ghosttype has no native Wayland backend yet")
    assert "cannot run" in rec.sent[-1][0]


def test_event_pump_coalesces_bursts() -> None:
    """Fifty pokes while the callback runs give exactly one more run, not fifty."""
    entered = threading.Event()
    release = threading.Event()
    done = threading.Semaphore(0)

    def callback() -> None:
        entered.set()
        assert release.wait(30), "the test never released the callback"
        done.release()

    pump = EventPump(callback)
    pump.start()
    try:
        pump.poke()
        assert entered.wait(30), "the pump never ran its callback"
        for _ in range(50):  # a burst while the first run is still busy
            pump.poke()
        release.set()
        assert done.acquire(timeout=30) and done.acquire(timeout=30), "the burst got no run"
    finally:
        pump.stop(30)
    # stop() joined the thread: every run the pokes caused has happened.
    assert not pump._thread.is_alive()
    assert pump.runs == 2


@pytest.fixture
def notification_server(tmp_path):
    """A private session bus with dunst (a real org.freedesktop.Notifications
    server) on a private X server."""
    from tests.e2e.xserver import XvfbServer, x_env

    needs.tool("dunst", "dunst")
    needs.tool("dbus-daemon", "dbus")
    server = XvfbServer.start()
    env = x_env(server.display, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    address = bus.stdout.readline().decode().strip()  # type: ignore[union-attr]
    env["DBUS_SESSION_BUS_ADDRESS"] = address
    dunst = subprocess.Popen(["dunst"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        yield address, dunst
    finally:
        for proc in (dunst, bus):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            proc.wait(timeout=5)
        server.stop()


@pytest.mark.e2e
@pytest.mark.timeout(60)
def test_a_real_notification_server_receives_the_error(notification_server) -> None:
    from daemon.frontends.overlay.platform.notifications import DesktopNotifier
    from tests.e2e.xserver import wait_until

    address, dunst = notification_server
    notifier = DesktopNotifier(address)
    assert wait_until(lambda: notifier.notify("ghosttype: config file invalid", "config.toml:2: max_tokens"),
                      timeout=10, interval=0.2)
    # The server answered Notify with an id: it took the notification.
    assert notifier.sent == 1 and notifier._last_id > 0


def test_no_server_means_false_not_an_exception(tmp_path) -> None:
    from daemon.frontends.overlay.platform.notifications import DesktopNotifier

    assert DesktopNotifier(f"unix:path={tmp_path}/nobus").notify("x", "y") is False
