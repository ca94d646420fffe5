"""Settings, "Off in <application>" and the counts, end to end: the real
``ghosttype run`` with the real model on Xvfb, a real tray host (trayer)
whose menu is opened with a real right-click, the settings window as its own
process driven by real keys, ``ghosttype stats --json`` after the session;
and the IBus engine's menu, activated the way a panel does it (the test
owns IBus's panel name and sends ``PropertyActivate``, which ibus-daemon
hands to the focused context's engine as it hands any input context's own):
"Off in <application>" there writes nothing, "Settings..." opens the window.
"""

from __future__ import annotations

import contextlib
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
from typing import Iterator

import pytest

from daemon.config import load_config
from tests import needs
from tests.e2e.ibus_desktop import CONFIG as IBUS_CONFIG, ibus_session, wait_for_preedit  # noqa: F401
from tests.e2e.test_daemon_e2e import (ARTIFACTS, BASE_CONFIG, Daemon, file_text, overlay_geometry, screenshot,
                                       wait_overlay_stable, xterm_desktop)
from tests.e2e.xserver import negative_window, start_app, stays, wait_until, x_env, xdotool, xvfb  # noqa: F401

pytestmark = [pytest.mark.e2e, pytest.mark.llm]

ROOT = pathlib.Path(__file__).resolve().parents[2]
COMMENTED = "# my own note, which must stay\n" + BASE_CONFIG
TYPED = "The quick brown fox jumps over the la"
MARKER = "Zebrafinch quantumleap"
SECOND = ". And then the quick brown fox jumps over the la"
SETTINGS_TITLE = "ghosttype settings"
#: The tray menu's items, as arrow keys reach them (the status line is not one).
MENU = ("Enabled", "Pause", "Off in", "Settings…")


def visible_windows(display: str, name: str) -> list[str]:
    out = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", name], env=x_env(display),
                         capture_output=True, text=True, timeout=10)
    return out.stdout.split()


def tray_menu(display: str, item: str, shot: str = "") -> None:
    """Right-click ghosttype's icon in trayer (the top right corner) and
    choose ``item``; ``shot``: a screenshot's name, taken with it selected."""
    def icons() -> list[str]:
        return [w for w in visible_windows(display, "")  # (searching for the name finds nothing)
                if xdotool(display, "getwindowname", w).strip() == "ghosttype"]

    assert wait_until(icons, timeout=30), "no tray icon"
    icon = icons()[-1]
    geo = dict(line.split("=", 1) for line in xdotool(display, "getwindowgeometry", "--shell", icon).splitlines()
               if "=" in line)
    xdotool(display, "mousemove", str(int(geo["X"]) + int(geo["WIDTH"]) // 2),
            str(int(geo["Y"]) + int(geo["HEIGHT"]) // 2))
    xdotool(display, "click", "3")
    assert wait_until(lambda: _menu_open(display), timeout=10), "no menu"
    xdotool(display, "key", "--delay", "100", *["Down"] * (MENU.index(item) + 1))
    if shot:
        screenshot(display, shot)
    xdotool(display, "key", "Return")
    # keys typed while the menu still holds the keyboard (a busy daemon's main thread hides it later) go to it
    assert wait_until(lambda: not _menu_open(display), timeout=20), f"the menu stayed open after {item}"


def type_with_ghosttype_off(display: str, out: pathlib.Path, daemon: Daemon) -> None:
    """Type " " + TYPED into the xterm where ghosttype is off: it arrives as typed (a red run shows the
    file's tail and the daemon's log)."""
    before = file_text(out)
    xdotool(display, "type", "--delay", "60", " " + TYPED)
    assert wait_until(lambda: file_text(out) == before + " " + TYPED, timeout=20), \
        (repr(file_text(out)[len(before) - 5:]), daemon.output()[-3000:])


def _menu_open(display: str) -> bool:
    """A popup menu is an override-redirect window of the daemon's: xdotool lists it by class."""
    out = subprocess.run(["xdotool", "search", "--onlyvisible", "--class", "ghosttype"], env=x_env(display),
                         capture_output=True, text=True, timeout=10)
    return any(_is_menu(display, w) for w in out.stdout.split())


def _is_menu(display: str, window: str) -> bool:
    geo = xdotool(display, "getwindowgeometry", window)
    m = re.search(r"Geometry: (\d+)x(\d+)", geo)
    return bool(m) and int(m.group(2)) > 100  # the icon is 22-32 px high; the menu over 100


@pytest.fixture
def tray_desktop(xvfb: str, tmp_path: pathlib.Path) -> Iterator[tuple]:
    """A tray host (trayer, or stalonetray where the release has no trayer),
    a second xterm (class ``Notes``, ``cat > notes.txt``), then the xterm +
    daemon of ``test_daemon_e2e`` (the first xterm focused)."""
    if shutil.which("trayer") is None and shutil.which("stalonetray") is not None:
        start_app(xvfb, ["sh", "-c", "exec stalonetray --geometry 1x1-0+0 --icon-size 32 --kludges force_icons_size "
                         "2>/dev/null"], wm_class="stalonetray")
    else:
        needs.tool("trayer", "trayer")
        # trayer (GTK 2) warns on stderr without end: a pipe nobody reads would stop it.
        start_app(xvfb, ["sh", "-c", "exec trayer --edge top --align right --widthtype pixel --width 32 --height 32 "
                         "--SetDockType false --transparent false 2>/dev/null"], wm_class="trayer")
    notes_file = tmp_path / "notes.txt"
    notes = start_app(xvfb, ["xterm", "-name", "notes", "-class", "Notes", "-geometry", "80x8+40+300", "-e", "sh", "-c",
                             f"stty -icanon -echoctl; exec cat > {notes_file}"], wm_class="Notes")
    with running(xvfb, tmp_path) as (display, out, daemon, term):
        yield display, out, daemon, term, notes, notes_file


#: ``test_daemon_e2e``'s xterm and daemon, with a config file that has a comment.
running = contextlib.contextmanager(lambda display, tmp_path: xterm_desktop(display, tmp_path, COMMENTED, "ready"))


def stats_json(daemon: Daemon) -> dict:
    home = daemon.log.parent
    env = dict(os.environ, HOME=str(home), XDG_STATE_HOME=str(home / ".state"))
    out = subprocess.run([sys.executable, "-m", "daemon", "stats", "--json"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_off_in_the_application_from_the_tray_and_the_counts_of_the_session(tray_desktop) -> None:
    display, out, daemon, term, notes, notes_file = tray_desktop
    # A suggestion accepted whole after a marker, one accepted by word.
    xdotool(display, "type", "--delay", "60", MARKER + " " + TYPED)
    assert wait_overlay_stable(display) is not None, daemon.output()
    xdotool(display, "key", "Tab")
    assert wait_until(lambda: len(daemon.accepted()) == 1, timeout=10), daemon.output()
    xdotool(display, "type", "--delay", "60", SECOND)
    assert wait_overlay_stable(display) is not None, daemon.output()
    xdotool(display, "key", "ctrl+Right")
    assert wait_until(lambda: len(daemon.accepted()) == 2, timeout=10), daemon.output()
    inserted = daemon.accepted()
    typed = len(MARKER + " " + TYPED + SECOND)
    assert wait_until(lambda: len(file_text(out)) == typed + sum(inserted), timeout=10), repr(file_text(out))
    xdotool(display, "key", "Escape")
    assert wait_until(lambda: overlay_geometry(display) is None, timeout=5)

    tray_menu(display, "Off in", shot="tray-off-in-xterm.png")
    assert wait_until(lambda: "ghosttype off in xterm" in daemon.output(), timeout=10), daemon.output()
    config = daemon.config.read_text()
    assert config.startswith(COMMENTED) and load_config(daemon.config).is_denied("xterm"), config
    assert "capture off in this window (denylisted application)" in daemon.output()
    type_with_ghosttype_off(display, out, daemon)
    window = negative_window()
    assert stays(lambda: overlay_geometry(display) is None, window), f"a ghost in xterm after Off within {window:.1f} s"

    # Another application still gets suggestions.
    xdotool(display, "mousemove", "200", "320")
    xdotool(display, "windowfocus", "--sync", str(notes.window))
    xdotool(display, "type", "--delay", "60", TYPED)
    assert wait_overlay_stable(display) is not None, daemon.output()
    xdotool(display, "key", "Escape")

    # "Settings..." opens the window, as a process of its own.
    tray_menu(display, "Settings…")
    assert wait_until(lambda: visible_windows(display, SETTINGS_TITLE), timeout=30), daemon.output()
    window_pid = int(xdotool(display, "getwindowpid", visible_windows(display, SETTINGS_TITLE)[-1]))
    os.kill(window_pid, signal.SIGTERM)

    daemon.stop()  # the last counts are written as it stops
    view = stats_json(daemon)
    chars = sum(inserted)
    assert view["today"] == view["total"]
    assert view["total"]["accepted"] == 1 and view["total"]["accepted_words"] == 1, view
    assert view["total"]["chars_inserted"] == chars and view["total"]["keystrokes_saved"] == chars - 2, view
    assert view["total"]["shown"] >= 3, view  # at least the two accepted and the one in Notes
    home = daemon.log.parent
    stats_file = home / ".state" / "ghosttype" / "stats.json"
    assert stats_file.stat().st_mode & 0o777 == 0o600
    written = [p for p in [*home.rglob("*"), daemon.config] if p.is_file()]  # everything the daemon could write
    leaks = [str(p) for p in written if re.search(rb"Zebrafinch|quantumleap", p.read_bytes())]
    accepted_text = file_text(out)[len(MARKER + " " + TYPED):][:inserted[0]]
    if len(accepted_text.strip()) >= 4:  # nor the suggestion accepted, in what ghosttype itself writes
        leaks += [str(p) for p in written if (".state" in p.parts or p == daemon.config)
                  and accepted_text.encode() in p.read_bytes()]
    assert leaks == [], leaks


def test_a_change_made_in_the_settings_window_is_saved_and_obeyed(xvfb: str, tmp_path: pathlib.Path) -> None:
    with running(xvfb, tmp_path) as (display, out, daemon, term):
        xdotool(display, "type", "--delay", "60", TYPED)
        assert wait_overlay_stable(display) is not None, daemon.output()
        xdotool(display, "key", "Escape")
        home = daemon.log.parent
        env = x_env(display, HOME=str(home), XDG_STATE_HOME=str(home / ".state"))
        window = subprocess.Popen([sys.executable, "-m", "daemon", "settings", "--config", str(daemon.config)],
                                  cwd=ROOT, env=env, stderr=subprocess.PIPE, start_new_session=True)
        try:
            assert wait_until(lambda: visible_windows(display, SETTINGS_TITLE) or window.poll() is not None,
                              timeout=60)
            assert window.poll() is None, window.stderr.read().decode() if window.stderr else ""
            settings = visible_windows(display, SETTINGS_TITLE)[-1]
            xdotool(display, "windowfocus", "--sync", settings)
            screenshot(display, "settings-window.png")
            # "Suggest as I type" has the focus: Space turns it off, Ctrl+S saves.
            xdotool(display, "key", "--delay", "100", "space", "ctrl+s")
            assert wait_until(lambda: "enabled = false" in daemon.config.read_text(), timeout=10), \
                daemon.config.read_text()
            screenshot(display, "settings-window-saved.png")
            assert daemon.config.read_text().startswith(COMMENTED)
            assert wait_until(lambda: "status: disabled" in daemon.output(), timeout=10), daemon.output()
        finally:
            window.terminate()
            window.wait(timeout=10)
        xdotool(display, "windowfocus", "--sync", str(term.window))
        type_with_ghosttype_off(display, out, daemon)
        seconds = negative_window()
        assert stays(lambda: overlay_geometry(display) is None, seconds), \
            f"a ghost while disabled within {seconds:.1f} s"
    assert (ARTIFACTS / "settings-window.png").exists()


def test_the_ibus_menu_leaves_the_denylist_to_the_settings_window(xvfb: str, tmp_path: pathlib.Path) -> None:
    from jeepney import DBusAddress, message_bus, new_method_call, new_signal
    from jeepney.io.blocking import open_dbus_connection

    from daemon.frontends.ibus.bus import ibus_address
    from daemon.frontends.ibus.menu import PROP_OFF_IN_APP, PROP_SETTINGS

    with ibus_session(xvfb, tmp_path, installed=False) as desktop:
        app = desktop.start_app("3", prgname="notepad")  # GTK names its IBus client gtk3-im:notepad
        panel = open_dbus_connection(ibus_address(desktop.env))
        try:
            # Be the panel (as GNOME Shell or ibus-ui-gtk3 are): ibus-daemon
            # tells it the focused context from the next focus on, and hands
            # its PropertyActivate to that context's engine.
            reply = panel.send_and_get_reply(new_method_call(message_bus, "RequestName", "su",
                                                             ("org.freedesktop.IBus.Panel", 0)), timeout=10)
            assert reply.body == (1,)
            assert wait_until(lambda: "IBus panel present" in desktop.engine_output(), timeout=10)
            app.signal(signal.SIGUSR1)  # focus the second field: the client is named from now on
            assert wait_until(lambda: app.focus() == "second", timeout=10), app.state()
            desktop.type(TYPED)
            wait_for_preedit(app, "second")
            desktop.key("Escape")
            assert wait_until(lambda: not app.field("second")["preedit"], timeout=10)
            address = DBusAddress("/org/freedesktop/IBus/Panel", interface="org.freedesktop.IBus.Panel")
            config = tmp_path / "config.toml"
            before = config.read_text()
            panel.send(new_signal(address, "PropertyActivate", "su", (PROP_OFF_IN_APP, 1)))
            # The engine cannot tell this from an input context's own PropertyActivate:
            # it writes nothing, and notepad still gets suggestions.
            assert wait_until(lambda: "denylist is not changed from the input-source menu" in desktop.engine_output(),
                              timeout=10), desktop.engine_output()
            assert config.read_text() == before and before.startswith(IBUS_CONFIG)
            assert not load_config(config).is_denied("notepad")
            desktop.type(" and " + TYPED)
            wait_for_preedit(app, "second")
            # Another application still gets suggestions (one window of the test app at a time).
            app.process.terminate()
            app.process.wait(timeout=10)
            other = desktop.start_app("3", prgname="letters")
            desktop.type(TYPED)
            wait_for_preedit(other)
            # "Settings..." opens the window from the engine, as a process of its own.
            panel.send(new_signal(address, "PropertyActivate", "su", (PROP_SETTINGS, 0)))
            assert wait_until(lambda: visible_windows(xvfb, SETTINGS_TITLE), timeout=30), desktop.engine_output()
            os.kill(int(xdotool(xvfb, "getwindowpid", visible_windows(xvfb, SETTINGS_TITLE)[-1])), signal.SIGTERM)
        finally:
            panel.close()
