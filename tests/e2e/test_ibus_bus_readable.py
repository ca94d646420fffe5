"""What IBus's own bus lets any client of the user read: the keys typed into every application.

ibus-daemon runs its own D-Bus server and hands a message to every connection whose match rule
fits it, whatever the message's destination: its match rules have no eavesdropping restriction
(``eavesdrop`` is accepted and ignored) and it dispatches by rule both the calls applications send
it and the calls it sends engines.  This runs a real ``ibus-daemon`` (panel disabled, its own
session bus), the real engine behind it, an application's input context typing through it, and a
second client of the same user that adds one match rule: it reads every key, from the application's
call and from ibus-daemon's call to the engine.  The inline suggestion on the session bus is as
readable to a monitor of the same user (tests/daemon/test_inline_link_guards.py); the README's
Privacy section says so.
"""

from __future__ import annotations

import contextlib

import pytest
from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call

from daemon.frontends.ibus import wire
from tests.e2e.test_ibus_bus_access import engine_behind_ibus  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.e2e]

_DBUS = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus")
_INPUT_CONTEXT = "org.freedesktop.IBus.InputContext"


def test_any_client_on_ibus_bus_reads_the_keys_typed_into_every_application(engine_behind_ibus):
    app, observer, service, frontend, controller, worker = engine_behind_ibus
    rule = "type='method_call',member='ProcessKeyEvent',eavesdrop='true'"
    reply = observer.send_and_get_reply(new_method_call(_DBUS, "AddMatch", "s", (rule,)), timeout=10)
    assert reply.header.message_type == MessageType.method_return, reply.body
    app.type("hunter2")
    read: dict[str, str] = {}  # interface -> the key presses read from its calls
    with contextlib.suppress(TimeoutError):
        while True:
            msg = observer.receive(timeout=3)
            fields = msg.header.fields
            if fields.get(HeaderFields.member) == "ProcessKeyEvent" and not msg.body[2] & wire.RELEASE_MASK:
                iface = fields.get(HeaderFields.interface, "")
                read[iface] = read.get(iface, "") + chr(msg.body[0])
    assert read.get(_INPUT_CONTEXT) == "hunter2"  # the application's calls to ibus-daemon
    assert read.get(wire.INTERFACE_ENGINE) == "hunter2"  # ibus-daemon's calls to the engine
