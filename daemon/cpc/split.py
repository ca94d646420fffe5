"""Stable token prefix / unstable byte remainder of the text before the caret.

The model must see the typed text as the tokens it would have seen had the
user finished the word.  The last few characters are *unstable*: "inf" is
tokenized differently from "information", so instead of feeding tokens for
them we keep them as a byte remainder that the coverage search must match.
Everything before the cut is *stable*: whatever the user types next,
``tokenize(T + C)`` starts with exactly those tokens.

How the cut is chosen, and why:

1. **Tokens of the whole text.**  The stable tokens are a prefix of
   ``tokenize(T)``, never a re-tokenization of a cut-off string: GPT-2-style
   pre-tokenizers look ahead (``\\s+(?!\\S)`` splits "\\n\\n\\nVi" as
   "\\n\\n" + "\\n" + "Vi" while "\\n\\n\\n" alone is one chunk), so only the
   whole text tells where its token boundaries are.
2. **Word rule.**  The cut is at or before the start of the last word
   (a run of letters/digits/underscore, or of punctuation when the text ends
   in punctuation) including the whitespace run in front of it; when the text
   ends in whitespace, the whole trailing whitespace run is unstable.  This
   keeps every pre-tokenizer chunk that could still grow (a word, a
   whitespace run a lookahead may re-split) out of the stable part.
3. **Vocabulary rule.**  A token boundary ``b`` is only accepted when *no
   token of the vocabulary* starts inside the stable bytes (at ``b - j``) and
   ends after ``b`` while agreeing with the typed tail (or extending past
   it, where the user may type anything).  With BPE, merges never create a
   token that is not in the vocabulary, so if no token can cross ``b`` the
   two sides are tokenized independently and the left side is exactly the
   stable tokens.  This is what makes the split correct for vocabularies
   without a whitespace pre-tokenizer (SentencePiece BPE as in Gemma 3,
   where nothing stops "d" + " " merging in principle) and for pre-tokenizers
   that attach a punctuation byte to the following letters (Qwen).  It costs
   at most ``max_len`` binary searches, most rejected by "does any token even
   start with these stable bytes?".
4. **Inserted leading space.**  SentencePiece-style tokenizers may prepend a
   space to the text ("hello" -> "▁hello").  The token bytes then equal
   ``b" " + text``; the split detects this and reports it as ``lead`` so that
   ``lead + text == stable bytes + remainder``.
5. **Bounded.**  The remainder never exceeds ``MAX_REMAINDER_BYTES`` when
   the tokens allow it (see there): a guarantee traded for latency only in
   long runs without any safe boundary.
6. **Robustness.**  If the token bytes stop matching the text (a tokenizer
   that normalizes, or tokens without bytes), only the matching prefix of the
   tokens can be stable; the rest becomes remainder.  An empty stable part is
   always correct (the coverage search then covers the whole tail).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from .vocab import VocabIndex

#: Longest remainder the split accepts.  In a long run where every boundary
#: could be crossed by some token ("xxxx...", base64, CJK) the vocabulary rule
#: would back off to the start of the run, and the coverage search would
#: spend one model call per token of it.  Past this length the deepest
#: boundary within the limit is taken even though a token could cross it:
#: the rare mis-tokenized prefix costs a little quality, not seconds.
MAX_REMAINDER_BYTES = 32
#: Longest word (in bytes) the word rule keeps unstable.  A longer final run
#: (minified code, a URL, CJK text without spaces) would make the coverage
#: search walk many tokens; past this length only the vocabulary rule
#: decides, starting from the end of the text.
MAX_WORD_BYTES = 32


@dataclass(frozen=True)
class Split:
    """Result of :func:`split_stable`."""

    stable: tuple[int, ...]  #: token ids whose text is settled
    remainder: bytes  #: typed bytes after the stable tokens
    lead: bytes = b""  #: bytes the tokenizer inserted before the text (b" " or b"")
    #: False when MAX_REMAINDER_BYTES forced a boundary some token could cross:
    #: the stable tokens may then differ from those of ``tokenize(T + C)``
    exact: bool = True
    #: the whole text's own tokens after the stable ones when they spell the
    #: remainder exactly (the tokenization the model would see for the typed
    #: text as it stands); the coverage search keeps this path alive
    tail: tuple[int, ...] = ()

    def stable_bytes(self, pieces: Sequence[Optional[bytes]]) -> bytes:
        """Bytes of the stable tokens (``lead`` included)."""
        return b"".join(pieces[t] or b"" for t in self.stable)


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def word_start(text: str) -> int:
    """Character index where the unstable tail of ``text`` starts (word rule).

    Trailing whitespace: the start of that whitespace run.  Otherwise: the
    start of the last run of word characters (or of non-word, non-space
    characters when the text ends in those), moved back over the whitespace
    run in front of it.
    """
    i = len(text)
    if i == 0:
        return 0
    if text[i - 1].isspace():
        while i > 0 and text[i - 1].isspace():
            i -= 1
        return i
    word = _is_word_char(text[i - 1])
    while i > 0 and not text[i - 1].isspace() and _is_word_char(text[i - 1]) == word:
        i -= 1
    while i > 0 and text[i - 1].isspace():
        i -= 1
    return i


def _aligned_boundaries(tokens: Sequence[int], full: bytes, pieces: Sequence[Optional[bytes]]) -> list[int]:
    """End offsets in ``full`` of the leading tokens whose bytes match ``full``."""
    ends: list[int] = []
    pos = 0
    for t in tokens:
        p = pieces[t] if 0 <= t < len(pieces) else None
        if not p or full[pos : pos + len(p)] != p:
            break
        pos += len(p)
        ends.append(pos)
    return ends


def crosses(full: bytes, b: int, index: VocabIndex) -> bool:
    """Could a vocabulary token start before ``b`` and end after it?

    ``full[b:]`` is the typed tail; the user may append anything after it.
    A token ``t = full[b-j:b] + x`` (``x`` non-empty) crosses when ``x`` is a
    prefix of the tail or starts with the whole tail.
    """
    max_len = index.max_len
    tail = full[b : b + max_len]
    for j in range(1, min(b, max_len - 1) + 1):
        head = full[b - j : b]
        if not index.any_starting_with(head):
            continue  # no token starts with these bytes at all
        joined = head + tail
        if tail:
            if index.has_prefix_longer_than(joined, j):
                return True
            if len(joined) <= max_len and index.any_starting_with(joined):
                return True
        elif index.count_starting_with(head) > len(index.exact(head)):
            return True
    return False


def split_stable(
    tokens: Sequence[int],
    text: str,
    pieces: Sequence[Optional[bytes]],
    index: Optional[VocabIndex] = None,
) -> Split:
    """Split ``text`` (tokenized as a whole into ``tokens``) into stable
    tokens and an unstable byte remainder; see the module docstring.

    Invariant: ``split.lead + text.encode() == split.stable_bytes(pieces) +
    split.remainder`` and, for any continuation ``C``,
    ``tokenize(text + C)`` starts with ``split.stable``.
    """
    tb = text.encode("utf-8")
    if index is None:
        index = VocabIndex(pieces)
    lead = b""
    ends = _aligned_boundaries(tokens, tb, pieces)
    if len(ends) < len(tokens) and tokens:
        spaced = _aligned_boundaries(tokens, b" " + tb, pieces)
        if len(spaced) > len(ends):
            lead, ends = b" ", spaced
    full = lead + tb

    cut_char = word_start(text)
    cut = len(lead) + len(text[:cut_char].encode("utf-8"))
    if len(full) - cut > MAX_WORD_BYTES:
        cut = len(full)

    n_stable = 0
    exact = True
    nearest = deepest_in_cap = 0
    for n in range(len(ends), 0, -1):
        b = ends[n - 1]
        if b > cut:
            continue
        nearest = nearest or n
        if len(full) - b > MAX_REMAINDER_BYTES:
            n_stable = deepest_in_cap or nearest
            exact = False
            break
        deepest_in_cap = n
        if not crosses(full, b, index):
            n_stable = n
            break
    if n_stable == 0:
        return Split(stable=(), remainder=tb, lead=b"")
    b = ends[n_stable - 1]
    tail = tuple(tokens[n_stable : len(ends)]) if ends[-1] == len(full) else ()
    return Split(stable=tuple(tokens[:n_stable]), remainder=full[b:], lead=lead, exact=exact, tail=tail)
