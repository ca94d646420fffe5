"""History completion: the rest of an earlier phrase, straight from the memory.

Where the text before the caret ends the way some stretch of the memory does
(at least ``min_context`` characters, matched character by character, so a
word typed half-way matches as well as a whole one), what followed that
stretch is a suggestion, as a shell's history suggests the rest of an
earlier command.  It is offered only where the memory is sure of it:

* every occurrence of the longest such ending (the newest ``MAX_OCCURRENCES``)
  must go on the same way: the suggestion is what they all share;
* it ends where the decoder's suggestions end (a line end with
  ``single_line``, after a sentence with ``stop_at_sentence_end``), at a
  word's end, at most ``max_chars`` long, and holds at least ``min_chars``;
* its confidence is Witten-Bell's trust in a context seen ``c`` times with
  one follower, ``c / (c + 1)``, raised by the context's length: a long
  ending seen once is better evidence than a short one
  (:meth:`HistoryIndex.propose`).

:class:`HistoryCompleter` fills the decoder's silences with it: the decoder
(with the memory mixed into its probabilities, :mod:`daemon.memory.cache_lm`)
answers first, and only where it shows nothing (no suggestion, or one its
gate withheld) is the memory's sure continuation shown instead (a lookup of
about half a millisecond in a full memory).  Put in front of the decoder, so
that a sure continuation answered without a model call, or shown where it
was longer than the decoder's, it saved fewer keystrokes on code
(``daemon/evaluation/README.md``, *History completion*).  The suggestion
spells on from exactly what was typed (the match is on characters), and
``confidence_threshold`` judges it as any other.  Never logs text.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from dataclasses import dataclass
from typing import Callable, Optional

from daemon.cpc.stopping import stop_position
from daemon.cpc.suggestion import BeamParams, Completer, Suggestion
from daemon.memory.store import Memory

#: Separates the memory's pieces in the searched text: no match runs across two.
SEPARATOR = "\x00"
#: Occurrences of the matched ending looked at, newest first.
MAX_OCCURRENCES = 64
#: The longest ending of the typed text that is looked up, in characters.
MAX_CONTEXT = 256


@dataclass(frozen=True)
class HistoryParams:
    """When the memory's continuation is offered (see the module docstring)."""

    min_context: int = 8  #: characters of the typed text that must match the memory
    min_chars: int = 2  #: the shortest continuation offered
    max_chars: int = 80  #: the longest
    #: context characters that count as one more agreeing occurrence in the confidence
    context_weight: int = 32

    def __post_init__(self) -> None:
        if not (1 <= self.min_context <= MAX_CONTEXT and 1 <= self.min_chars <= self.max_chars):
            raise ValueError("need 1 <= min_context <= 256 and 1 <= min_chars <= max_chars")
        if self.context_weight < 1:
            raise ValueError("context_weight must be positive")


@dataclass(frozen=True)
class Proposal:
    """What the memory offers after the typed text."""

    text: str
    occurrences: int  #: how many times the matched ending was seen (all agreeing)
    context: int  #: characters of the typed text matched
    confidence: float


def _word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def trim(continuation: str, params: BeamParams, max_chars: int, ends_word: bool = True) -> str:
    """``continuation`` cut where the decoder's suggestions end (:func:`~daemon.cpc.stopping.stop_position`:
    a line end with ``single_line``, after a sentence with ``stop_at_sentence_end``) and at ``max_chars``;
    where that, or ``ends_word`` False (what the memory has after it goes on with a word), leaves a word
    cut, back to the word's start (but a continuation inside the word at the caret is kept).  No trailing
    blanks."""
    data = continuation.encode("utf-8")
    cut = stop_position(data, params.single_line, params.stop_at_sentence_end)
    if cut is not None:
        text = data[:cut].decode("utf-8", "ignore")
        if len(text) <= max_chars:
            return text.rstrip(" \t")
    text = continuation
    if len(text) > max_chars:
        text, ends_word = text[:max_chars], not _word_char(text[max_chars])
    if not ends_word and text and _word_char(text[-1]):
        space = max(text.rfind(" "), text.rfind("\t"))
        if space >= 0:
            text = text[:space]
    return text.rstrip(" \t")


class HistoryIndex:
    """The memory's pieces as one searchable text, rebuilt when the memory changes."""

    def __init__(self, memory: Memory, params: HistoryParams = HistoryParams()) -> None:
        self.memory = memory
        self.params = params
        self._lock = threading.Lock()
        self._generation = -1
        self._text = SEPARATOR

    def _current(self) -> str:
        generation = self.memory.generation
        if generation != self._generation:
            with self._lock:
                generation, pieces = self.memory.snapshot()
                self._text = SEPARATOR + SEPARATOR.join(p.replace(SEPARATOR, " ") for p in pieces) + SEPARATOR
                self._generation = generation
        return self._text

    def longest_ending(self, typed: str) -> int:
        """Characters of the longest ending of ``typed`` (at most ``MAX_CONTEXT``) found in the memory.
        Every ending of a found one is found too, so a binary search over lengths finds it."""
        corpus = self._current()
        lo, hi = 0, min(len(typed), MAX_CONTEXT)
        if SEPARATOR in typed[-hi:]:
            hi = len(typed) - typed.rindex(SEPARATOR) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if typed[-mid:] in corpus:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def propose(self, typed: str, beam: BeamParams) -> Optional[Proposal]:
        """The memory's continuation of ``typed`` if it is sure of one (see the module docstring)."""
        p = self.params
        corpus = self._current()
        if len(corpus) <= 2:
            return None
        n = self.longest_ending(typed)
        if n < p.min_context:
            return None
        ending = typed[-n:]
        follows: list[str] = []
        end = len(corpus)
        while len(follows) < MAX_OCCURRENCES:
            at = corpus.rfind(ending, 0, end)
            if at < 0:
                break
            tail = corpus[at + n:at + n + p.max_chars + 1]
            follows.append(tail.split(SEPARATOR, 1)[0])
            end = at + n - 1  # overlapping occurrences count too
        shared = os.path.commonprefix(follows)  # character by character, whatever the text
        # the word goes on after it where any occurrence goes on with a letter, digit or underscore
        ends_word = not any(len(f) > len(shared) and _word_char(f[len(shared)]) for f in follows)
        shared = trim(shared, beam, p.max_chars, ends_word)
        if len(shared.strip()) < p.min_chars:
            return None
        c = len(follows) + n / p.context_weight
        return Proposal(shared, len(follows), n, c / (c + 1.0))


class HistoryCompleter:
    """The worker's completer: ``inner``'s suggestions, with history completion where ``inner`` shows
    nothing (see the module docstring); everything else (prefill, background warm-up, close) is
    ``inner``'s."""

    def __init__(self, inner: Completer, memory: Memory, params: HistoryParams = HistoryParams()) -> None:
        self.inner = inner
        self.index = HistoryIndex(memory, params)
        self.answered = 0  #: requests history completion answered (counts only)

    def complete(self, text: str, params: BeamParams, cancel=None,
                 on_partial: Optional[Callable[[Suggestion], None]] = None) -> Suggestion:
        s = self.inner.complete(text, params, cancel, on_partial)
        if s.visible or params.strategy != "cpc":
            return s
        proposal = self.index.propose(text, params)
        if proposal is None or proposal.confidence < params.confidence_threshold:
            return s
        self.answered += 1
        return dataclasses.replace(s, text=proposal.text, confidence=proposal.confidence, suppressed=False,
                                   signals=None, words=(), tail=())

    def prefill(self, text: str, params: BeamParams, cancel=None) -> None:
        self.inner.prefill(text, params, cancel)

    def __getattr__(self, name: str):
        # warming, warm_step, close, announce, the route's counters: the decoder's own
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:  # never the text
        return f"HistoryCompleter({self.inner!r})"


def with_history(decoder: Completer, memory: Optional[Memory],
                 params: Optional[HistoryParams] = HistoryParams()) -> Completer:
    """``decoder`` as the daemon runs it with ``memory``: with history completion (no memory, or
    ``params`` None: as it is)."""
    return decoder if memory is None or params is None else HistoryCompleter(decoder, memory, params)


__all__ = ["HistoryCompleter", "HistoryIndex", "HistoryParams", "Proposal", "trim",
           "with_history"]
