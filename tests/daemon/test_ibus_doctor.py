"""``ghosttype doctor`` and ``ghosttype ibus status`` report the IBus
situation with fix hints; the component file carries this installation's
absolute command."""

from __future__ import annotations

import os
import pathlib
import xml.etree.ElementTree as ET

import pytest

from daemon.doctor import check_display
from daemon.frontends.ibus import component
from daemon.frontends.ibus.inline import shell_extension


@pytest.fixture(autouse=True)
def _extensions_dir(tmp_path: pathlib.Path, monkeypatch):
    """Installs in these tests write GNOME Shell's extension into the test's folder, never the machine's."""
    monkeypatch.setattr(shell_extension, "SYSTEM_EXTENSIONS", tmp_path / "extensions")


def test_component_xml_is_valid_and_names_the_engine():
    root = ET.fromstring(component.component_xml("/opt/venv/bin/ghosttype ibus run --ibus"))
    assert root.findtext("name") == "org.freedesktop.IBus.GhostType"
    assert root.findtext("exec") == "/opt/venv/bin/ghosttype ibus run --ibus"
    assert root.find("engines/engine").findtext("name") == "ghosttype"


def test_engine_command_is_absolute():
    argv0 = component.engine_command().split()[0].strip("'")
    assert os.path.isabs(argv0) and os.path.exists(argv0)
    assert component.engine_command().endswith("ibus run --ibus")


def test_status_without_ibus_daemon_or_install_gives_fix_hints(tmp_path: pathlib.Path, monkeypatch):
    monkeypatch.setattr(component, "SYSTEM_COMPONENT_DIR", tmp_path / "system")
    env = {"HOME": str(tmp_path), "WAYLAND_DISPLAY": "wayland-0", "XDG_SESSION_TYPE": "wayland"}
    results = {r.name: r for r in component.ibus_checks(env)}
    if "IBus" in results:  # ibus not installed on this machine at all
        assert results["IBus"].ok is False and "apt install ibus" in results["IBus"].hint
        return
    assert results["IBus daemon"].ok is None and "ibus-daemon" in results["IBus daemon"].hint
    # On Wayland the engine is the only way in: its absence is a failure, with the command to fix it.
    assert results["IBus engine"].ok is False and "ghosttype ibus install" in results["IBus engine"].hint


def test_user_install_is_found_and_a_stale_command_is_flagged(tmp_path: pathlib.Path, monkeypatch):
    monkeypatch.setattr(component, "SYSTEM_COMPONENT_DIR", tmp_path / "system")
    env = {"HOME": str(tmp_path), "DISPLAY": ":99"}
    target = component.user_component_dir(env) / component.COMPONENT_FILE
    target.parent.mkdir(parents=True)
    target.write_text(component.component_xml(component.engine_command()))
    results = {r.name: r for r in component.ibus_checks(env)}
    if "IBus" in results:
        return
    assert results["IBus engine"].ok is True
    target.write_text(component.component_xml("/nonexistent/ghosttype ibus run --ibus"))
    results = {r.name: r for r in component.ibus_checks(env)}
    assert results["IBus engine"].ok is False and "install" in results["IBus engine"].hint


def test_doctor_points_wayland_users_to_the_ibus_engine():
    r = check_display({"WAYLAND_DISPLAY": "wayland-0"})
    assert r.ok is False and "ghosttype ibus install" in r.hint
    r = check_display({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"})
    assert r.ok is None and "ghosttype ibus install" in r.hint


def test_component_path_keeps_the_system_directory_first(tmp_path: pathlib.Path):
    value = component.component_path_value({"HOME": str(tmp_path)})
    first, second = value.split(":")
    assert first == "/usr/share/ibus/component" and second.startswith(str(tmp_path))


def test_system_install_writes_the_component_and_refreshes_the_system_cache(tmp_path: pathlib.Path, monkeypatch,
                                                                            capsys):
    """(test_ibus_system_install.py runs the real commands, and the check of
    who can change this installation, in a private mount namespace.)"""
    calls = []
    monkeypatch.setattr(component, "SYSTEM_COMPONENT_DIR", tmp_path / "component")
    monkeypatch.setattr(component, "SYSTEM_REGISTRY_CACHE", tmp_path / "registry")
    (tmp_path / "registry").write_bytes(b"cache")  # the system keeps one: it is kept current
    monkeypatch.setattr(component, "system_install_problem", lambda: None)
    monkeypatch.setattr(component.os, "geteuid", lambda: 0)
    monkeypatch.setattr(component.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(component, "_run", lambda argv, env=None: calls.append(argv) or True)
    assert component.install(system=True, env={"HOME": str(tmp_path)}) == 0
    target = tmp_path / "component" / component.COMPONENT_FILE
    root = ET.fromstring(target.read_text())
    assert root.findtext("exec") == component.engine_command()
    assert ["ibus", "write-cache", "--system"] in calls
    assert "Input Sources" in capsys.readouterr().out  # the one step left
    extension = tmp_path / "extensions" / shell_extension.UUID  # GNOME Shell's, from the package's files
    for name in shell_extension.FILES:
        assert (extension / name).read_bytes() == shell_extension.SOURCES[name].read_bytes()
    assert component.uninstall(system=True, env={"HOME": str(tmp_path)}) == 0
    assert not target.exists() and not extension.exists()


def test_system_install_needs_root(monkeypatch, capsys):
    monkeypatch.setattr(component.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(component.shutil, "which", lambda name: f"/usr/bin/{name}")
    assert component.install(system=True) == 2
    assert "sudo" in capsys.readouterr().err


def test_user_install_refuses_where_a_system_registry_cache_would_hide_it(tmp_path: pathlib.Path, monkeypatch,
                                                                          capsys):
    cache = tmp_path / "var-cache-ibus" / "registry"
    cache.parent.mkdir()
    cache.write_bytes(b"cache")
    monkeypatch.setattr(component, "SYSTEM_REGISTRY_CACHE", cache)
    monkeypatch.setattr(component.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(component, "_run", lambda argv, env=None: pytest.fail(f"ran {argv}"))
    env = {"HOME": str(tmp_path)}
    assert component.install(system=False, env=env) == 2
    assert "sudo ghosttype ibus install --system" in capsys.readouterr().err
    assert not (component.user_component_dir(env) / component.COMPONENT_FILE).exists()
    assert not component.user_env_file(env).exists()


def test_status_says_when_the_running_ibus_daemon_does_not_list_an_installed_engine(tmp_path: pathlib.Path,
                                                                                    monkeypatch):
    monkeypatch.setattr(component, "SYSTEM_COMPONENT_DIR", tmp_path / "system")
    monkeypatch.setattr(component, "SYSTEM_REGISTRY_CACHE", tmp_path / "registry")
    (tmp_path / "registry").write_bytes(b"cache")
    monkeypatch.setattr(component.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(component, "ibus_address", lambda env: "unix:path=/tmp/ibus")
    monkeypatch.setattr(component, "_current_engine", lambda env: "xkb:us::eng")
    monkeypatch.setattr(component, "_gnome_sources", lambda: None)
    env = {"HOME": str(tmp_path), "DISPLAY": ":99"}
    target = component.user_component_dir(env) / component.COMPONENT_FILE
    target.parent.mkdir(parents=True)
    target.write_text(component.component_xml(component.engine_command()))
    monkeypatch.setattr(component, "_listed_engines", lambda env: {"xkb:us::eng"})
    result = {r.name: r for r in component.ibus_checks(env)}["IBus engine"]
    assert result.ok is False and "does not list it" in result.detail
    assert "--system" in result.hint  # the system cache hides the user's component
    monkeypatch.setattr(component, "_listed_engines", lambda env: {"xkb:us::eng", "ghosttype"})
    result = {r.name: r for r in component.ibus_checks(env)}["IBus engine"]
    assert result.ok is True and "listed by ibus-daemon" in result.detail


def test_doctor_on_kde_names_the_input_method_setting(tmp_path: pathlib.Path):
    env = {"HOME": str(tmp_path), "XDG_CURRENT_DESKTOP": "KDE"}
    missing = component._kde_input_method_check(env)
    assert missing.ok is False and "Virtual Keyboard" in missing.hint and "not set" in missing.detail
    (tmp_path / ".config").mkdir()
    (tmp_path / ".config" / "kwinrc").write_text(
        "[Wayland]\nInputMethod[$e]=/usr/share/applications/com.github.maliit.keyboard.desktop\n")
    assert component._kde_input_method_check(env).ok is False
    (tmp_path / ".config" / "kwinrc").write_text(
        "[Wayland]\nInputMethod=/usr/share/applications/org.freedesktop.IBus.Panel.Wayland.Gtk3.desktop\n"
        "VirtualKeyboardEnabled=true\n")
    assert component._kde_input_method_check(env).ok is True
    (tmp_path / ".config" / "kwinrc").write_text(
        "[Wayland]\nInputMethod[$e]=/usr/share/applications/org.freedesktop.IBus.Panel.Wayland.Gtk3.desktop\n")
    assert component._kde_input_method_check(env).ok is True
    assert component._kde_input_method_check({"HOME": str(tmp_path), "XDG_CURRENT_DESKTOP": "GNOME"}) is None


def test_the_engine_names_the_users_keyboard_layout(tmp_path: pathlib.Path, monkeypatch):
    """GNOME applies an IBus source's layout and nothing for "default": an
    engine selected in place of xkb:de must keep the German layout."""
    keyboard = tmp_path / "keyboard"
    keyboard.write_text('XKBMODEL="pc105"\nXKBLAYOUT="de,us"\nXKBVARIANT="nodeadkeys,"\nXKBOPTIONS=""\n')
    monkeypatch.setattr(component, "_gnome_sources", lambda: [("ibus", "anthy"), ("xkb", "fr+azerty"), ("xkb", "us")])
    assert component.keyboard_layout(False, keyboard) == ("fr", "azerty")  # the user's own first layout
    assert component.keyboard_layout(True, keyboard) == ("de", "nodeadkeys")  # --system: the system's
    monkeypatch.setattr(component, "_gnome_sources", lambda: None)
    assert component.keyboard_layout(False, keyboard) == ("de", "nodeadkeys")
    assert component.keyboard_layout(False, tmp_path / "missing") == ("default", "")
    root = ET.fromstring(component.component_xml("/x/ghosttype ibus run --ibus", "de", "nodeadkeys"))
    engine = root.find("engines/engine")
    assert engine.findtext("layout") == "de" and engine.findtext("layout_variant") == "nodeadkeys"


def test_install_writes_the_detected_or_given_layout(tmp_path: pathlib.Path, monkeypatch):
    monkeypatch.setattr(component, "SYSTEM_COMPONENT_DIR", tmp_path / "component")
    monkeypatch.setattr(component, "SYSTEM_KEYBOARD_FILE", tmp_path / "keyboard")
    (tmp_path / "keyboard").write_text('XKBLAYOUT="de"\n')
    monkeypatch.setattr(component.os, "geteuid", lambda: 0)
    monkeypatch.setattr(component.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(component, "_run", lambda argv, env=None: True)
    target = tmp_path / "component" / component.COMPONENT_FILE
    assert component.install(system=True, env={"HOME": str(tmp_path)}) == 0
    assert ET.fromstring(target.read_text()).findtext("engines/engine/layout") == "de"
    assert component.install(system=True, env={"HOME": str(tmp_path)}, layout="us+intl") == 0
    engine = ET.fromstring(target.read_text()).find("engines/engine")
    assert (engine.findtext("layout"), engine.findtext("layout_variant")) == ("us", "intl")
