"""The ghost-text window: grey suggestion text drawn right at the caret.

The window must never interfere with typing: it is a frameless tool-tip window
(override-redirect on X11, so no window manager decorates or focuses it) that
does not accept focus, is shown without activation and lets every click
through.  It lives on the GUI thread and is driven through the mailbox.

Looks, with and without a compositor:

* Composited: the window is translucent and only the grey glyphs are painted,
  so the suggestion looks like text the application itself drew.
* Not composited (plain X11 without a compositing manager): translucent pixels
  would show as black, so the whole window is painted opaque: a pale box with a
  subtle border, i.e. what a tool tip looks like.  The window always has the
  translucent attribute (an ARGB visual); a fully opaque fill renders correctly
  without a compositor, so switching modes never has to recreate the window.

Compositing is checked each time the overlay goes from hidden to visible, so a
compositor that starts or stops later is picked up.

Font: the field's own family and size when accessibility reports them (AT-SPI
text attributes); otherwise the font's line height is matched to the caret
height (a text caret is as tall as its line), so the ghost text has the size of
the surrounding text.  A caret taller than any text line (Firefox reports the
whole height of an empty textarea) keeps the default size and the text sits at
its top.  In a single-line field the ghost text stops at the field's right
edge, elided with an ellipsis, instead of spilling over what follows.
Coordinates are Qt logical pixels; Qt scales painting by the screen's
devicePixelRatio, and the window is moved onto the screen that holds the caret.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Callable, Optional

from PyQt6.QtCore import QPoint, QPointF, QRect, QRectF, Qt
from PyQt6.QtGui import (
    QColor,
    QCursor,
    QFont,
    QFontMetricsF,
    QGuiApplication,
    QPainter,
    QPaintEvent,
    QPen,
    QScreen,
)
from PyQt6.QtWidgets import QApplication, QWidget

from daemon.frontends.base import FieldLook, Rect

log = logging.getLogger(__name__)

#: Caret heights outside this range are not a text line (a fallback position,
#: a whole-widget rectangle, an empty textarea's full height): the system
#: default font is used instead.
CARET_LINE_HEIGHTS = range(6, 65)
#: Pixel sizes accepted from an application's text attributes.
FONT_PX_RANGE = (6.0, 48.0)

OVERLAY_FLAGS = (
    Qt.WindowType.ToolTip
    | Qt.WindowType.FramelessWindowHint
    | Qt.WindowType.WindowStaysOnTopHint
    | Qt.WindowType.WindowTransparentForInput
    | Qt.WindowType.WindowDoesNotAcceptFocus
)


@dataclass(frozen=True)
class GhostStyle:
    """Colours and spacing of the two looks (see module docstring)."""

    # RGB tuples (QColor is mutable, so it cannot be a frozen default).
    text: tuple[int, int, int] = (128, 128, 128)  # composited: reads on light and dark
    boxed_text: tuple[int, int, int] = (112, 112, 112)  # on the pale box
    box_fill: tuple[int, int, int] = (250, 250, 248)
    box_border: tuple[int, int, int] = (190, 190, 190)
    box_pad_x: int = 2  # between border and text
    box_pad_y: int = 1
    box_gap: int = 1  # between caret and box, so the caret stays visible
    min_visible_chars: int = 6  # below this width, shift left rather than elide
    pointer_offset: tuple[int, int] = (2, 18)  # where text goes when the caret is unknown


# --------------------------------------------------------------------------- pure-ish helpers


def font_for_line_height(base: QFont, line_height: int) -> QFont:
    """The largest pixel size of ``base``'s family whose line height fits
    ``line_height`` (the caret height), so ghost text matches the text around it.

    Returns ``base`` unchanged when ``line_height`` cannot be a text caret.
    """
    if line_height not in CARET_LINE_HEIGHTS:
        return QFont(base)
    font = QFont(base)
    best = 4
    lo, hi = 4, max(4, line_height)
    while lo <= hi:  # line height grows monotonically with pixel size
        mid = (lo + hi) // 2
        font.setPixelSize(mid)
        if math.ceil(QFontMetricsF(font).height()) <= line_height:
            best, lo = mid, mid + 1
        else:
            hi = mid - 1
    font.setPixelSize(best)
    return font


def font_for_field(base: QFont, family: str, px: float) -> Optional[QFont]:
    """The field's font (family and pixel size from its text attributes),
    the size clamped to ``FONT_PX_RANGE``; None when the size is unknown."""
    if px <= 0:
        return None
    font = QFont(base)
    if family:
        font.setFamily(family)
    font.setPixelSize(round(min(max(px, FONT_PX_RANGE[0]), FONT_PX_RANGE[1])))
    return font


@dataclass(frozen=True)
class Layout:
    """Where the overlay window goes and where its text is drawn inside it."""

    window: QRect  # global logical coordinates
    text_origin: QPointF  # top-left of the first line's box, window coordinates
    lines: tuple[str, ...]  # possibly elided to fit the screen
    #: the part of the text the user can read: up to the first ellipsis, and
    #: a single-line field's first line (what the accept keys may insert)
    readable: str = ""


ELLIPSIS = "\u2026"


def readable_part(text: str, lines: tuple[str, ...] | list[str]) -> str:
    """The prefix of ``text`` that ``lines`` (its drawn lines, possibly
    elided with an ellipsis at their end, possibly fewer) show in full."""
    wanted = text.split("\n")
    out: list[str] = []
    for original, shown in zip(wanted, lines):
        if shown == original:
            out.append(original)
            continue
        visible = shown[:-1] if shown.endswith(ELLIPSIS) else shown
        out.append(visible if original.startswith(visible) else "")
        break  # nothing after a cut is readable as a continuation
    return "\n".join(out)


def compute_layout(
    text: str,
    metrics: QFontMetricsF,
    caret: Rect,
    screen: QRect,
    boxed: bool,
    style: GhostStyle = GhostStyle(),
    clip: Optional[Rect] = None,
) -> Layout:
    """Place ``text`` so its first glyph starts at the caret and its line box is
    centred on the caret's height, then keep the window inside ``screen``.

    Text that would run off the right edge is elided (the ghost text stays
    aligned with the caret); only when the caret is so close to the edge that
    fewer than ``style.min_visible_chars`` would be visible is the window
    shifted left instead.  ``clip`` is a single-line field's box: the text
    keeps to its first line and is elided at the field's right edge, never
    shifted (it must not cover the typed text).  A caret more than two lines
    tall is not one line's height: the text sits at its top.
    """
    line_h = metrics.height()
    spacing = metrics.lineSpacing()
    lines = text.split("\n")
    if clip is not None:
        lines = lines[:1]
    pad_x = style.box_pad_x + 1 if boxed else 0  # +1: the border
    pad_y = style.box_pad_y + 1 if boxed else 0
    gap = style.box_gap if boxed else 0

    x = caret.x + gap
    if caret.height > 2 * line_h:
        line_top = float(caret.y)
    else:
        line_top = caret.y + (caret.height - line_h) / 2.0
    y = math.floor(line_top) - pad_y

    screen_right = screen.x() + screen.width()
    screen_bottom = screen.y() + screen.height()
    natural_w = max(metrics.horizontalAdvance(line) for line in lines)
    available = screen_right - x - 2 * pad_x
    min_w = style.min_visible_chars * metrics.averageCharWidth()
    if clip is not None:
        available = min(available, clip.x + clip.width - x - 2 * pad_x)
    if natural_w > available:
        if clip is not None:
            limit = max(metrics.horizontalAdvance(ELLIPSIS), available)  # an ellipsis at least
        else:
            limit = available if available >= min_w else screen.width() - 2 * pad_x
        lines = [
            metrics.elidedText(line, Qt.TextElideMode.ElideRight, limit)
            if metrics.horizontalAdvance(line) > limit
            else line
            for line in lines
        ]
        natural_w = max(metrics.horizontalAdvance(line) for line in lines)

    width = math.ceil(natural_w) + 2 * pad_x + (0 if boxed else 1)
    height = math.ceil(line_h + spacing * (len(lines) - 1)) + 2 * pad_y
    width = min(width, screen.width())
    height = min(height, screen.height())

    x = min(max(x, screen.x()), screen_right - width)
    y = min(max(y, screen.y()), screen_bottom - height)
    origin = QPointF(pad_x, pad_y + (line_top - math.floor(line_top)))
    return Layout(QRect(int(x), int(y), int(width), int(height)), origin, tuple(lines), readable_part(text, lines))


# --------------------------------------------------------------------------- compositing


class CompositingProbe:
    """Answers "is a compositor running?" for the platform Qt is using.

    Wayland, Windows (DWM) and macOS always composite.  On X11 a compositing
    manager owns the ``_NET_WM_CM_S<screen>`` selection (EWMH); that is asked
    through python-xlib on one lazily opened connection.  Anything else
    (e.g. the offscreen platform) is treated as not composited: the opaque
    look is legible everywhere.
    """

    def __init__(self) -> None:
        self._display = None
        self._atom: Optional[int] = None
        self._failed = False

    def __call__(self) -> bool:
        platform = QGuiApplication.platformName()
        if platform in ("wayland", "windows", "cocoa", "direct2d"):
            return True
        if platform != "xcb" or self._failed:
            return False
        try:
            if self._display is None:
                from Xlib import display as xdisplay  # lazy: only on X11

                self._display = xdisplay.Display()
                screen = self._display.get_default_screen()
                self._atom = self._display.intern_atom(f"_NET_WM_CM_S{screen}")
            owner = self._display.get_selection_owner(self._atom)
            return getattr(owner, "id", owner) not in (0, None)
        except Exception as exc:  # no Xlib, connection refused, ...
            self._failed = True
            log.warning("cannot tell whether a compositor runs (%s); using the opaque look", exc)
            return False

    def close(self) -> None:
        if self._display is not None:
            self._display.close()
            self._display = None


# --------------------------------------------------------------------------- the window


class GhostOverlay(QWidget):
    """The ghost-text window.  Call ``show_suggestion`` / ``hide_suggestion``
    on the GUI thread (the mailbox does)."""

    def __init__(
        self,
        compositing: Optional[Callable[[], bool]] = None,
        style: GhostStyle = GhostStyle(),
        base_font: Optional[QFont] = None,
    ) -> None:
        super().__init__(None, OVERLAY_FLAGS)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, True)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents, True)
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground, True)
        self.setAttribute(Qt.WidgetAttribute.WA_X11DoNotAcceptFocus, True)
        self.setAttribute(Qt.WidgetAttribute.WA_NoSystemBackground, True)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setWindowTitle("ghosttype suggestion")
        self._probe = compositing if compositing is not None else CompositingProbe()
        self._style = style
        self._base_font = QFont(base_font) if base_font is not None else QApplication.font()
        self._boxed = True
        self._text = ""
        self._layout: Optional[Layout] = None
        #: told what the next paint draws (see ``show_suggestion``)
        self._drawn: Optional[Callable[[str], None]] = None

    # -- public API -------------------------------------------------------------------

    @property
    def text(self) -> str:
        return self._text

    @property
    def boxed(self) -> bool:
        """True when drawing the opaque tool-tip look (no compositor)."""
        return self._boxed

    def show_suggestion(self, text: str, caret: Optional[Rect], look: Optional[FieldLook] = None,
                        drawn: Optional[Callable[[str], None]] = None) -> None:
        """Show ``text`` at ``caret`` (or near the pointer when the caret is
        unknown), in the field's font and inside its box when ``look`` gives
        them; update in place if already visible; hide on empty text.
        ``drawn`` is called once the window has painted it, with the part the
        user can read (``Layout.readable``)."""
        self._drawn = drawn
        if not text:
            self.hide_suggestion()
            return
        if not self.isVisible():
            self._boxed = not self._probe()
        font = self._font_for(caret, look)
        metrics = QFontMetricsF(font)
        anchor = caret if caret is not None else self._pointer_caret(metrics)
        screen = self._screen_for(anchor)
        clip = look.clip if look is not None and caret is not None else None
        layout = compute_layout(text, metrics, anchor, screen.geometry(), self._boxed, self._style, clip)
        self._text = text
        self._layout = layout
        self.setFont(font)
        self._move_to_screen(screen)
        self.setGeometry(layout.window)
        if self.isVisible():
            self.update()
        else:
            self.show()
            self.raise_()

    def hide_suggestion(self) -> None:
        self._text = ""
        self._layout = None
        self._drawn = None
        self.hide()

    # -- internals --------------------------------------------------------------------

    def _font_for(self, caret: Optional[Rect], look: Optional[FieldLook] = None) -> QFont:
        if look is not None:
            font = font_for_field(self._base_font, look.font_family, look.font_px)
            if font is not None:
                return font
        if caret is not None:
            return font_for_line_height(self._base_font, caret.height)
        return QFont(self._base_font)

    def _pointer_caret(self, metrics: QFontMetricsF) -> Rect:
        pos = QCursor.pos() + QPoint(*self._style.pointer_offset)
        return Rect(pos.x(), pos.y(), 1, math.ceil(metrics.height()))

    @staticmethod
    def _screen_for(caret: Rect) -> QScreen:
        screen = QGuiApplication.screenAt(QPoint(caret.x, caret.y + caret.height // 2))
        return screen if screen is not None else QGuiApplication.primaryScreen()

    def _move_to_screen(self, screen: QScreen) -> None:
        handle = self.windowHandle()
        if handle is not None and handle.screen() is not screen:
            handle.setScreen(screen)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt name)
        if self._layout is None:
            return
        style = self._style
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        if self._boxed:
            # Fill every pixel opaque: without a compositor anything else is black.
            painter.fillRect(self.rect(), QColor(*style.box_fill))
            painter.setPen(QPen(QColor(*style.box_border), 1))
            painter.drawRect(QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5))
            painter.setPen(QColor(*style.boxed_text))
        else:
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Source)
            painter.fillRect(self.rect(), Qt.GlobalColor.transparent)
            painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)
            painter.setPen(QColor(*style.text))
        painter.setFont(self.font())
        metrics = QFontMetricsF(self.font())
        origin = self._layout.text_origin
        for i, line in enumerate(self._layout.lines):
            baseline = origin.y() + metrics.ascent() + i * metrics.lineSpacing()
            painter.drawText(QPointF(origin.x(), baseline), line)
        painter.end()
        drawn, self._drawn = self._drawn, None
        if drawn is not None:
            drawn(self._layout.readable)
