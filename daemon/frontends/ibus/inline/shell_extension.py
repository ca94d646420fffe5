"""ghosttype's GNOME Shell extension on disk and in the user's settings:
installed and removed with the engine (``ghosttype ibus install | uninstall``),
enabled for the user, and checked by ``ghosttype doctor``.

The extension's files ship inside the package (``gnome_shell/``).  GNOME Shell
finds extensions in ``/usr/share/gnome-shell/extensions`` (``--system``) and
``~/.local/share/gnome-shell/extensions`` only when it starts (on Wayland: at
the next login), and runs those listed in the user's ``org.gnome.shell
enabled-extensions`` and not in ``disabled-extensions`` (where the Extensions
app puts one the user switched off).  A per-user install adds the extension to
``enabled-extensions`` at once; ``--system`` runs as root, away from the
user's settings, so the engine enables it when it starts in the user's
session (:func:`enable_when_loaded`: once GNOME Shell, starting at the same
time, has loaded it, through GNOME Shell's own ``EnableExtension``; a setting
written while GNOME Shell is still loading its extensions can go unseen).
Neither overrides a user who switched it off.
"""

from __future__ import annotations

import ast
import contextlib
import os
import pathlib
import shutil
import subprocess
import time
from typing import Mapping, Optional

from daemon.checks import CheckResult

from .protocol import FILE as PROTOCOL_FILE

UUID = "ghosttype@ghosttype"
SOURCE_DIR = pathlib.Path(__file__).resolve().parent / "gnome_shell"
#: The extension's files, each from where it ships: its folder, and the protocol it loads (beside it once installed).
SOURCES = {"metadata.json": SOURCE_DIR / "metadata.json", "extension.js": SOURCE_DIR / "extension.js",
           "protocol.xml": PROTOCOL_FILE}
FILES = tuple(SOURCES)
SYSTEM_EXTENSIONS = pathlib.Path("/usr/share/gnome-shell/extensions")
SHELL_SCHEMA = "org.gnome.shell"


def user_extensions(env: Optional[Mapping[str, str]] = None) -> pathlib.Path:
    env = os.environ if env is None else env
    data = env.get("XDG_DATA_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".local", "share")
    return pathlib.Path(data) / "gnome-shell" / "extensions"


def target(system: bool, env: Optional[Mapping[str, str]] = None) -> pathlib.Path:
    return (SYSTEM_EXTENSIONS if system else user_extensions(env)) / UUID


def installed(env: Optional[Mapping[str, str]] = None) -> list[pathlib.Path]:
    """Where the extension is installed (system, user)."""
    return [d for d in (target(True), target(False, env)) if (d / "metadata.json").exists()]


def install_files(system: bool, env: Optional[Mapping[str, str]] = None) -> pathlib.Path:
    dest = target(system, env)
    dest.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        tmp = dest / (name + ".new")
        shutil.copyfile(SOURCES[name], tmp)
        tmp.chmod(0o644)
        tmp.replace(dest / name)
    dest.chmod(0o755)
    return dest


def remove_files(system: bool, env: Optional[Mapping[str, str]] = None) -> list[pathlib.Path]:
    dest = target(system, env)
    if not dest.is_dir():
        return []
    shutil.rmtree(dest)
    if system:  # the system's extension folder, where install made it (GNOME Shell's package leaves it out)
        with contextlib.suppress(OSError):
            dest.parent.rmdir()  # only when empty: other extensions keep it
    return [dest]


# --------------------------------------------------------------------------- the user's settings


def _gsettings(*args: str, env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    exe = shutil.which("gsettings")
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, *args], capture_output=True, text=True, timeout=10,
                             env=None if env is None else dict(env))
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _strv(key: str, env: Optional[Mapping[str, str]] = None) -> Optional[list[str]]:
    text = _gsettings("get", SHELL_SCHEMA, key, env=env)
    if text is None:
        return None
    if text.startswith("@as"):
        text = text[3:].strip()
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return [str(v) for v in value] if isinstance(value, list) else None


def _set_strv(key: str, values: list[str], env: Optional[Mapping[str, str]] = None) -> bool:
    return _gsettings("set", SHELL_SCHEMA, key, repr(values), env=env) is not None


def user_state(env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """``enabled`` | ``disabled`` (the user switched it off) | ``off`` (not listed)
    | ``user extensions off`` (GNOME's disable-user-extensions), or None where
    GNOME Shell's settings cannot be read."""
    enabled, disabled = _strv("enabled-extensions", env), _strv("disabled-extensions", env)
    if enabled is None or disabled is None:
        return None
    if UUID in disabled:
        return "disabled"
    if UUID not in enabled:
        return "off"
    if _gsettings("get", SHELL_SCHEMA, "disable-user-extensions", env=env) == "true":
        return "user extensions off"
    return "enabled"


def enable_for_user(env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """Add the extension to the user's enabled-extensions unless the user
    switched it off; returns :func:`user_state` afterwards."""
    state = user_state(env)
    if state == "off":
        enabled = _strv("enabled-extensions", env) or []
        if _set_strv("enabled-extensions", enabled + [UUID], env):
            state = user_state(env)
    return state


def enable_when_loaded(timeout: float = 60.0, poll: float = 0.5) -> Optional[str]:
    """In the user's session (the engine's start): once GNOME Shell has loaded
    the extension, enable it unless the user switched it off; returns
    :func:`user_state` afterwards (``off`` where no GNOME Shell loads it in time)."""
    state = user_state()
    if state != "off":
        return state
    from jeepney import DBusAddress, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    shell = DBusAddress("/org/gnome/Shell", bus_name="org.gnome.Shell", interface="org.gnome.Shell.Extensions")
    try:
        conn = open_dbus_connection("SESSION")
    except (KeyError, OSError, TimeoutError, ValueError):
        return state
    try:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            reply = conn.send_and_get_reply(new_method_call(shell, "GetExtensionInfo", "s", (UUID,)), timeout=5)
            if reply.header.message_type.name == "method_return" and reply.body[0]:
                conn.send_and_get_reply(new_method_call(shell, "EnableExtension", "s", (UUID,)), timeout=5)
                break
            if reply.header.fields.get(4) == "org.freedesktop.DBus.Error.ServiceUnknown":  # HeaderFields.error_name
                break  # no GNOME Shell in this session
            time.sleep(poll)
    except (OSError, TimeoutError):
        pass
    finally:
        conn.close()
    return user_state()


def forget_for_user(env: Optional[Mapping[str, str]] = None) -> bool:
    """Take the extension off the user's lists (after removing its files)."""
    changed = False
    for key in ("enabled-extensions", "disabled-extensions"):
        values = _strv(key, env)
        if values is not None and UUID in values:
            changed |= _set_strv(key, [v for v in values if v != UUID], env)
    return changed


# --------------------------------------------------------------------------- doctor


def checks(env: Optional[Mapping[str, str]] = None) -> list[CheckResult]:
    """Installed, enabled, answering: one result, with a fix hint."""
    env = os.environ if env is None else env
    where = installed(env)
    name = "GNOME Shell extension (inline suggestions)"
    if not where:
        return [CheckResult(name, None, "not installed: GNOME shows suggestions in IBus's popup",
                            "ghosttype ibus install (or sudo ghosttype ibus install --system), then log out and in")]
    detail = "installed: " + ", ".join(str(d) for d in where)
    state = user_state(env)
    if state is None:
        return [CheckResult(name, None, detail + "; GNOME Shell's settings cannot be read here")]
    if state != "enabled":
        hint = {"disabled": f"you switched it off: gnome-extensions enable {UUID}",
                "off": f"gnome-extensions enable {UUID} (or log out and in: the engine enables it)",
                "user extensions off": "turn extensions on in the Extensions app"}[state]
        return [CheckResult(name, None, f"{detail}; {state}: GNOME shows suggestions in IBus's popup", hint)]
    from .plugin_probe import older_line, probe
    from .compositor import SHELL_NAME

    live = probe(SHELL_NAME)
    if live is None or not live.compositor:
        return [CheckResult(name, True, detail + "; enabled (GNOME Shell is not running here)")]
    if not live.answering:
        return [CheckResult(name, False, detail + "; enabled, but not answering: GNOME Shell loads new extensions "
                            "only when it starts", "log out and in")]
    if live.older:
        return [CheckResult(name, False, f"{detail}; {older_line('the extension GNOME Shell runs', live)} "
                            "(GNOME Shell keeps the extension it started with until the next login)",
                            "log out and in")]
    return [CheckResult(name, True, detail + "; enabled and answering: suggestions are drawn at the caret")]
