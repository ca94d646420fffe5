"""The settings window's process (:mod:`daemon.launch`) runs this
installation's code, never a ``daemon/`` package planted in the directory
ghosttype was started from: the real command, started the real way."""

from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

from daemon import __version__, launch


@pytest.fixture
def planted(tmp_path, monkeypatch) -> pathlib.Path:
    """A working directory holding a ``daemon`` package that leaves a mark when it runs."""
    work = tmp_path / "work"
    (work / "daemon").mkdir(parents=True)
    mark = tmp_path / "planted-code-ran"
    code = f"open({str(mark)!r}, 'w').close()\n"
    (work / "daemon" / "__init__.py").write_text(code)
    (work / "daemon" / "__main__.py").write_text(code)
    monkeypatch.chdir(work)
    monkeypatch.setattr(launch, "_window", None)
    # The real window gives up at once: no display, no Qt platform.
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "PYTHONPATH"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("QT_QPA_PLATFORM", "no-such-platform")
    return mark


def test_settings_opened_from_a_directory_with_a_planted_package_runs_ghosttypes_own(planted, tmp_path):
    window = launch.open_settings(tmp_path / "config.toml")
    assert window is not None
    window.wait(timeout=120)
    assert not planted.exists(), "the working directory's daemon package ran"


def test_without_an_installed_command_the_interpreter_runs_isolated_from_the_working_directory(planted, tmp_path):
    command = launch.settings_command(pathlib.Path("config.toml"), script=tmp_path / "no-such-command")
    assert command[1] == "-I" and command[-1] == str(pathlib.Path.cwd() / "config.toml")
    # The same command asked for ghosttype's version, from the planted directory: this package answers.
    out = subprocess.run([*command[:-3], "--version"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"ghosttype {__version__}"
    assert not planted.exists(), "the working directory's daemon package ran"
