"""Where a suggestion ends: newline (single-line mode) or a sentence end.

Rules are applied to the suggestion bytes only (what comes after the typed
text), so a sentence the user already finished does not silence the next
one.  A sentence end is ".", "!" or "?" followed by whitespace: the
punctuation is kept, the whitespace is not (the user types the space when
they start the next sentence, and an accepted trailing space would surprise).
A closing quote or bracket right after the punctuation stays with it.
"""

from __future__ import annotations

import re
from typing import Optional

_NEWLINE = re.compile(rb"[\r\n]")
_SENTENCE_END = re.compile(rb"[.!?][\"')\]]*(?=\s)")


def stop_position(data: bytes, single_line: bool, sentence_end: bool) -> Optional[int]:
    """Byte offset at which ``data`` must be cut, or None to keep going."""
    cut: Optional[int] = None
    if single_line:
        m = _NEWLINE.search(data)
        if m:
            cut = m.start()
    if sentence_end:
        m = _SENTENCE_END.search(data)
        if m and (cut is None or m.end() <= cut):
            cut = m.end()
    return cut
