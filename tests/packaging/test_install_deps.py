"""``packaging/linux/install-deps.sh`` where apt-get is not: it installs nothing, names the packages for the
system's own package manager, and exits non-zero, so the README's ``install-deps.sh && ...`` chain stops
there (it used to print Debian's names and exit 0, and the chain failed later in a compiler error).

The script runs with a PATH holding only a stand-in named like the package manager (it is only looked up
with ``command -v``, never run), so the branch for each system is taken on this Debian machine."""

from __future__ import annotations

import pathlib
import subprocess

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "packaging" / "linux" / "install-deps.sh"


def run(tmp_path: pathlib.Path, manager: str | None, *args: str) -> subprocess.CompletedProcess:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if manager:
        stand_in = bin_dir / manager
        stand_in.write_text("#!/bin/sh\necho 'must not be run' >&2\nexit 99\n")
        stand_in.chmod(0o755)
    return subprocess.run(["/bin/bash", str(SCRIPT), *args], env={"PATH": str(bin_dir)}, capture_output=True,
                          text=True, timeout=30)


@pytest.mark.parametrize("manager, command, names", [
    ("dnf", "sudo dnf install", ["xcb-util-cursor", "python3-devel", "gcc-c++", "ibus"]),
    ("pacman", "sudo pacman -S --needed", ["xcb-util-cursor", "base-devel", "ibus"]),
    ("zypper", "sudo zypper install", ["libxcb-cursor0", "python3-devel", "gcc-c++", "ibus"]),
])
def test_another_distribution_gets_its_own_package_names_and_a_failing_exit(tmp_path, manager, command, names):
    r = run(tmp_path, manager)
    assert r.returncode == 3, r.stderr
    assert "must not be run" not in r.stderr
    line = next(x for x in r.stderr.splitlines() if x.strip().startswith(command))
    for name in names:
        assert name in line.split(), (name, line)
    assert "libxcb-cursor0 libxcb-icccm4" not in r.stderr or manager == "zypper"  # not Debian's list


@pytest.mark.parametrize("manager, names", [("dnf", ["kwin-devel", "make", "cmake"]),
                                            ("pacman", ["kwin", "make", "cmake"]),
                                            ("zypper", ["kwin6-devel", "make", "cmake"])])
def test_kde_build_dependencies_include_make(tmp_path, manager, names):
    r = run(tmp_path, manager, "--kde")
    assert r.returncode == 3
    for name in names:
        assert f" {name} " in r.stderr + " ", (name, r.stderr)


def test_no_known_package_manager_names_debians_packages_and_fails(tmp_path):
    r = run(tmp_path, None)
    assert r.returncode == 3
    assert "no apt-get, dnf, pacman or zypper" in r.stderr and "libxcb-cursor0" in r.stderr


def test_the_test_tools_are_for_debian_only(tmp_path):
    r = run(tmp_path, "dnf", "--test")
    assert r.returncode == 3 and "Debian or Ubuntu only" in r.stderr


def test_debians_kde_list_has_make():
    text = SCRIPT.read_text()
    kde = text[text.index("kde=("):].split(")", 1)[0]
    assert " make " in kde and "cmake" in kde
