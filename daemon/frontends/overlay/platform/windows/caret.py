"""Windows ``CaretLocator``: the system caret, else a guess near the pointer.

Win32 edit controls, and applications that keep the system caret in step for
screen readers and magnifiers (many browsers and editors do), report it
through ``GetGUIThreadInfo``: the caret window and a rectangle in its client
coordinates; ``ClientToScreen`` makes that a screen position.

Coordinates.  Qt 6 makes the process per-monitor DPI aware, so Win32 answers
in physical pixels, while the overlay is placed in Qt's logical pixels.  Qt 6
maps each monitor separately: a point ``p`` on a monitor whose physical
top-left is ``o`` and whose scale is ``dpi / 96`` (the monitor's effective
DPI, ``GetDpiForMonitor``) is at ``o + (p - o) / scale``
(``QHighDpiScaling``'s ``fromNativePixels``; with the default
``PassThrough`` rounding policy the scale is not rounded).  The monitor's
origin stays put, so negative coordinates (a monitor left of or above the
primary one) survive the conversion.  In a process that is not DPI aware
Windows already scales everything to 96 DPI, so nothing is converted.
"""

from __future__ import annotations

import ctypes
import logging
from typing import Optional

from daemon.controller.ports import FocusState, Rect
from daemon.frontends.overlay.platform.caret_geometry import pointer_caret
from daemon.frontends.overlay.platform.windows.api import (
    DPI_AWARENESS_UNAWARE,
    GUITHREADINFO,
    MDT_EFFECTIVE_DPI,
    MONITOR_DEFAULTTONEAREST,
    MONITORINFO,
    POINT,
    RECT,
    UINT,
    has,
    rect_of,
    shcore,
    user32,
)

log = logging.getLogger(__name__)

BASE_DPI = 96


def to_logical(rect: Rect, monitor: Rect, dpi: int) -> Rect:
    """A rectangle in physical pixels on ``monitor`` (its physical rectangle)
    in Qt's logical pixels (see the module docstring)."""
    if dpi <= 0 or dpi == BASE_DPI:
        return rect
    scale = dpi / BASE_DPI
    x = monitor.x + (rect.x - monitor.x) / scale
    y = monitor.y + (rect.y - monitor.y) / scale
    return Rect(round(x), round(y), max(1, round(rect.width / scale)), max(1, round(rect.height / scale)))


def caret_on_screen(client_caret: tuple[int, int, int, int], client_origin: tuple[int, int]) -> Optional[Rect]:
    """The caret of ``GetGUIThreadInfo`` (x, y, width, height in client
    coordinates) moved to the screen; None for the empty rectangle an
    application without a caret reports."""
    x, y, w, h = client_caret
    if h <= 0:
        return None
    return Rect(x + client_origin[0], y + client_origin[1], max(1, w), h)


class WindowsCaretLocator:
    """``CaretLocator`` for Windows; see the module docstring.

    Fallback order: the accessible caret in the focus state (none of the
    Windows focus sources fill it today), the system caret of the foreground
    window's GUI thread, then :func:`~daemon.frontends.overlay.platform.caret_geometry.pointer_caret`
    on the monitor under the pointer.
    """

    def __init__(self) -> None:
        self._user32 = user32()

    def caret_rect(self, focus: FocusState) -> Optional[Rect]:
        if focus.caret is not None:
            return focus.caret
        try:
            return self._system_caret() or self._pointer_guess()
        except OSError as exc:  # a window vanished mid-query
            log.debug("caret query failed: %s", exc)
            return None

    # -- internals ---------------------------------------------------------------

    def _system_caret(self) -> Optional[Rect]:
        u = self._user32
        hwnd = u.GetForegroundWindow()
        if not hwnd:
            return None
        thread = u.GetWindowThreadProcessId(hwnd, None)
        info = GUITHREADINFO(cbSize=ctypes.sizeof(GUITHREADINFO))
        if not u.GetGUIThreadInfo(thread, ctypes.byref(info)) or not info.hwndCaret:
            return None
        origin = POINT(0, 0)
        if not u.ClientToScreen(info.hwndCaret, ctypes.byref(origin)):
            return None
        rect = caret_on_screen(rect_of(info.rcCaret), (origin.x, origin.y))
        if rect is None:
            return None
        return to_logical(rect, *self._monitor(rect.x, rect.y))

    def _pointer_guess(self) -> Optional[Rect]:
        u = self._user32
        pointer = POINT()
        if not u.GetCursorPos(ctypes.byref(pointer)):
            return None
        hwnd = u.GetForegroundWindow()
        window = None
        r = RECT()
        if hwnd and u.GetWindowRect(hwnd, ctypes.byref(r)):
            window = Rect(*rect_of(r))
        monitor, dpi = self._monitor(pointer.x, pointer.y)
        return to_logical(pointer_caret(pointer.x, pointer.y, window, monitor), monitor, dpi)

    def _monitor(self, x: int, y: int) -> tuple[Rect, int]:
        """The physical rectangle and DPI of the monitor at (or nearest to) a
        point.  The DPI is 96 when this process is DPI unaware (Windows then
        scales for us) or Windows is older than 8.1."""
        u = self._user32
        handle = u.MonitorFromPoint(POINT(x, y), MONITOR_DEFAULTTONEAREST)
        info = MONITORINFO(cbSize=ctypes.sizeof(MONITORINFO))
        if not handle or not u.GetMonitorInfoW(handle, ctypes.byref(info)):
            return Rect(x, y, 1, 1), BASE_DPI
        monitor = Rect(*rect_of(info.rcMonitor))
        if has(u, "GetThreadDpiAwarenessContext"):
            awareness = u.GetAwarenessFromDpiAwarenessContext(u.GetThreadDpiAwarenessContext())
            if awareness == DPI_AWARENESS_UNAWARE:
                return monitor, BASE_DPI
        sh = shcore()
        dpi_x, dpi_y = UINT(), UINT()
        if sh is None or sh.GetDpiForMonitor(handle, MDT_EFFECTIVE_DPI, ctypes.byref(dpi_x),
                                             ctypes.byref(dpi_y)) != 0:
            return monitor, BASE_DPI
        return monitor, int(dpi_x.value) or BASE_DPI

    def close(self) -> None:
        pass
