"""macOS ``CaretLocator``: the accessible caret, else a guess near the pointer.

``MacFocus`` already reads the caret through AX with the text; this adds the
fallback for applications whose text AX cannot reach (many Electron apps,
terminals drawn with custom views): ``caret_geometry.pointer_caret`` with the
pointer (``CGEventGetLocation``), the focused window (AX ``AXPosition`` and
``AXSize``) and the display under the pointer (``CGDisplayBounds``).  All
three are global points with a top-left origin, which is Qt's logical
coordinate system on macOS (see ``focus``), so nothing is scaled.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Optional

from daemon.controller.ports import FocusState, Rect
from daemon.frontends.overlay.platform.caret_geometry import pointer_caret
from daemon.frontends.overlay.platform.macos.focus import ax_box_to_rect

log = logging.getLogger(__name__)


class MacCaretLocator:
    """See the module docstring.  ``ax`` is a ``ax.AX``."""

    def __init__(self, ax: Any) -> None:
        import Quartz

        self._q = Quartz
        self._ax = ax
        self._lock = threading.Lock()

    def caret_rect(self, focus: FocusState) -> Optional[Rect]:
        if focus.caret is not None:
            return focus.caret
        with self._lock:
            q = self._q
            event = q.CGEventCreate(None)
            if event is None:
                return None
            where = q.CGEventGetLocation(event)
            px, py = round(where.x), round(where.y)
            screen = self._display_at(where) or Rect(px, py, 1, 1)
            return pointer_caret(px, py, self._focused_window(), screen)

    def close(self) -> None:
        pass

    def _focused_window(self) -> Optional[Rect]:
        ax = self._ax
        app = ax.attr(ax.system, "AXFocusedApplication")
        window = ax.attr(app, "AXFocusedWindow") if app is not None else None
        if window is None:
            return None
        origin = ax.point(ax.attr(window, "AXPosition"))
        size = ax.size(ax.attr(window, "AXSize"))
        if origin is None or size is None:
            return None
        return ax_box_to_rect((*origin, *size))

    def _display_at(self, point: Any) -> Optional[Rect]:
        q = self._q
        err, displays, count = q.CGGetDisplaysWithPoint(point, 1, None, None)
        if err != 0 or not count:
            return None
        b = q.CGDisplayBounds(displays[0])
        return ax_box_to_rect((b.origin.x, b.origin.y, b.size.width, b.size.height))
