"""``ghosttype kde install --system`` refuses an installation, or a plugin
directory, that anyone but root can change: every user's KWin loads the
plugin it installs, and it is built as root from the package's own sources.
The real command runs as it would under sudo (the suite runs as root: files
are handed to an unprivileged uid with ``os.chown``), with stand-ins for
``cmake`` and the compiler that record each step and name the plugin
directory the test chose, so the machine's own Qt plugin directory is never
touched.  The real build against KWin's headers runs in the desktop tier."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from daemon.frontends.ibus.inline import kwin_effect

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOBODY = 65534

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="ownership tests need root (.ci/run runs as root)")


def build_tools(tmp_path: pathlib.Path, plugin_dir: pathlib.Path) -> tuple[dict[str, str], pathlib.Path]:
    """An environment whose ``cmake`` records its steps in the returned file and
    says the system's Qt plugins live in ``plugin_dir``."""
    tools = tmp_path / "tools"
    tools.mkdir()
    steps = tmp_path / "build-steps"
    (tools / "cmake").write_text(f"""#!/bin/sh
echo "$1" >> "{steps}"
case "$1" in
  -S) mkdir -p "$4" && echo "{plugin_dir}" > "$4/plugin-dir.txt" ;;
  --build) printf 'ghosttype-kwin-effect built for KWin 6.7.4' > "$2/ghosttype.so" ;;
esac
""")
    (tools / "c++").write_text("#!/bin/sh\nexit 0\n")
    for tool in tools.iterdir():
        tool.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("DBUS_SESSION_BUS_ADDRESS", "PYTHONPATH")}
    env["PATH"] = f"{tools}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
    return env, steps


def kde_install_system(python: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "daemon", "kde", "install", "--system"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def installed_plugin(plugin_dir: pathlib.Path) -> pathlib.Path:
    return plugin_dir / kwin_effect.PLUGIN_SUBDIR / kwin_effect.PLUGIN_FILE


def test_an_installation_a_user_owns_is_refused_before_anything_is_built(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    for p in [venv, *venv.rglob("*")]:
        os.lchown(p, NOBODY, NOBODY)  # a user's venv (in a home directory, say)
    plugin_dir = tmp_path / "qt6-plugins"
    env, steps = build_tools(tmp_path, plugin_dir)
    site = [p for p in sys.path if p.endswith("site-packages")]
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *site])
    out = kde_install_system(f"{venv}/bin/python", env)
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"{venv} is owned by nobody, not root" in out.stderr
    assert "sudo /opt/ghosttype/bin/ghosttype kde install --system" in out.stderr
    assert not steps.exists(), "the effect was built"
    assert not installed_plugin(plugin_dir).exists()


def test_a_plugin_directory_a_user_owns_is_refused_and_a_root_owned_one_taken(tmp_path):
    users = tmp_path / "users-qt6-plugins"
    users.mkdir(mode=0o755)
    os.chown(users, NOBODY, NOBODY)
    env, steps = build_tools(tmp_path, users)
    out = kde_install_system(sys.executable, env)  # this checkout, root's alone (as .ci/run's is)
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"{users} is owned by nobody, not root" in out.stderr
    assert not installed_plugin(users).exists()

    steps.unlink()
    (tmp_path / "tools").rename(tmp_path / "tools-before")
    roots = tmp_path / "qt6-plugins"
    env, steps = build_tools(tmp_path, roots)
    out = kde_install_system(sys.executable, env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert steps.read_text().split() == ["-S", "--build"]
    plugin = installed_plugin(roots)
    assert kwin_effect.built_for(plugin) == "6.7.4" and (plugin.stat().st_mode & 0o777) == 0o644
