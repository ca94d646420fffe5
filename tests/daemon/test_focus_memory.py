"""The application "Off in" names: the last one that had the focus, not
ghosttype's own windows nor a window that names no application."""

from __future__ import annotations

from daemon.frontends.base import FocusState
from daemon.frontends.overlay.focus_memory import FocusMemory
from tests.daemon.fakes import FakeFocus


def test_remembers_the_last_application_other_than_ghosttype_itself() -> None:
    inner = FakeFocus(FocusState(app_id="xterm", window_id=1))
    memory = FocusMemory(inner)
    assert memory.last_app() == ""  # nothing asked yet
    assert memory.current().app_id == "xterm" and memory.last_app() == "xterm"
    for passing in (FocusState(app_id="ghosttype", window_id=2), FocusState(window_id=3)):  # settings window, panel
        inner.state = passing
        assert memory.current() == passing  # passed through unchanged
        assert memory.last_app() == "xterm"
    inner.state = FocusState(app_id="mousepad", window_id=4)
    memory.current()
    assert memory.last_app() == "mousepad"
    assert memory.queries == inner.queries == 4  # the platform object's own attributes show through
