"""Whom the engine's end of the inline link (:mod:`daemon.frontends.ibus.inline.shell_ghost`) believes and
whom it sends text to, over a private ``dbus-daemon``: the owner of the plug-in's name is told by the
bus daemon alone, the plug-in's connection must belong to the compositor's own process, calls go to
the unique name that was checked, and nothing that arrives stops the receiving thread.

The squatter is another connection of this process, as any program of the user could open one; it
takes the plug-in's name while GNOME Shell does not hold it (another desktop, a screen lock before
the extension kept its name, a KWin restart).
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import threading
import time

import pytest

from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection as open_blocking

from daemon.frontends.ibus.inline import compositor
from daemon.frontends.ibus.safepath import first_unsafe
from daemon.frontends.ibus.inline.shell_ghost import BUS_NAME, OBJECT_PATH, SHELL_NAME, ShellGhost
from tests.daemon.test_ibus_bus_order import bus_address  # noqa: F401  (the private dbus-daemon)
from tests.daemon.test_ibus_engine import TAB, press, type_text
from tests.daemon.test_shell_ghost import Peer, gnome, runs, wait_until  # noqa: F401  (gnome: the fixture)

_DBUS_PATH = "/org/freedesktop/DBus"
_DBUS = "org.freedesktop.DBus"
_MONITORING = DBusAddress(_DBUS_PATH, bus_name=_DBUS, interface="org.freedesktop.DBus.Monitoring")


def test_a_squatter_that_says_it_owns_gnome_shell_is_not_believed_and_gets_no_text(bus_address):
    """On Plasma (nobody owns org.gnome.Shell) a program takes the extension's name and tells the
    engine, in a NameOwnerChanged sent to it alone, that it owns org.gnome.Shell too.  Only the bus
    daemon says who owns a name: the engine keeps the popup and sends the squatter nothing, even
    where the process check would let it through."""
    squatter = Peer(bus_address, (BUS_NAME,))
    g = ShellGhost(verify=runs("gnome-shell"))  # the process check passes: what refuses it is the sender
    try:
        g.start(bus_address)
        assert not g.present
        squatter.unicast(g._conn.unique_name, _DBUS_PATH, _DBUS, "NameOwnerChanged", "sss",
                         (SHELL_NAME, "", squatter.unique))
        time.sleep(0.3)
        g.draw("tor that allows")
        g.caret_moved()
        time.sleep(0.3)
        assert not g.present
        assert squatter.calls == [] and squatter.offsets == [] and squatter.handshake == []
        assert not g.drawn("tor that allows")
    finally:
        squatter.close()
        g.close()


def test_the_default_check_refuses_a_connection_whose_process_is_not_the_compositor(bus_address):
    """The same names on one connection as GNOME Shell's, held by this Python process: the engine's
    own process check (no stand-in) refuses it before any text or handshake goes to it."""
    impostor = Peer(bus_address, (SHELL_NAME, BUS_NAME))
    g = ShellGhost()
    try:
        g.start(bus_address)
        assert not g.present
        g.draw("tor that allows")
        time.sleep(0.3)
        assert impostor.handshake == [] and impostor.calls == [] and impostor.offsets == []
    finally:
        impostor.close()
        g.close()


def test_the_process_check_reads_what_a_process_runs_and_accepts_only_the_compositors():
    """:func:`compositor.program` names the executable a process runs (this interpreter, where only
    root can change it), and that name is none of the compositors'; a process that is not there
    (or whose executable cannot be read) is nobody."""
    real = os.readlink(f"/proc/{os.getpid()}/exe")
    expected = pathlib.Path(real).name if first_unsafe([real]) is None else None
    assert compositor.program(os.getpid()) == expected
    assert not any(expected in names for names in compositor.COMPOSITORS.values())
    assert compositor.program(2 ** 22 + 1) is None  # above the kernel's largest pid


def test_calls_go_to_the_unique_name_that_was_checked(bus_address):
    """The name changes hands between the engine's check and its next Show (the extension was
    switched off and a squatter took the name before the engine heard): the text goes to the
    connection that was checked, never to whoever owns the name now."""
    shell = Peer(bus_address, (SHELL_NAME, BUS_NAME))
    gate, inside = threading.Event(), threading.Event()

    def drawn(*_answer) -> None:  # holds the receiving thread: the engine hears of no change meanwhile
        inside.set()
        gate.wait(5)

    g = ShellGhost(on_drawn=drawn, verify=runs("gnome-shell"))
    squatter = None
    try:
        g.start(bus_address)
        assert g.present
        g.draw("tor")
        assert inside.wait(5)
        shell.call("ReleaseName", "s", (BUS_NAME,))
        squatter = Peer(bus_address, (BUS_NAME,))  # the bus daemon made it the owner before answering
        g.draw("the rest of what was typed")
        time.sleep(0.3)
        assert squatter.calls == [] and squatter.offsets == []
        assert shell.calls[-1] == ("Show", ("the rest of what was typed",))
        gate.set()
        assert wait_until(lambda: not g.present)
        g.draw("more text")
        time.sleep(0.3)
        assert squatter.calls == [] and squatter.handshake == []
    finally:
        gate.set()
        shell.close()
        if squatter is not None:
            squatter.close()
        g.close()


def test_malformed_messages_leave_the_link_working_and_tab_inserts_what_is_drawn(bus_address, gnome):
    """A NameOwnerChanged with one string, sent to the engine alone, a Caret of two numbers and a
    Show answered with the wrong types (from the plug-in itself): each is dropped and the link goes
    on, so the next suggestion is drawn and Tab inserts it."""
    rig, shell, engine, out = gnome
    link = rig.frontend.shell
    squatter = Peer(bus_address, ())
    try:
        me = link._conn.unique_name
        squatter.unicast(me, _DBUS_PATH, _DBUS, "NameOwnerChanged", "s", (SHELL_NAME,))
        shell.unicast(me, _DBUS_PATH, _DBUS, "NameOwnerChanged", "s", (BUS_NAME,))
        shell.unicast(me, OBJECT_PATH, BUS_NAME, "Caret", "ii", (10, 20))
        shell.show_answer = ("s", ("drawn",))
        type_text(engine, "Say hel")
        rig.deliver("lo world")
        assert wait_until(lambda: shell.calls == [("Show", ("lo world",))])
        time.sleep(0.3)
        assert not link.drawn("lo world") and press(engine, TAB) is False
        shell.show_answer = None
        type_text(engine, "l")
        rig.deliver("o world")
        assert wait_until(lambda: link.drawn("o world"))
        assert press(engine, TAB) is True
        assert out.committed == ["o world"]
    finally:
        squatter.close()


def test_a_callback_that_fails_does_not_stop_the_receiving_thread(bus_address):
    """Whatever goes wrong while one message is handled, the next is handled: the engine's own
    callback failing once leaves later answers counted."""
    shell = Peer(bus_address, (SHELL_NAME, BUS_NAME))
    failures = [RuntimeError("once")]

    def drawn(*_answer) -> None:
        if failures:
            raise failures.pop()

    g = ShellGhost(on_drawn=drawn, verify=runs("gnome-shell"))
    try:
        g.start(bus_address)
        g.draw("tor")
        assert wait_until(lambda: not failures)
        g.draw("that allows")
        assert wait_until(lambda: g.drawn("that allows"))
    finally:
        shell.close()
        g.close()


def test_a_monitor_of_the_same_user_reads_the_suggestion_on_the_session_bus(bus_address):
    """What the link does not protect against (the README's Privacy section): any program of the user
    may monitor the session bus (BecomeMonitor, as dbus-monitor does) and read Show's text, as any
    client on IBus's own bus reads the keys (tests/e2e/test_ibus_bus_readable.py)."""
    shell = Peer(bus_address, (SHELL_NAME, BUS_NAME))
    g = ShellGhost(verify=runs("gnome-shell"))
    monitor = open_blocking(bus_address)
    try:
        reply = monitor.send_and_get_reply(new_method_call(_MONITORING, "BecomeMonitor", "asu",
                                                           (["type='method_call',member='Show'"], 0)), timeout=5)
        assert reply.header.message_type == MessageType.method_return, reply.body
        g.start(bus_address)
        g.draw("the rest of what was typed")
        read = []
        with contextlib.suppress(TimeoutError):
            while True:
                msg = monitor.receive(timeout=1)
                if msg.header.fields.get(HeaderFields.member) == "Show":
                    read.append(msg.body[0])
        assert read == ["the rest of what was typed"]
    finally:
        monitor.close()
        shell.close()
        g.close()


_KWIN_LIKE = """
import ctypes, json, subprocess, sys
from daemon.frontends.ibus.inline import compositor
code = ("import ctypes, sys, time\\n"
        "libc = ctypes.CDLL(None)\\n"
        "libc.prctl(15, b'kwin_wayland', 0, 0, 0)\\n"    # PR_SET_NAME
        "libc.prctl(4, int(sys.argv[1]), 0, 0, 0)\\n"    # PR_SET_DUMPABLE
        "print('ready', flush=True)\\n"
        "time.sleep(30)\\n")
hidden = subprocess.Popen([sys.executable, "-c", code, "0"], stdout=subprocess.PIPE, text=True)
shown = subprocess.Popen([sys.executable, "-c", code, "1"], stdout=subprocess.PIPE, text=True)
try:
    assert hidden.stdout.readline().strip() == "ready" and shown.stdout.readline().strip() == "ready"
    print(json.dumps({d: [compositor.program(hidden.pid, desktop=d), compositor.program(shown.pid, desktop=d)]
                      for d in ("KDE", "GNOME", "")}))
finally:
    for p in (hidden, shown):
        p.kill()
        p.wait()
"""


def test_kwin_which_hides_its_executable_counts_only_in_a_plasma_session():
    """KWin makes itself not dumpable, so its /proc/PID/exe cannot be read: a process of this user that does
    the same and is named kwin_wayland counts as KWin where XDG_CURRENT_DESKTOP says KDE, nowhere else; one
    named so that shows its executable is judged by that executable (this interpreter). Run as an
    unprivileged user (root reads every process's executable)."""
    import json
    import pathlib
    import shutil
    import subprocess
    import sys
    repo = str(pathlib.Path(__file__).resolve().parents[2])
    cmd = [sys.executable, "-c", _KWIN_LIKE]
    if os.geteuid() == 0:
        if shutil.which("runuser") is None:
            pytest.skip("no runuser to drop root")
        cmd = ["runuser", "-u", "nobody", "--", *cmd]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd="/",
                         env={"PYTHONPATH": repo, "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    assert out.returncode == 0, out.stderr[-2000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["KDE"][0] == "kwin_wayland", seen
    assert seen["GNOME"][0] is None and seen[""][0] is None, seen
    assert all(shown != "kwin_wayland" for _hidden, shown in seen.values()), seen
