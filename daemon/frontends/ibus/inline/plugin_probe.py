"""What ``ghosttype doctor`` asks the desktop's plug-in (the GNOME Shell extension, the KWin effect) on
the session bus: whether it answers from inside the compositor, and which protocol it speaks.

The engine makes the same two checks in its handshake (:mod:`shell_ghost`) and falls back to IBus's popup
when either fails; this module lets the doctor say which one failed.  It reads only the bus daemon's
name owners and the plug-in's ``Version`` property, which carry no text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .protocol import SPEC
from .shell_ghost import BUS_DAEMON, BUS_NAME, OBJECT_PATH, PROTOCOL

_BUS = ("/org/freedesktop/DBus", BUS_DAEMON, BUS_DAEMON)


@dataclass(frozen=True)
class Probe:
    """``compositor``: whether the compositor owns its name on the bus; ``answering``: whether the
    plug-in's name belongs to that same connection; ``version``: the protocol it says it speaks (0:
    none said)."""

    compositor: bool
    answering: bool
    version: int = 0

    @property
    def older(self) -> bool:
        """It answers with a protocol older than this engine's: the engine sends it nothing."""
        return self.answering and self.version < PROTOCOL


def probe(compositor_name: str, address: str = "SESSION") -> Optional[Probe]:
    """Ask the bus at ``address`` about the plug-in inside the compositor that owns ``compositor_name``;
    None when there is no such bus."""
    from jeepney import DBusAddress, HeaderFields, MessageType, new_method_call
    from jeepney.io.blocking import open_dbus_connection

    try:
        conn = open_dbus_connection(address)
    except (KeyError, OSError, TimeoutError, ValueError):
        return None
    try:
        bus = DBusAddress(*_BUS)
        owners = []
        for name in (compositor_name, BUS_NAME):
            reply = conn.send_and_get_reply(new_method_call(bus, "GetNameOwner", "s", (name,)), timeout=2)
            owners.append(reply.body[0] if reply.header.message_type == MessageType.method_return else "")
        if not owners[0] or owners[1] != owners[0]:
            return Probe(compositor=bool(owners[0]), answering=False)
        props = DBusAddress(OBJECT_PATH, bus_name=owners[1], interface="org.freedesktop.DBus.Properties")
        reply = conn.send_and_get_reply(new_method_call(props, "Get", "ss", (BUS_NAME, "Version")), timeout=2)
        ok = reply.header.message_type == MessageType.method_return and reply.header.fields.get(HeaderFields.signature) == "v" \
            and reply.body[0][0] == SPEC.properties["Version"]
        return Probe(compositor=True, answering=True, version=int(reply.body[0][1]) if ok else 0)
    except (OSError, TimeoutError):
        return None
    finally:
        conn.close()


def older_line(what: str, found: Probe) -> str:
    """The doctor's words for a plug-in that speaks an older protocol than this engine."""
    return (f"{what} speaks protocol {found.version or 'unknown'}, this ghosttype needs {PROTOCOL}: the engine "
            f"sends it nothing, and suggestions show in IBus's popup")
