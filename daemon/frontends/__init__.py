"""The frontends: peers over one :class:`~daemon.controller.Controller`.

A frontend gets keys and the focused field's text from the desktop, shows the
suggestion and inserts it on an accept key.  Each one implements the same
ports (:mod:`daemon.controller.ports`: ``FocusInfo``, ``CaretLocator``,
``KeySuppressor``, ``TextInjector``, plus the controller's ``UiSink``), builds
the shared pieces through :mod:`daemon.runtime` (configuration, suggestion
worker, model backend), and has a composition root of its own:

* ``overlay/``: ``ghosttype run``.  Watches keys from outside the
  applications (pynput), reads the field through accessibility, draws ghost
  text in a Qt overlay window (the top-level ``ui`` package, loaded by name)
  and types the accepted text (XTEST, SendInput, CGEvent).  X11, macOS,
  Windows; its OS backends are in ``overlay/platform/``.
* ``ibus/``: ``ghosttype ibus run``.  An IBus input-method engine: the
  desktop routes keys and surrounding text to it (Wayland and every toolkit).

Modules shared by the frontends sit here: ``base.py`` (what the overlay's
platform backends share beyond the ports: the keyboard hook's filter, the
error of a platform that cannot be used) and ``session.py`` (which display
server this session runs).  A third frontend is a third package beside these two: implement the
ports, build a ``Controller`` around them, and add a command in
``daemon/commands/``.  Frontends never import each other.
"""
