"""``ghosttype autostart``: enable / disable / status on every platform, with a
temporary home and a fake runner that records the systemctl / launchctl calls
and keeps the state a real manager would (enable symlinks, loaded agents)."""

from __future__ import annotations

import os
import pathlib
import plistlib
import stat
from typing import Optional, Sequence

import pytest

from daemon import autostart
from daemon.__main__ import main
from daemon.autostart import AutostartError, Context, Result

PROGRAM = ("/opt/gt venv/bin/ghosttype",)
UNIT = ("systemctl", "--user")


class FakeManagers:
    """systemctl --user and launchctl as far as the autostart code uses them."""

    def __init__(self, systemd: Optional[str] = "running",
                 graphical: str = "active", fail: Sequence[str] = ()) -> None:
        self.systemd = systemd  # is-system-running answer; None: offline
        self.graphical = graphical
        self.fail = set(fail)  # verbs that fail ("enable", "bootstrap", ...)
        self.loaded: set[str] = set()
        self.calls: list[list[str]] = []
        self.ctx: Optional[Context] = None

    def __call__(self, argv: Sequence[str]) -> Result:
        argv = list(argv)
        self.calls.append(argv)
        if argv[:2] == list(UNIT):
            return self._systemctl(argv[2:])
        if argv[0] == "launchctl":
            return self._launchctl(argv[1:])
        return Result(127, "", f"{argv[0]}: command not found")

    def _systemctl(self, args: list[str]) -> Result:
        if self.systemd is None:
            return Result(1, "offline\n", "Failed to connect to bus: No medium found\n")
        verb = args[0]
        if verb in self.fail:
            return Result(1, "", f"Failed to {verb} unit: Access denied\n")
        link = self.ctx.wants_link
        if verb == "is-system-running":
            return Result(0 if self.systemd == "running" else 1, self.systemd + "\n")
        if verb == "is-active":
            return Result(0 if self.graphical == "active" else 3, self.graphical + "\n")
        if verb == "enable":
            assert self.ctx.path("systemd").is_file(), "enable before the unit file exists"
            link.parent.mkdir(parents=True, exist_ok=True)
            if not link.is_symlink():
                link.symlink_to(self.ctx.path("systemd"))
        if verb == "disable" and link.is_symlink():
            link.unlink()
        return Result(0)

    def _launchctl(self, args: list[str]) -> Result:
        verb, target = args[0], args[-1]
        if verb in self.fail:
            return Result(5, "", "Bootstrap failed: 5: Input/output error\n")
        if verb == "print":
            return Result(0 if target in self.loaded else 113, "", "" if target in self.loaded else
                          f"Could not find service \"{autostart.LAUNCHD_LABEL}\" in domain\n")
        if verb == "bootstrap":  # bootstrap DOMAIN PLIST
            self.loaded.add(f"{args[1]}/{autostart.LAUNCHD_LABEL}")
        if verb == "bootout":
            self.loaded.discard(target)
        return Result(0)

    def verbs(self) -> list[str]:
        """The calls without the ``systemctl --user`` prefix, joined."""
        return [" ".join(c[2:] if c[:2] == list(UNIT) else c) for c in self.calls]


def make_ctx(tmp_path: pathlib.Path, platform: str = "linux", program=PROGRAM, **fake) -> tuple[Context, FakeManagers]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    runner = FakeManagers(**fake)
    ctx = Context(platform, home, home / ".config", home / "AppData" / "Roaming", 1234,
                  program=program, run=runner)
    runner.ctx = ctx
    return ctx, runner


# -- Linux: systemd ------------------------------------------------------------


def test_enable_picks_systemd_when_a_user_manager_runs(tmp_path):
    ctx, fake = make_ctx(tmp_path)
    report = autostart.enable(ctx)
    unit = ctx.path("systemd")
    assert unit == tmp_path / "home/.config/systemd/user/ghosttype.service"
    assert unit.read_text() == autostart.render("systemd", PROGRAM)
    assert 'ExecStart="/opt/gt venv/bin/ghosttype" run' in unit.read_text()
    assert fake.verbs() == ["is-system-running", "is-system-running", "daemon-reload",
                            "enable ghosttype.service", "is-active graphical-session.target"]
    assert ctx.wants_link.is_symlink() and not ctx.path("xdg").exists()
    assert report.lines[0] == f"systemd: wrote {unit}"
    assert "starts with your next graphical session" in report.lines[1]
    assert report.warnings == []
    assert [s.line() for s in autostart.status(ctx)] == [
        f"systemd: enabled, {unit}",
        f"xdg: not installed ({ctx.path('xdg')})",
    ]


def test_enable_is_idempotent(tmp_path):
    ctx, fake = make_ctx(tmp_path)
    autostart.enable(ctx)
    first = ctx.path("systemd").read_text()
    fake.calls.clear()
    report = autostart.enable(ctx)
    assert ctx.path("systemd").read_text() == first
    assert report.lines[0] == f"systemd: up to date: {ctx.path('systemd')}"
    assert fake.verbs()[2:4] == ["daemon-reload", "enable ghosttype.service"]
    assert sorted(p.name for p in ctx.unit_dir.rglob("*")) == [
        "ghosttype.service", "ghosttype.service", "graphical-session.target.wants"]


def test_systemd_warns_when_the_graphical_session_target_is_not_active(tmp_path):
    ctx, _ = make_ctx(tmp_path, graphical="inactive")
    report = autostart.enable(ctx, "systemd")
    assert len(report.warnings) == 1
    assert "graphical-session.target is inactive" in report.warnings[0]
    assert "--method xdg" in report.warnings[0]


def test_forced_systemd_without_a_manager_is_an_error(tmp_path):
    ctx, fake = make_ctx(tmp_path, systemd=None)
    with pytest.raises(AutostartError, match="no systemd user manager is running.*--method xdg") as ei:
        autostart.enable(ctx, "systemd")
    assert ei.value.code == 1
    assert not ctx.path("systemd").exists()


def test_a_failing_systemctl_is_one_error_line_naming_the_file(tmp_path):
    ctx, _ = make_ctx(tmp_path, fail=["enable"])
    with pytest.raises(AutostartError) as ei:
        autostart.enable(ctx)
    msg = str(ei.value)
    assert "\n" not in msg
    assert msg.startswith("systemctl --user enable ghosttype.service failed: Failed to enable unit: Access denied")
    assert str(ctx.path("systemd")) in msg


def test_disable_stops_disables_and_removes_the_unit(tmp_path):
    ctx, fake = make_ctx(tmp_path)
    autostart.enable(ctx)
    fake.calls.clear()
    report = autostart.disable(ctx)
    assert fake.verbs() == ["is-system-running", "disable --now ghosttype.service", "daemon-reload"]
    assert not ctx.path("systemd").exists() and not ctx.wants_link.is_symlink()
    assert report.lines == [f"systemd: removed {ctx.path('systemd')}",
                            f"xdg: nothing installed ({ctx.path('xdg')})"]
    fake.calls.clear()
    again = autostart.disable(ctx)  # idempotent: nothing to do, no manager calls
    assert fake.calls == []
    assert again.lines == [f"systemd: nothing installed ({ctx.path('systemd')})",
                           f"xdg: nothing installed ({ctx.path('xdg')})"]


def test_disable_without_a_running_manager_removes_the_files_itself(tmp_path):
    ctx, fake = make_ctx(tmp_path)
    autostart.enable(ctx)
    fake.systemd = None  # e.g. run from a console login
    autostart.disable(ctx, "systemd")
    assert not ctx.path("systemd").exists() and not ctx.wants_link.is_symlink()
    assert not any("disable" in v for v in fake.verbs())


# -- Linux: XDG autostart ---------------------------------------------------------


def test_enable_falls_back_to_xdg_autostart_without_a_user_manager(tmp_path):
    ctx, fake = make_ctx(tmp_path, systemd=None)
    report = autostart.enable(ctx)
    entry = ctx.path("xdg")
    assert entry == tmp_path / "home/.config/autostart/ghosttype.desktop"
    assert entry.read_text() == autostart.render("xdg", PROGRAM)
    assert 'Exec="/opt/gt venv/bin/ghosttype" run' in entry.read_text()
    assert fake.verbs() == ["is-system-running"]
    assert report.lines[0] == f"xdg: wrote {entry}"
    assert [s.line() for s in autostart.status(ctx)] == [
        f"systemd: not installed ({ctx.path('systemd')}) (no systemd user manager is running)",
        f"xdg: installed, {entry}",
    ]


def test_switching_methods_leaves_exactly_one_entry(tmp_path):
    ctx, fake = make_ctx(tmp_path)
    autostart.enable(ctx, "xdg")
    autostart.enable(ctx, "systemd")
    assert ctx.path("systemd").is_file() and not ctx.path("xdg").exists()
    fake.calls.clear()
    report = autostart.enable(ctx, "xdg")
    assert ctx.path("xdg").is_file() and not ctx.path("systemd").exists()
    assert not ctx.wants_link.is_symlink()
    assert "disable --now ghosttype.service" in fake.verbs()
    assert report.lines[-1] == f"systemd: removed {ctx.path('systemd')} (replaced by xdg)"


def test_status_notices_an_entry_for_another_ghosttype(tmp_path):
    ctx, _ = make_ctx(tmp_path, systemd=None)
    autostart.enable(ctx)
    moved = dataclass_replace(ctx, program=("/elsewhere/ghosttype",))
    line = autostart.status(moved)[1].line()
    assert line == (f"xdg: installed, {ctx.path('xdg')}; "
                    "differs from what `ghosttype autostart enable` writes now")


def dataclass_replace(ctx: Context, **changes) -> Context:
    import dataclasses

    return dataclasses.replace(ctx, **changes)


# -- macOS ------------------------------------------------------------------------


def test_macos_launch_agent(tmp_path):
    ctx, fake = make_ctx(tmp_path, platform="darwin")
    report = autostart.enable(ctx)
    plist = ctx.path("launchd")
    assert plist == tmp_path / "home/Library/LaunchAgents/io.github.ghosttype.plist"
    data = plistlib.loads(plist.read_bytes())
    assert data["ProgramArguments"] == [*PROGRAM, "run"]
    assert data["Label"] == "io.github.ghosttype" and data["RunAtLoad"] is True
    assert data["KeepAlive"] == {"SuccessfulExit": False}
    assert fake.verbs() == ["launchctl print gui/1234/io.github.ghosttype",
                            f"launchctl bootstrap gui/1234 {plist}"]
    assert report.lines[-1] == "launchd: loaded io.github.ghosttype; it runs now and at every login"
    assert [s.line() for s in autostart.status(ctx)] == [f"launchd: loaded, {plist}"]

    fake.calls.clear()
    autostart.enable(ctx)  # unchanged and loaded: nothing to do
    assert fake.verbs() == ["launchctl print gui/1234/io.github.ghosttype"]

    fake.calls.clear()
    autostart.enable(dataclass_replace(ctx, program=("/new/ghosttype",)))  # changed: reload
    assert fake.verbs() == ["launchctl print gui/1234/io.github.ghosttype",
                            "launchctl bootout gui/1234/io.github.ghosttype",
                            f"launchctl bootstrap gui/1234 {plist}"]

    fake.calls.clear()
    report = autostart.disable(ctx)
    assert fake.verbs() == ["launchctl print gui/1234/io.github.ghosttype",
                            "launchctl bootout gui/1234/io.github.ghosttype"]
    assert not plist.exists()
    assert report.lines == ["launchd: unloaded io.github.ghosttype", f"launchd: removed {plist}"]
    assert [s.line() for s in autostart.status(ctx)] == [f"launchd: not installed ({plist})"]


def test_macos_bootstrap_failure(tmp_path):
    ctx, _ = make_ctx(tmp_path, platform="darwin", fail=["bootstrap"])
    with pytest.raises(AutostartError, match=r"^launchctl bootstrap gui/1234 failed: Bootstrap failed: 5"):
        autostart.enable(ctx)


def test_macos_plist_escapes_the_path(tmp_path):
    ctx, _ = make_ctx(tmp_path, platform="darwin", program=("/Users/a&b/<x>/ghosttype",))
    autostart.enable(ctx)
    data = plistlib.loads(ctx.path("launchd").read_bytes())
    assert data["ProgramArguments"] == ["/Users/a&b/<x>/ghosttype", "run"]


# -- Windows ----------------------------------------------------------------------


def test_windows_startup_folder(tmp_path):
    program = (r"C:\Users\Ann Lee\.local\bin\ghosttype.exe",)
    ctx, fake = make_ctx(tmp_path, platform="win32", program=program)
    startup = tmp_path / "home/AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup"
    startup.mkdir(parents=True)
    (startup / "ghosttype.lnk").write_bytes(b"L\0\0\0")  # from install-startup.ps1
    report = autostart.enable(ctx)
    cmd = startup / "ghosttype.cmd"
    raw = cmd.read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n") == 3
    assert b'start "ghosttype" /min "C:\\Users\\Ann Lee\\.local\\bin\\ghosttype.exe" run\r\n' in raw
    assert not (startup / "ghosttype.lnk").exists()
    assert f"startup: removed {startup / 'ghosttype.lnk'} (replaced by ghosttype.cmd)" in report.lines
    assert fake.calls == []
    assert [s.line() for s in autostart.status(ctx)] == [f"startup: installed, {cmd}"]
    autostart.enable(ctx)
    assert cmd.read_bytes() == raw
    assert autostart.disable(ctx).lines == [f"startup: removed {cmd}"]
    assert not cmd.exists()


def test_methods_of_another_platform_are_usage_errors(tmp_path):
    ctx, _ = make_ctx(tmp_path, platform="win32")
    with pytest.raises(AutostartError, match="--method systemd is not available on this platform; use startup") as ei:
        autostart.enable(ctx, "systemd")
    assert ei.value.code == 2


@pytest.mark.parametrize("platform,key", [("linux", "linux"), ("darwin", "darwin"), ("win32", "win32"),
                                          ("cygwin", "win32"), ("freebsd13", "linux")])
def test_platform_key(platform, key):
    assert autostart.platform_key(platform) == key


# -- quoting ----------------------------------------------------------------------


@pytest.mark.parametrize("method,program,expected", [
    ("systemd", ["/usr/bin/ghosttype"], "/usr/bin/ghosttype"),
    ("systemd", ["/home/a b/bin/gt", "-m", "daemon"], '"/home/a b/bin/gt" -m daemon'),
    ("systemd", ["/home/100%/$x/gt"], "/home/100%%/$x/gt"),  # no variables in the executable
    ("systemd", ["/p/gt", "a$b", "c d", 'e"f'], '/p/gt a$$b "c d" "e\\"f"'),
    ("xdg", ["/usr/bin/ghosttype"], "/usr/bin/ghosttype"),
    ("xdg", ["/home/a b/gt"], '"/home/a b/gt"'),
    ("xdg", ["/p/100%/gt"], "/p/100%%/gt"),
    ("xdg", ["/p/$x`/gt"], '"/p/\\\\$x\\\\`/gt"'),
    ("launchd", ["/a&b", "-m"], "    <string>/a&amp;b</string>\n    <string>-m</string>"),
    ("startup", [r"C:\100%\gt.exe"], r'"C:\100%%\gt.exe"'),
])
def test_format_command(method, program, expected):
    assert autostart.format_command(method, program) == expected


@pytest.mark.parametrize("bad", ["/a'b/gt", '/a"b/gt', "/a\\b/gt"])
def test_systemd_refuses_quotes_and_backslashes_in_the_executable(bad):
    with pytest.raises(AutostartError, match="systemd does not accept .*use --method xdg"):
        autostart.render("systemd", [bad])
    assert "Exec=\"" in autostart.render("xdg", [bad])  # the desktop entry can quote it


def test_control_characters_are_refused():
    with pytest.raises(AutostartError, match="control characters"):
        autostart.render("xdg", ["/a\nb/gt"])


# -- which program ------------------------------------------------------------------


def _script(path: pathlib.Path) -> pathlib.Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_find_program_prefers_the_running_script(tmp_path):
    script = _script(tmp_path / "local/bin/ghosttype")
    other = _script(tmp_path / "venv/bin/ghosttype")
    found = autostart.find_program(argv0=str(script), executable=str(tmp_path / "venv/bin/python"),
                                   which=lambda name: None)
    assert found == (str(script),)
    beside = autostart.find_program(argv0="/usr/lib/python3/pytest", executable=str(tmp_path / "venv/bin/python"),
                                    which=lambda name: None)
    assert beside == (str(other),)


def test_find_program_symlinks_are_kept(tmp_path):
    target = _script(tmp_path / "pipx/venvs/ghosttype/bin/ghosttype")
    link = tmp_path / "bin/ghosttype"
    link.parent.mkdir()
    link.symlink_to(target)
    assert autostart.find_program(argv0=str(link), executable="/nonexistent/python",
                                  which=lambda name: None) == (str(link),)


def test_find_program_falls_back_to_path_then_to_python_m_daemon(tmp_path):
    on_path = _script(tmp_path / "path/ghosttype")
    assert autostart.find_program(argv0="x", executable="/nonexistent/python",
                                  which=lambda name: str(on_path)) == (str(on_path),)
    import sysconfig

    installed = pathlib.Path(sysconfig.get_paths()["purelib"]) / "daemon"
    assert autostart.find_program(argv0="x", executable="/usr/bin/python3", which=lambda name: None,
                                  package_dir=installed) == ("/usr/bin/python3", "-m", "daemon")
    with pytest.raises(AutostartError, match="no installed ghosttype executable found"):
        autostart.find_program(argv0="x", executable="/usr/bin/python3", which=lambda name: None,
                               package_dir=tmp_path / "checkout" / "daemon")


# -- the command line -------------------------------------------------------------------


@pytest.fixture
def cli_env(tmp_path, monkeypatch):
    """main() with a temporary home, a fake manager and a fixed program."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "cfg"))
    monkeypatch.setattr(autostart, "platform_key", lambda platform=None: "linux")
    monkeypatch.setattr(autostart, "find_program", lambda: PROGRAM)
    fake = FakeManagers()
    real_current = Context.current.__func__

    def current(cls, run=None):
        ctx = real_current(cls, run=fake)
        fake.ctx = ctx
        return ctx

    monkeypatch.setattr(Context, "current", classmethod(current))
    return home, fake


def test_cli_enable_status_disable(cli_env, capsys):
    home, fake = cli_env
    unit = home / "cfg/systemd/user/ghosttype.service"
    assert main(["autostart", "enable"]) == 0
    out = capsys.readouterr()
    assert out.out.splitlines()[0] == f"systemd: wrote {unit}"
    assert out.err == ""
    assert unit.read_text() == autostart.render("systemd", PROGRAM)

    assert main(["autostart", "status"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"systemd: enabled, {unit}", f"xdg: not installed ({home / 'cfg/autostart/ghosttype.desktop'})"]
    assert main(["autostart", "status", "--method", "xdg"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"xdg: not installed ({home / 'cfg/autostart/ghosttype.desktop'})"]

    assert main(["autostart", "disable"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"systemd: removed {unit}"
    assert not unit.exists()

    assert main(["autostart", "enable", "--method", "xdg"]) == 0
    capsys.readouterr()
    assert (home / "cfg/autostart/ghosttype.desktop").read_text() == autostart.render("xdg", PROGRAM)


def test_cli_method_of_another_platform_is_exit_2(cli_env, capsys):
    assert main(["autostart", "enable", "--method", "launchd"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "ghosttype autostart: error: --method launchd is not available on this platform; use systemd or xdg"]


@pytest.mark.parametrize("argv", [["autostart", "start"], ["autostart", "enable", "--method", "nope"],
                                  ["autostart"]])
def test_cli_bad_arguments_are_one_line_and_exit_2(cli_env, capsys, argv):
    with pytest.raises(SystemExit) as ei:
        main(argv)
    assert ei.value.code == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("ghosttype autostart: error: ")


def test_cli_manager_failure_is_one_line_and_exit_1(cli_env, capsys):
    _, fake = cli_env
    fake.fail = {"daemon-reload"}
    assert main(["autostart", "enable"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith("ghosttype autostart: error: systemctl --user daemon-reload failed: ")


def test_cli_unwritable_config_dir_is_one_line(cli_env, capsys):
    home, fake = cli_env
    fake.systemd = None
    (home / "cfg").write_text("not a directory")
    assert main(["autostart", "enable"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"ghosttype autostart: error: cannot write {home / 'cfg'}")


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX only")
def test_context_current_follows_xdg_config_home(cli_env):
    home, _ = cli_env
    ctx = Context.current()
    assert ctx.config_home == home / "cfg" and ctx.home == home and ctx.uid == os.getuid()
