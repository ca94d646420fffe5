"""Bounded method calls on the AT-SPI accessibility bus (found by ``daemon.frontends.atspi_bus``).

This module wraps jeepney's blocking connection so that every call has a
deadline and reports failure as one exception type (``AtspiCallError``),
because applications on the accessibility bus come and go, hang, or implement
only part of the protocol, and none of that may ever block or crash the daemon.
The X11 frontend's reader (``reader``, ``focus_tracker``) calls through it.
"""

from __future__ import annotations

import threading
from typing import Any

from jeepney import DBusAddress, MatchRule, MessageType, Properties, message_bus, new_method_call
from jeepney.io.blocking import DBusConnection, open_dbus_connection

from daemon.frontends.base import PlatformError


class AtspiCallError(Exception):
    """A call on the accessibility bus failed, timed out or returned nonsense.

    ``timed_out`` with ``bus_name`` lets callers avoid an application that has
    stopped answering instead of waiting for it again on every keystroke.
    """

    def __init__(self, message: str, bus_name: str = "", timed_out: bool = False) -> None:
        super().__init__(message)
        self.bus_name = bus_name
        self.timed_out = timed_out


class AtspiBus:
    """One connection to the accessibility bus with deadline-bounded calls.

    Safe to share between threads: calls are serialised by a lock (a blocking
    jeepney connection is not re-entrant).  A reply that arrives after its
    deadline is read and discarded by the next call, so one slow application
    cannot desynchronise later calls.
    """

    def __init__(self, address: str, timeout: float = 0.08) -> None:
        try:
            self._conn: DBusConnection = open_dbus_connection(address, auth_timeout=1.0)
        except (OSError, TimeoutError, ValueError) as exc:
            raise PlatformError(f"AT-SPI is unavailable: cannot connect to the accessibility bus ({exc})") from exc
        self.timeout = timeout
        self._lock = threading.Lock()
        self._closed = False

    @property
    def unique_name(self) -> str:
        return str(self._conn.unique_name)

    def call(
        self,
        bus_name: str,
        path: str,
        interface: str,
        method: str,
        signature: str | None = None,
        body: tuple = (),
        timeout: float | None = None,
    ) -> tuple:
        """Call a method and return the reply body; raise ``AtspiCallError``
        on an error reply, a timeout or a broken connection."""
        address = DBusAddress(path, bus_name=bus_name, interface=interface)
        return self._send(new_method_call(address, method, signature, body), timeout, bus_name)

    def get_property(self, bus_name: str, path: str, interface: str, name: str,
                     timeout: float | None = None) -> Any:
        """Read one D-Bus property (the variant is unwrapped)."""
        address = DBusAddress(path, bus_name=bus_name, interface=interface)
        body = self._send(Properties(address).get(name), timeout, bus_name)
        try:
            _signature, value = body[0]
        except (IndexError, TypeError, ValueError) as exc:
            raise AtspiCallError(f"malformed property reply for {interface}.{name}") from exc
        return value

    def add_match(self, rule: MatchRule) -> None:
        """Ask the bus daemon to route signals matching ``rule`` to us."""
        self._send(new_method_call(message_bus, "AddMatch", "s", (rule.serialise(),)), None)

    def receive(self, timeout: float):
        """Next incoming message (for the signal listener); raises
        ``TimeoutError`` when none arrives in time."""
        with self._lock:
            return self._conn.receive(timeout=timeout)

    def _send(self, message, timeout: float | None, bus_name: str = "") -> tuple:
        with self._lock:
            if self._closed:
                raise AtspiCallError("connection closed")
            try:
                reply = self._conn.send_and_get_reply(
                    message, timeout=self.timeout if timeout is None else timeout
                )
            except TimeoutError as exc:
                raise AtspiCallError("timed out", bus_name, timed_out=True) from exc
            except (OSError, ValueError) as exc:
                # ValueError: jeepney could not parse what arrived.
                raise AtspiCallError(f"connection failed: {exc}") from exc
        if reply.header.message_type == MessageType.error:
            name = reply.header.fields.get(4, "error")  # HeaderFields.error_name
            raise AtspiCallError(str(name), bus_name)
        return reply.body

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()
