"""No core dumps from a process that holds typed text: the limit and the
dumpable flag every ghosttype command sets, and a real crash that leaves no
core where the same crash without them leaves one."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

CRASH = """
import ctypes, resource, sys
hard = resource.getrlimit(resource.RLIMIT_CORE)[1]
resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
if sys.argv[1] == "hardened":
    from daemon.hardening import forbid_core_dumps
    forbid_core_dumps()
secret = "Zebrafinch quantumleap " * 1000  # what a core would hold
ctypes.string_at(0)  # SIGSEGV
"""


def test_every_command_turns_core_dumps_off() -> None:
    code = ("import resource; from daemon.__main__ import main; from daemon.hardening import dumpable; "
            "main(['config', '--path']); print(resource.getrlimit(resource.RLIMIT_CORE)[0], dumpable())")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == ("0 False" if sys.platform.startswith("linux") else "0 True")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's core_pattern")
def test_a_crash_leaves_no_core(tmp_path: pathlib.Path) -> None:
    pattern = pathlib.Path("/proc/sys/kernel/core_pattern").read_text().strip()
    if pattern.startswith("|") or "/" in pattern:
        pytest.skip(f"cores go to {pattern!r}, not to the crashing process's folder")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cores = {}
    for mode in ("plain", "hardened"):
        folder = tmp_path / mode
        folder.mkdir()
        run = subprocess.run([sys.executable, "-c", CRASH, mode], cwd=folder, env=env, capture_output=True,
                             timeout=60)
        assert run.returncode == -11, run.stderr  # SIGSEGV
        cores[mode] = [p.name for p in folder.iterdir() if p.name.startswith(pattern.split("%")[0] or "core")]
    if not cores["plain"]:
        pytest.skip("this kernel writes no core even without ghosttype's settings (container limits)")
    assert cores["hardened"] == []
