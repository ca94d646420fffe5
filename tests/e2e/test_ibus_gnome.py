"""The IBus engine on the real GNOME path: a headless GNOME Shell on Wayland
starts ibus-daemon, which starts the engine installed with ``ghosttype ibus
install``; a native Wayland GTK app (text-input-v3) gets the suggestion and
Tab commits it.  The session runs as an unprivileged user in a private mount
namespace (see ``gnome_session.py``)."""

from __future__ import annotations

import json
import os
import pathlib
import pwd
import shutil
import subprocess
import sys
import tempfile

import pytest

from tests.e2e.gnome_session import TYPED
from tests.e2e.ibus_desktop import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.llm, pytest.mark.slow]

USER = "ghosttype-e2e"


def _prerequisites() -> str:
    for tool in ("gnome-shell", "ibus-daemon", "dbus-run-session", "unshare", "runuser", "gsettings"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (packaging/linux/install-deps.sh --test installs it)"
    if os.geteuid() != 0:
        return "needs root to run GNOME Shell as an unprivileged user in a private mount namespace"
    return ""


def _user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "-M", "-d", "/nonexistent", "-s", "/bin/sh", USER], check=True)
        return pwd.getpwnam(USER)


def run_session(display_mode: str) -> dict:
    reason = _prerequisites()
    if reason:
        pytest.skip(reason)
    user = _user()
    probe = subprocess.run([shutil.which("runuser") or "runuser", "-u", USER, "--", sys.executable, "-c", "import daemon"], cwd="/",
                           env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}, capture_output=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"this Python ({sys.executable}) or the project is not readable by an unprivileged user")
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="ghosttype-gnome-"))
    try:
        os.chmod(tmp, 0o755)
        home, runtime, out = tmp / "home", tmp / "run", tmp / "out"
        for d in (home, runtime, out):
            d.mkdir(mode=0o700)
            os.chown(d, user.pw_uid, user.pw_gid)
        inner = [
            "runuser", "-u", USER, "--", "env", "-i", "PATH=/usr/bin:/bin", f"HOME={home}",
            f"XDG_RUNTIME_DIR={runtime}", f"PYTHONPATH={ROOT}", "LANG=C.UTF-8", "NO_AT_BRIDGE=1",
            "dbus-run-session", "--", sys.executable, "-m", "tests.e2e.gnome_session", str(out), display_mode,
        ]
        # GNOME Shell 43 uses logind when /run/systemd/seats exists and then dies
        # without the host's system bus: hide /run/systemd in a private mount namespace.
        cmd = inner
        if pathlib.Path("/run/systemd/seats").exists():
            hide = ["unshare", "-m", "--propagation", "private", "--", "sh", "-c", "mount -t tmpfs tmpfs /run/systemd"]
            if subprocess.run(hide, capture_output=True, timeout=30).returncode != 0:
                pytest.skip("cannot hide /run/systemd in a private mount namespace (needs CAP_SYS_ADMIN)")
            cmd = [*hide[:-1], 'mount -t tmpfs tmpfs /run/systemd && exec "$@"', "sh", *inner]
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=400)
        try:
            result = json.loads((out / "result.json").read_text())
        except (OSError, ValueError):
            result = {}
        logs = ""
        for name in ("gnome-shell.log", "app.stderr"):
            if (out / name).exists():
                logs += f"--- {name}\n" + (out / name).read_text(errors="replace")[-2000:]
        result["_debug"] = f"rc={proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}\n{logs}"
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_gnome_wayland_preedit_and_tab(request):
    result = run_session("preedit")
    assert result.get("ok"), f"{result.get('error')} after {result.get('steps')}\n{result['_debug']}"
    assert result["started_by_ibus"]
    ghost = result["ghost"]
    assert ghost and result["text"] == TYPED + ghost  # committed exactly once
    assert result["focus"] == "first"


def test_gnome_wayland_auto_display_uses_the_popup_and_tab_commits(request):
    result = run_session("auto")
    assert result.get("ok"), f"{result.get('error')} after {result.get('steps')}\n{result['_debug']}"
    assert result["preedits"] == 0  # shown in GNOME's popup, not as (colourless) preedit
    assert result["text"].startswith(TYPED) and len(result["text"]) > len(TYPED)
