"""Only ibus-daemon may call the engine.

Any process of the user can connect to ibus-daemon's bus and send to the
engine's connection.  This runs a real ``ibus-daemon`` (no X server: it
needs none with its panel disabled), the real D-Bus layer with the real
engine and controller, an application's input context driven over the bus
(keys and the engine's commit go through ibus-daemon as they do for GTK),
and a second client that calls the engine directly: each of its calls is
refused and changes nothing, while ibus-daemon's calls keep working.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import subprocess
import threading
from typing import Iterator

import pytest
from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection

from daemon.config import Config
from daemon.controller import Controller
from daemon.frontends.ibus import wire
from daemon.frontends.ibus.bus import ENGINE_PATH_PREFIX, IBusService, ibus_address
from daemon.frontends.ibus.frontend import IBusFrontend
from daemon.frontends.ibus.service import ENGINE_NAME, component
from tests import needs
from tests.daemon.fakes import ManualWorker
from tests.e2e.ibus_desktop import IBUS_MEMCONF, _start_session_bus
from tests.processes import stop_group
from tests.e2e.xserver import wait_until

pytestmark = [pytest.mark.e2e]

_IBUS = DBusAddress(wire.PATH_IBUS, bus_name=wire.SERVICE_IBUS, interface=wire.INTERFACE_IBUS)


@contextlib.contextmanager
def ibus_daemon(tmp_path: pathlib.Path) -> Iterator[str]:
    """A private ibus-daemon (its own session bus, HOME and caches); its address."""
    needs.tool("ibus-daemon", "ibus")
    if not os.path.exists(IBUS_MEMCONF):
        needs.missing("ibus-memconf", "ibus")
    env = {k: v for k, v in os.environ.items()
           if k not in ("DBUS_SESSION_BUS_ADDRESS", "IBUS_ADDRESS", "WAYLAND_DISPLAY", "IBUS_COMPONENT_PATH")}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_CACHE_HOME=str(tmp_path / "cache"),
               DISPLAY=":59")  # names the address file only; nothing connects to it
    started = []
    try:
        bus, address = _start_session_bus(env)
        started.append(bus)
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        started.append(subprocess.Popen(["ibus-daemon", "--panel=disable", f"--config={IBUS_MEMCONF}", "--cache=none"],
                                        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True))
        assert wait_until(lambda: ibus_address(env) is not None, timeout=15), "ibus-daemon did not start"
        yield ibus_address(env)  # type: ignore[misc]
    finally:
        for proc in reversed(started):
            stop_group(proc)


class App:
    """An application's input context, spoken to ibus-daemon as libibus does."""

    def __init__(self, address: str) -> None:
        self.conn = open_dbus_connection(address)
        path = self.conn.send_and_get_reply(new_method_call(_IBUS, "CreateInputContext", "s", ("test-app",))).body[0]
        self.ic = DBusAddress(path, bus_name=wire.SERVICE_IBUS, interface="org.freedesktop.IBus.InputContext")
        self.call("SetCapabilities", "u", (wire.CAP_PREEDIT_TEXT | wire.CAP_FOCUS,))
        self.call("FocusIn")

    def call(self, member: str, signature=None, body=()):
        reply = self.conn.send_and_get_reply(new_method_call(self.ic, member, signature, body), timeout=10)
        assert reply.header.message_type == MessageType.method_return, reply.body
        return reply.body

    def content_type(self, purpose: int, hints: int = 0) -> None:
        props = DBusAddress(self.ic.object_path, bus_name=wire.SERVICE_IBUS, interface="org.freedesktop.DBus.Properties")
        reply = self.conn.send_and_get_reply(new_method_call(
            props, "Set", "ssv", (self.ic.interface, "ContentType", ("(uu)", (purpose, hints)))), timeout=10)
        assert reply.header.message_type == MessageType.method_return, reply.body

    def type(self, text: str) -> None:
        for ch in text:
            assert self.call("ProcessKeyEvent", "uuu", (ord(ch), 0, 0)) == (False,)
            self.call("ProcessKeyEvent", "uuu", (ord(ch), 0, wire.RELEASE_MASK))

    def commits(self, timeout: float = 2.0) -> list[str]:
        got = []
        with contextlib.suppress(TimeoutError):
            while True:
                msg = self.conn.receive(timeout=timeout)
                if msg.header.fields.get(HeaderFields.member) == "CommitText":
                    got.append(wire.parse_text(msg.body[0]))
                    timeout = 0.3
        return got


@pytest.fixture
def engine_behind_ibus(tmp_path):
    with ibus_daemon(tmp_path) as address:
        frontend = IBusFrontend()
        worker = ManualWorker()
        controller = Controller(Config(debounce_ms=0), frontend, worker=worker)
        frontend.attach(controller)
        controller.start()
        service = IBusService(address, frontend)  # the default: answers ibus-daemon alone
        service.register_component(component())
        thread = threading.Thread(target=service.run, daemon=True)
        thread.start()
        app = App(address)
        app.conn.send_and_get_reply(new_method_call(_IBUS, "SetGlobalEngine", "s", (ENGINE_NAME,)), timeout=10)
        assert wait_until(lambda: frontend.focused is not None, timeout=10), "ibus-daemon did not focus the engine"
        intruder = open_dbus_connection(address)
        try:
            yield app, intruder, service, frontend, controller, worker
        finally:
            intruder.close()
            app.conn.close()
            service.close()
            thread.join(timeout=10)


def test_only_ibus_daemon_may_call_the_engine(engine_behind_ibus):
    app, intruder, service, frontend, controller, worker = engine_behind_ibus
    engine = frontend.focused
    path = next(p for p, e in service._engines.items() if e is engine)
    assert path.startswith(ENGINE_PATH_PREFIX)
    app.content_type(wire.PURPOSE_PASSWORD)  # through ibus-daemon: accepted
    assert wait_until(lambda: engine.purpose == wire.PURPOSE_PASSWORD, timeout=10)
    app.content_type(wire.PURPOSE_FREE_FORM)
    assert wait_until(lambda: engine.purpose == wire.PURPOSE_FREE_FORM, timeout=10)
    app.type("Say hel")  # keys reach the engine through ibus-daemon
    assert controller.buffer_text == "Say hel" and worker.last[1] == "Say hel"
    app.content_type(wire.PURPOSE_PASSWORD)
    assert wait_until(lambda: engine.purpose == wire.PURPOSE_PASSWORD, timeout=10)
    requests = len(worker.requests)

    direct = DBusAddress(path, bus_name=service._conn.unique_name, interface=wire.INTERFACE_ENGINE)
    calls = [
        (direct, "PropertyActivate", "su", ("ghosttype.enabled", wire.PROP_STATE_UNCHECKED)),  # switch it off
        (direct, "SetSurroundingText", "vuu", (wire.text("steered context"), 15, 15)),
        (direct, "ProcessKeyEvent", "uuu", (ord("x"), 0, 0)),
        (direct, "FocusOut", None, ()),
        (direct, "Disable", None, ()),
        (DBusAddress(path, bus_name=service._conn.unique_name, interface="org.freedesktop.DBus.Properties"),
         "Set", "ssv", (wire.INTERFACE_ENGINE, "ContentType", ("(uu)", (wire.PURPOSE_FREE_FORM, 0)))),
        (DBusAddress(wire.PATH_FACTORY, bus_name=service._conn.unique_name, interface=wire.INTERFACE_FACTORY),
         "CreateEngine", "s", (ENGINE_NAME,)),
    ]
    for address, member, signature, body in calls:
        reply = intruder.send_and_get_reply(new_method_call(address, member, signature, body), timeout=10)
        assert reply.header.message_type == MessageType.error, member
        assert reply.header.fields[HeaderFields.error_name] == "org.freedesktop.DBus.Error.AccessDenied", member
    # Nothing changed: still on, focused, a password field, no new request.
    state = controller.state()
    assert state.enabled and state.blocked
    assert frontend.focused is engine and engine.purpose == wire.PURPOSE_PASSWORD
    assert len(service._engines) == 1 and len(worker.requests) == requests
    # ibus-daemon's calls still work, and the engine's signals still reach the
    # application through it (they must carry no destination: ibus-daemon
    # drops or forwards a signal addressed to a name).
    app.content_type(wire.PURPOSE_FREE_FORM)
    assert wait_until(lambda: not controller.state().blocked, timeout=10)
    app.type("Hi")
    assert worker.last[1] == "Hi"
    app.commits(timeout=0.3)  # what focus-in sent
    engine.commit("there")  # what an accepted suggestion sends
    assert app.commits() == ["there"]
