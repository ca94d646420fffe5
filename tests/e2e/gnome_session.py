"""Inside a headless GNOME Shell session: drives the real GNOME path of the
IBus engine and writes what happened to ``OUT/result.json``.

Run by ``test_ibus_gnome.py`` as an unprivileged user inside
``dbus-run-session`` (GNOME Shell refuses root).  Steps: a private, empty
"system" bus (GNOME Shell wants one; the host's is not ours); ``ghosttype ibus
install`` (user level) and the session environment it sets up; ghosttype as
the only input source (``org.gnome.desktop.input-sources``); ``gnome-shell
--wayland --headless --no-x11 --virtual-monitor``, which starts ibus-daemon
itself, which starts the engine from its component file; a native Wayland
GTK3 app with ``GTK_IM_MODULE=wayland`` (text-input-v3); keys through Mutter's
RemoteDesktop D-Bus API.

    python -m tests.e2e.gnome_session OUT DISPLAY_MODE
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time

from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection

from tests.e2e.ibus_desktop import APP, ROOT, SYSTEM_PYTHON, GtkApp
from tests.e2e.xserver import wait_until

REMOTE_DESKTOP = "org.gnome.Mutter.RemoteDesktop"
TYPED = "The quick brown fox jumps over the la"
#: Settings that keep GNOME Shell from putting anything between the keys and the app: no welcome
#: tour (GNOME 40 and later show it at a user's first session), no animations.
QUIET_SHELL = (("org.gnome.shell", "welcome-dialog-last-shown-version", "'999'"),
               ("org.gnome.desktop.interface", "enable-animations", "false"))
#: Seconds after its start by which GNOME Shell's start-up overview has come and can be left.
OVERVIEW_OVER_S = 15.0


class MutterKeys:
    """Key presses through org.gnome.Mutter.RemoteDesktop (no X11, no uinput)."""

    def __init__(self) -> None:
        self.conn = open_dbus_connection("SESSION")
        root = DBusAddress("/org/gnome/Mutter/RemoteDesktop", bus_name=REMOTE_DESKTOP, interface=REMOTE_DESKTOP)
        try:
            (path,) = self._call(root, "CreateSession")
            self.session = DBusAddress(path, bus_name=REMOTE_DESKTOP, interface=REMOTE_DESKTOP + ".Session")
            self._call(self.session, "Start")
        except BaseException:
            self.conn.close()
            raise

    @classmethod
    def connect(cls, timeout: float) -> "MutterKeys":
        """A session as soon as GNOME Shell offers its RemoteDesktop API (a moment after its socket)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return cls()
            except RuntimeError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _call(self, address, method, signature=None, body=()):
        reply = self.conn.send_and_get_reply(new_method_call(address, method, signature, body), timeout=10)
        if reply.header.message_type.name == "error":
            raise RuntimeError(f"{method}: {reply.body}")
        return reply.body

    def keysym(self, keysym: int) -> None:
        for down in (True, False):
            self._call(self.session, "NotifyKeyboardKeysym", "ub", (keysym, down))
            time.sleep(0.02)
        time.sleep(0.05)

    def type(self, text: str) -> None:
        for ch in text:
            self.keysym(ord(ch))  # Latin-1 keysyms are the code points

    def close(self) -> None:
        try:
            self._call(self.session, "Stop")
        finally:
            self.conn.close()


TAB, ESCAPE, BACKSPACE = 0xFF09, 0xFF1B, 0xFF08


def main() -> int:
    out = pathlib.Path(sys.argv[1])
    display_mode = sys.argv[2]
    result: dict = {"steps": []}
    env = dict(os.environ)
    procs: list[subprocess.Popen] = []

    def step(name: str, **info) -> None:
        result["steps"].append(name)
        result.update(info)
        (out / "result.json").write_text(json.dumps(result))

    try:
        sysbus = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"],
                                capture_output=True, text=True, timeout=20).stdout.split()
        env["DBUS_SYSTEM_BUS_ADDRESS"], sysbus_pid = sysbus[0], int(sysbus[1])
        config = pathlib.Path(env["HOME"]) / ".config" / "ghosttype" / "config.toml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(f'log_level = "debug"\ndebounce_ms = 5\nmax_tokens = 6\nibus_display = "{display_mode}"\n')
        inst = subprocess.run([sys.executable, "-m", "daemon", "ibus", "install"], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=60)
        assert inst.returncode == 0, inst.stdout + inst.stderr
        for conf in (pathlib.Path(env["HOME"]) / ".config" / "environment.d").glob("*.conf"):
            for line in conf.read_text().splitlines():
                if "=" in line and not line.startswith("#"):
                    key, value = line.split("=", 1)
                    env[key] = value
        subprocess.run(["gsettings", "set", "org.gnome.desktop.input-sources", "sources", "[('ibus', 'ghosttype')]"],
                       env=env, check=True, timeout=20)
        for schema, key, value in QUIET_SHELL:
            subprocess.run(["gsettings", "set", schema, key, value], env=env, check=False, timeout=20)
        step("installed")
        runtime = pathlib.Path(env["XDG_RUNTIME_DIR"])
        shell = subprocess.Popen(["gnome-shell", "--wayland", "--headless", "--no-x11", "--virtual-monitor", "800x240"],
                                 env={**env, "XDG_SESSION_TYPE": "wayland"}, stdout=open(out / "gnome-shell.log", "wb"),
                                 stderr=subprocess.STDOUT)
        procs.append(shell)
        assert wait_until(lambda: (runtime / "wayland-0").exists() or shell.poll() is not None, timeout=60), \
            "no Wayland socket"
        assert shell.poll() is None, (out / "gnome-shell.log").read_text()[-3000:]
        started = time.monotonic()
        env.update(WAYLAND_DISPLAY="wayland-0", GDK_BACKEND="wayland", GTK_IM_MODULE="wayland")
        step("gnome-shell")
        keys = MutterKeys.connect(timeout=20)
        # GNOME Shell opens its overview a few seconds after it starts: a window mapped before that is
        # over stays behind it and loses its keys (GNOME Shell 51), so the app starts after it.
        keys.keysym(ESCAPE)
        time.sleep(max(0.0, OVERVIEW_OVER_S - (time.monotonic() - started)))
        keys.keysym(ESCAPE)
        time.sleep(1.5)
        log = pathlib.Path(env["HOME"]) / ".local" / "state" / "ghosttype" / "log"

        def engine_log() -> str:
            return "".join(p.read_text(errors="replace") for p in sorted(log.glob("*.log*"))) if log.exists() else ""

        state = out / "app.json"
        app_proc = subprocess.Popen([SYSTEM_PYTHON, str(APP), str(state), "--gtk", "3"], env=env,
                                    stdout=subprocess.DEVNULL, stderr=open(out / "app.stderr", "wb"))
        procs.append(app_proc)
        app = GtkApp(app_proc, state)
        assert wait_until(lambda: app.state().get("ready"), timeout=30), "app not ready"
        step("app")
        assert wait_until(lambda: "status: ready" in engine_log(), timeout=120), "engine not ready:\n" + engine_log()
        step("engine ready", started_by_ibus="started by ibus-daemon" in engine_log())
        for _attempt in range(8):
            keys.type("x")
            if wait_until(lambda: app.field()["text"] == "x", timeout=3):
                break
            keys.keysym(ESCAPE)
        assert app.field()["text"] == "x", app.state()
        keys.keysym(BACKSPACE)
        assert wait_until(lambda: app.field()["text"] == "", timeout=10), app.state()
        step("keys reach the app", client_gnome_shell="app gnome-shell" in engine_log() or "client gnome-shell" in engine_log())
        keys.type(TYPED)
        assert wait_until(lambda: app.field()["text"] == TYPED, timeout=20), app.state()
        if display_mode == "preedit":
            assert wait_until(lambda: app.field()["preedit"], timeout=30), app.state()
            time.sleep(0.3)
            ghost = app.field()["preedit"]
        else:
            # GNOME Shell's popup, or on GNOME 45 and later ghosttype's extension
            # (which `ghosttype ibus install` enabled for this user): never a preedit
            shown = ("suggestion shown as popup", "suggestion shown as shell")
            assert wait_until(lambda: any(s in engine_log() for s in shown), timeout=30), engine_log()[-3000:]
            ghost = None
        step("suggestion shown", preedit=app.field()["preedit"])
        keys.keysym(TAB)
        assert wait_until(lambda: len(app.field()["text"]) > len(TYPED) and not app.field()["preedit"], timeout=10), \
            app.state()
        time.sleep(0.5)
        step("tab", text=app.field()["text"], focus=app.focus(), ghost=ghost,
             preedits=app.field()["preedits"])
        keys.close()
        result["ok"] = True
    except BaseException as e:  # noqa: BLE001 - reported to the outer test
        result["error"] = f"{type(e).__name__}: {e}"
    finally:
        (out / "result.json").write_text(json.dumps(result))
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
        try:
            os.kill(sysbus_pid, 15)
        except (NameError, ProcessLookupError, UnboundLocalError):
            pass
    return 0 if result.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
