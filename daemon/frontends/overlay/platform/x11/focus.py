"""X11 ``FocusInfo``: the active window, its WM_CLASS and id, merged with
what accessibility (AT-SPI) knows about the focused widget."""

from __future__ import annotations

import logging
import threading

from Xlib import X, error

from daemon.controller.ports import FocusState
from daemon.frontends.overlay.platform.x11.common import open_display

log = logging.getLogger(__name__)




class X11Focus:
    """``FocusInfo`` for X11: the active top-level window, its WM_CLASS and id,
    merged with what accessibility (AT-SPI) knows about the focused widget.

    The active window is ``_NET_ACTIVE_WINDOW`` (set by every EWMH window
    manager); without a window manager it is the input focus, walked up to the
    client window that carries WM_CLASS (the focus is often a child widget,
    or PointerRoot, in which case the window under the pointer is used).

    ``atspi`` is any object whose ``query()`` returns None or an answer with
    ``is_password``, ``text_before_caret``, ``caret`` (and optionally
    ``app_name``) attributes, such as ``daemon.frontends.overlay.platform.atspi.AtspiAnswer``, or
    a plain 3-tuple; its answers fill the fields X11 cannot know.  A failing
    accessibility query is logged once and treated as "unknown".
    """

    def __init__(self, display_name: str | None = None, atspi: object | None = None) -> None:
        self._display = open_display(display_name)
        self._root = self._display.screen().root
        self._active_atom = self._display.intern_atom("_NET_ACTIVE_WINDOW")
        self._wm_state = self._display.intern_atom("WM_STATE")
        self._atspi = atspi
        self._atspi_failed = False
        self._lock = threading.Lock()

    def current(self) -> FocusState:
        with self._lock:
            try:
                window = self._focused_client()
                if window is None:
                    state = FocusState()
                else:
                    cls = window.get_wm_class()
                    app_id = (cls[1] or cls[0]).lower() if cls else ""
                    state = FocusState(app_id=app_id, window_id=window.id)
            except (error.XError, error.ConnectionClosedError) as exc:
                # The window vanished between two requests, or the server is gone.
                log.debug("focus query failed: %s", type(exc).__name__)
                state = FocusState()
        return self._merge_atspi(state)

    # -- internals ----------------------------------------------------------

    def _focused_client(self):
        prop = self._root.get_full_property(self._active_atom, X.AnyPropertyType)
        if prop is not None and len(prop.value) and prop.value[0]:
            window = self._display.create_resource_object("window", int(prop.value[0]))
            found = self._client_at_or_below(window)
            if found is not None:
                return found
        focus = self._display.get_input_focus().focus
        if isinstance(focus, int) or focus is None or focus.id == self._root.id:
            # PointerRoot / None: keyboard focus follows the pointer.
            child = self._root.query_pointer().child
            if isinstance(child, int) or child is None or not child.id:
                return None
            return self._client_at_or_below(child)
        return self._client_at_or_above(focus) or self._client_at_or_below(focus)

    def _client_at_or_above(self, window):
        """Walk up from a (child) window to the first one carrying WM_CLASS."""
        for _ in range(32):
            if window is None or window.id == self._root.id:
                return None
            if window.get_wm_class() is not None:
                return window
            window = window.query_tree().parent
        return None

    def _client_at_or_below(self, window, depth: int = 4):
        """The client window at or inside a (frame) window: the first one, breadth
        first, with WM_STATE or WM_CLASS (what xprop/XmuClientWindow do)."""
        level = [window]
        for _ in range(depth):
            nxt = []
            for w in level:
                if w.get_wm_class() is not None or w.get_full_property(self._wm_state, X.AnyPropertyType):
                    return w
                nxt.extend(w.query_tree().children)
            level = nxt
        return None

    def _merge_atspi(self, state: FocusState) -> FocusState:
        if self._atspi is None:
            return state
        extra: dict = {}
        try:
            answer = self._atspi.query()
            if not answer:
                return state
            if hasattr(answer, "is_password"):  # daemon.frontends.overlay.platform.atspi.AtspiAnswer
                is_password, text, caret = answer.is_password, answer.text_before_caret, answer.caret
                app_name = str(getattr(answer, "app_name", "") or "")
                ref = getattr(answer, "object_ref", None)
                extra = dict(
                    field_id=":".join(ref) if ref and ref[0] else "",
                    caret_offset=getattr(answer, "caret_offset", None),
                    at_line_end=getattr(answer, "at_line_end", None),
                    look=getattr(answer, "look", None),
                    terminal=bool(getattr(answer, "terminal", False)),
                )
            else:  # a plain (is_password, text_before_caret, caret) tuple
                is_password, text, caret = answer
                app_name = ""
        except Exception as exc:  # accessibility is best-effort; never break focus
            if not self._atspi_failed:
                log.warning("accessibility query failed (%s); using X11 focus only", type(exc).__name__)
                self._atspi_failed = True
            return state
        return FocusState(
            # WM_CLASS names the app for the denylist; the accessible name
            # only fills in when X11 could not tell.
            app_id=state.app_id or app_name.lower(),
            window_id=state.window_id,
            is_password=is_password,
            text_before_caret=text,
            caret=caret,
            **extra,
        )

    def watch(self, callback) -> bool:
        """Call ``callback()`` (from a background thread) whenever the
        accessibility bus reports a focus, caret or text change; False when
        there is no such source (no AT-SPI)."""
        watch = getattr(self._atspi, "watch", None)
        return bool(watch is not None and watch(callback))

    def close(self) -> None:
        """Close the X connection and the accessibility reader handed to us."""
        close_atspi = getattr(self._atspi, "close", None)
        if close_atspi is not None:
            try:
                close_atspi()
            except Exception:
                log.debug("closing the accessibility reader failed", exc_info=True)
        with self._lock:
            self._display.close()
