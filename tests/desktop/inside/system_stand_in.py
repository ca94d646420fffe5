"""What the tier's stand-ins for system services share (fake_gdm.py, fake_logind.py): their objects on the
session's private system bus, their name owned there, "ready" printed once it is, served until killed."""
from typing import Callable, Optional

from gi.repository import Gio, GLib


def serve(name: str, objects: list[tuple[str, str, Callable, Optional[Callable]]]) -> None:
    """Own ``name`` on the system bus and serve ``objects``: (path, introspection XML, method handler,
    property getter or None), every interface of the XML at its path."""
    conn = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)
    for path, xml, method_call, get_property in objects:
        for iface in Gio.DBusNodeInfo.new_for_xml(xml).interfaces:
            conn.register_object(path, iface, method_call, get_property, None)
    loop = GLib.MainLoop()
    Gio.bus_own_name_on_connection(conn, name, Gio.BusNameOwnerFlags.NONE,
                                   lambda *_: print("ready", flush=True), lambda *_: loop.quit())
    loop.run()
