"""Which display server the user's session runs, from the environment alone.

No connection is attempted here: this is the cheap first answer that both the
platform selector and ``ghosttype doctor`` start from.
"""

from __future__ import annotations

import enum
import os
import sys
from dataclasses import dataclass
from typing import Mapping


class DisplayServer(enum.Enum):
    X11 = "x11"  #: an X session (DISPLAY set, no Wayland compositor)
    XWAYLAND = "xwayland"  #: a Wayland session whose X11 compatibility server is reachable
    WAYLAND = "wayland"  #: a Wayland session without X11 compatibility
    NONE = "none"  #: no graphical session (ssh, a console, a service without DISPLAY)
    MACOS = "macos"
    WINDOWS = "windows"


@dataclass(frozen=True)
class Session:
    server: DisplayServer
    display: str | None  #: the X11 DISPLAY, when there is one
    wayland_display: str | None

    def describe(self) -> str:
        """One line for logs and ``doctor``."""
        if self.server is DisplayServer.X11:
            return f"X11 (DISPLAY={self.display})"
        if self.server is DisplayServer.XWAYLAND:
            return f"Wayland ({self.wayland_display or 'session'}) with XWayland (DISPLAY={self.display})"
        if self.server is DisplayServer.WAYLAND:
            return f"Wayland ({self.wayland_display or 'session'}) without XWayland"
        if self.server is DisplayServer.NONE:
            return "no graphical session (DISPLAY and WAYLAND_DISPLAY are unset)"
        return self.server.value


def detect_session(env: Mapping[str, str] | None = None, os_name: str | None = None) -> Session:
    """Classify the session from ``DISPLAY``, ``WAYLAND_DISPLAY`` and ``XDG_SESSION_TYPE``.

    A Wayland session is recognised by either variable (some launchers drop
    ``WAYLAND_DISPLAY`` but keep ``XDG_SESSION_TYPE=wayland``); it counts as
    XWayland when ``DISPLAY`` is also set.
    """
    env = os.environ if env is None else env
    os_name = sys.platform if os_name is None else os_name
    if os_name == "darwin":
        return Session(DisplayServer.MACOS, None, None)
    if os_name.startswith(("win32", "cygwin")):
        return Session(DisplayServer.WINDOWS, None, None)
    display = env.get("DISPLAY") or None
    wayland = env.get("WAYLAND_DISPLAY") or None
    session_type = (env.get("XDG_SESSION_TYPE") or "").strip().lower()
    if wayland or session_type == "wayland":
        server = DisplayServer.XWAYLAND if display else DisplayServer.WAYLAND
        return Session(server, display, wayland)
    if display:
        return Session(DisplayServer.X11, display, None)
    return Session(DisplayServer.NONE, None, None)
