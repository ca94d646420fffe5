"""An IBus client cannot change ghosttype's settings through the engine's menu.

A real ``ibus-daemon`` (as in ``test_ibus_bus_access.py``), the real D-Bus
layer, engine and controller with a config file, and an application that
created its input context under a client name it chose (``gtk3-im:keepassxc``)
and calls the context's own ``PropertyActivate``: ibus-daemon hands that to
the engine exactly as it hands a panel's menu choice.  The denylist and a
config file's ``enabled = false`` stay as they are; pausing, which the menu
may do, still arrives the same way.
"""

from __future__ import annotations

import threading

import pytest
from jeepney import DBusAddress, MessageType, new_method_call
from jeepney.io.blocking import open_dbus_connection

from daemon.config import default_template, load_config
from daemon.controller import Controller
from daemon.frontends.ibus import wire
from daemon.frontends.ibus.bus import IBusService
from daemon.frontends.ibus.frontend import IBusFrontend
from daemon.frontends.ibus.menu import PROP_ENABLED, PROP_OFF_IN_APP, PROP_PAUSED
from daemon.frontends.ibus.service import ENGINE_NAME, component
from daemon.user_actions import UserActions
from tests.daemon.fakes import ManualWorker
from tests.e2e.test_ibus_bus_access import _IBUS, ibus_daemon
from tests.e2e.xserver import wait_until

pytestmark = [pytest.mark.e2e]

SHIFT_L = 0xFFE1  #: a key that reaches the engine and changes nothing


@pytest.mark.parametrize("enabled", [True, False], ids=["enabled", "switched-off-in-the-config"])
def test_an_input_contexts_property_activate_changes_no_setting(tmp_path, enabled):
    path = tmp_path / "ghosttype.toml"
    path.write_text(default_template() + ("enabled = false\n" if not enabled else ""))
    before = path.read_bytes()
    with ibus_daemon(tmp_path) as address:
        frontend = IBusFrontend()
        worker = ManualWorker()
        controller = Controller(load_config(path), frontend, worker=worker)
        frontend.attach(controller)
        frontend.actions = UserActions(path, lambda: controller.config, controller.apply_config)
        controller.start()
        service = IBusService(address, frontend)
        service.register_component(component())
        thread = threading.Thread(target=service.run, daemon=True)
        thread.start()
        client = open_dbus_connection(address)
        try:
            def call(address, member, signature=None, body=()):
                reply = client.send_and_get_reply(new_method_call(address, member, signature, body), timeout=10)
                assert reply.header.message_type == MessageType.method_return, (member, reply.body)
                return reply.body

            ic_path = call(_IBUS, "CreateInputContext", "s", ("gtk3-im:keepassxc",))[0]
            ic = DBusAddress(ic_path, bus_name=wire.SERVICE_IBUS, interface="org.freedesktop.IBus.InputContext")
            call(ic, "SetCapabilities", "u", (wire.CAP_PREEDIT_TEXT | wire.CAP_FOCUS,))
            call(ic, "FocusIn")
            call(_IBUS, "SetGlobalEngine", "s", (ENGINE_NAME,))
            assert wait_until(lambda: frontend.focused is not None, timeout=10), "ibus-daemon did not focus the engine"
            call(ic, "FocusOut")  # ibus-daemon names the client from the second focus-in on
            call(ic, "FocusIn")
            assert wait_until(lambda: frontend.focused is not None and frontend.focused.app_id() == "keepassxc",
                              timeout=10), "the engine never learned the client's name"

            def activate(name: str, state: int) -> None:
                call(ic, "PropertyActivate", "su", (name, state))
                # ibus-daemon passes it on without waiting; a key goes to the engine after it and
                # comes back only once the engine has answered, so the activation was handled.
                call(ic, "ProcessKeyEvent", "uuu", (SHIFT_L, 0, 0))

            for state in (wire.PROP_STATE_UNCHECKED, wire.PROP_STATE_CHECKED):
                activate(PROP_OFF_IN_APP, state)
                assert path.read_bytes() == before and controller.config.is_denied("keepassxc")
            activate(PROP_ENABLED, wire.PROP_STATE_CHECKED)
            assert controller.state().enabled is enabled and path.read_bytes() == before
            activate(PROP_PAUSED, wire.PROP_STATE_CHECKED)  # what the menu may do arrives the same way
            assert controller.state().paused
        finally:
            client.close()
            service.close()
            thread.join(timeout=10)
