"""The startup files in packaging/ are the templates of ``daemon.autostart``
rendered with placeholder paths, and the freedesktop / systemd validators
accept both them and what ``ghosttype autostart enable`` writes."""

from __future__ import annotations

import os
import pathlib
import plistlib
import shutil
import stat
import subprocess

import pytest

from daemon import autostart
from tests import needs

ROOT = pathlib.Path(__file__).resolve().parents[2]

# method, file in packaging/, the placeholder command the file uses, in the
# file's own syntax (%h is systemd's home-directory specifier: pipx's bin dir).
PACKAGED = [
    ("systemd", "packaging/linux/ghosttype.service", "%h/.local/bin/ghosttype"),
    ("xdg", "packaging/linux/ghosttype.desktop", "ghosttype"),
    ("launchd", "packaging/macos/io.github.ghosttype.plist", "    <string>/usr/local/bin/ghosttype</string>"),
]

# Paths with characters each format must quote or escape (systemd refuses
# ' " and \ in an executable path outright; enable says so).
AWKWARD = "dir with space/100% $HOME's \"q\"\\x;`y`"
AWKWARD_SYSTEMD = "dir with space/100% $HOME;x"


@pytest.mark.parametrize("method,relpath,placeholder", PACKAGED)
def test_packaging_file_is_the_rendered_template(method, relpath, placeholder):
    text = (ROOT / relpath).read_text(encoding="utf-8")
    assert text == autostart.fill(method, placeholder), (
        f"{relpath} drifted from daemon/autostart.py; regenerate it from the template")


def test_unit_restarts_on_failure_after_the_graphical_session():
    unit = (ROOT / "packaging/linux/ghosttype.service").read_text()
    for line in ("After=graphical-session.target", "PartOf=graphical-session.target",
                 "Restart=on-failure", "WantedBy=graphical-session.target"):
        assert line in unit.splitlines()


def test_packaged_plist_is_well_formed():
    data = plistlib.loads((ROOT / "packaging/macos/io.github.ghosttype.plist").read_bytes())
    assert data["Label"] == autostart.LAUNCHD_LABEL
    assert data["ProgramArguments"] == ["/usr/local/bin/ghosttype", "run"]


def _tool(name: str, package: str) -> str:
    return needs.tool(name, package)


# -- desktop-file-validate --------------------------------------------------------


def _desktop_validate(path: pathlib.Path) -> None:
    tool = _tool("desktop-file-validate", "desktop-file-utils")
    out = subprocess.run([tool, str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "", out.stdout + out.stderr


def test_desktop_file_validate_packaged_entry():
    _desktop_validate(ROOT / "packaging/linux/ghosttype.desktop")


def test_desktop_file_validate_rendered_entry_with_an_awkward_path(tmp_path):
    path = tmp_path / "ghosttype.desktop"
    path.write_text(autostart.render("xdg", [f"/home/{AWKWARD}/bin/ghosttype"]))
    _desktop_validate(path)


# -- systemd-analyze verify ------------------------------------------------------------
# verify needs no running systemd, but a user manager instance needs
# $XDG_RUNTIME_DIR ("Failed to initialize manager: No such device or address"
# without it) and ExecStart= must name an existing executable.  --man=no skips
# checking man: references.  Warnings (unknown keys, bad values) go to stderr
# with exit status 0, so stderr must be empty too.


def _executable(path: pathlib.Path) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _systemd_verify(unit_text: str, tmp_path: pathlib.Path, home: pathlib.Path) -> None:
    tool = _tool("systemd-analyze", "systemd")
    unit_dir = tmp_path / "units"
    unit_dir.mkdir()
    unit = unit_dir / autostart.UNIT_NAME
    unit.write_text(unit_text)
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env = {**os.environ, "HOME": str(home), "XDG_RUNTIME_DIR": str(runtime)}
    out = subprocess.run([tool, "--user", "--man=no", "verify", str(unit)], capture_output=True,
                         text=True, env=env, timeout=120)
    assert out.returncode == 0 and out.stderr.strip() == "", out.stdout + out.stderr


def test_systemd_verify_packaged_unit(tmp_path):
    home = tmp_path / "home"
    _executable(home / ".local/bin/ghosttype")  # what %h/.local/bin/ghosttype names
    _systemd_verify((ROOT / "packaging/linux/ghosttype.service").read_text(), tmp_path, home)


def test_systemd_verify_rendered_unit_with_an_awkward_path(tmp_path):
    exe = _executable(tmp_path / AWKWARD_SYSTEMD / "ghosttype")
    _systemd_verify(autostart.render("systemd", [str(exe)]), tmp_path, tmp_path)


def test_systemd_verify_catches_a_missing_executable(tmp_path):
    """The check above is not vacuous: verify fails on an ExecStart that does not exist."""
    tool = _tool("systemd-analyze", "systemd")
    unit = tmp_path / autostart.UNIT_NAME
    unit.write_text(autostart.render("systemd", [str(tmp_path / "missing/ghosttype")]))
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    out = subprocess.run([tool, "--user", "--man=no", "verify", str(unit)], capture_output=True, text=True,
                         env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)}, timeout=120)
    assert out.returncode != 0 and "is not executable" in out.stderr
