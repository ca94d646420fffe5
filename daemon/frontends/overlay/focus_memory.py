"""The application that last had the focus, for the tray's "Off in
<application>".  When the user opens the tray menu, the focus may go to the
panel or to ghosttype's own settings window; what they mean is the
application they were typing in before, so windows of ghosttype itself and
windows that name no application are not remembered."""

from __future__ import annotations

import threading

from daemon.frontends.base import FocusInfo, FocusState

#: ghosttype's own windows (the settings window's WM_CLASS class).
OWN_APP_IDS = frozenset({"ghosttype"})


class FocusMemory:
    """A :class:`~daemon.frontends.base.FocusInfo` that passes every query
    through to ``inner`` and remembers the last application it named."""

    def __init__(self, inner: FocusInfo) -> None:
        self._inner = inner
        self._lock = threading.Lock()
        self._last = ""

    def current(self) -> FocusState:
        state = self._inner.current()
        if state.app_id and state.app_id not in OWN_APP_IDS:
            with self._lock:
                self._last = state.app_id
        return state

    def last_app(self) -> str:
        with self._lock:
            return self._last

    def __getattr__(self, name: str):  # watch(), close() and the rest of the platform's focus object
        return getattr(self._inner, name)
