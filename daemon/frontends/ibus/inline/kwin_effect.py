"""ghosttype's KWin effect on disk and in KWin: built, installed and removed
(``ghosttype kde install | uninstall``), and checked by ``ghosttype doctor``.

The effect's C++ sources ship inside the package (``kwin/``).  A C++ KWin
effect links against KWin's own library and headers, which change with every
Plasma release, so it is built on the user's machine against the installed
KWin (Debian: ``kwin-dev``) with CMake, and must be built again after a Plasma
upgrade: KWin refuses a plugin built for another release, and the engine then
falls back to IBus's popup.  The built plugin carries the KWin version it was
built for (``KWIN_MARKER``), so ``doctor`` can say when it is stale.

KWin finds effect plugins in ``kwin/effects/plugins`` under each of Qt's
plugin directories.  ``--system`` installs into the system's (where KDE's CMake
modules say Qt keeps them; KWin loads it at once), and only from an
installation and into a directory that root alone can change
(:func:`system_install_problem`, the check of ``ibus install --system``):
every user's KWin runs the plugin, and it is built as root from this package's
sources (its CMake files run commands); a per-user install goes to
``~/.local/lib/ghosttype/qt6/plugins`` and adds that directory to
``QT_PLUGIN_PATH`` through ``~/.config/plasma-workspace/env/``, which Plasma
reads at login, so KWin finds it from the next login on.  The effect is
enabled by default; System Settings › Desktop Effects switches it off
(``kwinrc [Plugins] ghosttypeEnabled=false``), and the engine then draws with
the popup again.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Mapping, Optional

from daemon.checks import CheckResult, program_version
from daemon.frontends.ibus.safepath import first_unsafe, installation_files

PLUGIN_ID = "ghosttype"
SOURCE_DIR = pathlib.Path(__file__).resolve().parent / "kwin"
PLUGIN_FILE = f"{PLUGIN_ID}.so"
PLUGIN_SUBDIR = pathlib.Path("kwin", "effects", "plugins")
#: The string the built plugin carries (ghosteffect.cpp): the KWin version it was built against.
KWIN_MARKER = re.compile(rb"ghosttype-kwin-effect built for KWin (\d+(?:\.\d+)*)")
ENV_SCRIPT = "ghosttype-kwin-effect.sh"
#: What building needs on Debian and Ubuntu (``packaging/linux/install-deps.sh --kde`` installs it).
BUILD_PACKAGES = "kwin-dev cmake g++ extra-cmake-modules pkgconf libdrm-dev libvulkan-dev libwayland-dev"
BUILD_TIMEOUT_S = 900


def _home(env: Mapping[str, str]) -> pathlib.Path:
    return pathlib.Path(env.get("HOME") or os.path.expanduser("~"))


def user_plugin_root(env: Optional[Mapping[str, str]] = None) -> pathlib.Path:
    """The Qt plugin directory of a per-user install (added to KWin's QT_PLUGIN_PATH)."""
    env = os.environ if env is None else env
    return _home(env) / ".local" / "lib" / "ghosttype" / "qt6" / "plugins"


def env_script(env: Optional[Mapping[str, str]] = None) -> pathlib.Path:
    env = os.environ if env is None else env
    config = pathlib.Path(env.get("XDG_CONFIG_HOME") or _home(env) / ".config")
    return config / "plasma-workspace" / "env" / ENV_SCRIPT


def system_plugin_files() -> list[pathlib.Path]:
    """The effect where a system install may have put it (Debian's multiarch, Fedora's lib64, Arch's lib)."""
    patterns = ("/usr/lib/*/qt6/plugins", "/usr/lib64/qt6/plugins", "/usr/lib/qt6/plugins", "/usr/local/lib*/qt6/plugins",
                "/usr/local/lib/*/qt6/plugins")
    found = []
    for pattern in patterns:
        for root in sorted(pathlib.Path("/").glob(pattern.lstrip("/"))):
            f = root / PLUGIN_SUBDIR / PLUGIN_FILE
            if f.exists() and f not in found:
                found.append(f)
    return found


def user_plugin_file(env: Optional[Mapping[str, str]] = None) -> pathlib.Path:
    """Where a per-user install puts the plugin."""
    return user_plugin_root(env) / PLUGIN_SUBDIR / PLUGIN_FILE


def installed(env: Optional[Mapping[str, str]] = None) -> list[pathlib.Path]:
    """The installed plugin files (system first, then this user's)."""
    user = user_plugin_file(env)
    return system_plugin_files() + ([user] if user.exists() else [])


def built_for(plugin: pathlib.Path) -> Optional[str]:
    """The KWin version the plugin was built against (None: unreadable, or not ghosttype's)."""
    try:
        m = KWIN_MARKER.search(plugin.read_bytes())
    except OSError:
        return None
    return m.group(1).decode() if m else None


def kwin_version() -> Optional[str]:
    """The installed KWin's version (``kwin_wayland --version``), None without KWin."""
    return program_version("kwin_wayland", "--version")


# --------------------------------------------------------------------------- build and install


class BuildError(Exception):
    """The effect could not be built; the message says what to install or what failed."""


def missing_tools() -> list[str]:
    return [t for t in ("cmake", "c++") if shutil.which(t) is None]


def build(work: pathlib.Path, plugin_dir: Optional[pathlib.Path] = None, log=print) -> tuple[pathlib.Path, pathlib.Path]:
    """Configure and build the effect in ``work``; returns (the built plugin, where it installs).
    ``plugin_dir``: the Qt plugin directory to install into (None: the system's, as KDE's CMake
    modules know it)."""
    missing = missing_tools()
    if missing:
        raise BuildError(f"{' and '.join(missing)} not found: building the KWin effect needs {BUILD_PACKAGES} "
                         "(Debian/Ubuntu: sudo packaging/linux/install-deps.sh --kde)")
    build_dir = work / "build"
    configure = ["cmake", "-S", str(SOURCE_DIR), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release"]
    if plugin_dir is not None:
        configure.append(f"-DGHOSTTYPE_QT_PLUGIN_DIR={plugin_dir}")
    steps = [("configure", configure), ("build", ["cmake", "--build", str(build_dir), "--parallel", str(os.cpu_count() or 2)])]
    for step, cmd in steps:
        log(f"kwin effect: {step}: {' '.join(cmd)}")
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise BuildError(f"{step} took more than {BUILD_TIMEOUT_S} s") from None
        if r.returncode != 0:
            out = (r.stdout + r.stderr).strip().splitlines()
            hint = ""
            if step == "configure":  # CMake did not find KWin's (or KDE's, Qt's) development files
                hint = f" (building needs {BUILD_PACKAGES}; Debian/Ubuntu: sudo packaging/linux/install-deps.sh --kde)"
            raise BuildError(f"{step} failed{hint}:\n" + "\n".join(out[-15:]))
    plugin = build_dir / PLUGIN_FILE
    dest = (build_dir / "plugin-dir.txt").read_text(encoding="utf-8").strip()
    return plugin, pathlib.Path(dest) / PLUGIN_SUBDIR


def system_install_problem() -> Optional[str]:
    """Why this installation must not build the effect for every user's KWin
    (None: it may): the interpreter, the module path and the package, the
    effect's sources included, must be root's alone."""
    files, trees = installation_files()
    return first_unsafe(files, [*trees, SOURCE_DIR])


def _refuse_system(problem: str) -> int:
    print(f"ghosttype: --system would put an effect built from this installation into every user's KWin,\n"
          f"but {problem}: whoever can change it could run code in every user's session, where KWin sees\n"
          "all they type and every window.  Install ghosttype where only root can change it, and the effect\n"
          "from there:\n"
          "  sudo python3 -m venv /opt/ghosttype\n"
          "  sudo /opt/ghosttype/bin/pip install SOURCE   (ghosttype's source directory or wheel)\n"
          "  sudo /opt/ghosttype/bin/ghosttype kde install --system\n"
          "or install the effect for yourself alone: ghosttype kde install", file=sys.stderr)
    return 2


def install(system: bool, env: Optional[Mapping[str, str]] = None) -> int:
    env = os.environ if env is None else env
    if system and os.geteuid() != 0:
        print("ghosttype: --system needs root (sudo ghosttype kde install --system)", file=sys.stderr)
        return 2
    problem = system_install_problem() if system else None
    if problem:
        return _refuse_system(problem)
    with tempfile.TemporaryDirectory(prefix="ghosttype-kwin-") as work:
        try:
            plugin, dest = build(pathlib.Path(work), None if system else user_plugin_root(env))
        except BuildError as e:
            print(f"ghosttype: the KWin effect could not be built: {e}", file=sys.stderr)
            return 1
        dest.mkdir(parents=True, exist_ok=True)
        problem = first_unsafe([dest]) if system else None
        if problem:  # the system's Qt plugin directory, as KDE's CMake modules name it
            print(f"ghosttype: not installed: {problem}, so whoever can change it could replace the effect\n"
                  "every user's KWin loads", file=sys.stderr)
            return 2
        target = dest / PLUGIN_FILE
        tmp = dest / (PLUGIN_FILE + ".new")
        shutil.copyfile(plugin, tmp)
        tmp.chmod(0o644)
        tmp.replace(target)  # a running KWin keeps the file it mapped
    version = built_for(target)
    print(f"installed the KWin effect: {target} (built for KWin {version or 'unknown'})")
    if not system:
        _write_env_script(env)
        print(f"added {user_plugin_root(env)} to KWin's plugin path: {env_script(env)}")
    loaded = load_now()
    if loaded:
        print("KWin loaded it: suggestions are drawn at the caret")
    elif loaded is False:
        print("KWin did not load it now; it does from your next login on")
    else:
        print("KWin is not running here; it loads the effect when Plasma starts")
    return 0


def _write_env_script(env: Mapping[str, str]) -> None:
    script = env_script(env)
    script.parent.mkdir(parents=True, exist_ok=True)
    root = user_plugin_root(env)
    script.write_text("# ghosttype's KWin effect (ghosttype kde install): KWin finds it in this Qt plugin directory\n"
                      f'export QT_PLUGIN_PATH="{root}${{QT_PLUGIN_PATH:+:$QT_PLUGIN_PATH}}"\n', encoding="utf-8")


def uninstall(system: bool, env: Optional[Mapping[str, str]] = None) -> int:
    env = os.environ if env is None else env
    if system and os.geteuid() != 0:
        print("ghosttype: --system needs root (sudo ghosttype kde uninstall --system)", file=sys.stderr)
        return 2
    files = system_plugin_files() if system else [user_plugin_file(env)]
    if not system:
        files.append(env_script(env))
    removed = [f for f in files if f.exists()]
    for f in removed:
        f.unlink()
        _remove_empty_parents(f.parent, len(PLUGIN_SUBDIR.parts))
    if removed:
        unload_now()
    print("removed: " + (", ".join(str(f) for f in removed) if removed else "nothing (not installed)"))
    return 0


def _remove_empty_parents(folder: pathlib.Path, levels: int) -> None:
    """Remove ``folder`` and up to ``levels`` - 1 folders above it while they are empty: install made
    them (``kwin/effects/plugins`` under the Qt plugin folder, which KWin's own package leaves out), and one
    that holds anything else stays."""
    for _ in range(levels):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


# --------------------------------------------------------------------------- KWin on the session bus

_EFFECTS = ("org.kde.KWin", "/Effects", "org.kde.kwin.Effects")


def _effects_call(method: str, signature: str = "", body: tuple = ()) -> Optional[object]:
    """Call KWin's effects interface on the session bus; None without a session bus or KWin."""
    from jeepney import DBusAddress, MessageType, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    try:
        conn = open_dbus_connection("SESSION")
    except (KeyError, OSError, TimeoutError, ValueError):
        return None
    try:
        address = DBusAddress(_EFFECTS[1], bus_name=_EFFECTS[0], interface=_EFFECTS[2])
        reply = conn.send_and_get_reply(new_method_call(address, method, signature or None, body), timeout=10)
    except (OSError, TimeoutError):
        return None
    finally:
        conn.close()
    if reply.header.message_type != MessageType.method_return:
        return None
    return reply.body[0] if reply.body else True


def load_now() -> Optional[bool]:
    """Ask the running KWin to load the effect: True loaded, False refused, None no KWin here."""
    loaded = _effects_call("loadEffect", "s", (PLUGIN_ID,))
    return None if loaded is None else bool(loaded)


def unload_now() -> None:
    _effects_call("unloadEffect", "s", (PLUGIN_ID,))


def loaded() -> Optional[bool]:
    """Whether the running KWin has the effect loaded; None without KWin on the session bus."""
    answer = _effects_call("isEffectLoaded", "s", (PLUGIN_ID,))
    return None if answer is None else bool(answer)


# --------------------------------------------------------------------------- doctor


def checks(env: Optional[Mapping[str, str]] = None) -> list[CheckResult]:
    """Installed, built for this KWin, loaded: one result, with a fix hint."""
    env = os.environ if env is None else env
    name = "KWin effect (inline suggestions)"
    where = installed(env)
    if not where:
        return [CheckResult(name, None, "not installed: Plasma shows suggestions in IBus's popup",
                            "ghosttype kde install (or sudo ghosttype kde install --system)")]
    detail = "installed: " + ", ".join(str(f) for f in where)
    running = kwin_version()
    stale = [(f, v) for f in where for v in [built_for(f)] if running and v != running]
    if stale:
        return [CheckResult(name, False, f"{detail}; built for KWin {stale[0][1] or 'unknown'}, "
                            f"but KWin is {running}: KWin does not load it, Plasma shows the popup",
                            "run `ghosttype kde install` again (with --system for a system install), then log out and in")]
    live = loaded()
    if live is None:
        return [CheckResult(name, True, f"{detail} (built for KWin {running or 'unknown'}); KWin is not running here")]
    if not live:
        return [CheckResult(name, None, f"{detail}; KWin has not loaded it (switched off in System Settings › "
                            "Desktop Effects, or installed since the login)",
                            "switch on 'ghosttype suggestions' in System Settings › Desktop Effects, or log out and in")]
    from .plugin_probe import older_line, probe
    from .compositor import KWIN_NAME

    found = probe(KWIN_NAME)
    if found is not None and found.older:
        return [CheckResult(name, False, f"{detail}; {older_line('the effect KWin runs', found)}",
                            "run `ghosttype kde install` again (with --system for a system install), then log out and in")]
    return [CheckResult(name, True, detail + "; loaded: suggestions are drawn at the caret")]
