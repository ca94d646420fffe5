"""``ghosttype doctor`` and ``ghosttype ibus status`` report the IBus
situation with fix hints; the component file carries this installation's
absolute command."""

from __future__ import annotations

import os
import pathlib
import xml.etree.ElementTree as ET

from daemon.doctor import check_display
from daemon.frontends.ibus import component


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
    calls = []
    monkeypatch.setattr(component, "SYSTEM_COMPONENT_DIR", tmp_path / "component")
    monkeypatch.setattr(component.os, "geteuid", lambda: 0)
    monkeypatch.setattr(component.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(component, "_run", lambda argv, env=None: calls.append(argv) or True)
    assert component.install(system=True, env={"HOME": str(tmp_path)}) == 0
    target = tmp_path / "component" / component.COMPONENT_FILE
    root = ET.fromstring(target.read_text())
    assert root.findtext("exec") == component.engine_command()
    assert ["ibus", "write-cache", "--system"] in calls
    assert "Input Sources" in capsys.readouterr().out  # the one step left
    assert component.uninstall(system=True, env={"HOME": str(tmp_path)}) == 0
    assert not target.exists()


def test_system_install_needs_root(monkeypatch, capsys):
    monkeypatch.setattr(component.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(component.shutil, "which", lambda name: f"/usr/bin/{name}")
    assert component.install(system=True) == 2
    assert "sudo" in capsys.readouterr().err
