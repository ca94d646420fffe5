"""Desktop notifications over D-Bus (``org.freedesktop.Notifications``).

The one way ghosttype tells a user without a tray about an error that needs
them (the model failed to load, the config file is invalid, the session is
Wayland-only).  Every notification server on Linux desktops (GNOME Shell,
KDE Plasma, dunst, xfce4-notifyd, mako...) implements this interface.

Best effort and never blocking for long: without a session bus or a server
owning the name, :meth:`DesktopNotifier.notify` returns False and the message
is only logged.  Messages are the daemon's own (never typed text).
"""

from __future__ import annotations

import logging
import threading
from typing import Optional

log = logging.getLogger(__name__)

NOTIFICATIONS_NAME = "org.freedesktop.Notifications"
NOTIFICATIONS_PATH = "/org/freedesktop/Notifications"
APP_NAME = "ghosttype"
#: Milliseconds a notification stays up (servers may ignore it).
EXPIRE_MS = 10_000
CALL_TIMEOUT_S = 1.0


class DesktopNotifier:
    """Sends notifications on the session bus given by ``session_bus``
    (a D-Bus address or "SESSION").  Successive notifications replace the
    previous one, so a flapping error never stacks up bubbles."""

    def __init__(self, session_bus: str = "SESSION", timeout: float = CALL_TIMEOUT_S) -> None:
        self._session_bus = session_bus
        self._timeout = timeout
        self._lock = threading.Lock()
        self._last_id = 0
        self.sent = 0

    def notify(self, summary: str, body: str = "", urgency: int = 2) -> bool:
        """Show one notification (urgency 0 low, 1 normal, 2 critical); True
        when a notification server accepted it."""
        try:
            from jeepney import DBusAddress, new_method_call
            from jeepney.io.blocking import open_dbus_connection
        except ImportError:
            return False
        with self._lock:
            try:
                connection = open_dbus_connection(self._session_bus)
            except (KeyError, OSError, TimeoutError, ValueError) as exc:
                log.debug("no session bus for notifications (%s)", type(exc).__name__)
                return False
            try:
                address = DBusAddress(NOTIFICATIONS_PATH, bus_name=NOTIFICATIONS_NAME,
                                      interface=NOTIFICATIONS_NAME)
                message = new_method_call(address, "Notify", "susssasa{sv}i", (
                    APP_NAME, self._last_id, "dialog-error" if urgency == 2 else "dialog-information",
                    summary, body, [], {"urgency": ("y", urgency)}, EXPIRE_MS,
                ))
                reply = connection.send_and_get_reply(message, timeout=self._timeout)
            except (OSError, TimeoutError) as exc:
                log.debug("notification not sent (%s)", type(exc).__name__)
                return False
            finally:
                connection.close()
            if reply.header.message_type.name != "method_return":
                log.debug("no notification server on the session bus")
                return False
            self._last_id = int(reply.body[0])
            self.sent += 1
            return True


def desktop_notifier() -> Optional[DesktopNotifier]:
    """A notifier for this session, or None where D-Bus is not available."""
    try:
        import jeepney  # noqa: F401
    except ImportError:
        return None
    return DesktopNotifier()
