"""Text to type, split into what an injector sends as keys and as characters.

Applications act on Return and Tab as keys (a dialog's default button, an
editor's indentation) rather than as characters, so injectors press those
keys; other control characters have no key and are dropped; everything
else is sent as text.  Windows and macOS injectors share this split.
"""

from __future__ import annotations

import enum
import logging
from typing import Union

log = logging.getLogger(__name__)


class Key(enum.Enum):
    ENTER = "enter"
    TAB = "tab"


Piece = Union[Key, str]


def text_pieces(text: str) -> list[Piece]:
    """``text`` as runs of printable characters and :class:`Key` s.

    ``\\n``, ``\\r`` and ``\\r\\n`` are one ENTER each, ``\\t`` is TAB; other
    C0 controls and DEL are skipped.
    """
    pieces: list[Piece] = []
    run: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        key = None
        if ch == "\r" and text[i + 1:i + 2] == "\n":
            i += 1
            continue  # the "\n" that follows is the Return
        if ch in "\r\n":
            key = Key.ENTER
        elif ch == "\t":
            key = Key.TAB
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            log.debug("skipping control character U+%04X", ord(ch))
        else:
            run.append(ch)
        if key is not None:
            if run:
                pieces.append("".join(run))
                run.clear()
            pieces.append(key)
        i += 1
    if run:
        pieces.append("".join(run))
    return pieces
