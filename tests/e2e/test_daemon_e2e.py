"""``ghosttype run`` end to end on a real X server with real keystrokes.

Xvfb, a real xterm running ``cat > FILE``, the real daemon process with the
SmolLM2 model, and xdotool typing through XTEST.  What the user would see is
saved as screenshots under ``test-artifacts/``.
"""

from __future__ import annotations

import pathlib
import re
import shutil
import subprocess
import sys
import time
from typing import Iterator, Optional

import pytest

from tests import needs
from tests.e2e.a11y import A11ySession, a11y, field_rect, focus_requests, read_state, start_fields_app  # noqa: F401
from tests.e2e.xserver import (SUGGESTION_LATENCIES, negative_window, start_app, stays, wait_until,  # noqa: F401
                               x_env, xdotool, xvfb)

pytestmark = [pytest.mark.e2e, pytest.mark.llm]

ROOT = pathlib.Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
OVERLAY_TITLE = "ghosttype suggestion"

BASE_CONFIG = """\
log_level = "debug"
debounce_ms = 5
threads = 1
max_tokens = 6
confidence_threshold = 0.0
"""


class Daemon:
    def __init__(self, display: str, home: pathlib.Path, config: pathlib.Path,
                 session_bus: Optional[str] = None) -> None:
        self.display = display
        self.config = config
        self.log = home / "daemon-stderr.txt"
        env = x_env(display, HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
                    XDG_STATE_HOME=str(home / ".state"), XDG_CACHE_HOME=str(home / ".cache"),
                    XDG_RUNTIME_DIR=str(home / "run"), TMPDIR=str(home / "tmp"))
        (home / "tmp").mkdir(exist_ok=True)
        env.pop("AT_SPI_BUS_ADDRESS", None)
        if session_bus:
            env["DBUS_SESSION_BUS_ADDRESS"] = session_bus
        else:
            env.pop("DBUS_SESSION_BUS_ADDRESS", None)  # no accessibility: the xterm fallbacks
        (home / "run").mkdir(mode=0o700, exist_ok=True)
        self._log_file = open(self.log, "wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "daemon", "run", "--config", str(config)],
            cwd=ROOT, env=env, stdout=self._log_file, stderr=subprocess.STDOUT, start_new_session=True,
        )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def accepted(self) -> list[int]:
        """How many characters each accept inserted (the daemon logs lengths, never text)."""
        return [int(m) for m in re.findall(r"accepting (\d+) characters", self.output())]

    def wait_ready(self, timeout: float = 60, status: str = "ready") -> None:
        ok = wait_until(lambda: f"status: {status}" in self.output() or self.process.poll() is not None,
                        timeout=timeout, interval=0.1)
        assert ok and self.process.poll() is None, f"daemon did not reach {status!r}:\n{self.output()}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self._log_file.close()


@pytest.fixture
def desktop(xvfb: str, tmp_path: pathlib.Path) -> Iterator[tuple[str, pathlib.Path, Daemon, object]]:
    """Xvfb + xterm running ``cat > out.txt`` (focused) + the daemon (its HOME,
    XDG dirs and TMPDIR all under ``tmp_path/home``)."""
    yield from xterm_desktop(xvfb, tmp_path, BASE_CONFIG, "ready")


def xterm_desktop(xvfb: str, tmp_path: pathlib.Path, config_text: str,
                  status: str) -> Iterator[tuple[str, pathlib.Path, Daemon, object]]:
    needs.tool("xterm", "xterm")
    out = tmp_path / "out.txt"
    term = start_app(xvfb, ["xterm", "-geometry", "80x12+40+40", "-fa", "DejaVu Sans Mono", "-fs", "12",
                            "-e", "sh", "-c", f"stty -icanon -echoctl; exec cat > {out}"], wm_class="xterm")
    xdotool(xvfb, "mousemove", "200", "60")
    xdotool(xvfb, "windowfocus", "--sync", str(term.window))
    config = tmp_path / "config.toml"
    config.write_text(config_text)
    home = tmp_path / "home"
    home.mkdir()
    daemon = Daemon(xvfb, home, config)
    try:
        daemon.wait_ready(status=status)
        yield xvfb, out, daemon, term
    finally:
        daemon.stop()
        term.stop()


def overlay_geometry(display: str) -> Optional[tuple[int, int, int, int]]:
    """(x, y, width, height) of the visible ghost-text window, or None."""
    found = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", OVERLAY_TITLE],
                           env=x_env(display), capture_output=True, text=True, timeout=10)
    ids = found.stdout.split()
    if not ids:
        return None
    geo = xdotool(display, "getwindowgeometry", "--shell", ids[-1])
    vals = dict(line.split("=", 1) for line in geo.splitlines() if "=" in line)
    return int(vals["X"]), int(vals["Y"]), int(vals["WIDTH"]), int(vals["HEIGHT"])


def wait_overlay_stable(display: str, timeout: float = 30.0) -> Optional[tuple[int, int, int, int]]:
    """Wait until the overlay is visible and its geometry stopped changing
    (streamed suggestions grow token by token).  Call it right after the
    last key: how long the first ghost took is recorded for negative checks."""
    start = deadline = time.monotonic()
    deadline += timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        geo = overlay_geometry(display)
        if geo is not None and last is None and start is not None:
            SUGGESTION_LATENCIES.append(time.monotonic() - start)
            start = None
        if geo != last:
            last, since = geo, time.monotonic()
        elif geo is not None and time.monotonic() - since > 1.5:
            return geo
        time.sleep(0.1)
    return last


def screenshot(display: str, name: str) -> pathlib.Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    if shutil.which("import"):
        subprocess.run(["import", "-window", "root", str(path)], env=x_env(display), timeout=20, check=False)
    return path


def file_text(path: pathlib.Path) -> str:
    return path.read_bytes().decode("utf-8", errors="replace") if path.exists() else ""


def first_word(text: str) -> str:
    """The suggestion's first word, with the spacing or punctuation before it."""
    return re.match(r"\W*\w*", text).group(0)


def reference_suggestion(text: str) -> str:
    """What the decoder suggests for ``text`` with the test's settings, from a
    separate process.  The daemon reached the same text key by key, so its
    cache was filled in other batches; the backend promises equal rankings up
    to near-ties, not equal bytes (README "Where we departed...": batching
    moves CPU results by tenths of a nat; tests/llm/test_llama_backend.py
    ``assert_close``), so callers compare the first word, not the whole text."""
    out = subprocess.run(
        [sys.executable, "-m", "daemon", "complete", "--text", text, "--max-tokens", "6", "--beam-width", "2",
         "--confidence-threshold", "0"],  # as the daemon in these tests (config above)
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.rstrip("\n")


TYPED = "The quick brown fox jumps over the la"


def test_suggestion_appears_near_the_caret_and_tab_inserts_it(desktop) -> None:
    display, out, daemon, term = desktop
    xdotool(display, "type", "--delay", "60", TYPED)
    geo = wait_overlay_stable(display)
    shot = screenshot(display, "daemon-xterm-suggestion.png")
    assert geo is not None, f"no suggestion window appeared\n{daemon.output()}"
    x, y, w, h = geo
    # No accessibility in xterm: the fallback puts the ghost text just below the
    # pointer (200, 60), which is inside the focused window.
    assert 150 <= x <= 260 and 50 <= y <= 130, geo
    assert 0 < h < 60 and 0 < w < 800, geo
    assert shot.exists() or shutil.which("import") is None

    xdotool(display, "key", "Tab")
    assert wait_until(lambda: overlay_geometry(display) is None, timeout=5), "overlay stayed after Tab"
    assert wait_until(lambda: daemon.accepted(), timeout=10), daemon.output()
    (length,) = daemon.accepted()  # one accept
    assert length > 0
    assert wait_until(lambda: len(file_text(out)) >= len(TYPED) + length, timeout=10), file_text(out)
    inserted = file_text(out)
    assert inserted.startswith(TYPED)
    suggestion = inserted[len(TYPED):]
    assert len(suggestion) == length and "\t" not in suggestion, repr(inserted)  # inserted once
    # The inserted text is what the decoder suggests for the typed text.
    assert first_word(suggestion) == first_word(reference_suggestion(TYPED)), repr(suggestion)


def test_escape_dismisses_and_tab_without_suggestion_is_a_tab(desktop) -> None:
    display, out, daemon, term = desktop
    xdotool(display, "type", "--delay", "60", "Hello wor")
    assert wait_overlay_stable(display) is not None, daemon.output()
    xdotool(display, "key", "Escape")
    assert wait_until(lambda: overlay_geometry(display) is None, timeout=5), "Esc did not dismiss"
    xdotool(display, "key", "Tab")
    assert wait_until(lambda: "\t" in file_text(out), timeout=5), repr(file_text(out))
    assert file_text(out) == "Hello wor\x1b\t"  # Esc and Tab both reached the application


def test_typing_through_advances_the_ghost_text(desktop) -> None:
    display, out, daemon, term = desktop
    xdotool(display, "type", "--delay", "60", TYPED)
    geo = wait_overlay_stable(display)
    assert geo is not None, daemon.output()
    expected = reference_suggestion(TYPED)
    assert len(first_word(expected)) >= 2
    xdotool(display, "type", expected[0])
    # One character shorter, not hidden (hiding and showing a new suggestion
    # would make the overlay disappear first).
    narrower = wait_until(lambda: (g := overlay_geometry(display)) is None or g[2] < geo[2], timeout=10)
    assert narrower, (geo, overlay_geometry(display))
    after = overlay_geometry(display)
    assert after is not None, "typing the next character of the suggestion hid it"
    xdotool(display, "key", "Tab")
    assert wait_until(lambda: daemon.accepted(), timeout=10), daemon.output()
    (length,) = daemon.accepted()
    assert wait_until(lambda: len(file_text(out)) >= len(TYPED) + 1 + length, timeout=10), repr(file_text(out))
    text = file_text(out)
    assert text.startswith(TYPED + expected[0]) and len(text) == len(TYPED) + 1 + length, repr(text)
    assert first_word(text[len(TYPED):]) == first_word(expected), (repr(text), repr(expected))


def test_disabling_in_the_config_file_stops_suggestions(desktop) -> None:
    display, out, daemon, term = desktop
    # Enabled, the typed text gets a suggestion (and says how long one takes here).
    xdotool(display, "type", "--delay", "60", TYPED)
    assert wait_overlay_stable(display) is not None, daemon.output()
    xdotool(display, "key", "Escape")
    assert wait_until(lambda: overlay_geometry(display) is None, timeout=5), "Esc did not dismiss"
    daemon.config.write_text(BASE_CONFIG + "enabled = false\n")
    assert wait_until(lambda: "status: disabled" in daemon.output(), timeout=30), daemon.output()
    xdotool(display, "type", "--delay", "60", " " + TYPED)
    assert wait_until(lambda: file_text(out).endswith(" " + TYPED), timeout=10), repr(file_text(out))
    window = negative_window()
    assert stays(lambda: overlay_geometry(display) is None, window), f"a ghost while disabled within {window:.1f} s"
    xdotool(display, "key", "Tab")
    assert wait_until(lambda: file_text(out) == TYPED + "\x1b " + TYPED + "\t", timeout=5), repr(file_text(out))
    # Turning it back on works without a restart.
    ready = daemon.output().count("status: ready")
    daemon.config.write_text(BASE_CONFIG)
    assert wait_until(lambda: daemon.output().count("status: ready") > ready, timeout=30), daemon.output()
    xdotool(display, "type", "--delay", "60", " and the quick brown fox jumps over the la")
    assert wait_overlay_stable(display) is not None, daemon.output()


@pytest.fixture
def broken_model_desktop(xvfb: str, tmp_path: pathlib.Path):
    """The daemon configured with a truncated copy of the model."""
    from daemon.backends.llamacpp.models import resolve_model

    broken = tmp_path / "truncated.gguf"
    with open(resolve_model("smollm2"), "rb") as model:
        broken.write_bytes(model.read(4 << 20))  # the first 4 MiB of 98
    yield from xterm_desktop(xvfb, tmp_path, BASE_CONFIG + f'model = "{broken}"\n', "error")


def test_a_model_that_fails_to_load_leaves_the_daemon_running_and_typing_untouched(
    broken_model_desktop, tmp_path: pathlib.Path
) -> None:
    display, out, daemon, term = broken_model_desktop
    xdotool(display, "type", "--delay", "40", "Hello wor")
    xdotool(display, "key", "Tab")
    assert wait_until(lambda: file_text(out) == "Hello wor\t", timeout=10), repr(file_text(out))
    assert overlay_geometry(display) is None
    assert daemon.process.poll() is None, daemon.output()
    log = daemon.output()
    assert "Traceback" not in log
    error = [line for line in log.splitlines() if "status: error" in line]
    assert len(error) == 1 and "truncated.gguf" in error[0], log
    doctor = subprocess.run([sys.executable, "-m", "daemon", "doctor", "--config", str(daemon.config)],
                            cwd=ROOT, env=x_env(display), capture_output=True, text=True, timeout=120)
    assert doctor.returncode == 1 and "truncated.gguf" in doctor.stdout, doctor.stdout + doctor.stderr


def test_denylisted_application_gets_nothing(desktop) -> None:
    display, out, daemon, term = desktop
    daemon.config.write_text(BASE_CONFIG + 'denylist = ["xterm"]\n')
    assert wait_until(lambda: "capture off" in daemon.output(), timeout=5), daemon.output()
    xdotool(display, "type", "--delay", "60", TYPED)
    window = negative_window()
    assert stays(lambda: overlay_geometry(display) is None, window), \
        f"a ghost in a denylisted application within {window:.1f} s"
    xdotool(display, "key", "Tab")
    assert wait_until(lambda: file_text(out) == TYPED + "\t", timeout=5), repr(file_text(out))


def test_typed_text_never_reaches_disk_or_logs(desktop, tmp_path: pathlib.Path) -> None:
    """At debug level, with a suggestion on the screen long enough for the
    daemon's periodic state line: neither what was typed nor what was
    suggested (and accepted) is in any file the daemon wrote; its log is
    the user's alone, and it runs with core dumps off."""
    display, out, daemon, term = desktop
    typed = "Zebrafinch quantumleap, Zebrafinch quantumleap, Zebrafinch quan"
    xdotool(display, "type", "--delay", "60", typed)
    assert wait_overlay_stable(display, timeout=30) is not None, daemon.output()
    # the housekeeping logs the controller's state every 2 s: let it see the ghost
    lines = daemon.output().count("state: ControllerState(")
    assert wait_until(lambda: daemon.output().count("state: ControllerState(") > lines, timeout=6)
    assert overlay_geometry(display) is not None
    xdotool(display, "key", "Tab")
    assert wait_until(lambda: daemon.accepted(), timeout=10), daemon.output()
    assert wait_until(lambda: len(file_text(out)) >= len(typed) + daemon.accepted()[0], timeout=10)
    suggested = file_text(out)[len(typed):].strip()
    assert len(suggested) >= 4, repr(suggested)  # long enough to be found if it leaked
    limits = pathlib.Path(f"/proc/{daemon.process.pid}/limits").read_text()
    assert re.search(r"Max core file size\s+0\s", limits), limits
    daemon.stop()
    home = tmp_path / "home"
    leaks = []
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            leaks += [f"{path}: {what}" for what, needle in (("typed", b"Zebrafinch"), ("typed", b"quantumleap"),
                                                             ("suggested", suggested.encode()))
                      if needle in data]
    assert leaks == [], leaks
    logs = [p for p in home.rglob("*.log") if p.is_file()]
    assert logs, "the daemon wrote no log file"
    assert {oct(p.stat().st_mode & 0o777) for p in logs} == {"0o600"}
    assert all(oct(p.parent.stat().st_mode & 0o777) == "0o700" for p in logs)


# --------------------------------------------------------------------------- a Qt application with AT-SPI


@pytest.fixture
def qt_desktop(a11y: A11ySession):
    """The Qt test app (normal field focused) on a private accessibility bus, and the daemon."""
    app, state = start_fields_app(a11y)
    config = a11y.tmp / "config.toml"
    config.write_text(BASE_CONFIG)
    home = a11y.tmp / "daemon-home"
    home.mkdir()
    daemon = Daemon(a11y.display, home, config, session_bus=a11y.address)
    try:
        daemon.wait_ready()
        assert wait_until(lambda: "accessibility: AT-SPI" in daemon.output(), timeout=1), daemon.output()
        yield a11y, state, daemon
    finally:
        daemon.stop()
        app.stop()


def field_text(state: pathlib.Path, name: str) -> str:
    return read_state(state).get("fields", {}).get(name, {}).get("text", "")


def test_qt_field_gets_ghost_text_at_the_caret_and_tab_inserts_it(qt_desktop) -> None:
    session, state, daemon = qt_desktop
    typed = "The quick brown fox jumps over the la"
    xdotool(session.display, "type", "--delay", "60", typed)
    geo = wait_overlay_stable(session.display)
    screenshot(session.display, "daemon-qt-suggestion.png")
    assert geo is not None, daemon.output()
    field = field_rect(state, "normal")
    x, y, w, h = geo
    # The ghost text starts at the caret (end of the typed text) inside the
    # field's row, its line centred on the caret the application draws.
    cx, cy, cw, ch = read_state(state)["caret"]  # Qt's cursorRect, around the caret line
    assert field.x + 100 < x < field.x + field.width, (geo, field)
    assert cx - 6 <= x <= cx + cw, (geo, (cx, cy, cw, ch))
    assert abs((y + h / 2) - (cy + ch / 2)) <= 3, (geo, (cx, cy, cw, ch))
    reference = reference_suggestion(typed)
    xdotool(session.display, "key", "Tab")
    assert wait_until(lambda: daemon.accepted(), timeout=10), daemon.output()
    (length,) = daemon.accepted()
    assert wait_until(lambda: len(field_text(state, "normal")) >= len(typed) + length, timeout=10), \
        repr(field_text(state, "normal"))
    text = field_text(state, "normal")
    assert text.startswith(typed) and len(text) == len(typed) + length, repr(text)
    assert first_word(text[len(typed):]) == first_word(reference), (repr(text), repr(reference))
    assert read_state(state).get("focus") == "normal"  # Tab was swallowed, focus did not move


def test_password_field_gets_nothing(qt_desktop) -> None:
    session, state, daemon = qt_desktop
    xdotool(session.display, "key", "Tab")  # nothing visible: Tab moves focus to the password field
    assert wait_until(lambda: read_state(state).get("focus") == "password", timeout=10)
    assert wait_until(lambda: "capture off" in daemon.output(), timeout=5), daemon.output()
    xdotool(session.display, "type", "--delay", "60", "The quick brown fox jumps over the la")
    window = negative_window()
    assert stays(lambda: overlay_geometry(session.display) is None, window), \
        f"a ghost over a password field within {window:.1f} s"
    assert field_text(state, "password") == "The quick brown fox jumps over the la"


def test_focus_moving_to_the_password_field_without_a_key_hides_the_ghost(qt_desktop) -> None:
    """A login page moves focus to its password box by itself while a
    suggestion shows: the ghost goes at once, the password field gets
    nothing, and Tab there is the application's."""
    session, state, daemon = qt_desktop
    xdotool(session.display, "type", "--delay", "60", "The quick brown fox jumps over the la")
    assert wait_overlay_stable(session.display) is not None, daemon.output()
    focus_requests(session).write_text("password")
    assert wait_until(lambda: read_state(state).get("focus") == "password", timeout=10)
    assert wait_until(lambda: overlay_geometry(session.display) is None, timeout=2), \
        "the ghost stayed after focus moved to the password field"
    assert wait_until(lambda: "capture off in this window (password field)" in daemon.output(), timeout=5)
    xdotool(session.display, "type", "--delay", "60", "Zebrafinch hunter")
    window = negative_window()
    assert stays(lambda: overlay_geometry(session.display) is None, window), \
        f"a ghost over a password field within {window:.1f} s"
    accepted = len(daemon.accepted())
    xdotool(session.display, "key", "Tab")
    assert wait_until(lambda: read_state(state).get("focus") == "editor", timeout=10)  # Tab moved focus
    assert len(daemon.accepted()) == accepted and field_text(state, "password") == "Zebrafinch hunter"


def test_a_denylisted_window_taking_focus_without_a_key_gets_nothing(qt_desktop) -> None:
    """A password manager's window comes up by itself (an autotype prompt)
    while a suggestion shows: the ghost goes, nothing typed there is kept."""
    session, state, daemon = qt_desktop
    xdotool(session.display, "type", "--delay", "60", "The quick brown fox jumps over the la")
    assert wait_overlay_stable(session.display) is not None, daemon.output()
    out = session.tmp / "manager.txt"
    manager = start_app(session.display, ["xterm", "-class", "KeePassXC", "-geometry", "40x5+300+300", "-e", "sh",
                                          "-c", f"stty -icanon -echoctl; exec cat > {out}"], wm_class="KeePassXC")
    try:
        xdotool(session.display, "windowfocus", "--sync", str(manager.window))
        assert wait_until(lambda: overlay_geometry(session.display) is None, timeout=2), \
            "the ghost stayed after a denylisted window took focus"
        assert wait_until(lambda: "capture off in this window (denylisted application)" in daemon.output(),
                          timeout=5), daemon.output()
        xdotool(session.display, "type", "--delay", "60", "master passw")
        window = negative_window()
        assert stays(lambda: overlay_geometry(session.display) is None, window), \
            f"a ghost in a denylisted window within {window:.1f} s"
        xdotool(session.display, "key", "Tab")
        assert wait_until(lambda: file_text(out) == "master passw\t", timeout=5), repr(file_text(out))
    finally:
        manager.stop()


# --------------------------------------------------------------------------- feedback without a tray


@pytest.fixture
def default_level_desktop(xvfb: str, tmp_path: pathlib.Path):
    """The daemon at the default log level (warning), on a bare X server without a tray."""
    yield from xterm_desktop(xvfb, tmp_path, BASE_CONFIG.replace('log_level = "debug"\n', ""), "ready")


def test_without_a_tray_the_log_says_running_and_a_broken_config_once(default_level_desktop) -> None:
    display, out, daemon, term = default_level_desktop
    log = daemon.output()
    running = [line for line in log.splitlines() if "ghosttype running on x11" in line]
    assert len(running) == 1, log
    for part in ("Tab accepts", "Ctrl+Right accepts one word", "pauses", "quits"):
        assert part in running[0], running[0]
    daemon.config.write_text(BASE_CONFIG + "max_tokens = -1\n")
    assert wait_until(lambda: "config file invalid" in daemon.output(), timeout=5), daemon.output()
    # The file stays broken: it must not be reported again (the watcher
    # reloads within 0.15 s of a change; 3 s is twenty times that).
    assert stays(lambda: daemon.output().count("config file invalid") == 1, 3.0), daemon.output()
    assert daemon.output().count("status: error") == 1, daemon.output()
    daemon.config.write_text(BASE_CONFIG + "max_tokens = -2\n")  # a different mistake: reported
    assert wait_until(lambda: daemon.output().count("config file invalid") == 2, timeout=5), daemon.output()
