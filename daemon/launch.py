"""Starting ghosttype's settings window as a process of its own (the tray's
and the IBus menu's "Settings..."): the daemon and the engine never open
windows in their own process (the engine has no Qt at all), and a window
that fails cannot take them down.  One window at a time.

The window runs this installation's code and nothing else: the installed
``ghosttype`` command beside the interpreter (a console script puts its own
directory first on the module path, not the working directory), or, where
there is none (a source tree run in place), the interpreter isolated (``-I``:
no working directory, no ``PYTHON*`` variables, no user site) with the
directory this package was imported from put first.  Either starts in ``/``,
so a ``daemon/`` in whatever directory ghosttype was started from never runs.
"""

from __future__ import annotations

import logging
import os
import pathlib
import subprocess
import sys
import threading
from typing import Optional

log = logging.getLogger(__name__)

_lock = threading.Lock()
_window: Optional[subprocess.Popen] = None
#: What ``python -I -c`` runs: this package's ``main`` from the directory given first.
_BOOT = "import sys; sys.path.insert(0, sys.argv.pop(1)); from daemon.__main__ import main; sys.exit(main())"


def settings_command(config_path: pathlib.Path, script: Optional[pathlib.Path] = None) -> list[str]:
    """``script``: the installed command (default: ``ghosttype`` beside the interpreter)."""
    script = script or pathlib.Path(sys.executable).parent / "ghosttype"
    args = ["settings", "--config", str(pathlib.Path(config_path).absolute())]  # it starts in /
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script), *args]
    root = pathlib.Path(__file__).resolve().parent.parent  # the directory holding this ``daemon`` package
    return [sys.executable, "-I", "-c", _BOOT, str(root), *args]


def open_settings(config_path: pathlib.Path) -> Optional[subprocess.Popen]:
    """Start ``ghosttype settings`` for ``config_path`` unless its window is
    already open; returns the process (None when it could not start)."""
    global _window
    with _lock:
        if _window is not None and _window.poll() is None:
            return _window
        try:
            _window = subprocess.Popen(settings_command(config_path), stdin=subprocess.DEVNULL, cwd="/",
                                       start_new_session=True)
        except OSError as e:
            log.error("cannot open the settings window: %s", e.strerror or e)
            return None
        threading.Thread(target=_window.wait, name="ghosttype-settings-window", daemon=True).start()
        return _window
