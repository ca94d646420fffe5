"""The overlay frontend (``ghosttype run``): X11, macOS and Windows.

* ``app.py``: the composition root (keyboard listener, platform, controller,
  worker, config watcher, the Qt front end); no logic.
* ``keyboard.py``: the pynput listener (keys and clicks from outside the
  applications); the only module that imports pynput.
* ``platform/``: the OS backends behind :mod:`daemon.controller.ports`, one
  package per OS or display server, and the selector that picks one.
* ``event_pump.py``: re-checks the focused field after bursts of
  accessibility events, on its own thread.

Its Qt half (overlay window, tray, mailbox) is the top-level ``ui`` package,
which depends on ``daemon`` and is loaded by module name at run time
(``daemon.commands.run``), so nothing under ``daemon`` imports Qt.
"""
