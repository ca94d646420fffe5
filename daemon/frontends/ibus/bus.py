"""The D-Bus side of the engine: ibus-daemon's private bus, spoken with jeepney.

ibus-daemon runs its own D-Bus server (not the session bus); its address is in
``$IBUS_ADDRESS`` or in ``~/.config/ibus/bus/<machine-id>-<host>-<display>``
(:func:`ibus_address`, the same lookup libibus does).  On that bus this
process owns:

* ``/org/freedesktop/IBus/Factory`` (``org.freedesktop.IBus.Factory``):
  ``CreateEngine(name)`` makes a new engine object for one input context;
* ``/org/freedesktop/IBus/Engine/ghosttype/<n>`` (``org.freedesktop.IBus.Engine``):
  the methods ibus-daemon calls for that context (keys, focus, surrounding
  text, ...); the engine's output leaves as this object's signals.

All incoming messages are handled on one thread (:meth:`IBusService.run`);
signals may be sent from any thread (the connection serialises sends).

Only ibus-daemon itself may call the engine: any process of the user can
connect to ibus-daemon's bus and send to this connection, so a method call
from any other sender (switch the engine off, steer its context, clear a
password purpose) is refused with ``AccessDenied`` and changes nothing, and
``NameOwnerChanged`` is believed only from ibus-daemon.  The engine's
signals carry no destination: ibus-daemon hands a signal to the input
context's engine proxy only when it has none (a signal addressed to a name
is dropped or forwarded there instead).  What ibus-daemon's bus does not
protect, it does not: any client may add a match rule and read every
message on it (ibus-daemon applies no eavesdropping rule), keys included.  The
method and signal names and signatures follow ibus's ``src/ibusengine.c``.

Registration: ``register_component`` (development, tests: the engine exists
while this process runs; ``ibus engine ghosttype`` selects it) or
``request_name`` (ibus-daemon started us from the installed component file).
"""

from __future__ import annotations

import itertools
import logging
import os
import pathlib
import threading
import time
from collections import deque
from typing import Any, Callable, Mapping, Optional

from jeepney import DBusAddress, Message, MessageType, message_bus, new_error, new_method_call, new_method_return, new_signal
from jeepney.io.threading import DBusConnection, ReceiveStopped, open_dbus_connection

from daemon import timeslice
from daemon.frontends.ibus import wire
from daemon.frontends.ibus.engine import Engine, new_engine
from daemon.frontends.ibus.frontend import IBusFrontend

log = logging.getLogger(__name__)

ENGINE_PATH_PREFIX = "/org/freedesktop/IBus/Engine/ghosttype/"
_PROPERTIES = "org.freedesktop.DBus.Properties"
_PEER = "org.freedesktop.DBus.Peer"
_UNKNOWN_METHOD = "org.freedesktop.DBus.Error.UnknownMethod"
_UNKNOWN_PROPERTY = "org.freedesktop.DBus.Error.UnknownProperty"
_FAILED = "org.freedesktop.DBus.Error.Failed"
_ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"
#: The sender of every message ibus-daemon itself sends on its bus: it sets
#: this name on its own outgoing messages and each client's unique name on
#: what it forwards from that client (``bus/dbusimpl.c``,
#: ``bus_dbus_impl_connection_filter_cb``), so no other client can carry it.
IBUS_DAEMON_SENDER = "org.freedesktop.DBus"
#: The bus name of whatever draws IBus's popups (GNOME Shell, ibus-ui-gtk3).
PANEL_NAME = "org.freedesktop.IBus.Panel"
#: Engine properties ibus-daemon reads (``src/ibusengine.c``): FocusId asks
#: for FocusInId/FocusOutId with the client's name, ActiveSurroundingText
#: (ibus >= 1.5.27) makes ibus-daemon ask the client for surrounding text at
#: every focus-in.
_ENGINE_PROPERTIES = {"FocusId": ("b", True), "ActiveSurroundingText": ("b", True)}


class IBusUnavailable(RuntimeError):
    """ibus-daemon cannot be reached; the message says why and what to do."""


class UnknownProperty(KeyError):
    """A D-Bus property this engine does not have (answered with an error, not logged)."""


# --------------------------------------------------------------------------- address


def machine_id() -> str:
    for path in ("/var/lib/dbus/machine-id", "/etc/machine-id"):
        try:
            return pathlib.Path(path).read_text().strip()
        except OSError:
            continue
    return "machine-id"


def address_file(env: Optional[Mapping[str, str]] = None) -> pathlib.Path:
    """Where ibus-daemon writes its address for this display (libibus's
    ``ibus_get_socket_path``)."""
    env = os.environ if env is None else env
    if env.get("IBUS_ADDRESS_FILE"):
        return pathlib.Path(env["IBUS_ADDRESS_FILE"])
    host, number = "unix", "0"
    if env.get("WAYLAND_DISPLAY"):
        number = env["WAYLAND_DISPLAY"]
    elif env.get("DISPLAY"):
        display = env["DISPLAY"]
        host_part, _, rest = display.partition(":")
        host = host_part or "unix"
        number = rest.split(".", 1)[0] if rest else "0"
    config_home = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME", os.path.expanduser("~")), ".config")
    return pathlib.Path(config_home) / "ibus" / "bus" / f"{machine_id()}-{host}-{number}"


def ibus_address(env: Optional[Mapping[str, str]] = None) -> Optional[str]:
    """The running ibus-daemon's D-Bus address, or None when there is none."""
    env = os.environ if env is None else env
    if env.get("IBUS_ADDRESS"):
        return env["IBUS_ADDRESS"]
    try:
        lines = address_file(env).read_text().splitlines()
    except OSError:
        return None
    address, pid = None, -1
    for line in lines:
        if line.startswith("IBUS_ADDRESS="):
            address = line.split("=", 1)[1].strip()
        elif line.startswith("IBUS_DAEMON_PID="):
            try:
                pid = int(line.split("=", 1)[1])
            except ValueError:
                pid = -1
    if address is None or pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None  # a stale file from an ibus-daemon that has exited
    except PermissionError:
        pass
    return address


# --------------------------------------------------------------------------- engine signals


class EngineSignals:
    """:class:`~daemon.frontends.ibus.engine.EngineOutput` of one engine object: D-Bus signals."""

    def __init__(self, conn: DBusConnection, path: str) -> None:
        self._conn = conn
        self._address = DBusAddress(path, interface=wire.INTERFACE_ENGINE)

    def _emit(self, name: str, signature: Optional[str] = None, body: tuple = ()) -> None:
        try:
            self._conn.send(new_signal(self._address, name, signature, body))
        except OSError as e:
            log.warning("cannot send %s to ibus-daemon: %s", name, e)

    def commit_text(self, text: str) -> None:
        self._emit("CommitText", "v", (wire.text(text),))

    def update_preedit(self, text: str, attrs: list[wire.Attribute], cursor: int, visible: bool) -> None:
        self._emit("UpdatePreeditText", "vubu", (wire.text(text, attrs), cursor, visible, wire.PREEDIT_CLEAR))

    def update_auxiliary(self, text: str, visible: bool) -> None:
        self._emit("UpdateAuxiliaryText", "vb", (wire.text(text), visible))

    def register_properties(self, props: list[wire.Property]) -> None:
        self._emit("RegisterProperties", "v", (wire.prop_list(props),))

    def update_property(self, prop: wire.Property) -> None:
        self._emit("UpdateProperty", "v", (prop.variant(),))

    def require_surrounding_text(self) -> None:
        self._emit("RequireSurroundingText")


# --------------------------------------------------------------------------- service


class IBusService:
    """One connection to ibus-daemon serving the factory and the engines."""

    def __init__(self, address: str, frontend: IBusFrontend, daemon_sender: str = IBUS_DAEMON_SENDER) -> None:
        """``daemon_sender``: the only sender whose calls are answered
        (another name only where a test bus stands in for ibus-daemon)."""
        try:
            self._conn = open_dbus_connection(address, auth_timeout=2.0)
        except (OSError, TimeoutError, ValueError) as e:
            raise IBusUnavailable(f"cannot connect to ibus-daemon at its address ({e})") from e
        self._frontend = frontend
        self._daemon_sender = daemon_sender
        self._engines: dict[str, Engine] = {}
        self._ids = itertools.count(1)
        self._early: deque[Message] = deque()  #: arrived while waiting for a reply at start-up
        self._stopped = threading.Event()

    # -- start-up calls (before run(), on the calling thread) --------------------------

    def _call(self, address: DBusAddress, method: str, signature: Optional[str] = None, body: tuple = (),
              timeout: float = 10.0) -> tuple:
        msg = new_method_call(address, method, signature, body)
        serial = next(self._conn.outgoing_serial)
        self._conn.send(msg, serial=serial)
        while True:
            reply = self._conn.receive(timeout=timeout)
            if reply.header.fields.get(5) == serial:  # HeaderFields.reply_serial
                if reply.header.message_type == MessageType.error:
                    raise IBusUnavailable(f"ibus-daemon refused {method}: {reply.body[0] if reply.body else ''}")
                return reply.body
            self._early.append(reply)

    def register_component(self, component: wire.Component) -> None:
        """Announce the engine for as long as this connection lives."""
        ibus = DBusAddress(wire.PATH_IBUS, bus_name=wire.SERVICE_IBUS, interface=wire.INTERFACE_IBUS)
        self._call(ibus, "RegisterComponent", "v", (component.variant(),))

    def request_name(self, name: str) -> None:
        """Own the component's bus name (ibus-daemon started us for it)."""
        (result,) = self._call(message_bus, "RequestName", "su", (name, 0))
        if result not in (1, 4):  # primary owner / already owner
            raise IBusUnavailable(f"the bus name {name} is taken (another ghosttype engine is running)")

    def set_global_engine(self, name: str) -> None:
        ibus = DBusAddress(wire.PATH_IBUS, bus_name=wire.SERVICE_IBUS, interface=wire.INTERFACE_IBUS)
        self._call(ibus, "SetGlobalEngine", "s", (name,))

    def watch_panel(self) -> None:
        """Learn whether a panel draws popups now, and follow it coming and
        going (``NameOwnerChanged`` on ibus-daemon's bus)."""
        rule = (f"type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',"
                f"member='NameOwnerChanged',arg0='{PANEL_NAME}'")
        self._call(message_bus, "AddMatch", "s", (rule,))
        (present,) = self._call(message_bus, "NameHasOwner", "s", (PANEL_NAME,))
        self._set_panel(bool(present))

    def _set_panel(self, present: bool) -> None:
        if self._frontend.panel is not present:
            log.info("IBus panel %s", "present: popups can be shown" if present else "absent: preedit only")
        self._frontend.panel = present

    # -- the loop --------------------------------------------------------------------

    def run(self) -> None:
        """Serve until ibus-daemon goes away or :meth:`stop` is called."""
        timeslice.request(timeslice.KEYS)  # this thread answers the keys: it goes first (daemon/timeslice.py)
        while self._early:
            self._dispatch(self._early.popleft())
        while not self._stopped.is_set():
            try:
                msg = self._conn.receive()
            except ReceiveStopped:
                break
            except (OSError, EOFError, ValueError) as e:
                log.warning("lost the connection to ibus-daemon (%s)", type(e).__name__)
                break
            try:
                self._dispatch(msg)
            except OSError as e:  # the answer could not be sent
                if not self._stopped.is_set():  # else: closed under it (close() while answering)
                    log.warning("lost the connection to ibus-daemon (%s)", type(e).__name__)
                break
        for engine in list(self._engines.values()):
            self._frontend.drop_engine(engine)
        self._engines.clear()

    def stop(self) -> None:
        self._stopped.set()
        self._conn.interrupt()

    def close(self) -> None:
        self.stop()
        self._conn.close()

    def _dispatch(self, msg: Message) -> None:
        fields = msg.header.fields
        path, iface, member = fields.get(1, ""), fields.get(2, ""), fields.get(3, "")
        from_daemon = fields.get(7) == self._daemon_sender  # HeaderFields.sender
        if msg.header.message_type == MessageType.signal:
            if from_daemon and member == "NameOwnerChanged" and msg.body and msg.body[0] == PANEL_NAME:
                self._set_panel(bool(msg.body[2]))
            return
        if msg.header.message_type != MessageType.method_call:
            return
        if not from_daemon:
            log.warning("refused %s.%s from %s: only ibus-daemon may call the engine", iface, member,
                        fields.get(7, "an unnamed sender"))
            self._conn.send(new_error(msg, _ACCESS_DENIED, "s", ("only ibus-daemon may call this engine",)))
            return
        started = time.monotonic()
        try:
            self._answer(msg, path, iface, member)
        finally:
            if member == "ProcessKeyEvent":
                # Only now may the engine show what the key changed: the key
                # goes on to the application with this answer.
                engine = self._engines.get(path)
                if engine is not None:
                    engine.key_done()
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s handled in %.1f ms", member, (time.monotonic() - started) * 1000)

    def _answer(self, msg: Message, path: str, iface: str, member: str) -> None:
        try:
            handler = self._handler(path, iface, member)
            if handler is None:
                self._conn.send(new_error(msg, _UNKNOWN_METHOD, "s", (f"no method {iface}.{member} at {path}",)))
                return
            signature, body = handler(*msg.body)
        except UnknownProperty as e:
            self._conn.send(new_error(msg, _UNKNOWN_PROPERTY, "s", (f"no property {e}",)))
            return
        except Exception:
            log.exception("handling %s.%s failed", iface, member)  # arguments never logged
            self._conn.send(new_error(msg, _FAILED, "s", ("ghosttype engine error",)))
            return
        self._conn.send(new_method_return(msg, signature, body))

    def _handler(self, path: str, iface: str, member: str) -> Optional[Callable[..., tuple[Optional[str], tuple]]]:
        if iface == _PEER:
            return (lambda *a: (None, ())) if member == "Ping" else None
        if iface == _PROPERTIES:
            return {"Get": self._prop_get, "GetAll": self._prop_get_all, "Set": lambda *a: self._prop_set(path, *a)
                    }.get(member)
        if path == wire.PATH_FACTORY and iface == wire.INTERFACE_FACTORY and member == "CreateEngine":
            return self._create_engine
        engine = self._engines.get(path)
        if engine is None:
            return None
        if iface == wire.INTERFACE_SERVICE and member == "Destroy":
            return lambda: self._destroy(path)
        if iface == wire.INTERFACE_ENGINE:
            return _engine_methods(engine).get(member)
        return None

    # -- handlers --------------------------------------------------------------------

    def _create_engine(self, name: str) -> tuple[str, tuple]:
        path = f"{ENGINE_PATH_PREFIX}{next(self._ids)}"
        self._engines[path] = new_engine(self._frontend, EngineSignals(self._conn, path))
        log.info("engine created (%d alive)", len(self._engines))
        return "o", (path,)

    def _destroy(self, path: str) -> tuple[None, tuple]:
        engine = self._engines.pop(path, None)
        if engine is not None:
            self._frontend.drop_engine(engine)
        return None, ()

    @staticmethod
    def _prop_get(iface: str, name: str) -> tuple[str, tuple]:
        if iface == wire.INTERFACE_ENGINE and name in _ENGINE_PROPERTIES:
            return "v", (_ENGINE_PROPERTIES[name],)
        raise UnknownProperty(f"{iface}.{name}")

    @staticmethod
    def _prop_get_all(iface: str) -> tuple[str, tuple]:
        props = dict(_ENGINE_PROPERTIES) if iface == wire.INTERFACE_ENGINE else {}
        return "a{sv}", (props,)

    def _prop_set(self, path: str, iface: str, name: str, value: Any) -> tuple[None, tuple]:
        engine = self._engines.get(path)
        if engine is not None and iface == wire.INTERFACE_ENGINE and name == "ContentType":
            _sig, (purpose, hints) = value
            engine.set_content_type(int(purpose), int(hints))
        return None, ()


def _engine_methods(engine: Engine) -> dict[str, Callable[..., tuple[Optional[str], tuple]]]:
    """org.freedesktop.IBus.Engine methods -> engine calls, as (signature, body) replies."""

    def void(fn: Callable[..., Any]) -> Callable[..., tuple[None, tuple]]:
        def call(*args: Any) -> tuple[None, tuple]:
            fn(*args)
            return None, ()
        return call

    def ignore(*_args: Any) -> tuple[None, tuple]:
        return None, ()

    def surrounding(text: Any, cursor: int, anchor: int) -> tuple[None, tuple]:
        s = wire.parse_text(text)
        if s is not None:
            engine.set_surrounding_text(s, int(cursor), int(anchor))
        return None, ()

    return {
        "ProcessKeyEvent": lambda keyval, keycode, state: ("b", (engine.process_key(keyval, keycode, state),)),
        "FocusIn": void(engine.focus_in),
        "FocusInId": void(engine.focus_in),
        "FocusOut": void(engine.focus_out),
        "FocusOutId": void(engine.focus_out),
        "Reset": void(engine.reset),
        "Enable": void(engine.enable),
        "Disable": void(engine.disable),
        "SetCapabilities": void(engine.set_capabilities),
        "SetSurroundingText": surrounding,
        "PropertyActivate": void(engine.property_activate),
        "SetCursorLocation": void(engine.set_cursor_location),
        "SetCursorLocationRelative": void(engine.set_cursor_location),
        "ProcessHandWritingEvent": ignore,
        "CancelHandWriting": ignore,
        "PropertyShow": ignore,
        "PropertyHide": ignore,
        "CandidateClicked": ignore,
        "PageUp": ignore,
        "PageDown": ignore,
        "CursorUp": ignore,
        "CursorDown": ignore,
        "PanelExtensionReceived": ignore,
        "PanelExtensionRegisterKeys": ignore,
    }
