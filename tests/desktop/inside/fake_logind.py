#!/usr/bin/python3
"""The desktop tier's stand-in for logind on a session's private system bus (the ``kde-lock`` session).

KWin's screen locker (kscreenlocker's LogindIntegration, logind.cpp) asks logind for the session
(``org.freedesktop.login1.Manager.GetSession("auto")``) and follows that session's ``Lock`` and ``Unlock``
signals; an ``Unlock`` from logind ends the lock screen without a password (ksldapp.cpp: the greeter is
stopped and the screen unlocked), which is how the tier unlocks: it calls ``Unlock`` on this stand-in's own
``org.ghosttype.Tier.Logind`` interface, and the stand-in sends the session's ``Unlock`` signal as logind
would after ``loginctl unlock-session``.  It answers ``SetLockedHint`` and ``LockedHint``, refuses
``Inhibit`` (no sleep to delay here), and authenticates nobody.  Prints "ready" once it owns the name; runs
until killed.
"""
from gi.repository import GLib
from system_stand_in import serve

NAME = "org.freedesktop.login1"
MANAGER = "/org/freedesktop/login1"
SESSION = "/org/freedesktop/login1/session/ghosttype"
MANAGER_XML = """<node><interface name="org.freedesktop.login1.Manager">
  <method name="GetSession"><arg type="s" direction="in"/><arg type="o" direction="out"/></method>
  <method name="GetSessionByPID"><arg type="u" direction="in"/><arg type="o" direction="out"/></method>
  <method name="Inhibit"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="s" direction="in"/>
    <arg type="s" direction="in"/><arg type="h" direction="out"/></method>
  <signal name="PrepareForSleep"><arg type="b"/></signal>
</interface></node>"""
SESSION_XML = """<node><interface name="org.freedesktop.login1.Session">
  <method name="SetLockedHint"><arg type="b" direction="in"/></method>
  <signal name="Lock"/>
  <signal name="Unlock"/>
  <property name="LockedHint" type="b" access="read"/>
</interface>
<interface name="org.ghosttype.Tier.Logind">
  <method name="Unlock"/>
</interface></node>"""

locked_hint = False


def manager_call(_conn, _sender, _path, _iface, method, _params, invocation):
    if method in ("GetSession", "GetSessionByPID"):
        invocation.return_value(GLib.Variant("(o)", (SESSION,)))
    else:
        invocation.return_dbus_error("org.freedesktop.DBus.Error.NotSupported", "no sleep to delay here")


def session_call(conn, _sender, _path, iface, method, params, invocation):
    global locked_hint
    if method == "SetLockedHint":
        locked_hint = params.unpack()[0]
    elif iface == "org.ghosttype.Tier.Logind" and method == "Unlock":
        conn.emit_signal(None, SESSION, "org.freedesktop.login1.Session", "Unlock", None)
    invocation.return_value(None)


def session_property(_conn, _sender, _path, _iface, _prop):
    return GLib.Variant("b", locked_hint)


def main() -> None:
    serve(NAME, [(MANAGER, MANAGER_XML, manager_call, None), (SESSION, SESSION_XML, session_call, session_property)])

if __name__ == "__main__":
    main()
