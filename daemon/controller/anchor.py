"""Which field, caret and text a suggestion belongs to.

A suggestion is made for one state of one text field: the field itself (an
accessible object, an input-method context), the caret offset in it and the
text before the caret.  :class:`FieldAnchor` records that state so the
suggestion can be hidden as soon as any of the three changes, and so an
accept key only inserts it while all three still hold.  The text is kept as a
digest only (the anchor may outlive the text in logs or diagnostics), and only
its last ``chars`` characters count, so text far before the caret that slides
out of an application's window does not matter.

Pure logic, shared by every front end (the X11 overlay with AT-SPI, the
input-method frontend): nothing here knows where the three values come from.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Optional

#: Characters before the caret that identify a text state (enough to tell two
#: fields or two places in one field apart; cheap to hash on every key).
ANCHOR_CHARS = 256


def text_digest(text: str, chars: int = ANCHOR_CHARS) -> str:
    """Digest of the last ``chars`` characters of ``text``."""
    tail = text[-chars:] if chars else ""
    return hashlib.blake2b(tail.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def field_agrees(field_text: str, buffer: str) -> bool:
    """Whether the text a field reports before its caret agrees with the key
    buffer: the buffer is what the field holds just before the caret (the
    field may hold more, further back, than the buffer remembers)."""
    return field_text.endswith(buffer)


@dataclass(frozen=True)
class FieldAnchor:
    """One field, one caret offset, one text before it (as a digest)."""

    field: str  #: opaque id of the field ("" when the platform cannot name it)
    caret: Optional[int]  #: caret offset in the field's text (None: unknown)
    digest: str  #: :func:`text_digest` of the last ``length`` characters before the caret
    length: int  #: how many characters the digest covers (fewer when less is known)

    @classmethod
    def of(cls, field: str, caret: Optional[int], text_before: str) -> "FieldAnchor":
        """``text_before`` may be only the end of the field's text (a key
        buffer that agrees with the field): the anchor covers what it has."""
        length = min(len(text_before), ANCHOR_CHARS)
        return cls(field, caret, text_digest(text_before, length), length)

    def advanced(self, inserted: str, text_before: str) -> "FieldAnchor":
        """The anchor after ``inserted`` was typed at the caret, leaving
        ``text_before`` before it (typing through, accepting a word)."""
        caret = None if self.caret is None else self.caret + len(inserted)
        return FieldAnchor.of(self.field, caret, text_before)

    def holds(self, field: str, caret: Optional[int], text_before: Optional[str]) -> bool:
        """Whether a fresh reading of the focused field is still this state.
        Parts the platform cannot read (no caret offset, no text) cannot
        contradict the anchor; a different field always does."""
        if field != self.field:
            return False
        if caret is not None and self.caret is not None and caret != self.caret:
            return False
        if text_before is None:
            return True
        return len(text_before) >= self.length and text_digest(text_before, self.length) == self.digest
