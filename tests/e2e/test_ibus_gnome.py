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
import signal
import subprocess
import sys
import tempfile
from typing import Iterator

import pytest

from tests import needs
from tests.e2e.gnome_session import TYPED
from tests.e2e.ibus_desktop import ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.llm, pytest.mark.slow]

USER = "ghosttype-e2e"


#: The whole GNOME session (start, type, Tab, stop) must end within this many
#: seconds; it stays below the test's pytest timeout so that a hang is reported
#: with the session's logs and its processes are stopped here, not left behind.
SESSION_BUDGET_S = 330
TEST_TIMEOUT_S = 420


def _prerequisites() -> None:
    if os.geteuid() != 0:
        # .ci/run runs as root; a developer's unprivileged run cannot start this session.
        pytest.skip("needs root to run GNOME Shell as an unprivileged user in a private mount namespace")
    for tool in ("gnome-shell", "ibus-daemon", "dbus-run-session", "unshare", "runuser", "gsettings",
                 "useradd", "userdel"):
        needs.tool(tool)


@pytest.fixture(scope="module")
def session_user() -> Iterator[pwd.struct_passwd]:
    """The unprivileged system user the session runs as: created for this
    module (or reused if an interrupted run left it) and removed afterwards."""
    _prerequisites()
    try:
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "-M", "-d", "/nonexistent", "-s", "/bin/sh", USER], check=True)
    user = pwd.getpwnam(USER)
    try:
        yield user
    finally:
        _kill_user_processes(user.pw_uid)
        subprocess.run(["userdel", USER], check=True, capture_output=True, timeout=60)
        with pytest.raises(KeyError):
            pwd.getpwnam(USER)


def _kill_user_processes(uid: int) -> list[int]:
    """Kill (by PID) whatever still runs as the session user; their PIDs."""
    import psutil

    left = [p for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real == uid]
    for proc in left:
        try:
            proc.kill()
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(left, timeout=10)
    return [p.pid for p in left]


#: Run as ``sh -c PRIVATE_SYSTEM sh DIR`` in a private mount namespace, before
#: the session: GNOME Shell 43 uses logind when /run/systemd/seats exists and
#: then dies without the host's system bus, so /run/systemd is hidden; and
#: ibus-daemon reads the system's registry cache before any per-user engine
#: (the per-user install refuses while it exists), so /var/cache/ibus is an
#: empty tmpfs, and a ghosttype.xml a system install left among the system's
#: components is hidden (they are copied to DIR without it, mounted in their
#: place): the per-user install is tested whatever ran on this machine before.
PRIVATE_SYSTEM = (
    "{ [ ! -d /run/systemd/seats ] || mount -t tmpfs tmpfs /run/systemd; } && "
    "{ [ ! -d /var/cache/ibus ] || mount -t tmpfs -o mode=755 tmpfs /var/cache/ibus; } && "
    "{ [ ! -e /usr/share/ibus/component/ghosttype.xml ] || { cp -a /usr/share/ibus/component/. \"$1\" && "
    "rm \"$1/ghosttype.xml\" && mount --bind \"$1\" /usr/share/ibus/component; }; }"
)


def run_session(user: pwd.struct_passwd, display_mode: str) -> dict:
    probe = subprocess.run([shutil.which("runuser") or "runuser", "-u", USER, "--", sys.executable, "-c", "import daemon"], cwd="/",
                           env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}, capture_output=True, timeout=60)
    if probe.returncode != 0:
        pytest.fail(f"this Python ({sys.executable}) or the project is not readable by an unprivileged user "
                    f"(.ci/run makes their directories traversable): {probe.stderr.decode(errors='replace')[-500:]}",
                    pytrace=False)
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
        # The session runs in a private mount namespace that hides what the
        # machine's history put there (see PRIVATE_SYSTEM).
        components = tmp / "components"
        components.mkdir(mode=0o755)
        private = ["unshare", "-m", "--propagation", "private", "--", "sh", "-c"]
        probe = subprocess.run([*private, PRIVATE_SYSTEM, "sh", str(components)], capture_output=True, timeout=30)
        if probe.returncode != 0:
            pytest.fail(f"cannot set up a private mount namespace (needs CAP_SYS_ADMIN): {probe.stderr[-500:]!r}",
                        pytrace=False)
        cmd = [*private, PRIVATE_SYSTEM + ' && shift && exec "$@"', "sh", str(components), *inner]
        session = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        try:
            stdout, stderr = session.communicate(timeout=SESSION_BUDGET_S)
        except subprocess.TimeoutExpired:
            os.killpg(session.pid, signal.SIGKILL)
            stdout, stderr = session.communicate(timeout=30)
            stderr += f"\nthe session did not end within {SESSION_BUDGET_S} s: killed"
        finally:
            left = _kill_user_processes(user.pw_uid)
        proc = subprocess.CompletedProcess(cmd, session.returncode, stdout,
                                           stderr + (f"\nprocesses left running, killed: {left}" if left else ""))
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


@pytest.mark.timeout(TEST_TIMEOUT_S)
def test_gnome_wayland_preedit_and_tab(session_user):
    result = run_session(session_user, "preedit")
    assert result.get("ok"), f"{result.get('error')} after {result.get('steps')}\n{result['_debug']}"
    assert result["started_by_ibus"]
    ghost = result["ghost"]
    assert ghost and result["text"] == TYPED + ghost  # committed exactly once
    assert result["focus"] == "first"


@pytest.mark.timeout(TEST_TIMEOUT_S)
def test_gnome_wayland_auto_display_shows_no_preedit_and_tab_commits(session_user):
    result = run_session(session_user, "auto")
    assert result.get("ok"), f"{result.get('error')} after {result.get('steps')}\n{result['_debug']}"
    assert result["preedits"] == 0  # shown in GNOME's popup, not as (colourless) preedit
    assert result["text"].startswith(TYPED) and len(result["text"]) > len(TYPED)
