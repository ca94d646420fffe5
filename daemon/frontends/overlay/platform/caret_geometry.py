"""Caret geometry shared by every backend: pure arithmetic on rectangles.

Accessibility APIs (AT-SPI, macOS AX, UI Automation) describe text by the
boxes of its characters, not by a caret; :func:`caret_from_extents` turns the
boxes around the caret into a caret.  When no accessibility answer exists,
:func:`pointer_caret` guesses a place near the pointer or the focused window.
Both work in whatever coordinate space their inputs use; converting to Qt's
logical pixels is the caller's job, because that step is OS specific.
"""

from __future__ import annotations

from typing import Optional

from daemon.controller.ports import Rect

#: ``(x, y, width, height)`` of one character, or None when unknown.
Extents = Optional[tuple[int, int, int, int]]

#: Pointer fallback: distance below the pointer (clear of the cursor shape),
#: inset from the window's corner, and the height of the guessed caret.
POINTER_GAP = 20
MARGIN = 8
LINE_HEIGHT = 18


def usable(box: Extents) -> bool:
    """Toolkits answer (0, 0, 0, 0) or negative sizes for offsets without a glyph."""
    return box is not None and box[3] > 0 and box[2] >= 0


def caret_from_extents(before: Extents, at: Extents, previous_char: Optional[str],
                       line_start: Extents = None) -> Optional[Rect]:
    """The caret rectangle from the boxes of the characters around it.

    ``before`` is the box of the character before the caret, ``at`` the box of
    the character after it, ``previous_char`` the character before the caret
    (None at offset 0), ``line_start`` the box of the first character of the
    line ending in ``previous_char`` when that is a newline.

    The caret sits on the right edge of the previous character, except right
    after a newline, where that edge is on the line above: then it sits on the
    left edge of the next character, or, at the end of the text, one line
    below the previous line's start.
    """
    after_newline = previous_char == "\n"
    if usable(before) and not after_newline:
        x, y, w, h = before  # type: ignore[misc]
        return Rect(x + w, y, 1, h)
    if usable(at):
        x, y, _w, h = at  # type: ignore[misc]
        return Rect(x, y, 1, h)
    if after_newline and usable(before):
        x, y, _w, h = before  # type: ignore[misc]
        left = line_start[0] if usable(line_start) else x  # type: ignore[index]
        return Rect(left, y + h, 1, h)
    return None


def centre_in_single_line(caret: Rect, field: Extents, single_line: Optional[bool] = None) -> Rect:
    """The caret of a single-line field, centred vertically in the field.

    Single-line inputs draw their one line vertically centred (Qt, GTK and
    browsers all do), while character boxes are not always where the glyphs
    are: Qt's ``QLineEdit`` reports them at the top of the field, about 4 px
    above the text.  The field's own box is reliable, so the caret keeps its
    x and height and takes its vertical position from the field.

    ``single_line`` is what the toolkit says (AT-SPI ``SINGLE_LINE`` or
    ``MULTI_LINE``); when it says neither (Qt), a field less than two caret
    heights tall can only show one line.  Unchanged for multi-line fields,
    when the field's box is unknown, or when the caret is not horizontally
    inside it.
    """
    if single_line is False or not usable(field):
        return caret
    fx, fy, fw, fh = field  # type: ignore[misc]
    if not fx <= caret.x <= fx + fw:
        return caret
    if single_line is None and fh >= 2 * caret.height:
        return caret
    height = min(caret.height, fh)
    return Rect(caret.x, fy + (fh - height) // 2, caret.width, height)


def pointer_caret(px: int, py: int, window: Optional[Rect], screen: Rect,
                  gap: int = POINTER_GAP, margin: int = MARGIN,
                  line_height: int = LINE_HEIGHT) -> Rect:
    """Where to show ghost text when no accessibility reports the caret.

    People usually click where they type, so when the pointer ``(px, py)`` is
    inside the focused ``window`` (or no window is known) the guess is just
    below the pointer, where the ghost text does not hide the line under it.
    Otherwise it is the window's bottom-left corner, inset by ``margin``,
    where terminals and chat inputs keep their prompt.  The result is kept
    inside ``screen``, which may start at negative coordinates (a monitor left
    of or above the primary one).
    """
    inside = window is not None and (
        window.x <= px < window.x + window.width and window.y <= py < window.y + window.height
    )
    if window is None or inside:
        x, y = px, py + gap
    else:
        x = window.x + margin
        y = window.y + window.height - margin - line_height
    right = screen.x + max(0, screen.width - 1)
    bottom = screen.y + max(0, screen.height - line_height)
    x = min(max(screen.x, x), right)
    y = min(max(screen.y, y), bottom)
    return Rect(x, y, 1, line_height)
