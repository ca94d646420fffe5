"""``ghosttype ibus install`` (user level, no root) makes ibus-daemon list the
engine and start it itself from the component file (``ghosttype ibus run
--ibus``); ``status`` and ``uninstall`` see and undo it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from daemon.frontends.ibus.inline import shell_extension

from tests.e2e.ibus_desktop import ROOT, ibus_installed_desktop, wait_for_preedit  # noqa: F401  (fixture)
from tests.e2e.xserver import wait_until, xvfb  # noqa: F401  (fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.llm]


def ghosttype(desktop, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "daemon", *args], cwd=ROOT, env=desktop.env,
                          capture_output=True, text=True, timeout=60)


def test_installed_engine_is_listed_started_by_ibus_and_suggests(ibus_installed_desktop):
    desktop = ibus_installed_desktop
    assert "ghosttype" in desktop.ibus("list-engine")
    status = ghosttype(desktop, "ibus", "status").stdout
    assert "[ok  ] IBus daemon: running" in status and "[ok  ] IBus engine: installed" in status
    app = desktop.start_app("3")  # selects the engine: ibus-daemon starts `ghosttype ibus run --ibus`
    assert "started by ibus-daemon" in desktop.engine_output()
    assert wait_until(lambda: "status: ready" in desktop.engine_output(), timeout=90), desktop.engine_output()
    assert "ghosttype is the active IBus engine" in ghosttype(desktop, "ibus", "status").stdout
    desktop.type("The quick brown fox jumps over the la")
    ghost = wait_for_preedit(app)
    desktop.key("Tab")
    assert wait_until(lambda: app.field()["text"] == "The quick brown fox jumps over the la" + ghost, timeout=10)
    extension = shell_extension.target(False, desktop.env)  # installed where GNOME Shell's settings are
    had_extension = extension.exists()
    out = ghosttype(desktop, "ibus", "uninstall")
    assert out.returncode == 0 and out.stdout.count("removed") == 2 + had_extension, out.stdout
    assert not extension.exists()
    assert "[warn] IBus engine: not installed" in ghosttype(desktop, "ibus", "status").stdout
