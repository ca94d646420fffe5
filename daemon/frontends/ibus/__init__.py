"""ghosttype as an IBus input-method engine (the Wayland and every-toolkit frontend).

The X11 frontend (``daemon.frontends.overlay.platform.x11`` + the Qt overlay) watches keys from
outside the application.  This one sits where the desktop routes keys anyway:
GNOME Shell (text-input-v3 -> mutter -> ibus-daemon), KDE Plasma with IBus as
its input method, and GTK/Qt applications through their IBus IM modules all
hand each key to the selected engine, which may consume it, commit text, and
show preedit text at the caret.

Modules, one job each:

* ``wire``: IBus's serialized values (IBusText, IBusAttrList, IBusProperty,
  IBusComponent, ...) as plain D-Bus tuples, and its constants.  Pure.
* ``keys``: IBus key events (keysym, modifier state) -> ghosttype key events.
* ``engine``: the engine's state machine: keys, focus, surrounding text,
  content type and properties in; the shared :class:`~daemon.controller.Controller`
  decides what is suggested; commit / preedit / popup out.  No D-Bus.
* ``bus``: the D-Bus side (jeepney): finds ibus-daemon, exports the factory and
  the engine objects, turns method calls into ``engine`` calls and ``engine``
  output into signals.
* ``component``: the component file and ``ghosttype ibus install/uninstall/status``.
* ``desktop_setup``: what ``ghosttype setup`` changes in the user's GNOME or
  KDE Plasma settings so the installed engine is selected at login.
* ``service``: composition root of ``ghosttype ibus run``.

Nothing here imports a platform backend, Qt or pynput, and no platform backend
imports this package.
"""
