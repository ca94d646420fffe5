"""The tray icon, drawn with QPainter for each daemon state.

Drawing in code (instead of shipping image files) keeps every size crisp,
needs no resource packaging, and makes the state variants (colour, error
badge) one parameter.  The motif: a line of solid "typed" text, the caret,
then fainter "ghost" text.
"""

from __future__ import annotations

from functools import lru_cache

from PyQt6.QtCore import QRectF, Qt
from PyQt6.QtGui import QColor, QFont, QIcon, QPainter, QPixmap

SIZES = (16, 22, 24, 32, 48, 64)

#: Background colour of the tile per state; anything unknown looks like "error".
STATE_COLOURS = {
    "ready": QColor(52, 101, 200),
    "loading": QColor(196, 134, 30),
    "disabled": QColor(128, 128, 128),
    "paused": QColor(128, 128, 128),
    "error": QColor(110, 110, 110),
}
BADGE_COLOUR = QColor(215, 38, 38)


def draw_icon(state: str, size: int) -> QPixmap:
    """One ``size`` x ``size`` pixmap of the icon for ``state``."""
    pix = QPixmap(size, size)
    pix.fill(Qt.GlobalColor.transparent)
    p = QPainter(pix)
    p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
    s = size / 64.0  # design grid is 64 x 64

    tile = STATE_COLOURS.get(state, STATE_COLOURS["error"])
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(tile)
    p.drawRoundedRect(QRectF(2 * s, 2 * s, 60 * s, 60 * s), 12 * s, 12 * s)

    white = QColor(255, 255, 255)
    ghost = QColor(255, 255, 255, 110)
    bar_h = 8 * s
    top = 28 * s
    p.setBrush(white)
    p.drawRoundedRect(QRectF(9 * s, top, 16 * s, bar_h), 2 * s, 2 * s)  # typed text
    p.drawRect(QRectF(28 * s, 16 * s, max(1.0, 3.5 * s), 32 * s))  # the caret
    p.setBrush(ghost)
    p.drawRoundedRect(QRectF(35 * s, top, 20 * s, bar_h), 2 * s, 2 * s)  # ghost text

    if state == "error":
        r = 13 * s
        cx, cy = 64 * s - r - 1, r + 1
        p.setBrush(BADGE_COLOUR)
        p.setPen(Qt.PenStyle.NoPen)
        p.drawEllipse(QRectF(cx - r, cy - r, 2 * r, 2 * r))
        if size >= 22:
            font = QFont()
            font.setBold(True)
            font.setPixelSize(max(6, int(20 * s)))
            p.setFont(font)
            p.setPen(white)
            p.drawText(QRectF(cx - r, cy - r, 2 * r, 2 * r), Qt.AlignmentFlag.AlignCenter, "!")
    p.end()
    return pix


@lru_cache(maxsize=None)
def state_icon(state: str) -> QIcon:
    """The multi-size QIcon for ``state`` (cached; needs a QGuiApplication)."""
    icon = QIcon()
    for size in SIZES:
        icon.addPixmap(draw_icon(state, size))
    return icon
