"""Seeded choice of cursor offsets in a reference text.

An offset ``i`` means "the caret is between ``text[i-1]`` and ``text[i]``": the
decoder sees ``text[:i]`` and the true continuation is ``text[i:]``.

Kinds (daemon/evaluation/README.md):

* ``mid`` -- mid-word cursors: the characters on both sides of the cursor are
  word characters.  This is where token healing and CPC matter, because the
  tokenizer would have merged the typed part with what follows.
* ``any`` -- every offset with at least one character before and after it.

A *word character* is what Python's ``re`` calls ``\\w`` for ``str`` patterns
(Unicode letters, digits and the underscore), so metrics and offsets agree on
what a word is.
"""

from __future__ import annotations

import random
import re
from typing import Literal

OffsetKind = Literal["mid", "any"]
OFFSET_KINDS: tuple[str, ...] = ("mid", "any")

_WORD = re.compile(r"\w")


def is_word_char(ch: str) -> bool:
    """True for one character that ``re``'s ``\\w`` matches."""
    return len(ch) == 1 and _WORD.match(ch) is not None


def is_mid_word(text: str, offset: int) -> bool:
    """True when both characters around ``offset`` are word characters."""
    return 0 < offset < len(text) and is_word_char(text[offset - 1]) and is_word_char(text[offset])


def candidate_offsets(text: str, kind: OffsetKind) -> list[int]:
    """All offsets of ``kind``, ascending."""
    if kind == "mid":
        return [i for i in range(1, len(text)) if is_mid_word(text, i)]
    if kind == "any":
        return list(range(1, len(text)))
    raise ValueError(f"unknown offset kind {kind!r}; choose one of {', '.join(OFFSET_KINDS)}")


def choose_offsets(text: str, n: int, kind: OffsetKind = "mid", seed: int = 0, min_offset: int = 0) -> list[int]:
    """``n`` distinct offsets of ``kind`` (at least ``min_offset``) drawn uniformly with ``random.Random(seed)``,
    returned ascending (so runs walk the text in order, which is also how a
    backend's prefix cache is friendliest).  Fewer when the text has fewer.

    The same text, kind, ``n`` and seed always give the same offsets, on every
    platform and Python version that keeps ``random.Random.sample`` stable.
    """
    if n < 0:
        raise ValueError(f"the number of offsets must be >= 0, got {n}")
    pool = [i for i in candidate_offsets(text, kind) if i >= min_offset]
    if n >= len(pool):
        return pool
    return sorted(random.Random(seed).sample(pool, n))
