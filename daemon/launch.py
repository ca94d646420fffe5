"""Starting ghosttype's settings window as a process of its own (the tray's
and the IBus menu's "Settings..."): the daemon and the engine never open
windows in their own process (the engine has no Qt at all), and a window
that fails cannot take them down.  One window at a time."""

from __future__ import annotations

import logging
import pathlib
import subprocess
import sys
import threading
from typing import Optional

log = logging.getLogger(__name__)

_lock = threading.Lock()
_window: Optional[subprocess.Popen] = None


def settings_command(config_path: pathlib.Path) -> list[str]:
    return [sys.executable, "-m", "daemon", "settings", "--config", str(config_path)]


def open_settings(config_path: pathlib.Path) -> Optional[subprocess.Popen]:
    """Start ``ghosttype settings`` for ``config_path`` unless its window is
    already open; returns the process (None when it could not start)."""
    global _window
    with _lock:
        if _window is not None and _window.poll() is None:
            return _window
        try:
            _window = subprocess.Popen(settings_command(config_path), stdin=subprocess.DEVNULL,
                                       start_new_session=True)
        except OSError as e:
            log.error("cannot open the settings window: %s", e.strerror or e)
            return None
        threading.Thread(target=_window.wait, name="ghosttype-settings-window", daemon=True).start()
        return _window
