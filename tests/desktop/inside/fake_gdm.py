#!/usr/bin/python3
"""The desktop tier's stand-in for GDM on a session's private system bus (the ``gnome-lock`` session).

GNOME Shell builds its lock screen only where GDM answers for its version on the system bus and systemd's
seats exist (js/misc/loginManager.js, canLock: ``org.gnome.DisplayManager`` at
``/org/gnome/DisplayManager/Manager``, property ``Version``, and /run/systemd/seats); without them a headless
GNOME Shell has no lock screen to lock. This answers ``Version`` and GNOME Shell's ``RegisterSession`` and
nothing else: it authenticates nobody (the tier unlocks through ``org.gnome.ScreenSaver.SetActive``).
Prints "ready" once it owns the name; runs until killed.
"""
from gi.repository import GLib
from system_stand_in import serve

NAME = "org.gnome.DisplayManager"
PATH = "/org/gnome/DisplayManager/Manager"
XML = """<node><interface name="org.gnome.DisplayManager.Manager">
  <method name="RegisterSession"><arg type="a{sv}" direction="in" name="details"/></method>
  <property name="Version" type="s" access="read"/>
</interface></node>"""
#: Any version after 3.5.91 will do (canLock compares against that).
VERSION = "49.0"


def method_call(_conn, _sender, _path, _iface, _method, _params, invocation):
    invocation.return_value(None)


def get_property(_conn, _sender, _path, _iface, _prop):
    return GLib.Variant("s", VERSION)


def main() -> None:
    serve(NAME, [(PATH, XML, method_call, get_property)])

if __name__ == "__main__":
    main()
