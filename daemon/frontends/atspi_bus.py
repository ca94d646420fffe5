"""The accessibility bus (AT-SPI) as both frontends find it: its address, and the names they use on it.

AT-SPI (the Linux accessibility protocol) runs on its own D-Bus bus, separate from the session bus; the
session bus service ``org.a11y.Bus`` hands out its address.  The X11 frontend reads fields through it
(``daemon.frontends.overlay.platform.atspi``); the IBus engine reads a caret the desktop never passes on
(``daemon.frontends.ibus.a11y_caret``); both turn on the session's accessibility flag where they need
applications to expose themselves (:func:`set_toolkit_accessibility`).
"""

from __future__ import annotations

from jeepney import DBusAddress, MessageType, Properties, new_method_call
from jeepney.io.blocking import open_dbus_connection

from daemon.frontends.base import PlatformError

#: Every accessible object implements this interface.
ACCESSIBLE = "org.a11y.atspi.Accessible"
TEXT = "org.a11y.atspi.Text"
COMPONENT = "org.a11y.atspi.Component"
REGISTRY_BUS = "org.a11y.atspi.Registry"
REGISTRY_PATH = "/org/a11y/atspi/registry"
REGISTRY_IFACE = "org.a11y.atspi.Registry"
#: The desktop object: its children are the accessible applications.
DESKTOP_PATH = "/org/a11y/atspi/accessible/root"
#: Every application exposes its root accessible at this path on its own bus name.
APP_ROOT_PATH = "/org/a11y/atspi/accessible/root"
EVENT_OBJECT = "org.a11y.atspi.Event.Object"

#: Coordinate type for Text/Component geometry calls: 0 = screen.
COORD_SCREEN = 0


def accessibility_bus_address(session_bus: str = "SESSION", timeout: float = 2.0) -> str:
    """Ask the session bus for the accessibility bus address.

    ``org.a11y.Bus`` is D-Bus activatable (at-spi-bus-launcher), so this call
    also starts the accessibility bus and registry when they are installed but
    not running yet; hence the longer timeout than for ordinary calls.

    Raises ``PlatformError`` with a fix hint when there is no session bus or no
    accessibility bus.
    """
    session = session_connection(session_bus)
    try:
        launcher = DBusAddress("/org/a11y/bus", bus_name="org.a11y.Bus", interface="org.a11y.Bus")
        try:
            reply = session.send_and_get_reply(new_method_call(launcher, "GetAddress"), timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise PlatformError(f"AT-SPI is unavailable: the accessibility bus did not answer ({exc})") from exc
        if reply.header.message_type != MessageType.method_return or not reply.body or not reply.body[0]:
            detail = reply.body[0] if reply.body else "no address"
            raise PlatformError(
                f"AT-SPI is unavailable: no accessibility bus ({detail}); install at-spi2-core"
            )
        return str(reply.body[0])
    finally:
        session.close()


def set_toolkit_accessibility(enabled: bool, session_bus: str = "SESSION", timeout: float = 1.0) -> bool:
    """Set ``org.a11y.Status.IsEnabled`` and return its previous value.

    Qt (and other toolkits) only expose their widgets on the accessibility
    bus while this session-wide flag is on (or when forced with
    ``QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1``); running Qt apps follow a change
    within about a second.  It is the switch screen readers flip.  On GNOME
    the bus launcher also stores it in the ``toolkit-accessibility`` setting,
    so callers should restore the previous value when they are done.

    Raises ``PlatformError`` when the session bus or the launcher is missing.
    """
    session = session_connection(session_bus)
    try:
        status = DBusAddress("/org/a11y/bus", bus_name="org.a11y.Bus", interface="org.a11y.Status")
        try:
            before = session.send_and_get_reply(Properties(status).get("IsEnabled"), timeout=timeout)
            reply = session.send_and_get_reply(Properties(status).set("IsEnabled", "b", bool(enabled)),
                                               timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise PlatformError(f"AT-SPI status did not answer ({exc})") from exc
        if MessageType.error in (before.header.message_type, reply.header.message_type):
            raise PlatformError("AT-SPI status cannot be changed (is at-spi2-core installed?)")
        return bool(before.body[0][1])
    finally:
        session.close()


def session_connection(session_bus: str):
    try:
        return open_dbus_connection(session_bus)
    except KeyError as exc:
        raise PlatformError(
            "AT-SPI is unavailable: no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set); "
            "run inside a desktop session or dbus-run-session"
        ) from exc
    except (OSError, TimeoutError, ValueError) as exc:
        raise PlatformError(f"AT-SPI is unavailable: cannot connect to the D-Bus session bus ({exc})") from exc
