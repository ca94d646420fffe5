"""Installing the engine so desktops list it: ``ghosttype ibus install |
uninstall | status`` and the IBus part of ``ghosttype doctor``.

ibus-daemon learns about engines from component files (XML) in
``/usr/share/ibus/component`` and from any directory listed in
``$IBUS_COMPONENT_PATH``, through a registry cache (``ibus write-cache``).
GNOME Shell lists only engines ibus-daemon found that way (an engine that
registers itself at run time never appears in Settings).

* ``--system`` (root): the component file goes to ``/usr/share/ibus/component``
  with the absolute command of this installation, and the system registry
  cache is rewritten where the system keeps one (it is never created, so
  ``uninstall --system`` leaves the machine as install found it).  Every
  user's ibus-daemon then runs that command, so the installation must be one
  only root can change (:func:`system_install_problem`): a venv in a user's
  home would let that user run code in everyone's session.
* user level (no root): the component file goes to the user's data directory,
  ``~/.config/environment.d/`` adds that directory to ``IBUS_COMPONENT_PATH``
  for the user's session services (GNOME's ibus-daemon runs as the systemd user
  service ``org.freedesktop.IBus.session.GNOME.service``; KDE Plasma's session is
  a systemd user session too), and the user's registry cache is rewritten with
  it, so ibus-daemon lists the engine from the next login on.  This works
  only where the system has no registry cache of its own: ibus-daemon loads
  ``/var/cache/ibus/bus/registry`` first and uses it while it is current,
  ignoring ``$IBUS_COMPONENT_PATH`` (``bus_ibus_impl_registry_init`` in ibus),
  and Debian, Ubuntu and Fedora write that cache when IBus is installed.  There
  the user-level install refuses and says to use ``--system``.
"""

from __future__ import annotations

import ast
import configparser
import dataclasses
import os
import re
import pathlib
import shlex
import shutil
import subprocess
import sys
from typing import Mapping, Optional
from xml.sax.saxutils import escape

from daemon.checks import CheckResult
from daemon.frontends.ibus.inline import kwin_effect, shell_extension
from daemon.frontends.ibus.bus import ibus_address
from daemon.frontends.ibus.safepath import first_unsafe, installation_files
from daemon.frontends.ibus.service import ENGINE_NAME, component

SYSTEM_COMPONENT_DIR = pathlib.Path("/usr/share/ibus/component")
#: The system's keyboard configuration (Debian, Ubuntu; localectl writes it).
SYSTEM_KEYBOARD_FILE = pathlib.Path("/etc/default/keyboard")
#: ibus-daemon's system registry cache (IBUS_CACHE_DIR/bus/registry).
SYSTEM_REGISTRY_CACHE = pathlib.Path("/var/cache/ibus/bus/registry")
COMPONENT_FILE = "ghosttype.xml"
ENV_FILE = "90-ghosttype-ibus.conf"
GNOME_SOURCES = ("org.gnome.desktop.input-sources", "sources")


def engine_command() -> str:
    """The absolute command ibus-daemon runs to start the engine."""
    script = pathlib.Path(sys.executable).parent / "ghosttype"
    if script.exists():
        return f"{shlex.quote(str(script))} ibus run --ibus"
    return f"{shlex.quote(sys.executable)} -m daemon ibus run --ibus"


def system_install_problem() -> Optional[str]:
    """Why every user's ibus-daemon must not run this installation (None: it may)."""
    files, trees = installation_files()
    return first_unsafe(files, trees)


def component_xml(exec_line: str, layout: str = "default", variant: str = "") -> str:
    comp = component(exec_line, layout, variant)
    e = {k: escape(str(v)) for k, v in dataclasses.asdict(comp.engines[0]).items()}
    return f"""<?xml version="1.0" encoding="utf-8"?>
<!-- written by `ghosttype ibus install`; removed by `ghosttype ibus uninstall` -->
<component>
  <name>{escape(comp.name)}</name>
  <description>{escape(comp.description)}</description>
  <exec>{escape(comp.exec)}</exec>
  <version>{escape(comp.version)}</version>
  <author>{escape(comp.author)}</author>
  <license>{escape(comp.license)}</license>
  <homepage>{escape(comp.homepage)}</homepage>
  <textdomain></textdomain>
  <engines>
    <engine>
      <name>{e['name']}</name>
      <language>{e['language']}</language>
      <license>{e['license']}</license>
      <author>{e['author']}</author>
      <icon>{e['icon']}</icon>
      <layout>{e['layout']}</layout>
      <layout_variant>{e['layout_variant']}</layout_variant>
      <longname>{e['longname']}</longname>
      <description>{e['description']}</description>
      <rank>{e['rank']}</rank>
      <symbol>{e['symbol']}</symbol>
      <version>{e['version']}</version>
    </engine>
  </engines>
</component>
"""


# --------------------------------------------------------------------------- locations


def _home(env: Mapping[str, str]) -> pathlib.Path:
    return pathlib.Path(env.get("HOME") or os.path.expanduser("~"))


def user_component_dir(env: Optional[Mapping[str, str]] = None) -> pathlib.Path:
    env = os.environ if env is None else env
    data = env.get("XDG_DATA_HOME") or str(_home(env) / ".local" / "share")
    return pathlib.Path(data) / "ghosttype" / "ibus-component"


def user_env_file(env: Optional[Mapping[str, str]] = None) -> pathlib.Path:
    env = os.environ if env is None else env
    config = env.get("XDG_CONFIG_HOME") or str(_home(env) / ".config")
    return pathlib.Path(config) / "environment.d" / ENV_FILE


def component_path_value(env: Optional[Mapping[str, str]] = None) -> str:
    """``IBUS_COMPONENT_PATH`` with the user's directory: the system one stays
    first (setting the variable replaces ibus's default)."""
    return f"{SYSTEM_COMPONENT_DIR}:{user_component_dir(env)}"


# --------------------------------------------------------------------------- install


def _run(argv: list[str], env: Optional[Mapping[str, str]] = None) -> bool:
    try:
        return subprocess.run(argv, env=None if env is None else dict(env), capture_output=True,
                              timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _write(path: pathlib.Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".new")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def keyboard_layout(system: bool, keyboard_file: Optional[pathlib.Path] = None) -> tuple[str, str]:
    """The keyboard layout (and variant) the engine asks the desktop for.

    GNOME applies an IBus source's layout when it becomes the input source
    and applies nothing for ``"default"``: a user who replaces ``xkb:de`` by
    ghosttype would type with whatever keymap was loaded before (US after a
    login).  So the engine names the user's layout: for a per-user install
    the first keyboard layout among the user's GNOME input sources, else (and
    for ``--system``) the system's keyboard configuration
    (``/etc/default/keyboard``, ``XKBLAYOUT``/``XKBVARIANT``), else
    ``"default"``.  KDE Plasma and X11 desktops keep their own layout either way.
    """
    if not system:
        for kind, ident in _gnome_sources() or []:
            if kind == "xkb":
                layout, _, variant = ident.partition("+")
                return layout, variant
    try:
        text = (keyboard_file or SYSTEM_KEYBOARD_FILE).read_text(encoding="utf-8")
    except OSError:
        text = ""
    values = dict(re.findall(r'^\s*(XKBLAYOUT|XKBVARIANT)\s*=\s*"?([^"\n]*)"?', text, re.M))
    layout = values.get("XKBLAYOUT", "").split(",")[0].strip()
    variant = values.get("XKBVARIANT", "").split(",")[0].strip()
    return (layout, variant) if layout else ("default", "")


def install(system: bool = False, env: Optional[Mapping[str, str]] = None, layout: Optional[str] = None,
            component_only: bool = False) -> int:
    """``layout``: ``LAYOUT[+VARIANT]`` for the engine (see :func:`keyboard_layout`), detected when None.
    ``component_only`` (with ``system``): the component file alone, from a package's ``postinst``: the
    package ships the extension's files itself, and the keyboard layout is the machine's, read at install."""
    env = os.environ if env is None else env
    if component_only and not system:
        print("ghosttype: --component-only goes with --system", file=sys.stderr)
        return 2
    command = engine_command()
    if shutil.which("ibus") is None:
        print("ghosttype: IBus is not installed (Debian/Ubuntu: sudo apt install ibus; Fedora: sudo dnf install ibus)",
              file=sys.stderr)
        return 2
    if system:
        if os.geteuid() != 0:
            print("ghosttype: --system writes to /usr/share/ibus/component: run it as root "
                  "(sudo), or install for yourself without --system", file=sys.stderr)
            return 2
        problem = system_install_problem()
        if problem:
            print(f"ghosttype: --system would make every user's ibus-daemon run this installation, but {problem}:\n"
                  "whoever can change it could read what every user types.  Install ghosttype where only root\n"
                  "can change it, and install the engine from there:\n"
                  "  sudo python3 -m venv /opt/ghosttype\n"
                  "  sudo /opt/ghosttype/bin/pip install SOURCE   (ghosttype's source directory or wheel)\n"
                  "  sudo /opt/ghosttype/bin/ghosttype ibus install --system\n"
                  "or install the engine for yourself alone: ghosttype ibus install", file=sys.stderr)
            return 2
        kb = _layout_arg(layout) or keyboard_layout(True)
        target = SYSTEM_COMPONENT_DIR / COMPONENT_FILE
        _write(target, component_xml(command, *kb))
        _refresh_system_cache()
        print(f"installed {target} (engine command: {command}; keyboard layout: {_layout_text(kb)})")
        if component_only:
            return 0
        print(f"installed {shell_extension.install_files(True)} (GNOME Shell: suggestions drawn at the caret; "
              "the engine enables it for each user at their next login)")
    else:
        if SYSTEM_REGISTRY_CACHE.exists():
            print(f"ghosttype: this system keeps an IBus registry cache ({SYSTEM_REGISTRY_CACHE}); ibus-daemon\n"
                  "reads it instead of per-user engines, so an install for you alone would never be listed.\n"
                  "Install for every user instead:  sudo ghosttype ibus install --system", file=sys.stderr)
            return 2
        kb = _layout_arg(layout) or keyboard_layout(False)
        target = user_component_dir(env) / COMPONENT_FILE
        _write(target, component_xml(command, *kb))
        value = component_path_value(env)
        _write(user_env_file(env), f"# written by `ghosttype ibus install`\nIBUS_COMPONENT_PATH={value}\n")
        _run(["ibus", "write-cache"], {**env, "IBUS_COMPONENT_PATH": value})
        if shutil.which("systemctl"):  # for services started before the next login
            _run(["systemctl", "--user", "set-environment", f"IBUS_COMPONENT_PATH={value}"])
        print(f"installed {target} (engine command: {command}; keyboard layout: {_layout_text(kb)})")
        print(f"and {user_env_file(env)}, so ibus-daemon finds it from your next login on")
        shell_dir = shell_extension.install_files(False, env)
        state = shell_extension.enable_for_user(env)
        print(f"and {shell_dir} (GNOME Shell: suggestions drawn at the caret from your next login on; "
              f"{state or 'enabled by the engine at your next login'})")
    print()
    print(next_step_hint())
    return 0


def _layout_arg(value: Optional[str]) -> Optional[tuple[str, str]]:
    if not value:
        return None
    layout, _, variant = value.partition("+")
    return layout, variant


def _layout_text(kb: tuple[str, str]) -> str:
    return "+".join(x for x in kb if x) + (" (the layout in use stays)" if kb[0] == "default" else "")


def uninstall(system: bool = False, env: Optional[Mapping[str, str]] = None, component_only: bool = False) -> int:
    env = os.environ if env is None else env
    if system:
        if os.geteuid() != 0:
            print("ghosttype: --system needs root (sudo)", file=sys.stderr)
            return 2
        removed = _unlink(SYSTEM_COMPONENT_DIR / COMPONENT_FILE)
        if not component_only:
            removed += shell_extension.remove_files(True)
        if shutil.which("ibus"):
            _refresh_system_cache()
    else:
        removed = _unlink(user_component_dir(env) / COMPONENT_FILE) + _unlink(user_env_file(env)) \
            + shell_extension.remove_files(False, env)
        shell_extension.forget_for_user(env)
        if shutil.which("ibus"):
            clean = {k: v for k, v in env.items() if k != "IBUS_COMPONENT_PATH"}
            _run(["ibus", "write-cache"], clean)
        if shutil.which("systemctl"):
            _run(["systemctl", "--user", "unset-environment", "IBUS_COMPONENT_PATH"])
    for path in removed:
        print(f"removed {path}")
    if not removed:
        print("nothing to remove")
    print("Remove ghosttype from Settings › Keyboard › Input Sources if it is still listed.")
    return 0


def _refresh_system_cache() -> None:
    """Rewrite the system registry cache, if the system keeps one: where it
    keeps none, ibus-daemon reads the component directories itself, and a
    cache written here would outlive the install (it hides per-user
    components from then on)."""
    if SYSTEM_REGISTRY_CACHE.exists():
        _run(["ibus", "write-cache", "--system"])


def _unlink(path: pathlib.Path) -> list[pathlib.Path]:
    try:
        path.unlink()
        return [path]
    except FileNotFoundError:
        return []


def next_step_hint() -> str:
    return (
        "One step is left: make ghosttype your input method.  Each user runs, in their desktop session:\n"
        "  ghosttype setup\n"
        "    (GNOME, KDE Plasma: ghosttype beside your keyboard layouts, selected from your next login;\n"
        "    other X11 desktops: ghosttype starts at login.  ghosttype setup --undo takes it back.)\n"
        "Or by hand:\n"
        "  GNOME: log out and in, then Settings › Keyboard › Input Sources › + › ghosttype, or:\n"
        "    gsettings set org.gnome.desktop.input-sources sources \"[('xkb', 'us'), ('ibus', 'ghosttype')]\"\n"
        "    (keep your own layouts in that list; Super+Space switches between sources)\n"
        "  KDE Plasma: System Settings › Keyboard › Virtual Keyboard › IBus Wayland, then ibus engine ghosttype\n"
        "    (grey text at the caret instead of IBus's popup: ghosttype kde install, see the README)\n"
        "  X11 desktops: ibus engine ghosttype (GTK_IM_MODULE=ibus, QT_IM_MODULE=ibus, XMODIFIERS=@im=ibus)\n"
        "Selecting ghosttype replaces your current IBus engine (a CJK input method, for example);\n"
        "switch sources to get it back, or use `ghosttype run` (X11) instead."
    )


# --------------------------------------------------------------------------- status


def _gnome_sources() -> Optional[list[tuple[str, str]]]:
    exe = shutil.which("gsettings")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "get", *GNOME_SOURCES], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    text = out.stdout.strip()
    if text.startswith("@a(ss)"):
        text = text[len("@a(ss)"):].strip()
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return [tuple(x) for x in value] if isinstance(value, list) else None


def _listed_engines(env: Mapping[str, str]) -> Optional[set[str]]:
    """The engine names the running ibus-daemon lists, or None when it cannot be asked."""
    if shutil.which("ibus") is None:
        return None
    try:
        out = subprocess.run(["ibus", "list-engine", "--name-only"], env=dict(env), capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return {line.strip() for line in out.stdout.splitlines() if line.strip()}


def _current_engine(env: Mapping[str, str]) -> Optional[str]:
    if shutil.which("ibus") is None:
        return None
    try:
        out = subprocess.run(["ibus", "engine"], env=dict(env), capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def ibus_checks(env: Optional[Mapping[str, str]] = None) -> list[CheckResult]:
    """The IBus situation, one result per question, each with a fix hint."""
    env = os.environ if env is None else env
    from daemon.frontends.session import DisplayServer, detect_session

    results = []
    session = detect_session(env)
    wayland = session.server in (DisplayServer.WAYLAND, DisplayServer.XWAYLAND)
    if shutil.which("ibus-daemon") is None:
        return [CheckResult("IBus", None if not wayland else False, "not installed",
                            "install IBus (Debian/Ubuntu: sudo apt install ibus) to use ghosttype as an input method")]
    running = ibus_address(env) is not None
    results.append(CheckResult("IBus daemon", True if running else None,
                               "running" if running else "not running for this session",
                               "GNOME starts it by itself; elsewhere run `ibus-daemon -drx` or select IBus as the "
                               "input method (im-config, KDE: Virtual Keyboard › IBus Wayland)"))
    system_file = SYSTEM_COMPONENT_DIR / COMPONENT_FILE
    user_file = user_component_dir(env) / COMPONENT_FILE
    where = [str(p) for p in (system_file, user_file) if p.exists()]
    listed = _listed_engines(env) if running else None
    if where:
        detail = "installed: " + ", ".join(where)
        stale = [p for p in where if not _exec_exists(pathlib.Path(p))]
        if stale:
            results.append(CheckResult("IBus engine", False, detail + " (its command no longer exists)",
                                       "run `ghosttype ibus install` again"))
        elif listed is not None and ENGINE_NAME not in listed:
            hint = ("a per-user install is hidden by the system's registry cache: "
                    "`sudo ghosttype ibus install --system`" if not system_file.exists() and SYSTEM_REGISTRY_CACHE.exists()
                    else "restart IBus (`ibus restart`) or log out and in")
            results.append(CheckResult("IBus engine", False, detail + ", but the running ibus-daemon does not list it",
                                       hint))
        else:
            results.append(CheckResult("IBus engine", True, detail + (", listed by ibus-daemon" if listed else "")))
    else:
        results.append(CheckResult("IBus engine", None if not wayland else False, "not installed",
                                   "run `ghosttype ibus install` (or `sudo ghosttype ibus install --system`)"))
    if "GNOME" in env.get("XDG_CURRENT_DESKTOP", "").upper().split(":") or shell_extension.installed(env):
        results += shell_extension.checks(env)
    kde = _kde_input_method_check(env) if wayland else None
    if kde is not None:
        results.append(kde)
    if kde is not None or kwin_effect.installed(env):
        results += kwin_effect.checks(env)
    sources = _gnome_sources()
    engine = _current_engine(env) if running else None
    if sources is not None and any(s == ("ibus", ENGINE_NAME) for s in sources):
        results.append(CheckResult("IBus engine selected", True, "ghosttype is a GNOME input source"
                                   + (f"; active engine now: {engine}" if engine else "")))
    elif engine == ENGINE_NAME:
        results.append(CheckResult("IBus engine selected", True, "ghosttype is the active IBus engine"))
    else:
        results.append(CheckResult("IBus engine selected", None,
                                   "ghosttype is not an input source" + (f" (active engine: {engine})" if engine else ""),
                                   "`ghosttype setup` (or by hand: Settings › Keyboard › Input Sources › + › ghosttype, "
                                   "or `ibus engine ghosttype`)"))
    return results


def _kde_input_method_check(env: Mapping[str, str]) -> Optional[CheckResult]:
    """On KDE Plasma (Wayland), KWin hands keys to an input method only when
    one is chosen (System Settings › Keyboard › Virtual Keyboard, stored as
    ``[Wayland] InputMethod`` in kwinrc); without IBus there, Wayland apps
    never reach the engine.  None on other desktops."""
    if "KDE" not in env.get("XDG_CURRENT_DESKTOP", "").upper().split(":"):
        return None
    config_home = pathlib.Path(env.get("XDG_CONFIG_HOME") or pathlib.Path(_home(env), ".config"))
    chosen = ""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read(config_home / "kwinrc", encoding="utf-8")
        if parser.has_section("Wayland"):  # the key may carry KDE's flags: InputMethod[$e]
            chosen = next((v for k, v in parser.items("Wayland") if k.split("[", 1)[0] == "inputmethod"), "")
    except configparser.Error:
        pass
    if "ibus" in chosen.lower():
        return CheckResult("KDE input method", True, "KWin hands keys to IBus (IBus Wayland)")
    return CheckResult("KDE input method", False,
                       "KWin's input method is " + (f"{pathlib.Path(chosen).name}" if chosen else "not set"),
                       "`ghosttype setup`, or System Settings › Keyboard › Virtual Keyboard › IBus Wayland "
                       "(then log out and in)")


def _exec_exists(path: pathlib.Path) -> bool:
    m = re.search(r"<exec>([^<]*)</exec>", path.read_text(encoding="utf-8", errors="replace"))
    if not m:
        return False
    try:
        argv = shlex.split(m.group(1).replace("&amp;", "&"))
    except ValueError:
        return False
    return bool(argv) and os.path.exists(argv[0])


def print_status(env: Optional[Mapping[str, str]] = None) -> int:
    env = os.environ if env is None else env
    from daemon.frontends.session import detect_session

    print(f"session: {detect_session(env).describe()}")
    results = ibus_checks(env)
    for r in results:
        print(r.line())
    return 1 if any(r.ok is False for r in results) else 0

