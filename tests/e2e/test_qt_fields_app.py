"""The Qt test application itself: it must report faithfully what was typed
and where its fields are, since the AT-SPI tests trust it as their oracle."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.e2e.test_atspi import APP, read_state, window_rect
from tests.e2e.xserver import start_app, wait_until, xdotool, xvfb  # noqa: F401

pytestmark = pytest.mark.e2e


def test_state_file_reports_typed_text_focus_and_geometry(xvfb: str, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    app = start_app(xvfb, [sys.executable, str(APP), "--state", str(state)], wm_class="qt_fields",
                    env={"QT_QPA_PLATFORM": "xcb", "HOME": str(tmp_path)})
    xdotool(xvfb, "windowfocus", "--sync", str(app.window))
    assert wait_until(lambda: read_state(state).get("focus") == "normal", timeout=10)

    xdotool(xvfb, "type", "--delay", "20", "abc")
    xdotool(xvfb, "key", "Tab")
    xdotool(xvfb, "type", "--delay", "20", "pw")
    xdotool(xvfb, "key", "Tab")
    xdotool(xvfb, "type", "--delay", "20", "x")
    xdotool(xvfb, "key", "Tab")  # the editor keeps Tab as a character
    xdotool(xvfb, "type", "--delay", "20", "y")
    assert wait_until(lambda: read_state(state)["fields"]["editor"]["text"] == "x\ty", timeout=10)

    snap = read_state(state)
    assert snap["focus"] == "editor"
    assert snap["fields"]["normal"]["text"] == "abc"
    assert snap["fields"]["password"]["text"] == "pw"
    window = window_rect(xvfb, app.window)
    rects = {name: field["rect"] for name, field in snap["fields"].items()}
    for x, y, w, h in rects.values():
        assert w > 0 and h > 0
        assert window.x <= x and x + w <= window.x + window.width
        assert window.y <= y and y + h <= window.y + window.height
    # Top to bottom: normal, password, editor, not overlapping.
    assert rects["normal"][1] + rects["normal"][3] <= rects["password"][1]
    assert rects["password"][1] + rects["password"][3] <= rects["editor"][1]
