"""``ghosttype setup [--undo]`` (:mod:`daemon.commands.setup`, :mod:`daemon.frontends.ibus.desktop_setup`,
:mod:`daemon.setup_changes`): the real ``gsettings`` tool on the real GNOME and IBus schemas, with GLib's keyfile
backend in the test's folder (never the machine user's settings), and real kwinrc files.  The engine's component
file, the GNOME Shell extension and IBus's Wayland panel are put where the test says, in its folder."""

from __future__ import annotations

import ast
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from daemon import autostart
from daemon.__main__ import main
from daemon.frontends.ibus import component, desktop_setup
from daemon.frontends.ibus.inline import kwin_effect, shell_extension
from tests import needs

UUID = shell_extension.UUID
GT = ("ibus", "ghosttype")
US, DE, FR = ("xkb", "us"), ("xkb", "de"), ("xkb", "fr")
KWINRC = """# kwinrc, as Plasma wrote it
[Compositing]
Backend=OpenGL

[Wayland]
InputMethod[$e]=/usr/share/applications/com.github.maliit.keyboard.desktop
VirtualKeyboardEnabled=true

[Xwayland]
Scale=1
"""


class Desk:
    """The test's desktop: its environment, settings and files."""

    def __init__(self, tmp: pathlib.Path, monkeypatch, capsys):
        self.tmp, self.monkeypatch, self.capsys = tmp, monkeypatch, capsys
        self.config = tmp / "config"
        self.keyfile = self.config / "glib-2.0" / "settings" / "keyfile"
        self.record = tmp / "state" / "ghosttype" / "setup.json"
        self.kwinrc = self.config / "kwinrc"

    def session(self, desktop: str, session_type: str = "wayland") -> None:
        self.monkeypatch.setenv("XDG_CURRENT_DESKTOP", desktop)
        self.monkeypatch.setenv("XDG_SESSION_TYPE", session_type)
        if session_type == "x11":
            self.monkeypatch.setenv("DISPLAY", ":9")

    def install_engine(self) -> None:
        path = component.user_component_dir() / component.COMPONENT_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(component.component_xml("/opt/ghosttype/bin/ghosttype ibus run --ibus"))

    def install_extension(self) -> None:
        shell_extension.install_files(False)

    def install_ibus_wayland_panel(self) -> pathlib.Path:
        path = self.tmp / "share" / "applications" / desktop_setup.IBUS_WAYLAND_DESKTOP
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("[Desktop Entry]\nExec=/usr/libexec/ibus-ui-gtk3 --enable-wayland-im\nType=Application\n")
        return path

    def get(self, key: str):
        out = subprocess.run(["gsettings", "get", *key.split(" ", 1)], capture_output=True, text=True, check=True)
        value = ast.literal_eval(re.sub(r"^@\S+\s+", "", out.stdout.strip()))
        return [tuple(v) if isinstance(v, (list, tuple)) else v for v in value]

    def set(self, key: str, value) -> None:
        subprocess.run(["gsettings", "set", *key.split(" ", 1), repr(value)], check=True, capture_output=True)

    def user_set_keys(self) -> str:
        """The keyfile's text: the keys set, where a key the user never set must not appear."""
        return self.keyfile.read_text() if self.keyfile.exists() else ""

    def is_set(self, key: str) -> bool:
        """Does the user's keyfile hold ``key`` (a key left at its default is not there)?"""
        schema, name = key.split(" ", 1)
        return re.search(rf"^{re.escape(name)}=", self.user_set_keys(), re.M) is not None

    def setup(self, *args: str) -> tuple[int, str, str]:
        self.capsys.readouterr()
        code = main(["setup", *args])
        out = self.capsys.readouterr()
        return code, out.out, out.err


@pytest.fixture
def desk(tmp_path, monkeypatch, capsys) -> Desk:
    needs.tool("gsettings", "libglib2.0-bin")
    for name in ("DBUS_SESSION_BUS_ADDRESS", "DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "XDG_CURRENT_DESKTOP",
                 "IBUS_COMPONENT_PATH", "XDG_DATA_DIRS", "SUDO_USER"):
        monkeypatch.delenv(name, raising=False)
    env = {"HOME": tmp_path / "home", "XDG_CONFIG_HOME": tmp_path / "config", "XDG_DATA_HOME": tmp_path / "data",
           "XDG_STATE_HOME": tmp_path / "state", "XDG_CACHE_HOME": tmp_path / "cache",
           "XDG_DATA_DIRS": f"{tmp_path / 'share'}:/usr/local/share:/usr/share", "GSETTINGS_BACKEND": "keyfile"}
    for name, value in env.items():
        monkeypatch.setenv(name, str(value))
    for schema, package in (("org.gnome.desktop.input-sources", "gsettings-desktop-schemas"),
                            ("org.freedesktop.ibus.general", "ibus"), (shell_extension.SHELL_SCHEMA, "gnome-shell")):
        if subprocess.run(["gsettings", "list-keys", schema], capture_output=True).returncode != 0:
            needs.missing(f"the settings schema {schema}", package)
    # nothing of this machine's own install counts: the test puts each piece in its folder
    monkeypatch.setattr(component, "SYSTEM_COMPONENT_DIR", tmp_path / "system" / "ibus-component")
    monkeypatch.setattr(shell_extension, "SYSTEM_EXTENSIONS", tmp_path / "system" / "gnome-shell-extensions")
    monkeypatch.setattr(kwin_effect, "system_plugin_files", lambda: [])
    keyboard = tmp_path / "system" / "keyboard"
    keyboard.parent.mkdir(parents=True)
    keyboard.write_text('XKBMODEL="pc105"\nXKBLAYOUT="de"\nXKBVARIANT="nodeadkeys"\n')
    monkeypatch.setattr(component, "SYSTEM_KEYBOARD_FILE", keyboard)
    return Desk(tmp_path, monkeypatch, capsys)


# --------------------------------------------------------------------------- GNOME


def test_gnome_adds_ghosttype_beside_the_layouts_and_undo_restores_exactly(desk):
    desk.session("GNOME")
    desk.install_engine()
    desk.install_extension()
    desk.set("org.gnome.desktop.input-sources sources", [US, DE])
    before = desk.user_set_keys()

    code, out, err = desk.setup("--dry-run")
    assert (code, err) == (0, "")
    assert "would change org.gnome.desktop.input-sources sources: [('xkb', 'us'), ('xkb', 'de')] -> " \
           "[('xkb', 'us'), ('xkb', 'de'), ('ibus', 'ghosttype')]" in out
    assert desk.user_set_keys() == before and not desk.record.exists()

    code, out, err = desk.setup()
    assert (code, err) == (0, "")
    assert desk.get("org.gnome.desktop.input-sources sources") == [US, DE, GT]
    assert desk.get("org.gnome.desktop.input-sources mru-sources") == [GT, US, DE]  # ghosttype first at login
    assert desk.get("org.gnome.shell enabled-extensions") == [UUID]
    lines = out.splitlines()
    assert "changed org.gnome.desktop.input-sources sources: [('xkb', 'us'), ('xkb', 'de')] -> " \
           "[('xkb', 'us'), ('xkb', 'de'), ('ibus', 'ghosttype')]" in lines
    assert "changed org.gnome.desktop.input-sources mru-sources: [] -> " \
           "[('ibus', 'ghosttype'), ('xkb', 'us'), ('xkb', 'de')]" in lines
    assert "changed org.gnome.shell enabled-extensions: [] -> ['ghosttype@ghosttype']" in lines
    assert "log out and in once" in out and "Super+Space" in out
    assert desk.record.exists()

    code, out, err = desk.setup("--undo")
    assert (code, err) == (0, "")
    assert desk.get("org.gnome.desktop.input-sources sources") == [US, DE]
    assert desk.get("org.gnome.desktop.input-sources mru-sources") == []
    assert desk.get("org.gnome.shell enabled-extensions") == []
    assert not desk.is_set("org.gnome.desktop.input-sources mru-sources")
    assert not desk.is_set("org.gnome.shell enabled-extensions")
    assert not desk.record.exists()
    code, out, _ = desk.setup("--undo")
    assert code == 0 and "nothing to undo" in out


def test_gnome_with_no_sources_keeps_the_systems_layout_selectable(desk):
    desk.session("GNOME", "x11")
    desk.install_engine()
    code, out, err = desk.setup()
    assert (code, err) == (0, "")
    # an empty list means "the system's layout": it goes first, ghosttype after it
    assert desk.get("org.gnome.desktop.input-sources sources") == [("xkb", "de+nodeadkeys"), GT]
    assert desk.get("org.gnome.desktop.input-sources mru-sources") == [GT, ("xkb", "de+nodeadkeys")]
    assert "extension ghosttype@ghosttype is not installed" in out
    assert desk.get("org.gnome.shell enabled-extensions") == []

    assert desk.setup("--undo")[0] == 0
    assert desk.get("org.gnome.desktop.input-sources sources") == []
    assert not desk.is_set("org.gnome.desktop.input-sources sources")  # unset again, as it was: not an explicit []


def test_a_second_run_has_nothing_to_change(desk):
    desk.session("ubuntu:GNOME")
    desk.install_engine()
    desk.install_extension()
    desk.set("org.gnome.desktop.input-sources sources", [US])
    assert desk.setup()[0] == 0
    keys, record = desk.user_set_keys(), desk.record.read_text()
    code, out, err = desk.setup()
    assert (code, err) == (0, "")
    assert "nothing to change" in out and not [line for line in out.splitlines() if line.startswith("changed")]
    assert desk.user_set_keys() == keys and desk.record.read_text() == record
    assert desk.setup("--undo")[0] == 0
    assert desk.get("org.gnome.desktop.input-sources sources") == [US]


def test_undo_leaves_what_the_user_changed_since(desk):
    desk.session("GNOME")
    desk.install_engine()
    desk.set("org.gnome.desktop.input-sources sources", [US, DE])
    desk.set("org.gnome.desktop.input-sources mru-sources", [DE, US])
    assert desk.setup()[0] == 0
    assert desk.get("org.gnome.desktop.input-sources mru-sources") == [GT, DE, US]
    # the user adds a layout, drops another, and switches sources (GNOME Shell rewrites mru-sources)
    desk.set("org.gnome.desktop.input-sources sources", [US, GT, FR])
    desk.set("org.gnome.desktop.input-sources mru-sources", [US, GT, FR])

    code, out, err = desk.setup("--undo")
    assert (code, err) == (0, "")
    assert desk.get("org.gnome.desktop.input-sources sources") == [US, FR]  # only ghosttype, setup's own entry, goes
    assert desk.get("org.gnome.desktop.input-sources mru-sources") == [US, GT, FR]  # the user's, left
    assert "left org.gnome.desktop.input-sources mru-sources as it is ([('xkb', 'us'), ('ibus', 'ghosttype'), " \
           "('xkb', 'fr')]): changed since ghosttype setup set it to" in out
    assert not desk.record.exists()


def test_an_extension_the_user_switched_off_stays_off(desk):
    desk.session("GNOME")
    desk.install_engine()
    desk.install_extension()
    desk.set("org.gnome.shell disabled-extensions", [UUID])
    code, out, err = desk.setup()
    assert (code, err) == (0, "")
    assert desk.get("org.gnome.shell enabled-extensions") == []
    assert desk.get("org.gnome.shell disabled-extensions") == [UUID]
    assert f"left the GNOME Shell extension {UUID} off, as you switched it" in out
    assert GT in desk.get("org.gnome.desktop.input-sources sources")  # the rest is done
    assert desk.setup("--undo")[0] == 0
    assert desk.get("org.gnome.shell disabled-extensions") == [UUID]


def test_a_failure_midway_keeps_what_was_changed_recorded_for_undo(desk, monkeypatch):
    desk.session("GNOME")
    desk.install_engine()
    desk.install_extension()
    desk.set("org.gnome.desktop.input-sources sources", [US])
    real_put = desktop_setup.GSettings.put

    def put(self, key, value):
        if key == desktop_setup.EXTENSIONS:
            raise desktop_setup.SetupError("gsettings set org.gnome.shell enabled-extensions: refused")
        real_put(self, key, value)

    monkeypatch.setattr(desktop_setup.GSettings, "put", put)
    code, out, err = desk.setup()
    assert code == 1 and "refused" in err
    assert desk.get("org.gnome.desktop.input-sources sources") == [US, GT]
    monkeypatch.setattr(desktop_setup.GSettings, "put", real_put)
    assert desk.setup("--undo")[0] == 0
    assert desk.get("org.gnome.desktop.input-sources sources") == [US]
    assert desk.get("org.gnome.desktop.input-sources mru-sources") == []


# --------------------------------------------------------------------------- KDE Plasma


@pytest.fixture
def kde(desk, monkeypatch):
    desk.session("KDE")
    desk.install_engine()
    desk.panel = desk.install_ibus_wayland_panel()
    monkeypatch.setattr(desktop_setup, "KCONFIG_TOOLS", ())  # the file itself; the KConfig tools: below
    return desk


@pytest.mark.parametrize("before", [KWINRC, "[Compositing]\nBackend=OpenGL\n", None],
                         ids=["input method set", "no Wayland group", "no kwinrc"])
def test_kde_sets_ibus_wayland_keeping_the_rest_of_kwinrc_and_undo_restores_it(kde, before):
    if before is not None:
        kde.kwinrc.parent.mkdir(parents=True, exist_ok=True)
        kde.kwinrc.write_text(before)
    kde.set("org.freedesktop.ibus.general preload-engines", ["xkb:us::eng", "anthy"])
    kde.set("org.freedesktop.ibus.general engines-order", ["anthy", "xkb:us::eng"])

    code, out, err = kde.setup()
    assert (code, err) == (0, "")
    text = kde.kwinrc.read_text()
    if before == KWINRC:
        assert text == KWINRC.replace("/usr/share/applications/com.github.maliit.keyboard.desktop", str(kde.panel))
        maliit = "/usr/share/applications/com.github.maliit.keyboard.desktop"
        assert f"[Wayland] InputMethod: {maliit} -> {kde.panel}" in out
    else:
        assert text == (before + "\n" if before else "") + f"[Wayland]\nInputMethod={kde.panel}\n"
    assert kde.get("org.freedesktop.ibus.general preload-engines") == ["xkb:us::eng", "anthy", "ghosttype"]
    assert kde.get("org.freedesktop.ibus.general engines-order") == ["ghosttype", "anthy", "xkb:us::eng"]
    assert "log out and in once" in out

    assert kde.setup()[1].count("nothing to change") == 1
    code, out, err = kde.setup("--undo")
    assert (code, err) == (0, "")
    assert (kde.kwinrc.read_text() if kde.kwinrc.exists() else None) == before
    assert kde.get("org.freedesktop.ibus.general preload-engines") == ["xkb:us::eng", "anthy"]
    assert kde.get("org.freedesktop.ibus.general engines-order") == ["anthy", "xkb:us::eng"]


def test_kde_with_no_engines_yet_keeps_the_systems_layout_engine(kde):
    assert kde.setup()[0] == 0
    preload = kde.get("org.freedesktop.ibus.general preload-engines")
    assert preload[1:] == ["ghosttype"]
    assert preload[0].startswith("xkb:de:nodeadkeys:")  # IBus's own name (simple.xml; its language code varies)
    assert kde.get("org.freedesktop.ibus.general engines-order") == ["ghosttype"]
    assert kde.setup("--undo")[0] == 0
    assert not kde.is_set("org.freedesktop.ibus.general preload-engines")
    assert not kde.is_set("org.freedesktop.ibus.general engines-order")


def test_kde_through_kwriteconfig(kde, monkeypatch):
    """KConfig's own tools, where Plasma has them (kwriteconfig6; kwriteconfig5 on Plasma 5)."""
    tools = next(((r, w) for r, w in (("kreadconfig6", "kwriteconfig6"), ("kreadconfig5", "kwriteconfig5"))
                  if shutil.which(r) and shutil.which(w)), None)
    if tools is None:
        needs.missing("kwriteconfig6 or kwriteconfig5", "libkf6config-bin or libkf5config-bin")
    monkeypatch.setattr(desktop_setup, "KCONFIG_TOOLS", (tools,))
    kde.kwinrc.parent.mkdir(parents=True, exist_ok=True)
    kde.kwinrc.write_text(KWINRC)
    code, out, err = kde.setup()
    assert (code, err) == (0, "")
    read = subprocess.run([tools[0], "--file", "kwinrc", "--group", "Wayland", "--key", "InputMethod"],
                          capture_output=True, text=True).stdout.strip()
    assert read == str(kde.panel)
    text = kde.kwinrc.read_text()
    assert "[Compositing]\nBackend=OpenGL" in text and "VirtualKeyboardEnabled=true" in text and "Scale=1" in text
    assert kde.setup("--undo")[0] == 0
    read = subprocess.run([tools[0], "--file", "kwinrc", "--group", "Wayland", "--key", "InputMethod"],
                          capture_output=True, text=True).stdout.strip()
    assert read == "/usr/share/applications/com.github.maliit.keyboard.desktop"


# --------------------------------------------------------------------------- X11, and what setup refuses


@pytest.mark.parametrize("desktop", ["XFCE", "KDE"])
def test_an_x11_session_of_another_desktop_starts_ghosttype_at_login(desk, monkeypatch, desktop):
    """Plasma's X11 session too: KWin's input method is Wayland's alone."""
    desk.session(desktop, "x11")
    monkeypatch.setattr(autostart, "run_command", lambda argv, timeout=60.0: autostart.Result(127, "", "no"))
    monkeypatch.setattr(autostart, "find_program", lambda: ("/opt/ghosttype/bin/ghosttype",))
    entry = desk.config / "autostart" / "ghosttype.desktop"
    code, out, err = desk.setup()
    assert (code, err) == (0, "")
    assert f"changed start at login (ghosttype autostart): not installed -> xdg ({entry})" in out
    assert entry.exists()
    assert "nothing to change" in desk.setup()[1]
    assert desk.setup("--undo")[0] == 0
    assert not entry.exists() and not desk.record.exists()


@pytest.mark.parametrize("desktop, session_type", [("sway", "wayland"), ("Hyprland", "wayland"), ("XFCE", "tty")])
def test_an_unknown_desktop_changes_nothing(desk, desktop, session_type):
    desk.session(desktop, session_type)
    desk.install_engine()
    code, out, err = desk.setup()
    assert code == 2 and out == ""
    assert "not one setup knows" in err and "GNOME" in err and "KDE Plasma" in err and "Nothing was changed" in err
    assert desk.user_set_keys() == "" and not desk.record.exists()


@pytest.mark.parametrize("desktop", ["GNOME", "KDE"])
def test_without_the_engine_installed_nothing_changes(desk, desktop):
    desk.session(desktop)
    desk.install_ibus_wayland_panel()
    desk.set("org.gnome.desktop.input-sources sources", [US])
    before = desk.user_set_keys()
    code, out, err = desk.setup()
    assert code == 2 and out == ""
    assert "not installed" in err and "ghosttype ibus install" in err and ".deb" in err and "nothing was changed" in err
    assert desk.user_set_keys() == before and not desk.record.exists() and not desk.kwinrc.exists()


def test_kde_without_ibus_wayland_changes_nothing(desk, monkeypatch):
    desk.session("KDE")
    desk.install_engine()
    # data directories without the system's (where IBus 1.5.35 ships the panel); GSettings keeps its schemas
    monkeypatch.setenv("XDG_DATA_DIRS", str(desk.tmp / "share"))
    monkeypatch.setenv("GSETTINGS_SCHEMA_DIR", "/usr/share/glib-2.0/schemas")
    code, out, err = desk.setup()
    assert code == 2 and desktop_setup.IBUS_WAYLAND_DESKTOP in err and "nothing was changed" in err
    assert desk.user_set_keys() == "" and not desk.kwinrc.exists() and not desk.record.exists()


def test_under_sudo_it_changes_nothing(desk, monkeypatch):
    desk.session("GNOME")
    desk.install_engine()
    monkeypatch.setenv("SUDO_USER", "someone")
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    code, out, err = desk.setup()
    assert code == 2 and "without sudo" in err and desk.user_set_keys() == ""


def test_the_install_hint_and_doctor_point_at_setup():
    hint = component.next_step_hint()
    assert hint.index("ghosttype setup") < hint.index("gsettings set")  # setup first, the manual way after
    assert "Input Sources" in hint and "Virtual Keyboard" in hint


def test_the_record_is_in_the_users_state_dir(desk):
    from daemon.setup_changes import record_path

    assert record_path() == desk.record
    assert os.environ["XDG_STATE_HOME"] in str(record_path())


def test_kde_turns_on_a_virtual_keyboard_the_user_switched_off_and_undo_restores_it(kde):
    kde.kwinrc.parent.mkdir(parents=True, exist_ok=True)
    kde.kwinrc.write_text("[Wayland]\nVirtualKeyboardEnabled=false\n")
    code, out, err = kde.setup()
    assert (code, err) == (0, "")
    assert "VirtualKeyboardEnabled=true" in kde.kwinrc.read_text()
    assert kde.setup("--undo")[0] == 0
    assert kde.kwinrc.read_text() == "[Wayland]\nVirtualKeyboardEnabled=false\n"
