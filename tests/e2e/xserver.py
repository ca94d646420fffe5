"""A private X server for end-to-end tests, and helpers to drive apps on it.

Usage in a test module::

    from tests.e2e.xserver import xvfb, start_app, xdotool  # noqa: F401  (fixture import)

    def test_something(xvfb):
        app = start_app(xvfb, ["xterm"], wm_class="xterm")
        xdotool(xvfb, "windowfocus", "--sync", str(app.window))

``xvfb`` starts a fresh ``Xvfb`` for each test on a display number the server
picks itself (``-displayfd``: no guessing, no race with other servers running
in parallel), yields the ``DISPLAY`` string (for example ``":3"``) and kills the
server and every app started through ``start_app`` afterwards.  When Xvfb (or
xdotool, for the helpers that need it) is not installed the test is skipped
with the reason, never silently passed.

The fixture does not change ``os.environ``; pass ``x_env(display)`` to child
processes, or ``monkeypatch.setenv("DISPLAY", display)`` in the test.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Sequence

import pytest

from tests.needs import missing
from tests.processes import stop_group

#: Screen used by default: big enough for an editor and the overlay; 24-bit so
#: screenshots are faithful.
DEFAULT_SCREEN = "1280x800x24"


@dataclass
class XvfbServer:
    """One running Xvfb process; ``display`` is the ``DISPLAY`` string."""

    process: subprocess.Popen
    display: str
    apps: list["App"] = field(default_factory=list)

    @classmethod
    def start(cls, screen: str = DEFAULT_SCREEN, timeout: float = 10.0) -> "XvfbServer":
        """Start Xvfb and wait until it accepts connections.

        ``-displayfd`` makes the server choose a free display number and write
        it to a pipe once it is ready, which is both the allocation and the
        readiness signal.
        """
        binary = shutil.which("Xvfb")
        if binary is None:
            missing("Xvfb", "xvfb")
        read_fd, write_fd = os.pipe()
        try:
            process = subprocess.Popen(
                [binary, "-displayfd", str(write_fd), "-screen", "0", screen,
                 "-nolisten", "tcp", "-noreset"],
                pass_fds=(write_fd,),
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            os.close(write_fd)
            write_fd = -1
            number = _read_display_number(read_fd, process, timeout)
        finally:
            os.close(read_fd)
            if write_fd >= 0:
                os.close(write_fd)
        return cls(process=process, display=f":{number}")

    def stop(self) -> None:
        """Kill the apps started on this server, then the server itself."""
        for app in reversed(self.apps):
            app.stop()
        self.apps.clear()
        _terminate(self.process)


def _read_display_number(fd: int, process: subprocess.Popen, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    data = b""
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or process.poll() is not None:
            _terminate(process)
            raise RuntimeError(f"Xvfb did not start (exit code {process.poll()})")
        ready, _, _ = select.select([fd], [], [], remaining)
        if ready:
            chunk = os.read(fd, 64)
            if not chunk:
                _terminate(process)
                raise RuntimeError("Xvfb closed the display pipe without a display number")
            data += chunk
    return int(data.strip())


def _terminate(process: subprocess.Popen, grace: float = 3.0) -> None:
    """Stop a process started with ``start_new_session`` and its children."""
    stop_group(process, timeout=grace)


def x_env(display: str, base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """Environment for a child process on ``display``: the current environment
    (or ``base``) with ``DISPLAY`` set and Wayland variables removed, so that
    toolkits do not wander off to a real session."""
    env = dict(os.environ if base is None else base)
    env["DISPLAY"] = display
    for key in ("WAYLAND_DISPLAY", "XDG_SESSION_TYPE"):
        env.pop(key, None)
    env.update(extra)
    return env


def xdotool(display: str, *args: str, timeout: float = 10.0) -> str:
    """Run ``xdotool`` on ``display`` and return its stdout (raises on failure)."""
    binary = shutil.which("xdotool")
    if binary is None:
        missing("xdotool", "xdotool")
    out = subprocess.run(
        [binary, *args], env=x_env(display), capture_output=True, text=True, timeout=timeout
    )
    if out.returncode != 0:
        raise RuntimeError(f"xdotool {' '.join(args)} failed ({out.returncode}): {out.stderr.strip()}")
    return out.stdout


def find_windows(display: str, wm_class: str) -> list[int]:
    """Ids of the mapped windows whose WM_CLASS (instance or class) matches
    ``wm_class``, a regular expression matched against the whole name
    (``a|b`` accepts either)."""
    binary = shutil.which("xdotool")
    if binary is None:
        missing("xdotool", "xdotool")
    out = subprocess.run(
        [binary, "search", "--onlyvisible", "--classname", f"^({wm_class})$"],
        env=x_env(display), capture_output=True, text=True, timeout=10,
    )
    ids = {int(x) for x in out.stdout.split()}
    out = subprocess.run(
        [binary, "search", "--onlyvisible", "--class", f"^({wm_class})$"],
        env=x_env(display), capture_output=True, text=True, timeout=10,
    )
    ids.update(int(x) for x in out.stdout.split())
    return sorted(ids)


@dataclass
class App:
    """An application started on a test display, with its top-level window."""

    process: subprocess.Popen
    window: int

    def stop(self) -> None:
        _terminate(self.process)


def start_app(
    display: str | XvfbServer,
    argv: Sequence[str],
    wm_class: str,
    timeout: float = 15.0,
    env: Mapping[str, str] | None = None,
    server: XvfbServer | None = None,
) -> App:
    """Start ``argv`` on ``display`` and wait until it maps a window whose
    WM_CLASS instance or class matches ``wm_class`` (a whole-name regular
    expression, case-sensitive; see :func:`find_windows`).

    The app runs in its own process group and is killed when the fixture's
    server stops (or call ``App.stop()``).  Raises ``RuntimeError`` with the
    app's stderr if it exits or no window appears within ``timeout``.
    """
    if isinstance(display, XvfbServer):
        server, display = display, display.display
    server = server or _SERVERS.get(display)
    if shutil.which(argv[0]) is None and not os.path.exists(argv[0]):
        missing(argv[0])
    process = subprocess.Popen(
        list(argv),
        env=x_env(display, env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    while True:
        windows = find_windows(display, wm_class)
        if windows:
            app = App(process=process, window=windows[-1])
            if server is not None:
                server.apps.append(app)
            return app
        if process.poll() is not None:
            err = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise RuntimeError(f"{argv[0]} exited with {process.returncode}: {err.strip()[-2000:]}")
        if time.monotonic() > deadline:
            _terminate(process)
            raise RuntimeError(f"no window with WM_CLASS {wm_class!r} after {timeout} s")
        time.sleep(0.05)


def wait_until(predicate, timeout: float = 5.0, interval: float = 0.05) -> bool:
    """Poll ``predicate()`` until it is true or ``timeout`` passes; return its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


#: Servers started by the fixture, by display string, so ``start_app`` can
#: register apps for cleanup when given only the display string.
_SERVERS: dict[str, XvfbServer] = {}


@pytest.fixture
def xvfb() -> Iterator[str]:
    """A fresh Xvfb for one test; yields its ``DISPLAY`` string."""
    server = XvfbServer.start()
    _SERVERS[server.display] = server
    try:
        yield server.display
    finally:
        _SERVERS.pop(server.display, None)
        server.stop()


def selection_owned(display: str, selection: str) -> bool:
    """Whether some client owns ``selection`` on ``display``: a window manager
    owns ``WM_S0`` once it manages screen 0, a compositing manager
    ``_NET_WM_CM_S0`` once it composites."""
    from Xlib import display as xdisplay

    conn = xdisplay.Display(display)
    try:
        owner = conn.get_selection_owner(conn.intern_atom(selection))
        return getattr(owner, "id", owner) not in (0, None)
    finally:
        conn.close()


#: Seconds from the last typed key to a shown suggestion, as measured by the
#: end-to-end tests' positive checks in this run (see ``negative_window``).
SUGGESTION_LATENCIES: list[float] = []


def negative_window(minimum: float = 3.0, fallback: float = 10.0, cap: float = 60.0) -> float:
    """How long a "no suggestion appears" check must watch: three times the
    slowest suggestion a positive check in this run waited for (so a loaded
    machine lengthens both alike), at least ``minimum``; ``fallback`` when no
    positive check has run yet."""
    if not SUGGESTION_LATENCIES:
        return fallback
    return min(cap, max(minimum, 3 * max(SUGGESTION_LATENCIES)))


def stays(predicate, seconds: float, interval: float = 0.05) -> bool:
    """True if ``predicate()`` holds at every poll for ``seconds``; False as
    soon as it does not."""
    deadline = time.monotonic() + seconds
    while True:
        if not predicate():
            return False
        if time.monotonic() > deadline:
            return True
        time.sleep(interval)
