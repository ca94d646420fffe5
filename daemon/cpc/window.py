"""Which part of the text before the caret the model sees.

Keeping "the last ``context_chars`` characters" moves the window's start with
every keystroke once the text is longer than the window, which changes the
first prompt token and forces the backend to decode the whole prompt again on
every key (hundreds of tokens, over a second on a laptop CPU).  So the start
moves in coarse steps instead: when the window has to move, it is re-anchored
``step`` characters short of the limit (snapped forward to whitespace so the
model does not start mid-word) and then kept, growing with the text, until it
would exceed ``context_chars`` again.  The prompt prefix, and so the KV cache,
stays the same for ``step`` keystrokes at a time.

The anchor is remembered as a short piece of text, not as an offset: the
daemon's ring buffer drops characters from the front, so offsets shift while
content does not.
"""

from __future__ import annotations

from typing import Optional

#: When the context is cut, the cut moves forward to the next whitespace if
#: that is within this many characters.
SNAP_CHARS = 32
#: Characters remembered to find the window's start again.
ANCHOR_CHARS = 48


def cut_context(text: str, context_chars: int) -> str:
    """The most recent ``context_chars`` characters, not starting mid-word."""
    if len(text) <= context_chars:
        return text
    cut = text[-context_chars:]
    for i, ch in enumerate(cut[:SNAP_CHARS]):
        if ch.isspace():
            return cut[i:]
    return cut


class ContextWindow:
    """Stateful chooser of the model's context (one per decoder; not thread-safe)."""

    def __init__(self) -> None:
        self._anchor: Optional[str] = None

    @staticmethod
    def step_for(context_chars: int) -> int:
        """How far the start jumps when it moves: a quarter of the window."""
        return max(1, context_chars // 4)

    def window(self, text: str, context_chars: int) -> str:
        """A suffix of ``text`` of at most ``context_chars`` characters whose
        start changes at most once every ``step_for(context_chars)`` characters
        typed (a text that fits entirely is returned whole)."""
        if len(text) <= context_chars:
            return text
        if self._anchor:
            idx = text.find(self._anchor, len(text) - context_chars)
            if idx >= 0:
                return text[idx:]
        cut = cut_context(text, context_chars - self.step_for(context_chars))
        self._anchor = cut[:ANCHOR_CHARS]
        return cut
