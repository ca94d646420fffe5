"""``ghosttype ibus install --system`` and ``uninstall --system``.

* Install points every user's ibus-daemon at this installation, so it must
  refuse one that anyone but root can change.  Real directories, real
  ownership (the suite runs as root: a file is handed to an unprivileged uid
  with ``os.chown``), and the real command in a fresh venv such a user owns.
* Install and uninstall leave IBus's system registry cache as they found
  it.  The real commands and the real ``ibus write-cache`` run in a private
  mount namespace where ``/usr/share/ibus/component`` and ``/var/cache`` are
  empty tmpfs, so the machine's own files are never touched (this checkout
  must be one only root can change, as ``.ci/run``'s is).
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

from daemon.frontends.ibus.safepath import UnsafePath, check_path, check_tree, first_unsafe
from tests import needs

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOBODY = 65534

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="ownership tests need root (.ci/run runs as root)")


@pytest.fixture
def tree(tmp_path):
    """A root-owned installation: opt/venv/bin/python and a package, 0755/0644."""
    base = tmp_path / "opt"
    (base / "venv" / "bin").mkdir(parents=True)
    (base / "venv" / "lib" / "daemon").mkdir(parents=True)
    (base / "venv" / "bin" / "python").write_text("#!/bin/sh\n")
    (base / "venv" / "lib" / "daemon" / "__init__.py").write_text("")
    for p in [tmp_path, *base.rglob("*"), base]:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    return base


def test_a_root_owned_installation_is_accepted(tree):
    assert check_path(tree / "venv" / "bin" / "python") == tree / "venv" / "bin" / "python"
    check_tree(tree / "venv" / "lib" / "daemon")
    assert first_unsafe([tree / "venv" / "bin" / "python"], [tree / "venv" / "lib"]) is None


def test_a_directory_on_the_way_owned_by_a_user_is_refused(tree):
    os.chown(tree / "venv", NOBODY, NOBODY)
    with pytest.raises(UnsafePath, match=f"{tree / 'venv'} is owned by"):
        check_path(tree / "venv" / "bin" / "python")


@pytest.mark.parametrize("mode,who", [(0o775, "its group"), (0o757, "everyone")])
def test_a_directory_others_can_write_is_refused(tree, mode, who):
    os.chmod(tree / "venv" / "bin", mode)
    with pytest.raises(UnsafePath, match=f"{tree / 'venv' / 'bin'} is writable by {who}"):
        check_path(tree / "venv" / "bin" / "python")


def test_a_sticky_directory_on_the_way_is_accepted_but_not_a_plain_writable_one(tree):
    os.chmod(tree, 0o1777)  # like /tmp: only an entry's owner may rename it
    check_path(tree / "venv" / "bin" / "python")
    os.chmod(tree / "venv" / "bin" / "python", 0o1777)  # the sticky bit means nothing on a file
    with pytest.raises(UnsafePath, match="writable by everyone"):
        check_path(tree / "venv" / "bin" / "python")


def test_one_file_deep_in_the_package_owned_by_a_user_is_refused(tree):
    deep = tree / "venv" / "lib" / "daemon" / "frontends"
    deep.mkdir(mode=0o755)
    (deep / "engine.py").write_text("")
    check_tree(tree / "venv" / "lib")
    os.chown(deep / "engine.py", NOBODY, NOBODY)
    assert first_unsafe([tree / "venv" / "bin" / "python"], [tree / "venv" / "lib"]) == \
        f"{deep / 'engine.py'} is owned by nobody, not root"


def test_links_are_followed_to_their_targets_and_every_directory_on_the_way(tree, tmp_path):
    user_dir = tmp_path / "home"
    user_dir.mkdir(mode=0o755)
    (user_dir / "python3").write_text("#!/bin/sh\n")
    os.chmod(user_dir / "python3", 0o755)
    link = tree / "venv" / "bin" / "python3"
    link.symlink_to(user_dir / "python3")
    assert check_path(link) == user_dir / "python3"  # all root's so far
    os.chown(user_dir, NOBODY, NOBODY)  # the target's directory is a user's: the user can repoint it
    with pytest.raises(UnsafePath, match=f"{user_dir} is owned by"):
        check_path(link)
    # A chain: root's link -> a link in the user's directory -> root's file.
    os.chown(user_dir, 0, 0)
    (user_dir / "python3").unlink()
    (user_dir / "python3").symlink_to("../opt/venv/bin/python")
    assert check_path(link) == tree / "venv" / "bin" / "python"
    os.chown(user_dir, NOBODY, NOBODY)
    with pytest.raises(UnsafePath, match=f"{user_dir} is owned by"):
        check_path(link)


def in_private_ibus_system(script: str, env: dict[str, str]) -> str:
    """Run the shell ``script`` where ``/usr/share/ibus/component`` and
    ``/var/cache`` are empty tmpfs of a private mount namespace; its output."""
    needs.tool("ibus", "ibus")
    unshare = needs.tool("unshare", "util-linux")
    mounts = ("mount -t tmpfs -o mode=755 tmpfs /usr/share/ibus/component && "
              "mount -t tmpfs -o mode=755 tmpfs /var/cache || { echo 'cannot mount'; exit 90; }\n")
    out = subprocess.run([unshare, "-m", "--propagation", "private", "--", "sh", "-c", mounts + script], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout + out.stderr


def test_install_system_refuses_an_installation_a_user_owns(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    for p in [venv, *venv.rglob("*")]:
        os.lchown(p, NOBODY, NOBODY)  # a user's venv (in a home directory, say)
    site = [p for p in sys.path if p.endswith("site-packages")]
    out = in_private_ibus_system(
        f'"{venv}/bin/python" -m daemon ibus install --system; echo "rc=$?"; '
        'echo "written: $(find /usr/share/ibus/component /var/cache -mindepth 1)"',
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *site])})
    assert "rc=2" in out, out
    assert f"{venv} is owned by nobody, not root" in out
    assert "sudo python3 -m venv /opt/ghosttype" in out
    assert "written: \n" in out, out  # nothing


#: One step of the install/uninstall script: what the system cache holds and
#: whether a per-user install is accepted (with a fresh home each time).
STATE = """
echo "== $1"
find /var/cache | sort
echo "ghosttype in the system cache: $(ibus read-cache --system 2>/dev/null | grep -c '<name>ghosttype</name>')"
home=$(mktemp -d)
HOME=$home XDG_RUNTIME_DIR=$home XDG_CONFIG_HOME=$home/c XDG_DATA_HOME=$home/d XDG_CACHE_HOME=$home/k \
    "$PY" -m daemon ibus install >/dev/null 2>&1
echo "per-user install: $?"
rm -rf "$home"
echo "component files: $(ls -A /usr/share/ibus/component)"
"""


@pytest.mark.parametrize("cache", [False, True], ids=["no-system-cache", "a-system-cache"])
def test_uninstall_system_leaves_the_registry_cache_as_install_found_it(cache):
    script = "state() {" + STATE + "}\n" + ("ibus write-cache --system || exit 91\n" if cache else "") + """
state before
"$PY" -m daemon ibus install --system >/dev/null || exit 92
state installed
"$PY" -m daemon ibus uninstall --system >/dev/null || exit 93
state after
"""
    env = {k: v for k, v in os.environ.items() if k not in ("DBUS_SESSION_BUS_ADDRESS", "IBUS_COMPONENT_PATH")}
    out = in_private_ibus_system(script, env={**env, "PY": sys.executable})
    sections = {part.split("\n", 1)[0]: part.split("\n", 1)[1].splitlines() for part in out.split("== ")[1:]}
    before, installed, after = sections["before"], sections["installed"], sections["after"]
    assert after == before, out
    assert ("per-user install: 2" if cache else "per-user install: 0") in before, out
    assert "component files: ghosttype.xml" in installed, out
    if cache:  # the cache the system keeps is kept current: IBus lists the engine
        assert "ghosttype in the system cache: 1" in installed, out
    else:
        assert not any(line.startswith("/var/cache/ibus") for line in installed), out


def test_component_only_writes_the_component_alone_and_leaves_the_packages_extension():
    """A package's postinst writes the component (the machine's layout, read then) with ``--component-only``
    and its postrm removes it the same way; the extension's files are the package's, never touched."""
    ext = "/usr/share/gnome-shell/extensions/ghosttype@ghosttype"
    script = f"""[ -d /usr/share/gnome-shell ] || {{ echo 'no /usr/share/gnome-shell'; exit 94; }}
mount -t tmpfs -o mode=755 tmpfs /usr/share/gnome-shell || exit 90
mkdir -p {ext} && echo '{{"uuid": "the package'"'"'s"}}' >{ext}/metadata.json
"$PY" -m daemon ibus install --system --component-only; echo "install rc=$?"
echo "component files: $(ls -A /usr/share/ibus/component)"
grep -c '<name>ghosttype</name>' /usr/share/ibus/component/ghosttype.xml
echo "extension: $(cat {ext}/metadata.json) $(ls -A {ext})"
"$PY" -m daemon ibus uninstall --system --component-only; echo "uninstall rc=$?"
echo "after: [$(ls -A /usr/share/ibus/component)] extension: $(cat {ext}/metadata.json)"
"$PY" -m daemon ibus install --component-only; echo "user rc=$?"
"""
    env = {k: v for k, v in os.environ.items() if k not in ("DBUS_SESSION_BUS_ADDRESS", "IBUS_COMPONENT_PATH")}
    out = in_private_ibus_system(script, env={**env, "PY": sys.executable})
    assert "install rc=0" in out and "component files: ghosttype.xml" in out, out
    assert "extension: {\"uuid\": \"the package's\"} metadata.json" in out, out
    assert "uninstall rc=0" in out and "after: [] extension: {\"uuid\": \"the package's\"}" in out, out
    assert "user rc=2" in out and "--component-only goes with --system" in out, out
