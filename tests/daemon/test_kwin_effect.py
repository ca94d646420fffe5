"""ghosttype's KWin effect on disk (:mod:`daemon.frontends.ibus.inline.kwin_effect`): where a per-user install
puts it and how KWin finds it, what ``doctor`` says about an effect built for another KWin, and what a
machine without the build tools is told.  Building it against KWin's headers, installing it and KWin
loading it run in the desktop tier (KWin 6.7 in Debian sid: tests/desktop, the ``kde`` session)."""

from __future__ import annotations

import os
import pathlib
import subprocess

import pytest

from daemon.frontends.ibus.inline import kwin_effect


@pytest.fixture
def home(tmp_path, monkeypatch):
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    monkeypatch.setattr(kwin_effect, "system_plugin_files", lambda: [])
    return env


def plant(env, kwin="6.7.4") -> pathlib.Path:
    """A plugin file as ``install`` leaves it: KWin's plugin subdirectory, the version marker inside."""
    f = kwin_effect.user_plugin_file(env)
    f.parent.mkdir(parents=True)
    f.write_bytes(b"\x7fELF..." + f"ghosttype-kwin-effect built for KWin {kwin}".encode() + b"\0...")
    return f


def test_the_sources_ship_with_the_package_and_name_one_plugin():
    names = {p.name for p in kwin_effect.SOURCE_DIR.iterdir()}
    assert {"CMakeLists.txt", "ghosteffect.cpp", "ghosteffect.h", "main.cpp", "metadata.json"} <= names
    cmake = (kwin_effect.SOURCE_DIR / "CMakeLists.txt").read_text()
    assert "add_library(ghosttype MODULE" in cmake and "plugin-dir.txt" in cmake
    assert '"Id": "ghosttype"' in (kwin_effect.SOURCE_DIR / "metadata.json").read_text()
    # the string doctor reads is the one the effect carries
    assert kwin_effect.KWIN_MARKER.pattern.decode().split(" (")[0] in (kwin_effect.SOURCE_DIR / "ghosteffect.cpp").read_text()


def test_a_per_user_install_is_found_where_kwin_is_told_to_look(home):
    f = plant(home)
    assert kwin_effect.installed(home) == [f]
    assert kwin_effect.built_for(f) == "6.7.4"
    kwin_effect._write_env_script(home)
    script = kwin_effect.env_script(home)
    assert script == pathlib.Path(home["XDG_CONFIG_HOME"]) / "plasma-workspace" / "env" / "ghosttype-kwin-effect.sh"
    # what Plasma's startup does with it: source it, and KWin's QT_PLUGIN_PATH holds the plugin's root first
    out = subprocess.run(["sh", "-c", f'QT_PLUGIN_PATH=/elsewhere; . "{script}"; echo "$QT_PLUGIN_PATH"'],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert out == f"{kwin_effect.user_plugin_root(home)}:/elsewhere"
    root = pathlib.Path(out.split(":")[0])
    assert (root / "kwin" / "effects" / "plugins" / "ghosttype.so") == f


def test_uninstall_removes_the_plugin_and_the_plugin_path(home, monkeypatch, capsys):
    monkeypatch.setattr(kwin_effect, "unload_now", lambda: None)
    f = plant(home)
    kwin_effect._write_env_script(home)
    assert kwin_effect.uninstall(system=False, env=home) == 0
    assert not f.exists() and not kwin_effect.env_script(home).exists()
    assert kwin_effect.installed(home) == []
    # the folders install made for it go too (the tier found kwin/effects/plugins left behind)
    root = kwin_effect.user_plugin_root(home)
    assert not (root / "kwin").exists() and root.exists()


def test_uninstall_leaves_a_plugin_folder_that_holds_something_else(home, monkeypatch):
    monkeypatch.setattr(kwin_effect, "unload_now", lambda: None)
    f = plant(home)
    other = f.parent / "another-effect.so"
    other.write_bytes(b"\x7fELF")
    assert kwin_effect.uninstall(system=False, env=home) == 0
    assert not f.exists() and other.exists()


def test_doctor_says_when_the_effect_was_built_for_another_kwin(home, monkeypatch):
    plant(home, kwin="6.6.5")
    monkeypatch.setattr(kwin_effect, "kwin_version", lambda: "6.7.4")
    (result,) = kwin_effect.checks(home)
    assert result.ok is False
    assert "built for KWin 6.6.5" in result.detail and "KWin is 6.7.4" in result.detail
    assert "ghosttype kde install" in result.hint


def test_doctor_says_whether_kwin_loaded_it(home, monkeypatch):
    plant(home)
    monkeypatch.setattr(kwin_effect, "kwin_version", lambda: "6.7.4")
    for answer, ok, words in ((True, True, "loaded"), (False, None, "has not loaded it"), (None, True, "not running")):
        monkeypatch.setattr(kwin_effect, "loaded", lambda a=answer: a)
        (result,) = kwin_effect.checks(home)
        assert result.ok is ok and words in result.detail, result


def test_not_installed_is_a_hint_not_a_failure(home):
    (result,) = kwin_effect.checks(home)
    assert result.ok is None and "popup" in result.detail and "ghosttype kde install" in result.hint


def test_without_cmake_or_a_compiler_the_user_is_told_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setattr(kwin_effect.shutil, "which", lambda name: None)
    with pytest.raises(kwin_effect.BuildError, match="install-deps.sh --kde") as e:
        kwin_effect.build(tmp_path)
    assert "kwin-dev" in str(e.value)


@pytest.mark.skipif(not (os.path.exists("/usr/bin/cmake") and os.path.exists("/usr/bin/c++")),
                    reason="needs cmake and a C++ compiler")
def test_without_kwins_development_files_configure_fails_with_the_packages_to_install(tmp_path):
    """On a machine with CMake but no KWin headers (this suite's Debian 12: KWin 5), CMake stops at
    find_package and the message names what to install."""
    if subprocess.run(["sh", "-c", "ls /usr/lib/*/cmake/KWin/KWinConfig.cmake"], capture_output=True).returncode == 0:
        pytest.skip("KWin's development files are installed here")
    with pytest.raises(kwin_effect.BuildError, match="configure failed") as e:
        kwin_effect.build(tmp_path)
    assert "install-deps.sh --kde" in str(e.value)
