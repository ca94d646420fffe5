"""ghosttype's GNOME Shell extension in the user's settings (:mod:`daemon.frontends.ibus.inline.shell_extension`):
real ``gsettings`` on GNOME Shell's own schema, written by a real dconf service on a private session bus
into the test's folder, never the machine user's."""

from __future__ import annotations

import os
import subprocess

import pytest

from daemon.frontends.ibus.inline import shell_extension
from daemon.frontends.ibus.inline.shell_extension import UUID, enable_for_user, forget_for_user, user_state
from tests import needs


@pytest.fixture
def env(tmp_path):
    needs.tool("gsettings", "libglib2.0-bin")
    needs.tool("dbus-daemon", "dbus")
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "XDG_CONFIG_HOME": str(tmp_path / ".config"), "XDG_RUNTIME_DIR": str(run)}
    bus = subprocess.Popen(["dbus-daemon", "--session", "--nofork", "--print-address=1"], stdout=subprocess.PIPE,
                           env=env)
    try:
        env["DBUS_SESSION_BUS_ADDRESS"] = bus.stdout.readline().decode().strip()
        if subprocess.run(["gsettings", "list-keys", shell_extension.SHELL_SCHEMA], env=env,
                          capture_output=True).returncode != 0:
            needs.missing("GNOME Shell's settings schema (org.gnome.shell)", "gnome-shell")
        yield env
    finally:
        bus.terminate()
        bus.wait(timeout=10)


def lists(env) -> tuple[list[str], list[str]]:
    return (shell_extension._strv("enabled-extensions", env), shell_extension._strv("disabled-extensions", env))


def test_enabled_once_and_a_user_who_switched_it_off_is_left_alone(env):
    assert user_state(env) == "off"
    assert enable_for_user(env) == "enabled"
    assert enable_for_user(env) == "enabled"
    assert lists(env)[0].count(UUID) == 1
    # the Extensions app switches it off: off the enabled list, onto the disabled one
    shell_extension._set_strv("enabled-extensions", [], env)
    shell_extension._set_strv("disabled-extensions", [UUID], env)
    assert enable_for_user(env) == "disabled"
    assert lists(env) == ([], [UUID])
    assert forget_for_user(env)
    assert lists(env) == ([], [])


def test_install_and_uninstall_put_the_extension_in_the_users_folder_and_settings(env, tmp_path):
    dest = shell_extension.install_files(False, env)
    assert dest == tmp_path / ".local" / "share" / "gnome-shell" / "extensions" / UUID
    assert dest in shell_extension.installed(env)
    assert enable_for_user(env) == "enabled"
    assert shell_extension.remove_files(False, env) == [dest] and not dest.exists()
    forget_for_user(env)
    assert UUID not in lists(env)[0]


def test_a_system_uninstall_removes_the_extensions_folder_it_made_and_keeps_one_in_use(tmp_path, monkeypatch):
    """The desktop tier found /usr/share/gnome-shell/extensions left behind: GNOME Shell's package leaves it out,
    install made it, and uninstall must take it back; a folder that holds other extensions stays."""
    system = tmp_path / "usr" / "share" / "gnome-shell" / "extensions"
    monkeypatch.setattr(shell_extension, "SYSTEM_EXTENSIONS", system)
    dest = shell_extension.install_files(True)
    assert dest.parent == system and dest.is_dir()
    assert shell_extension.remove_files(True) == [dest]
    assert not system.exists() and system.parent.exists()
    shell_extension.install_files(True)
    (system / "another@example.org").mkdir()
    shell_extension.remove_files(True)
    assert (system / "another@example.org").is_dir()
