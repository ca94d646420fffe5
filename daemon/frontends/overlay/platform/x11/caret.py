"""X11 ``CaretLocator``: the accessible caret, else a position near the
focused window (X11 itself has no notion of a text caret)."""

from __future__ import annotations

import threading
from typing import Callable, Optional

from Xlib import error

from daemon.controller.ports import FocusState, Rect
from daemon.frontends.overlay.platform.caret_geometry import LINE_HEIGHT, MARGIN, POINTER_GAP, pointer_caret
from daemon.frontends.overlay.platform.x11.common import open_display, window_rect




class X11CaretLocator:
    """``CaretLocator`` for X11: the accessible caret when the focus state has
    one, else a heuristic position near the focused window.

    X11 itself has no notion of a text caret, so without accessibility we
    guess where the user is looking:

    1. The pointer is inside the focused window: just below the pointer
       (``POINTER_GAP`` pixels down, clear of the cursor shape), because people
       usually click where they type and the ghost text should not hide the
       line under the pointer.
    2. Otherwise: the window's bottom-left corner, inset by ``MARGIN``, where
       terminals and chat inputs keep their prompt.
    3. No focused window: below the pointer.

    The result is clamped to the screen and converted to Qt logical pixels by
    dividing by ``scale`` (a number, or a callable returning the current
    screen scale factor).  The accessible caret (``focus.caret``) is returned
    unchanged: accessibility already reports it in logical pixels.
    """

    POINTER_GAP = POINTER_GAP
    MARGIN = MARGIN
    LINE_HEIGHT = LINE_HEIGHT

    def __init__(self, display_name: str | None = None,
                 scale: float | Callable[[], float] = 1.0) -> None:
        self._display = open_display(display_name)
        self._root = self._display.screen().root
        self._scale = scale
        self._lock = threading.Lock()

    def caret_rect(self, focus: FocusState) -> Optional[Rect]:
        if focus.caret is not None:
            return focus.caret
        with self._lock:
            try:
                pointer = self._root.query_pointer()
                screen = self._display.screen()
                window = window_rect(self._display, self._root, focus.window_id)
            except (error.XError, error.ConnectionClosedError):
                return None
        rect = self.heuristic(pointer.root_x, pointer.root_y, window,
                              screen.width_in_pixels, screen.height_in_pixels)
        return _scaled(rect, self._current_scale())

    @classmethod
    def heuristic(cls, px: int, py: int, window: Optional[Rect],
                  screen_w: int, screen_h: int) -> Rect:
        """The fallback caret in device pixels (pure, unit-tested)."""
        return pointer_caret(px, py, window, Rect(0, 0, screen_w, screen_h),
                             cls.POINTER_GAP, cls.MARGIN, cls.LINE_HEIGHT)

    def _current_scale(self) -> float:
        value = self._scale() if callable(self._scale) else self._scale
        return value if value and value > 0 else 1.0

    def close(self) -> None:
        with self._lock:
            self._display.close()


def _scaled(rect: Rect, scale: float) -> Rect:
    if scale == 1.0:
        return rect
    return Rect(round(rect.x / scale), round(rect.y / scale),
                max(1, round(rect.width / scale)), max(1, round(rect.height / scale)))
