"""The ghost-text overlay: window flags, focus, size, placement, clamping, and
what it really looks like on an X server with and without a compositor.

Unit tests run in-process on Qt's offscreen platform.  The screenshot tests
need a real X server (Xvfb) and the xcb platform, which a process can only
choose once, so they run this file as a script (``--scene``) in a child
process that shows a white text editor plus the overlay at its caret and
grabs the screen with ImageMagick's ``import``.  The pixel checks run here.
"""

from __future__ import annotations

import json
import pathlib
import shutil
import subprocess
import sys
import time
from typing import Iterator

ROOT = pathlib.Path(__file__).resolve().parents[2]
if __name__ == "__main__":  # run as the screenshot scene: make the project importable
    sys.path.insert(0, str(ROOT))

import pytest

from daemon.frontends.base import Rect
from PyQt6.QtCore import QRect, Qt
from PyQt6.QtGui import QColor, QFont, QFontMetricsF, QGuiApplication, QImage
from PyQt6.QtWidgets import QApplication, QLineEdit, QWidget

from ui.overlay import OVERLAY_FLAGS, GhostOverlay, GhostStyle, compute_layout, font_for_line_height
from ui.qtapp import create_app
from tests import needs

if __name__ != "__main__":
    from tests.e2e.xserver import selection_owned, wait_until, x_env, xvfb  # noqa: F401  (pytest fixture)

ARTIFACTS = ROOT / "test-artifacts"


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    return create_app(["ghosttype-tests", "-platform", "offscreen"])


@pytest.fixture
def overlay(qapp: QApplication) -> Iterator[GhostOverlay]:
    o = GhostOverlay(compositing=lambda: False)
    yield o
    o.hide_suggestion()
    o.deleteLater()
    qapp.processEvents()


def _settle(app: QApplication, ms: int = 50) -> None:
    end = time.monotonic() + ms / 1000
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.005)


def _font(px: int) -> QFont:
    f = QFont("DejaVu Sans")
    f.setPixelSize(px)
    return f


# --------------------------------------------------------------------------- window behaviour


def test_window_flags_and_attributes(overlay: GhostOverlay) -> None:
    flags = overlay.windowFlags()
    for flag in (
        Qt.WindowType.ToolTip,
        Qt.WindowType.FramelessWindowHint,
        Qt.WindowType.WindowStaysOnTopHint,
        Qt.WindowType.WindowTransparentForInput,
        Qt.WindowType.WindowDoesNotAcceptFocus,
    ):
        assert flags & flag == flag, flag
    assert flags & OVERLAY_FLAGS == OVERLAY_FLAGS
    assert overlay.testAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
    assert overlay.testAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
    assert overlay.focusPolicy() == Qt.FocusPolicy.NoFocus


def test_showing_does_not_take_focus(qapp: QApplication, overlay: GhostOverlay) -> None:
    editor_window = QWidget()
    edit = QLineEdit(editor_window)
    editor_window.resize(300, 60)
    editor_window.show()
    editor_window.activateWindow()
    edit.setFocus()
    _settle(qapp)
    assert QApplication.activeWindow() is editor_window
    assert QApplication.focusWidget() is edit

    overlay.show_suggestion("ghost", Rect(40, 40, 1, 18))
    _settle(qapp)
    overlay.show_suggestion("ghost text grows", Rect(40, 40, 1, 18))
    _settle(qapp)
    assert overlay.isVisible()
    assert QApplication.activeWindow() is editor_window
    assert QApplication.focusWidget() is edit
    assert not overlay.isActiveWindow()
    editor_window.close()


def test_updates_in_place_and_hides_on_empty(qapp: QApplication, overlay: GhostOverlay) -> None:
    caret = Rect(200, 150, 1, 20)
    overlay.show_suggestion("ab", caret)
    _settle(qapp)
    short = overlay.geometry()
    overlay.show_suggestion("abcdef ghij", caret)
    _settle(qapp)
    longer = overlay.geometry()
    assert overlay.isVisible() and overlay.text == "abcdef ghij"
    assert (longer.x(), longer.y(), longer.height()) == (short.x(), short.y(), short.height())
    assert longer.width() > short.width()
    overlay.show_suggestion("", caret)
    assert not overlay.isVisible() and overlay.text == ""


@pytest.mark.parametrize("boxed", [True, False])
def test_sizes_to_text_and_sits_at_caret(qapp: QApplication, boxed: bool) -> None:
    o = GhostOverlay(compositing=lambda: not boxed, base_font=_font(13))
    caret = Rect(300, 200, 1, 22)
    text = "continuation of the word"
    o.show_suggestion(text, caret)
    _settle(qapp)
    try:
        assert o.boxed is boxed
        fm = QFontMetricsF(o.font())
        assert fm.height() <= caret.height and QFontMetricsF(_font(o.font().pixelSize() + 1)).height() > caret.height - 1
        g = o.geometry()
        style = GhostStyle()
        pad = style.box_pad_x + 1 if boxed else 0
        # the text starts at the caret; boxed, the box starts just after it so
        # the caret stays visible
        assert g.x() == caret.x + (style.box_gap if boxed else 0)
        # width follows the text: within a couple of pixels of its advance plus padding
        assert abs(g.width() - (fm.horizontalAdvance(text) + 2 * pad)) <= 2
        # the line box is vertically centred on the caret
        line_top = g.y() + (style.box_pad_y + 1 if boxed else 0)
        assert abs((line_top + fm.height() / 2) - (caret.y + caret.height / 2)) <= 1.0
    finally:
        o.hide_suggestion()


def test_unknown_caret_uses_default_font_near_pointer(qapp: QApplication) -> None:
    base = _font(15)
    o = GhostOverlay(compositing=lambda: True, base_font=base)
    o.show_suggestion("near the pointer", None)
    _settle(qapp)
    try:
        assert o.isVisible() and o.font().pixelSize() == 15
        assert QGuiApplication.primaryScreen().geometry().contains(o.geometry())
    finally:
        o.hide_suggestion()


def test_clamped_to_the_screen(qapp: QApplication, overlay: GhostOverlay) -> None:
    screen = QGuiApplication.primaryScreen().geometry()
    long_text = "a suggestion far too long to fit " * 20
    for caret in (
        Rect(screen.right() - 40, 100, 1, 18),  # near the right edge: shifted left
        Rect(screen.right() - 300, 100, 1, 18),  # room for some: elided at the caret
        Rect(screen.x() + 5, screen.bottom() - 3, 1, 18),  # below the bottom
        Rect(screen.x() - 50, screen.y() - 50, 1, 18),  # off the top left
    ):
        overlay.show_suggestion(long_text, caret)
        _settle(qapp, 10)
        assert screen.contains(overlay.geometry()), (caret, overlay.geometry())
    # with room for a few words, the text stays at the caret and is elided
    overlay.show_suggestion(long_text, Rect(screen.right() - 300, 100, 1, 18))
    _settle(qapp, 10)
    assert overlay.geometry().x() == screen.right() - 300 + GhostStyle().box_gap


@pytest.mark.parametrize("px", [9, 11, 13, 16, 20, 28, 40])
def test_font_matches_a_caret_of_the_same_font(qapp: QApplication, px: int) -> None:
    """A caret as tall as a font's line gives back that font size."""
    base = _font(12)
    line_h = int(round(QFontMetricsF(_font(px)).height()))
    chosen = font_for_line_height(base, line_h).pixelSize()
    assert abs(chosen - px) <= 1, (px, line_h, chosen)
    assert QFontMetricsF(_font(chosen)).height() <= line_h + 0.5


def test_layout_multiline_and_tiny_caret(qapp: QApplication) -> None:
    fm = QFontMetricsF(_font(14))
    lay = compute_layout("one\ntwo lines", fm, Rect(10, 10, 1, 18), QRect(0, 0, 800, 600), boxed=False)
    assert lay.lines == ("one", "two lines")
    assert lay.window.height() >= fm.height() + fm.lineSpacing() - 1
    assert font_for_line_height(_font(14), 3).pixelSize() == 14  # not a caret: unchanged
    assert font_for_line_height(_font(14), 400).pixelSize() == 14  # a whole widget, not a line


def test_boxed_look_is_opaque_and_composited_look_is_transparent(qapp: QApplication) -> None:
    """Rendered offscreen: boxed = every pixel opaque (no black without a
    compositor); composited = transparent except for grey glyphs."""
    for composited in (False, True):
        o = GhostOverlay(compositing=lambda c=composited: c, base_font=_font(14))
        o.show_suggestion("ghost words", Rect(50, 50, 1, 18))
        _settle(qapp)
        img = QImage(o.size(), QImage.Format.Format_ARGB32)
        img.fill(Qt.GlobalColor.transparent)
        o.render(img, flags=QWidget.RenderFlag.DrawChildren)  # paintEvent only
        o.hide_suggestion()
        pixels = [img.pixelColor(x, y) for x in range(img.width()) for y in range(img.height())]
        alphas = [c.alpha() for c in pixels]
        if composited:
            assert min(alphas) == 0
        else:
            assert min(alphas) == 255
        inks = [c for c in pixels if c.alpha() > 200 and c.lightness() < 180]
        assert len(inks) > 20  # glyphs were drawn
        assert all(abs(c.red() - c.green()) < 12 and abs(c.green() - c.blue()) < 12 for c in inks)  # grey


# --------------------------------------------------------------------------- screenshots on Xvfb


def _grey(c: QColor) -> bool:
    return max(c.red(), c.green(), c.blue()) - min(c.red(), c.green(), c.blue()) < 16 and 60 <= c.lightness() <= 200


def _ink_rows(img: QImage, xs: range, ys: range, is_ink) -> list[int]:
    return [y for y in ys if any(is_ink(QColor(img.pixel(x, y))) for x in xs)]


@pytest.mark.e2e
@pytest.mark.parametrize(
    "composited, scale",
    [(False, "1"), (True, "1"), (False, "1.5"), (True, "2")],
    ids=["no-compositor", "compositor", "no-compositor-x1.5", "compositor-x2"],
)
def test_screenshot_ghost_text_at_caret(xvfb: str, composited: bool, scale: str) -> None:
    """A white editor with typed text, the overlay at its caret: the ghost text
    is grey, as large as the typed text, on its baseline, on a light (never
    black) background; boxed without a compositor, bare with one.  Also on
    the real server: showing it leaves the X input focus alone and clicks go
    through it to the editor."""
    for tool in ("import", "xdotool") + (("xcompmgr",) if composited else ()):
        needs.tool(tool)
    compositor = None
    if composited:
        compositor = subprocess.Popen(["xcompmgr"], env=x_env(xvfb),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert wait_until(lambda: selection_owned(xvfb, "_NET_WM_CM_S0") or compositor.poll() is not None,
                          timeout=30) and compositor.poll() is None, "xcompmgr did not start compositing"
    ARTIFACTS.mkdir(exist_ok=True)
    name = f"overlay-{'compositor' if composited else 'no-compositor'}-x{scale}.png"
    png = ARTIFACTS / name
    png.unlink(missing_ok=True)
    env = {k: v for k, v in x_env(xvfb).items() if k not in ("QT_QPA_PLATFORM", "QT_SCREEN_SCALE_FACTORS")}
    env["QT_SCALE_FACTOR"] = scale
    try:
        out = subprocess.run([sys.executable, __file__, "--scene", str(png)], env=env, cwd=ROOT,
                             capture_output=True, text=True, timeout=45)
    finally:
        if compositor is not None:
            compositor.terminate()
            compositor.wait(timeout=10)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout.strip().splitlines()[-1])
    assert info["boxed"] is (not composited)
    assert info["dpr"] == pytest.approx(float(scale))
    assert info["focus_before"] == info["focus_after"] == info["editor_window"]
    assert info["editor_has_focus"]
    assert info["clicks_on_editor"] == 1  # the click at the overlay's centre went through

    img = QImage(str(png))
    assert not img.isNull()
    dpr = info["dpr"]
    cx, cy, cw, ch = (round(v * dpr) for v in info["caret"])
    ox, oy, ow, oh = (round(v * dpr) for v in info["overlay"])

    # the overlay sits at the caret and is no taller than a line plus its frame
    assert cx <= ox <= cx + 3 * dpr and oh <= ch + 6 * dpr

    # grey ghost-text pixels right of the caret, on the caret's line
    ghost_xs = range(cx + 2, min(cx + round(200 * dpr), img.width()))
    line_ys = range(cy, cy + ch)
    grey = sum(_grey(QColor(img.pixel(x, y))) for x in ghost_xs for y in line_ys)
    assert grey > 60 * dpr * dpr, grey
    # nothing black there: the background is light, not an unpainted translucent window
    blackish = sum(QColor(img.pixel(x, y)).lightness() < 40 for x in range(ox, ox + ow) for y in range(oy, oy + oh))
    assert blackish == 0
    colours: dict[int, int] = {}
    for x in range(ox + 2, ox + ow - 2):
        for y in range(oy + 2, oy + oh - 2):
            colours[img.pixel(x, y)] = colours.get(img.pixel(x, y), 0) + 1
    background = QColor(max(colours, key=colours.get))
    if composited:  # no box: the editor's own white shows through
        assert (background.red(), background.green(), background.blue()) == (255, 255, 255)
    else:  # the pale tool-tip box
        assert (background.red(), background.green(), background.blue()) == GhostStyle().box_fill

    # same size as the typed text: glyph rows left and right of the caret match
    margin = round(4 * dpr)
    typed_rows = _ink_rows(img, range(max(0, cx - round(150 * dpr)), cx - 1), range(cy - margin, cy + ch + margin),
                           lambda c: c.lightness() < 60)
    ghost_rows = _ink_rows(img, range(ox + margin, ox + ow - 2), range(oy + 2, oy + oh - 2),  # inside any border
                           lambda c: _grey(c) and c.lightness() < 170)
    assert typed_rows and ghost_rows
    tolerance = 2 * dpr
    assert abs(typed_rows[0] - ghost_rows[0]) <= tolerance, (typed_rows, ghost_rows)
    assert abs(typed_rows[-1] - ghost_rows[-1]) <= tolerance, (typed_rows, ghost_rows)


@pytest.mark.e2e
def test_focus_stays_with_the_editor_under_a_window_manager(xvfb: str) -> None:
    """Focus stealing is a window manager's doing: with one running, showing
    and updating the overlay must leave the X input focus on the editor, the
    overlay must get no window-manager frame, and clicks must go through."""
    for tool in ("import", "xdotool", "openbox"):
        needs.tool(tool)
    wm = subprocess.Popen(["openbox", "--sm-disable"], env=x_env(xvfb),
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: selection_owned(xvfb, "WM_S0") or wm.poll() is not None, timeout=30) \
            and wm.poll() is None, "openbox did not start managing the screen"
        ARTIFACTS.mkdir(exist_ok=True)
        png = ARTIFACTS / "overlay-window-manager.png"
        env = {k: v for k, v in x_env(xvfb).items() if k != "QT_QPA_PLATFORM"}
        out = subprocess.run([sys.executable, __file__, "--scene", str(png)], env=env, cwd=ROOT,
                             capture_output=True, text=True, timeout=45)
    finally:
        wm.terminate()
        wm.wait(timeout=10)
    assert out.returncode == 0, out.stderr
    info = json.loads(out.stdout.strip().splitlines()[-1])
    assert info["focus_before"] == info["editor_window"]
    assert info["focus_after"] == info["editor_window"]
    assert info["editor_has_focus"]
    assert info["overlay_frame"] == info["overlay"]  # no decorations: frame == window
    assert info["clicks_on_editor"] == 1


# --------------------------------------------------------------------------- the scene (child process)

TYPED = "The quick brown fox jum"
GHOST = "ps over the lazy dog"


def _scene(png: pathlib.Path) -> int:
    from PyQt6.QtCore import QEvent, QObject
    from PyQt6.QtWidgets import QTextEdit
    from Xlib import display as xdisplay

    xd = xdisplay.Display()

    def x_focus() -> int:
        return int(xd.get_input_focus().focus.id)

    class ClickCounter(QObject):
        presses = 0

        def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
            if event.type() == QEvent.Type.MouseButtonPress:
                ClickCounter.presses += 1
            return False

    app = create_app(["ghosttype-scene"])
    editor = QTextEdit()
    editor.setWindowFlag(Qt.WindowType.FramelessWindowHint)
    editor.setFont(_font(16))
    editor.setStyleSheet("QTextEdit { background: white; color: black; border: none; }")
    editor.setPlainText(TYPED)
    editor.moveCursor(editor.textCursor().MoveOperation.End)
    editor.setGeometry(60, 60, 520, 220)
    counter = ClickCounter()
    editor.viewport().installEventFilter(counter)
    editor.show()
    _settle(app, 300)
    editor.activateWindow()
    editor.setFocus()
    _settle(app, 200)
    focus_before = x_focus()
    local = editor.cursorRect()
    top_left = editor.viewport().mapToGlobal(local.topLeft())
    caret = Rect(top_left.x(), top_left.y(), local.width(), local.height())
    overlay = GhostOverlay()
    overlay.show_suggestion(GHOST[:8], caret)  # streamed: first a part, then the rest
    _settle(app, 100)
    overlay.show_suggestion(GHOST, caret)
    _settle(app, 500)
    focus_after = x_focus()
    editor_has_focus = QApplication.focusWidget() is editor and not overlay.isActiveWindow()
    subprocess.run(["import", "-window", "root", str(png)], check=True, timeout=20)

    g = overlay.geometry()
    frame = overlay.frameGeometry()
    dpr = overlay.devicePixelRatioF()
    centre = g.center()
    subprocess.run(["xdotool", "mousemove", str(round(centre.x() * dpr)), str(round(centre.y() * dpr)),
                    "click", "1"], check=True, timeout=10)
    _settle(app, 300)
    print(json.dumps({
        "caret": [caret.x, caret.y, caret.width, caret.height],
        "overlay": [g.x(), g.y(), g.width(), g.height()],
        "overlay_frame": [frame.x(), frame.y(), frame.width(), frame.height()],
        "boxed": overlay.boxed,
        "dpr": dpr,
        "font_px": overlay.font().pixelSize(),
        "focus_before": focus_before,
        "focus_after": focus_after,
        "editor_window": int(editor.winId()),
        "editor_has_focus": editor_has_focus,
        "clicks_on_editor": ClickCounter.presses,
    }))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--scene":
        sys.exit(_scene(pathlib.Path(sys.argv[2])))
    sys.exit("usage: test_overlay.py --scene OUT.png")


def test_single_line_field_clips_with_an_ellipsis_and_never_shifts_left(qapp: QApplication) -> None:
    fm = QFontMetricsF(_font(14))
    field = Rect(100, 10, 200, 24)
    caret = Rect(250, 13, 1, 18)
    lay = compute_layout("a long suggestion that cannot fit\nsecond", fm, caret, QRect(0, 0, 800, 600),
                         boxed=True, clip=field)
    assert len(lay.lines) == 1 and lay.lines[0].endswith("\u2026")
    assert lay.window.x() >= caret.x  # the typed text stays visible
    assert lay.window.x() + lay.window.width() <= field.x + field.width + 1
    # What can be read, and so what Tab may insert: the part before the ellipsis.
    assert lay.readable == lay.lines[0][:-1] and 0 < len(lay.readable) < len("a long suggestion")
    assert "a long suggestion that cannot fit".startswith(lay.readable)


@pytest.mark.parametrize("text,lines,readable", [
    ("all of it", ("all of it",), "all of it"),
    ("two\nlines", ("two", "lines"), "two\nlines"),
    ("first line\nthen more", ("first line",), "first line"),  # a single-line field: never the newline
    ("cut here and", ("cut he\u2026",), "cut he"),
    ("one\nlong second line", ("one", "long s\u2026"), "one\nlong s"),
    ("long first\nsecond", ("long\u2026", "second"), "long"),  # nothing after a cut
    ("abc", ("\u2026",), ""),
])
def test_readable_part_is_the_text_shown_in_full(text: str, lines: tuple, readable: str) -> None:
    from ui.overlay import readable_part

    assert readable_part(text, lines) == readable


def test_the_overlay_says_what_it_painted(qapp: QApplication, overlay: GhostOverlay) -> None:
    """``drawn`` hears once, after the paint, with the part left of the
    ellipsis; a suggestion hidden before its paint reports nothing."""
    from daemon.frontends.base import FieldLook

    told: list[str] = []
    field = Rect(100, 10, 200, 24)
    overlay.show_suggestion("a long suggestion that cannot fit", Rect(250, 13, 1, 18),
                            FieldLook("", 0.0, field), drawn=told.append)
    _settle(qapp)
    assert len(told) == 1 and 0 < len(told[0]) < 20 and "a long suggestion".startswith(told[0])
    overlay.repaint()
    _settle(qapp)
    assert len(told) == 1  # once per show
    late: list[str] = []
    overlay.show_suggestion("other", Rect(50, 50, 1, 18), drawn=late.append)
    overlay.hide_suggestion()
    _settle(qapp)
    assert late == []


def test_huge_caret_keeps_a_sane_size_and_sits_at_its_top(qapp: QApplication) -> None:
    base = _font(14)
    assert font_for_line_height(base, 98).pixelSize() == 14  # Firefox's empty textarea caret
    fm = QFontMetricsF(base)
    lay = compute_layout("zy", fm, Rect(10, 100, 1, 98), QRect(0, 0, 800, 600), boxed=False)
    assert lay.window.y() <= 101 and lay.window.height() < 40


def test_the_fields_font_is_used_when_reported(qapp: QApplication) -> None:
    from daemon.frontends.base import FieldLook
    from ui.overlay import font_for_field

    font = font_for_field(_font(11), "DejaVu Serif", 16.0)
    assert font is not None and font.pixelSize() == 16 and font.family() == "DejaVu Serif"
    assert font_for_field(_font(11), "X", 500.0).pixelSize() == 48  # clamped
    assert font_for_field(_font(11), "X", 0.0) is None
    o = GhostOverlay(compositing=lambda: False, base_font=_font(11))
    o.show_suggestion("ghost", Rect(50, 50, 1, 18), FieldLook("DejaVu Serif", 16.0, None))
    assert o.font().pixelSize() == 16
    o.hide_suggestion()
