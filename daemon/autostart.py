"""Start ghosttype at login: install, remove and inspect the per-user startup
entry of each platform.

- ``systemd``: ``$XDG_CONFIG_HOME/systemd/user/ghosttype.service``, then
  ``systemctl --user daemon-reload`` and ``systemctl --user enable``;
- ``xdg``: ``$XDG_CONFIG_HOME/autostart/ghosttype.desktop``;
- ``launchd``: ``~/Library/LaunchAgents/io.github.ghosttype.plist``, then
  ``launchctl bootstrap gui/$UID`` (``bootout`` to remove);
- ``startup``: ``ghosttype.cmd`` in ``%APPDATA%\\Microsoft\\Windows\\Start Menu\\Programs\\Startup``.

On Linux ``enable`` picks ``systemd`` when a systemd user manager answers
(``systemctl --user is-system-running`` prints a state other than ``offline``)
and ``xdg`` otherwise; only one of the two is left installed, so the daemon is
never started twice.

The file contents come from the templates in :mod:`daemon.autostart_files`
and nowhere else:
``packaging/linux/ghosttype.service``, ``packaging/linux/ghosttype.desktop`` and
``packaging/macos/io.github.ghosttype.plist`` are these templates rendered with
a placeholder path (a test keeps them equal).  Every external command goes
through a ``Runner`` so tests can record the calls instead of running them.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
from typing import Callable, Optional, Sequence

from daemon.autostart_files import (  # noqa: F401  (re-exported: the file contents)
    TEMPLATES,
    AutostartError,
    fill,
    format_command,
    render,
)

UNIT_NAME = "ghosttype.service"
WANTED_BY = "graphical-session.target"
DESKTOP_NAME = "ghosttype.desktop"
LAUNCHD_LABEL = "io.github.ghosttype"
PLIST_NAME = LAUNCHD_LABEL + ".plist"
STARTUP_NAME = "ghosttype.cmd"
# The shortcut packaging/windows/install-startup.ps1 creates; removed by
# ``disable`` (and replaced by ``enable``) so ghosttype never starts twice.
STARTUP_SHORTCUT_NAME = "ghosttype.lnk"

METHODS_BY_PLATFORM = {"linux": ("systemd", "xdg"), "darwin": ("launchd",), "win32": ("startup",)}
ALL_METHODS = ("systemd", "xdg", "launchd", "startup")

# --------------------------------------------------------------------------
# Running external commands.


@dataclasses.dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str = ""
    stderr: str = ""

    def message(self) -> str:
        """The first non-empty line of stderr (or stdout), for error messages."""
        for text in (self.stderr, self.stdout):
            for line in text.splitlines():
                if line.strip():
                    return line.strip()
        return f"exit status {self.returncode}"


Runner = Callable[[Sequence[str]], Result]


def run_command(argv: Sequence[str], timeout: float = 60.0) -> Result:
    """Run ``argv``; a missing program or a hang becomes a failed Result."""
    try:
        p = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        return Result(127, "", f"{argv[0]}: command not found")
    except subprocess.TimeoutExpired:
        return Result(124, "", f"{argv[0]}: no answer within {timeout:.0f} s")
    except OSError as exc:
        return Result(126, "", f"{argv[0]}: {exc.strerror or exc}")
    return Result(p.returncode, p.stdout or "", p.stderr or "")


# --------------------------------------------------------------------------
# Which program to start.


def _installed_package_dir(package_dir: pathlib.Path) -> bool:
    """Is ``package_dir`` (this ``daemon`` package) inside an installation
    directory, so ``python -m daemon`` works from any working directory?"""
    roots = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    try:
        import site

        roots.add(site.getusersitepackages())
    except Exception:  # pragma: no cover - site without user site support
        pass
    parent = package_dir.resolve().parent
    return any(parent == pathlib.Path(r).resolve() for r in roots)


def find_program(argv0: Optional[str] = None, executable: Optional[str] = None,
                 which: Callable[[str], Optional[str]] = shutil.which,
                 package_dir: Optional[pathlib.Path] = None) -> tuple[str, ...]:
    """The absolute command that starts this ghosttype: the ``ghosttype``
    script being run, else the one installed beside this interpreter, else
    the one on PATH, else ``python -m daemon`` when the package is installed.
    Symlinks are kept (pipx's ``~/.local/bin/ghosttype`` survives upgrades)."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    executable = sys.executable if executable is None else executable
    candidates: list[pathlib.Path] = []
    if argv0 and pathlib.Path(argv0).stem.lower() == "ghosttype":
        candidates += [pathlib.Path(argv0), pathlib.Path(argv0 + ".exe")]
    if executable:
        bindir = pathlib.Path(executable).parent
        candidates += [bindir / "ghosttype", bindir / "ghosttype.exe", bindir / "Scripts" / "ghosttype.exe"]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return (os.path.abspath(c),)
    found = which("ghosttype")
    if found:
        return (os.path.abspath(found),)
    if package_dir is None:
        package_dir = pathlib.Path(__file__).resolve().parent
    if executable and _installed_package_dir(package_dir):
        return (os.path.abspath(executable), "-m", "daemon")
    raise AutostartError(
        "no installed ghosttype executable found (running from a source tree?); install "
        "ghosttype (pipx install .) and run `ghosttype autostart enable` from there")


# --------------------------------------------------------------------------
# Where the files go.


def platform_key(platform: str = sys.platform) -> str:
    """``linux`` (any XDG desktop, BSDs too), ``darwin`` or ``win32``."""
    if platform == "darwin":
        return "darwin"
    if platform in ("win32", "cygwin"):
        return "win32"
    return "linux"


@dataclasses.dataclass
class Context:
    """Everything the actions depend on; ``Context.current()`` for the real one."""

    platform: str  # "linux" | "darwin" | "win32"
    home: pathlib.Path
    config_home: pathlib.Path  # $XDG_CONFIG_HOME or ~/.config (Linux)
    appdata: pathlib.Path  # %APPDATA% (Windows)
    uid: int
    program: Optional[tuple[str, ...]] = None  # None: find_program() on first use
    run: Runner = run_command

    @classmethod
    def current(cls, run: Optional[Runner] = None) -> "Context":
        key = platform_key()
        home = pathlib.Path.home()
        if key == "linux":
            import platformdirs  # XDG_CONFIG_HOME when absolute, else ~/.config

            config_home = pathlib.Path(platformdirs.user_config_dir())
        else:
            config_home = home / ".config"
        appdata = pathlib.Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
        uid = os.getuid() if hasattr(os, "getuid") else 0
        return cls(key, home, config_home, appdata, uid, run=run or run_command)

    def command(self) -> tuple[str, ...]:
        if self.program is None:
            self.program = find_program()
        return self.program

    # file locations
    @property
    def unit_dir(self) -> pathlib.Path:
        return self.config_home / "systemd" / "user"

    @property
    def wants_link(self) -> pathlib.Path:
        return self.unit_dir / f"{WANTED_BY}.wants" / UNIT_NAME

    @property
    def startup_dir(self) -> pathlib.Path:
        return self.appdata / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Startup"

    def path(self, method: str) -> pathlib.Path:
        return {
            "systemd": lambda: self.unit_dir / UNIT_NAME,
            "xdg": lambda: self.config_home / "autostart" / DESKTOP_NAME,
            "launchd": lambda: self.home / "Library" / "LaunchAgents" / PLIST_NAME,
            "startup": lambda: self.startup_dir / STARTUP_NAME,
        }[method]()

    def methods(self) -> tuple[str, ...]:
        return METHODS_BY_PLATFORM[self.platform]

    def check_method(self, method: Optional[str]) -> None:
        if method is not None and method not in self.methods():
            raise AutostartError(
                f"--method {method} is not available on this platform; use {' or '.join(self.methods())}",
                code=2)

    # external commands
    def systemctl(self, *args: str) -> Result:
        return self.run(["systemctl", "--user", *args])

    def launchctl(self, *args: str) -> Result:
        return self.run(["launchctl", *args])

    @property
    def launchd_target(self) -> str:
        return f"gui/{self.uid}/{LAUNCHD_LABEL}"


# systemctl --user is-system-running prints one of these when a manager answers.
_MANAGER_STATES = {"initializing", "starting", "running", "degraded", "maintenance", "stopping"}


def systemd_manager_state(ctx: Context) -> Optional[str]:
    """The user manager's state, or None when no systemd user manager answers."""
    r = ctx.systemctl("is-system-running")
    state = r.stdout.strip().splitlines()[0] if r.stdout.strip() else ""
    return state if state in _MANAGER_STATES else None


# --------------------------------------------------------------------------
# File helpers.


def _write(path: pathlib.Path, text: str) -> bool:
    """Write ``text`` atomically unless ``path`` already holds it; True when written."""
    if _read(path) == text:
        return False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".new")
        with open(tmp, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise AutostartError(f"cannot write {path}: {exc.strerror or exc}") from None
    return True


def _read(path: pathlib.Path) -> Optional[str]:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def _remove(path: pathlib.Path) -> bool:
    """Remove a file or symlink; True when something was removed."""
    if not (path.is_symlink() or path.exists()):
        return False
    try:
        path.unlink()
    except OSError as exc:
        raise AutostartError(f"cannot remove {path}: {exc.strerror or exc}") from None
    return True


@dataclasses.dataclass
class Report:
    """What an action did: lines for stdout and warnings for stderr."""

    lines: list[str] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)


# --------------------------------------------------------------------------
# enable


def choose_method(ctx: Context, method: Optional[str]) -> str:
    ctx.check_method(method)
    if method is not None:
        return method
    if ctx.platform == "linux":
        return "systemd" if systemd_manager_state(ctx) else "xdg"
    return ctx.methods()[0]


def enable(ctx: Context, method: Optional[str] = None) -> Report:
    """Install the startup entry of ``method`` (default: the platform's best)
    for ``ctx.command()`` and remove the other methods' entries."""
    method = choose_method(ctx, method)
    report = Report()
    text = render(method, ctx.command())
    _ENABLE[method](ctx, text, report)
    for other in ctx.methods():
        if other != method:
            _DISABLE[other](ctx, report, replaced_by=method)
    return report


def _wrote(report: Report, method: str, path: pathlib.Path, changed: bool) -> None:
    report.lines.append(f"{method}: {'wrote' if changed else 'up to date:'} {path}")


def _enable_systemd(ctx: Context, text: str, report: Report) -> None:
    if systemd_manager_state(ctx) is None:
        raise AutostartError("no systemd user manager is running (systemctl --user is-system-running); "
                             "use --method xdg")
    path = ctx.path("systemd")
    _wrote(report, "systemd", path, _write(path, text))
    for args in (("daemon-reload",), ("enable", UNIT_NAME)):
        r = ctx.systemctl(*args)
        if r.returncode != 0:
            raise AutostartError(f"systemctl --user {' '.join(args)} failed: {r.message()} "
                                 f"({path} is installed)")
    report.lines.append(f"systemd: enabled {UNIT_NAME}; it starts with your next graphical session "
                        f"(start it now: systemctl --user start {UNIT_NAME})")
    active = ctx.systemctl("is-active", WANTED_BY).stdout.strip()
    if active != "active":
        report.warnings.append(
            f"note: {WANTED_BY} is {active or 'unknown'} now; if your desktop never starts it, "
            "the unit never starts either: use `ghosttype autostart enable --method xdg` instead")


def _enable_xdg(ctx: Context, text: str, report: Report) -> None:
    path = ctx.path("xdg")
    _wrote(report, "xdg", path, _write(path, text))
    report.lines.append("xdg: ghosttype starts at your next login (desktops that follow the XDG autostart spec)")


def _enable_launchd(ctx: Context, text: str, report: Report) -> None:
    path = ctx.path("launchd")
    changed = _write(path, text)
    _wrote(report, "launchd", path, changed)
    loaded = ctx.launchctl("print", ctx.launchd_target).returncode == 0
    if loaded and not changed:
        report.lines.append(f"launchd: {LAUNCHD_LABEL} is loaded; it starts at every login")
        return
    if loaded:
        ctx.launchctl("bootout", ctx.launchd_target)
    r = ctx.launchctl("bootstrap", f"gui/{ctx.uid}", str(path))
    if r.returncode != 0:
        raise AutostartError(f"launchctl bootstrap gui/{ctx.uid} failed: {r.message()} ({path} is installed)")
    report.lines.append(f"launchd: loaded {LAUNCHD_LABEL}; it runs now and at every login")


def _enable_startup(ctx: Context, text: str, report: Report) -> None:
    path = ctx.path("startup")
    _wrote(report, "startup", path, _write(path, text))
    shortcut = ctx.startup_dir / STARTUP_SHORTCUT_NAME
    if _remove(shortcut):
        report.lines.append(f"startup: removed {shortcut} (replaced by {STARTUP_NAME})")
    report.lines.append("startup: ghosttype starts at your next login")


_ENABLE = {"systemd": _enable_systemd, "xdg": _enable_xdg, "launchd": _enable_launchd,
           "startup": _enable_startup}


# --------------------------------------------------------------------------
# disable


def disable(ctx: Context, method: Optional[str] = None) -> Report:
    """Remove the startup entry of ``method`` (default: of every method)."""
    ctx.check_method(method)
    report = Report()
    for m in (method,) if method else ctx.methods():
        _DISABLE[m](ctx, report)
    return report


def _nothing(report: Report, method: str, path: pathlib.Path, replaced_by: Optional[str]) -> None:
    if replaced_by is None:
        report.lines.append(f"{method}: nothing installed ({path})")


def _removed(report: Report, method: str, path: pathlib.Path, replaced_by: Optional[str]) -> None:
    why = f" (replaced by {replaced_by})" if replaced_by else ""
    report.lines.append(f"{method}: removed {path}{why}")


def _disable_systemd(ctx: Context, report: Report, replaced_by: Optional[str] = None) -> None:
    path = ctx.path("systemd")
    if not (path.exists() or ctx.wants_link.is_symlink()):
        return _nothing(report, "systemd", path, replaced_by)
    running = systemd_manager_state(ctx) is not None
    if running:
        r = ctx.systemctl("disable", "--now", UNIT_NAME)
        if r.returncode != 0:
            report.warnings.append(f"systemd: systemctl --user disable --now {UNIT_NAME}: {r.message()}")
    _remove(ctx.wants_link)  # gone already when systemctl could disable it
    _remove(path)
    if running:
        ctx.systemctl("daemon-reload")
    _removed(report, "systemd", path, replaced_by)


def _disable_file(ctx: Context, report: Report, method: str, replaced_by: Optional[str]) -> None:
    path = ctx.path(method)
    if _remove(path):
        _removed(report, method, path, replaced_by)
    else:
        _nothing(report, method, path, replaced_by)


def _disable_xdg(ctx: Context, report: Report, replaced_by: Optional[str] = None) -> None:
    _disable_file(ctx, report, "xdg", replaced_by)


def _disable_launchd(ctx: Context, report: Report, replaced_by: Optional[str] = None) -> None:
    if ctx.launchctl("print", ctx.launchd_target).returncode == 0:
        r = ctx.launchctl("bootout", ctx.launchd_target)
        if r.returncode != 0:
            report.warnings.append(f"launchd: launchctl bootout {ctx.launchd_target}: {r.message()}")
        else:
            report.lines.append(f"launchd: unloaded {LAUNCHD_LABEL}")
    _disable_file(ctx, report, "launchd", replaced_by)


def _disable_startup(ctx: Context, report: Report, replaced_by: Optional[str] = None) -> None:
    shortcut = ctx.startup_dir / STARTUP_SHORTCUT_NAME
    if _remove(shortcut):
        _removed(report, "startup", shortcut, replaced_by)
    _disable_file(ctx, report, "startup", replaced_by)


_DISABLE: dict[str, Callable[..., None]] = {
    "systemd": _disable_systemd, "xdg": _disable_xdg, "launchd": _disable_launchd,
    "startup": _disable_startup,
}


# --------------------------------------------------------------------------
# status


@dataclasses.dataclass(frozen=True)
class Status:
    method: str
    path: pathlib.Path
    installed: bool
    active: bool  # will start at login (systemd: enabled; launchd: loaded)
    current: bool  # the file is what ``enable`` would write now
    note: str = ""

    def line(self) -> str:
        if not self.installed:
            return f"{self.method}: not installed ({self.path}){self.note}"
        state = {
            "systemd": "enabled" if self.active else "installed but not enabled",
            "launchd": "loaded" if self.active else "installed but not loaded",
        }.get(self.method, "installed")
        stale = "" if self.current else "; differs from what `ghosttype autostart enable` writes now"
        return f"{self.method}: {state}, {self.path}{stale}{self.note}"


def status(ctx: Context) -> list[Status]:
    """One Status per method of the platform."""
    return [_status(ctx, m) for m in ctx.methods()]


def _expected(ctx: Context, method: str) -> Optional[str]:
    try:
        return render(method, ctx.command())
    except AutostartError:
        return None


def _status(ctx: Context, method: str) -> Status:
    path = ctx.path(method)
    text = _read(path)
    installed = text is not None
    current = installed and text == _expected(ctx, method)
    active, note = installed, ""
    if method == "systemd":
        active = ctx.wants_link.is_symlink()
        if systemd_manager_state(ctx) is None:
            note = " (no systemd user manager is running)"
    elif method == "launchd":
        active = installed and ctx.launchctl("print", ctx.launchd_target).returncode == 0
    elif method == "startup":
        shortcut = ctx.startup_dir / STARTUP_SHORTCUT_NAME
        if shortcut.exists():
            note = f"; also a shortcut {shortcut}"
            installed = active = True
    return Status(method, path, installed, active, current, note)
