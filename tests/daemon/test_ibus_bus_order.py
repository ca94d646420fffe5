"""On the wire, the engine's answer to a key comes before anything the key
made it show.

ibus-daemon passes an unhandled key on when it gets the engine's answer to
``ProcessKeyEvent``; a preedit or popup signal sent before that answer
reaches the application before the key (KDE's route then drops the preedit,
Chromium swallows the key into it).  This drives the real D-Bus layer
(:class:`~daemon.frontends.ibus.bus.IBusService` with the real engine and controller)
over a private ``dbus-daemon``, with a second connection in ibus-daemon's
place that calls the engine and records what arrives, in order.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading

import pytest
from jeepney import DBusAddress, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection

from daemon.config import Config
from daemon.controller import Controller
from daemon.cpc.suggestion import Suggestion
from daemon.frontends.ibus import wire
from daemon.frontends.ibus.bus import IBusService
from daemon.frontends.ibus.frontend import IBusFrontend
from tests.daemon.fakes import ManualWorker
from tests.secret_service import BUS_CONFIG


@pytest.fixture
def bus_address(tmp_path):
    binary = shutil.which("dbus-daemon")
    assert binary, "dbus-daemon is not installed (Debian package dbus; .ci/run installs it)"
    # the session bus's rules without its services: nothing is started on demand (a machine with AT-SPI
    # would start its accessibility bus for the engine's question where that bus is)
    config = tmp_path / "bus.conf"
    config.write_text(BUS_CONFIG.format(dir=tmp_path))
    proc = subprocess.Popen([binary, f"--config-file={config}", "--nofork", "--print-address=1"],
                            stdout=subprocess.PIPE, env={**os.environ, "HOME": str(tmp_path)})
    try:
        address = proc.stdout.readline().decode().strip()
        assert address, "dbus-daemon printed no address"
        yield address
    finally:
        proc.terminate()
        proc.wait(timeout=10)


class Daemon:
    """ibus-daemon's side of the engine's connection: calls and what comes back."""

    def __init__(self, address: str, service_name: str) -> None:
        self.conn = open_dbus_connection(address)
        self.conn.send_and_get_reply(new_method_call(
            DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus"),
            "AddMatch", "s", ("type='signal'",)))
        self.service = service_name
        self.path = ""

    def call(self, path: str, iface: str, member: str, signature=None, body=()):
        """Call and return everything received up to and including the reply, in order."""
        msg = new_method_call(DBusAddress(path, bus_name=self.service, interface=iface), member, signature, body)
        serial = next(self.conn.outgoing_serial)
        self.conn.send(msg, serial=serial)
        got = []
        while True:
            m = self.conn.receive(timeout=10)
            if m.header.message_type == MessageType.signal and m.header.fields.get(3) == "NameAcquired":
                continue
            got.append(m)
            if m.header.fields.get(5) == serial:
                return got

    def drain(self, timeout: float = 0.3):
        got = []
        try:
            while True:
                got.append(self.conn.receive(timeout=timeout))
        except TimeoutError:
            return got


def describe(messages) -> list[tuple]:
    out = []
    for m in messages:
        if m.header.message_type == MessageType.method_return:
            out.append(("reply",) + tuple(m.body))
        elif m.header.message_type == MessageType.signal:
            member = m.header.fields.get(3)
            if member == "UpdatePreeditText":
                out.append(("preedit", wire.parse_text(m.body[0]), m.body[2]))
            elif member == "UpdateAuxiliaryText":
                out.append(("aux", wire.parse_text(m.body[0]), m.body[1]))
            elif member == "CommitText":
                out.append(("commit", wire.parse_text(m.body[0])))
    return out


@pytest.fixture
def engine_on_the_bus(bus_address):
    frontend = IBusFrontend()
    worker = ManualWorker()
    controller = Controller(Config(debounce_ms=0), frontend, worker=worker)
    frontend.attach(controller)
    controller.start()
    # The engine answers only ibus-daemon (test_ibus_bus_access.py): here
    # the second connection stands in for it.
    daemon = Daemon(bus_address, "")
    service = IBusService(bus_address, frontend, daemon_sender=daemon.conn.unique_name)
    daemon.service = service._conn.unique_name
    thread = threading.Thread(target=service.run, daemon=True)
    thread.start()
    (reply,) = [m for m in daemon.call(wire.PATH_FACTORY, wire.INTERFACE_FACTORY, "CreateEngine", "s", ("ghosttype",))
                if m.header.message_type == MessageType.method_return]
    daemon.path = reply.body[0]
    # A client that reports no text (test_ibus_engine.py holds the keys of one that does)
    daemon.call(daemon.path, wire.INTERFACE_ENGINE, "SetCapabilities", "u", (0x1F,))
    daemon.call(daemon.path, wire.INTERFACE_ENGINE, "FocusInId", "ss", ("/ic/1", "gtk3-im:gedit"))
    try:
        yield daemon, controller, worker
    finally:
        service.close()
        thread.join(timeout=10)
        daemon.conn.close()


def key(daemon, keyval: int, release: bool = False):
    state = wire.RELEASE_MASK if release else 0
    return daemon.call(daemon.path, wire.INTERFACE_ENGINE, "ProcessKeyEvent", "uuu", (keyval, 0, state))


def test_the_answer_to_a_typed_through_key_precedes_the_advanced_suggestion(engine_on_the_bus):
    daemon, controller, worker = engine_on_the_bus
    for ch in "Say hel":
        key(daemon, ord(ch))
        key(daemon, ord(ch), release=True)
    rid, text = worker.last
    assert text == "Say hel"
    controller.on_result(rid, Suggestion("lo world", 0.9), True)
    assert ("preedit", "lo world", True) in describe(daemon.drain())
    got = describe(key(daemon, ord("l")) + daemon.drain())
    # The open preedit is closed before the answer, the rest drawn after it.
    assert got == [("preedit", "", False), ("reply", False), ("preedit", "o world", True)]
    key(daemon, ord("l"), release=True)
    # Tab: consumed, the suggestion committed; the closed preedit is said
    # again after the answer (a client in IBus's sync mode gets what came
    # before it with the answer, ahead of preedit signals it has not read yet).
    got = describe(key(daemon, 0xFF09) + daemon.drain())
    assert got == [("preedit", "", False), ("commit", "o world"), ("reply", True), ("preedit", "", False)]


def test_the_engine_answers_ibus_daemons_property_questions(engine_on_the_bus):
    daemon, _controller, _worker = engine_on_the_bus
    props = "org.freedesktop.DBus.Properties"
    for name in ("FocusId", "ActiveSurroundingText"):
        (reply,) = daemon.call(daemon.path, props, "Get", "ss", (wire.INTERFACE_ENGINE, name))
        assert reply.header.message_type == MessageType.method_return and reply.body[0] == ("b", True)
    (reply,) = daemon.call(daemon.path, props, "Get", "ss", (wire.INTERFACE_ENGINE, "NoSuchThing"))
    assert reply.header.message_type == MessageType.error
    assert reply.header.fields.get(4) == "org.freedesktop.DBus.Error.UnknownProperty"


def test_a_service_closed_while_it_answers_a_call_ends_its_loop_quietly(bus_address):
    """ghosttype closing the engine's connection (the engine switched off, the daemon stopping) while the bus
    thread is answering a call: the answer cannot be sent, and the thread ends without an exception (it used to
    die of ``OSError: Bad file descriptor``, a warning in the main suite)."""
    frontend = IBusFrontend()
    daemon = Daemon(bus_address, "")
    service = IBusService(bus_address, frontend, daemon_sender=daemon.conn.unique_name)
    daemon.service = service._conn.unique_name
    original = service._handler

    def closing(path, iface, member):
        if member == "Ping":
            return lambda *a: (service.close(), (None, ()))[1]  # closed under the answer
        return original(path, iface, member)

    service._handler = closing
    failures = []

    def run() -> None:
        try:
            service.run()
        except BaseException as e:  # noqa: BLE001 - what the thread would die of
            failures.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        daemon.conn.send(new_method_call(DBusAddress("/", bus_name=daemon.service,
                                                     interface="org.freedesktop.DBus.Peer"), "Ping"))
        thread.join(timeout=10)
        assert not thread.is_alive() and failures == []
    finally:
        service.close()
        daemon.conn.close()
