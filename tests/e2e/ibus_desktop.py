"""A private IBus desktop for end-to-end tests: a test X server, a private
D-Bus session bus, a real ``ibus-daemon --panel=disable
--config=/usr/libexec/ibus-memconf --cache=none``, the ghosttype engine
(``ghosttype ibus run``, registered at run time and selected with ``ibus
engine ghosttype``) and GTK apps using the IBus IM module.

The GTK test app (``apps/gtk_entries.py``) runs under the system Python
(PyGObject from Debian) and reports its fields' text and preedit in a JSON
state file, so tests wait for what the application really shows.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import select
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Iterator, Optional

import pytest

from daemon.frontends.ibus.bus import ibus_address
from tests import needs
from tests.processes import stop_group
from tests.e2e.xserver import SUGGESTION_LATENCIES, wait_until, x_env, xdotool

ROOT = pathlib.Path(__file__).resolve().parents[2]
APP = pathlib.Path(__file__).parent / "apps" / "gtk_entries.py"
SYSTEM_PYTHON = "/usr/bin/python3"
IBUS_MEMCONF = "/usr/libexec/ibus-memconf"

CONFIG = """\
log_level = "info"
debounce_ms = 5
threads = 1
max_tokens = 6
confidence_threshold = 0.0
"""


def _gtk_available(version: str) -> Optional[str]:
    """Why GTK ``version`` with the IBus IM module cannot run here (None: it can)."""
    if not os.path.exists(SYSTEM_PYTHON):
        return "no system Python"
    code = f"import gi; gi.require_version('Gtk', '{version}.0'); from gi.repository import Gtk"
    if subprocess.run([SYSTEM_PYTHON, "-c", code], capture_output=True, timeout=30).returncode != 0:
        return f"GTK {version} for Python is not installed (Debian packages python3-gi gir1.2-gtk-{version}.0)"
    module = {"3": "/usr/lib/x86_64-linux-gnu/gtk-3.0/3.0.0/immodules/im-ibus.so",
              "4": "/usr/lib/x86_64-linux-gnu/gtk-4.0/4.0.0/immodules/libim-ibus.so"}[version]
    if not os.path.exists(module) and not any(pathlib.Path("/usr/lib").rglob(pathlib.Path(module).name)):
        return f"the GTK {version} IBus module is not installed (Debian package ibus-gtk{version if version == '4' else '3'})"
    return None


@dataclass
class GtkApp:
    process: subprocess.Popen
    state_file: pathlib.Path

    def state(self) -> dict:
        try:
            return json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return {}

    def field(self, name: str = "first") -> dict:
        return self.state().get("fields", {}).get(name, {"text": "", "preedit": "", "preedits": 0})

    def focus(self) -> str:
        return self.state().get("focus", "")

    def signal(self, sig: int) -> None:
        self.process.send_signal(sig)


@dataclass
class IBusDesktop:
    display: str
    env: dict[str, str]
    tmp: pathlib.Path
    engine_log: pathlib.Path
    processes: list[subprocess.Popen] = field(default_factory=list)

    def engine_output(self) -> str:
        return self.engine_log.read_text(errors="replace")

    def ibus(self, *args: str) -> str:
        out = subprocess.run(["ibus", *args], env=self.env, capture_output=True, text=True, timeout=20)
        return out.stdout.strip()

    def start_app(self, gtk: str, prgname: str = "ghosttype-test-entries") -> GtkApp:
        reason = _gtk_available(gtk)
        if reason:
            pytest.fail(f"{reason} ({needs.HINT})", pytrace=False)
        state = self.tmp / f"gtk{gtk}-{len(self.processes)}.json"
        err = open(self.tmp / f"gtk{gtk}-{len(self.processes)}.stderr", "wb")
        env = dict(self.env)
        if gtk == "4":
            # GTK4's IBus module (ibus 1.5.27) waits for each key's reply in a
            # nested main loop that dispatches the next queued key, so keys that
            # pile up while the app is busy (its first frames) come out reversed,
            # whatever the engine.  Its synchronous mode has no such loop.
            env["IBUS_ENABLE_SYNC_MODE"] = "1"
        proc = subprocess.Popen([SYSTEM_PYTHON, str(APP), str(state), "--gtk", gtk, "--prgname", prgname],
                                env=env, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        self.processes.append(proc)
        app = GtkApp(proc, state)
        assert wait_until(lambda: app.state().get("ready") or proc.poll() is not None, timeout=30), "app not ready"
        assert proc.poll() is None, f"GTK app exited: {(self.tmp / err.name).read_text()[-2000:]}"
        window = xdotool(self.display, "search", "--sync", "--onlyvisible", "--name", "ghosttype-test-entries").split()[0]
        xdotool(self.display, "windowfocus", "--sync", window)
        # The engine is global: select it once the app's input context exists.
        assert wait_until(lambda: self.ibus("engine", "ghosttype") is not None and self.ibus("engine") == "ghosttype",
                          timeout=10), "cannot select the ghosttype engine"
        assert wait_until(lambda: "engine created" in self.engine_output(), timeout=10), self.engine_output()
        # Keys typed while the app draws its first frames may be lost: wait
        # until one key makes the round trip app -> ibus -> engine -> app.
        # (GTK4 sometimes drops the very first one.)
        for _attempt in range(5):
            self.type("x")
            if wait_until(lambda: app.field()["text"] == "x", timeout=3):
                break
            self.key("Escape")  # dismiss a suggestion made for the lost key
        assert app.field()["text"] == "x", app.state()
        self.key("BackSpace")
        assert wait_until(lambda: app.field()["text"] == "" and not app.field()["preedit"], timeout=15), app.state()
        return app

    def type(self, text: str, delay_ms: int = 60) -> None:
        xdotool(self.display, "type", "--delay", str(delay_ms), text, timeout=30 + len(text) * delay_ms / 1000)

    def key(self, *keys: str) -> None:
        xdotool(self.display, "key", "--delay", "60", *keys)


def _start_session_bus(env: dict[str, str]) -> tuple[subprocess.Popen, str]:
    binary = needs.tool("dbus-daemon", "dbus")
    bus = subprocess.Popen([binary, "--session", "--nofork", "--print-address=1"], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    ready, _, _ = select.select([bus.stdout], [], [], 10)
    if not ready:
        bus.kill()
        pytest.fail("dbus-daemon did not print its address")
    return bus, bus.stdout.readline().decode().strip()  # type: ignore[union-attr]


@contextlib.contextmanager
def ibus_session(display: str, tmp_path: pathlib.Path, installed: bool, config_text: str = CONFIG,
             wait_for: str = "status: ready") -> Iterator[IBusDesktop]:
    """``installed=False``: the engine registers itself at run time (``ghosttype
    ibus run``).  ``installed=True``: ``ghosttype ibus install`` (user level)
    writes the component file, ibus-daemon runs with the environment that
    install set up for the session and starts the engine itself (``--ibus``)."""
    if shutil.which("ibus-daemon") is None or not os.path.exists(IBUS_MEMCONF):
        needs.missing("ibus", "ibus")
    home = tmp_path / "home"
    runtime = tmp_path / "run"
    for d in (home, runtime):
        d.mkdir(mode=0o700)
    env = x_env(display, HOME=str(home), XDG_RUNTIME_DIR=str(runtime), XDG_CACHE_HOME=str(home / ".cache"),
                XDG_CONFIG_HOME=str(home / ".config"), XDG_STATE_HOME=str(home / ".state"),
                XDG_DATA_HOME=str(home / ".local" / "share"),
                GTK_IM_MODULE="ibus", XMODIFIERS="@im=ibus", QT_IM_MODULE="ibus", NO_AT_BRIDGE="1",
                PYTHONPATH=str(ROOT))
    for key in ("DBUS_SESSION_BUS_ADDRESS", "IBUS_ADDRESS", "WAYLAND_DISPLAY", "AT_SPI_BUS_ADDRESS",
                "IBUS_COMPONENT_PATH"):
        env.pop(key, None)
    config = tmp_path / "config.toml"
    config.write_text(config_text)
    engine_log = tmp_path / "engine.log"
    daemon_args = ["ibus-daemon", "--panel=disable", f"--config={IBUS_MEMCONF}"]
    if installed:
        # The engine ibus-daemon starts reads the default config file.
        (home / ".config" / "ghosttype").mkdir(parents=True)
        (home / ".config" / "ghosttype" / "config.toml").write_text(config_text)
        out = subprocess.run([sys.executable, "-m", "daemon", "ibus", "install"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stdout + out.stderr
        for line in (home / ".config" / "environment.d").glob("*.conf"):
            for entry in line.read_text().splitlines():
                if "=" in entry and not entry.startswith("#"):
                    key, value = entry.split("=", 1)
                    env[key] = value  # what the systemd user manager gives the session's services
        daemon_args.append("--verbose")  # else ibus-daemon sends the engine's stderr to /dev/null
    else:
        daemon_args.append("--cache=none")
    started: list[subprocess.Popen] = []
    try:
        bus, address = _start_session_bus(env)
        started.append(bus)
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        daemon_log = open(engine_log if installed else tmp_path / "ibus-daemon.log", "wb")
        started.append(subprocess.Popen(daemon_args, env=env, stdout=daemon_log, stderr=subprocess.STDOUT,
                                        start_new_session=True))
        assert wait_until(lambda: ibus_address(env) is not None, timeout=15), "ibus-daemon did not start"
        desktop = IBusDesktop(display, env, tmp_path, engine_log)
        if not installed:
            started.append(subprocess.Popen(
                [sys.executable, "-m", "daemon", "ibus", "run", "--config", str(config)], cwd=ROOT, env=env,
                stdout=open(engine_log, "wb"), stderr=subprocess.STDOUT, start_new_session=True))
            assert wait_until(lambda: wait_for in desktop.engine_output() or started[-1].poll() is not None,
                              timeout=90), desktop.engine_output()
            assert started[-1].poll() is None, desktop.engine_output()
        yield desktop
        for proc in desktop.processes:
            stop_group(proc)
    finally:
        for proc in reversed(started):
            stop_group(proc)


@pytest.fixture
def ibus_desktop(xvfb: str, tmp_path: pathlib.Path) -> Iterator[IBusDesktop]:
    with ibus_session(xvfb, tmp_path, installed=False) as desktop:
        yield desktop


@pytest.fixture
def ibus_installed_desktop(xvfb: str, tmp_path: pathlib.Path) -> Iterator[IBusDesktop]:
    with ibus_session(xvfb, tmp_path, installed=True) as desktop:
        yield desktop


def wait_for_preedit(app: GtkApp, field_name: str = "first", timeout: float = 30.0) -> str:
    """The suggestion shown after the keys just typed (the call starts when
    the last key was sent); its latency is recorded for negative checks."""
    start = time.monotonic()
    assert wait_until(lambda: app.field(field_name)["preedit"], timeout=timeout, interval=0.02), \
        f"no suggestion appeared: {app.state()}"
    SUGGESTION_LATENCIES.append(time.monotonic() - start)
    # a streamed result may still grow (slowly on a loaded machine): take it once it has stood unchanged
    # for SETTLED_S
    last, since, end = app.field(field_name)["preedit"], time.monotonic(), time.monotonic() + timeout
    while time.monotonic() < end:
        time.sleep(0.05)
        now = app.field(field_name)["preedit"]
        if now != last:
            last, since = now, time.monotonic()
        elif now and time.monotonic() - since >= SETTLED_S:
            return now
    raise AssertionError(f"the suggestion did not settle within {timeout} s: {app.state()}")


#: How long a suggestion must stand unchanged to count as settled (the engine streams it word by word).
SETTLED_S = 0.6


#: The engine asks for #808080 (GHOST_COLOUR); the toolkit may round it (ibus
#: 1.5.35 draws GTK3's preedit in #7F7F7F).  Typed text is black.
GHOST_GREY = 0x80
GREY_TOLERANCE = 3


def grey_pixels(display: str) -> int:
    """How many pixels of the screen have the ghost's grey: the largest count
    of any one neutral grey within ``GREY_TOLERANCE`` of ``GHOST_GREY``
    (ImageMagick).  A suggestion's glyph cores are one solid colour, so they
    pile up on one level; the anti-aliased edges of black text spread over
    all levels and give only a few pixels to each."""
    if shutil.which("import") is None:
        needs.missing("ImageMagick", "imagemagick")
    out = subprocess.run(["import", "-window", "root", "-depth", "8", "txt:-"], env=x_env(display),
                         capture_output=True, text=True, timeout=60)
    levels = {f"#{v:02X}{v:02X}{v:02X}": 0 for v in range(GHOST_GREY - GREY_TOLERANCE, GHOST_GREY + GREY_TOLERANCE + 1)}
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[2].upper() in levels:
            levels[parts[2].upper()] += 1
    return max(levels.values())
