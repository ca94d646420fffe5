"""Shared end-to-end fixtures for accessibility: a private D-Bus session bus
and AT-SPI bus on a test X server, and the PyQt6 test app ``apps/qt_fields.py``."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pytest
from jeepney.io.blocking import open_dbus_connection

from daemon.frontends.atspi_bus import accessibility_bus_address
from daemon.controller.ports import Rect
from daemon.frontends.base import PlatformError
from tests import needs
from tests.e2e.xserver import App, start_app, wait_until, x_env, xdotool, xvfb  # noqa: F401

APP = Path(__file__).parent / "apps" / "qt_fields.py"


@dataclass
class A11ySession:
    """A private session bus on a test display; ``env`` is for child apps."""

    display: str
    address: str
    env: dict[str, str]
    tmp: Path


@pytest.fixture
def a11y(xvfb: str, tmp_path: Path) -> Iterator[A11ySession]:
    binary = needs.tool("dbus-daemon", "dbus")
    home = tmp_path / "home"
    runtime = tmp_path / "run"
    for d in (home, runtime):
        d.mkdir(mode=0o700)
    env = x_env(xvfb, HOME=str(home), XDG_RUNTIME_DIR=str(runtime),
                XDG_CACHE_HOME=str(home / ".cache"), XDG_CONFIG_HOME=str(home / ".config"))
    for key in ("DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS"):
        env.pop(key, None)
    bus = subprocess.Popen([binary, "--session", "--nofork", "--print-address=1"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        ready, _, _ = select.select([bus.stdout], [], [], 10)
        if not ready:
            pytest.fail("dbus-daemon did not print its address")
        address = bus.stdout.readline().decode().strip()  # type: ignore[union-attr]
        # at-spi2-core is installed by .ci/run: a bus that does not answer, or
        # an address nobody listens on, is a failure of the product or the setup.
        try:
            a11y_address = accessibility_bus_address(address, timeout=30)
        except PlatformError as exc:
            pytest.fail(f"no AT-SPI accessibility bus (Debian package at-spi2-core): {exc}", pytrace=False)
        try:
            open_dbus_connection(a11y_address).close()  # the address is a bus that accepts us
        except Exception as exc:  # noqa: BLE001 - report whatever jeepney raised
            pytest.fail(f"the accessibility bus address {a11y_address!r} does not accept a connection: {exc!r}",
                        pytrace=False)
        env.update(DBUS_SESSION_BUS_ADDRESS=address, QT_LINUX_ACCESSIBILITY_ALWAYS_ON="1",
                   QT_QPA_PLATFORM="xcb")
        yield A11ySession(xvfb, address, env, tmp_path)
    finally:
        # The bus launcher and registry are activated children of dbus-daemon
        # and share its process group.
        try:
            os.killpg(bus.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        bus.wait(timeout=5)


def start_fields_app(session: A11ySession) -> tuple[App, Path]:
    state = session.tmp / "state.json"
    app = start_app(session.display, [sys.executable, str(APP), "--state", str(state),
                                      "--focus-requests", str(focus_requests(session))],
                    wm_class="qt_fields", env=session.env)
    xdotool(session.display, "windowfocus", "--sync", str(app.window))
    assert wait_until(lambda: read_state(state).get("focus") == "normal", timeout=10), \
        "the normal field never got keyboard focus"
    return app, state


def focus_requests(session: A11ySession) -> Path:
    """Writing a field's name here makes the fields app focus it by itself (no key)."""
    return session.tmp / "focus-request"


def read_state(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def field_rect(state: Path, name: str) -> Rect:
    x, y, w, h = read_state(state)["fields"][name]["rect"]
    return Rect(x, y, w, h)


def window_rect(display: str, window: int) -> Rect:
    out = xdotool(display, "getwindowgeometry", "--shell", str(window))
    values = dict(line.split("=", 1) for line in out.split() if "=" in line)
    return Rect(int(values["X"]), int(values["Y"]), int(values["WIDTH"]), int(values["HEIGHT"]))


def inside(inner: Rect, outer: Rect) -> bool:
    return (outer.x <= inner.x and inner.x + inner.width <= outer.x + outer.width
            and outer.y <= inner.y and inner.y + inner.height <= outer.y + outer.height)
