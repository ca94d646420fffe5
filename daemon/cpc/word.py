"""Word-level search: which word the suggestion should finish, decided over
whole words rather than by the first token after the covering.

The covering only decides how to spell what was typed; after it, greedy
decoding picks the rest of the word by its first token alone.  When the model
splits its belief ("filesta" -> "ck" or "te"), that choice can be wrong even
though the model prefers the other *word*.  This search keeps up to ``k``
hypotheses past the covering until each finishes the current word, and ranks
the finished words by their probability.

**Words.**  A byte is a *word byte* when it is an ASCII letter, digit or
underscore, or any byte of a multi-byte UTF-8 character (so non-ASCII letters
form words; non-ASCII punctuation is treated as a letter, a rare
approximation).  When the caret follows a word byte (``in_word``) the current
word is the suggestion's leading run of word bytes, possibly empty (the word
was already complete as typed).  Otherwise it is the leading run of non-word
bytes followed by one run of word bytes.  A word is *finished* once a non-word
byte follows it, at end of generation, or where the stopping rules cut the
suggestion.

**The probability of a word** is a proper distribution over words: for a
hypothesis whose bytes end inside the word, the probability that the word
ends exactly there is the summed probability of every token that starts with
a non-word byte, plus end-of-generation.  A token that carries the end of the
word inside it (``"ing."``) finishes the word with its own probability.  The
same word reached by several paths is one word: their probabilities add up.
Because every word pays for its own end, longer and shorter words are
compared fairly without length normalisation.

**Search.**  Every step decodes all open hypotheses in one batched call.  Each
open hypothesis adds its "word ends here" candidate and extends by its most
likely word-continuing tokens; the ``k`` best open hypotheses survive.  Once
``k`` words are finished, open hypotheses at or below the ``k``-th best word
are dropped (probabilities only fall as a hypothesis grows), and so are open
hypotheses ``HOPELESS`` nats below the best word (see :mod:`.covering`).  With ``k = 1``
the search is greedy decoding: the single hypothesis follows the most likely
token of every step, and the word's probability is still measured as above
(for the confidence).  Hypotheses still open after ``max_steps`` count as
unfinished words with the probability they have.

The result says which word won, its runner-up, and the total probability of
the words found, the signals :mod:`daemon.cpc.confidence` turns into a score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

from .covering import HOPELESS
from .lm import Cancelled, CancelCheck, TokenLM
from .numeric import logsumexp

#: True for bytes that continue a word (see the module docstring).
WORD_BYTE = np.zeros(256, dtype=bool)
for _b in b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_":
    WORD_BYTE[_b] = True
WORD_BYTE[0x80:] = True
WORD_BYTE.setflags(write=False)

#: Cuts the suggestion bytes where the stopping rules end it, or None.
StopRule = Callable[[bytes], Optional[int]]


def word_end(data: bytes, in_word: bool) -> Optional[int]:
    """Byte offset in ``data`` where the current word ends (a non-word byte
    follows it there), or None while the word may still grow."""
    i = 0
    if not in_word:
        while i < len(data) and not WORD_BYTE[data[i]]:
            i += 1
        if i == len(data):
            return None
    while i < len(data):
        if not WORD_BYTE[data[i]]:
            return i
        i += 1
    return None


def word_started(data: bytes, in_word: bool) -> bool:
    """May the current word end after ``data``?  Inside a word always; after
    a non-word byte only once a word byte was generated."""
    return in_word or any(WORD_BYTE[b] for b in data)


@dataclass(frozen=True)
class Hypothesis:
    """A token path after the stable prefix and the suggestion bytes it spells."""

    tokens: tuple[int, ...]  #: after the stable prefix (covering included)
    logprob: float  #: joint log-probability of ``tokens`` given the stable prefix
    data: bytes  #: suggestion bytes so far (the covering's overshoot, then the continuation)
    produced: int = 0  #: continuation tokens (after the covering)
    #: (log-probability, entropy in nats) of the first token that added
    #: suggestion bytes, among the tokens consistent with the typed text
    first: Optional[tuple[float, float]] = None


@dataclass(frozen=True)
class Word:
    """A candidate word and the path that reached it first (the most likely one)."""

    hyp: Hypothesis
    end: int  #: bytes of ``hyp.data`` that belong to the word (the rest is the same token's tail)
    logprob: float  #: log P(word), summed over the paths found, joint from the stable prefix
    finished: bool  #: False when the search stopped before the word ended
    #: the most likely token after the word when it ends at a token boundary
    #: (an end-of-generation id ends the suggestion), None when it ended inside a token
    next_token: Optional[int] = None
    next_logprob: float = 0.0
    first: Optional[tuple[float, float]] = None  #: as Hypothesis.first, for the word's path

    @property
    def key(self) -> tuple[bytes, bool]:
        return self.hyp.data[: self.end], self.finished


@dataclass(frozen=True)
class WordResult:
    best: Word
    runner_up: Optional[float]  #: log P of the second most likely word, None when only one was found
    total: float  #: log of the summed probability of every word found
    steps: int  #: batched model calls made
    ranked: tuple[Word, ...] = ()  #: every word found, most likely first


class WordTables:
    """Vocabulary facts the search needs, built once per vocabulary."""

    def __init__(self, pieces: Sequence[Optional[bytes]], gen_mask: np.ndarray, eog: frozenset[int]) -> None:
        n = len(gen_mask)
        starts_word = np.zeros(n, dtype=bool)
        boundary = np.zeros(n, dtype=bool)
        for t in range(n):
            p = pieces[t] if t < len(pieces) else None
            if p and np.isfinite(gen_mask[t]):
                starts_word[t] = WORD_BYTE[p[0]]
                boundary[t] = not WORD_BYTE[p[0]]
        for t in eog:
            if 0 <= t < n:
                boundary[t] = True
        self.eog = eog
        #: tokens that end the current word where they start (non-word first byte, or end of generation)
        self.boundary_ids = np.flatnonzero(boundary)
        #: added to a row: only word-continuing tokens stay finite
        self.continue_mask = np.where(starts_word, 0.0, -np.inf).astype(np.float32)
        #: added to a row: every generable token (text and end of generation)
        self.gen_mask = gen_mask


def _entropy(row: np.ndarray) -> float:
    lp = row.astype(np.float64)
    finite = np.isfinite(lp)
    p = np.exp(lp[finite])
    return float(-(p * lp[finite]).sum())


def _top(row: np.ndarray, m: int) -> np.ndarray:
    """Ids of the ``m`` largest finite entries, best first (ties by id)."""
    m = min(m, int(np.isfinite(row).sum()))
    if m <= 0:
        return np.zeros(0, dtype=np.int64)
    part = np.argpartition(-row, m - 1)[:m]
    return part[np.lexsort((part, -row[part]))]


def search_word(
    lm: TokenLM,
    pieces: Sequence[Optional[bytes]],
    tables: WordTables,
    stable: Sequence[int],
    starts: Sequence[Hypothesis],
    k: int,
    in_word: bool,
    max_steps: int,
    stop: StopRule,
    cancel: Optional[CancelCheck] = None,
) -> WordResult:
    """Find the most likely word after the ``starts`` hypotheses (the coverings,
    best first); see the module docstring.  ``starts`` must not be empty."""
    if not starts:
        raise ValueError("search_word needs at least one starting hypothesis")
    k = max(1, int(k))
    stable = tuple(stable)
    words: dict[tuple[bytes, bool], Word] = {}

    def add(word: Word) -> None:
        old = words.get(word.key)
        if old is None:
            words[word.key] = word
            return
        total = float(np.logaddexp(old.logprob, word.logprob))
        keep = old if old.hyp.logprob >= word.hyp.logprob else word
        words[word.key] = Word(keep.hyp, keep.end, total, keep.finished, keep.next_token, keep.next_logprob, keep.first)

    def settle(h: Hypothesis) -> bool:
        """Record ``h`` as a finished word if its bytes already end the word."""
        end = word_end(h.data, in_word)
        cut = stop(h.data)
        if cut is not None and (end is None or cut < end):
            end = cut
        if end is None:
            return False
        add(Word(h, end, h.logprob, True, first=h.first))
        return True

    def bound() -> Optional[float]:
        if not words:
            return None
        ranked = sorted((w.logprob for w in words.values()), reverse=True)
        hopeless = ranked[0] - HOPELESS
        return max(ranked[k - 1], hopeless) if len(ranked) >= k else hopeless

    live = [h for h in starts[:k] if not settle(h)]
    steps = 0
    n_cand = 1 if k == 1 else 2 * k + 2
    while live and steps < max_steps:
        b = bound()
        if b is not None:
            live = [h for h in live if h.logprob > b]
            if not live:
                break
        if cancel is not None and cancel():
            raise Cancelled()
        rows = lm.logprobs([stable + h.tokens for h in live], cancel)
        steps += 1
        children: list[Hypothesis] = []
        for h, row in zip(live, rows):
            started = word_started(h.data, in_word)
            entropy = _entropy(row) if h.first is None else 0.0
            if k == 1:
                cand = _top(row + tables.gen_mask, 1)
                ends_here = started and len(cand) and (int(cand[0]) in tables.eog or not WORD_BYTE[pieces[int(cand[0])][0]])
            else:
                cand = _top(row + (tables.continue_mask if started else tables.gen_mask), n_cand)
                ends_here = started
            if ends_here:
                b_lp = row[tables.boundary_ids]
                mass = logsumexp(b_lp)
                nxt = int(cand[0]) if k == 1 else int(tables.boundary_ids[int(np.argmax(b_lp))])
                first = h.first if h.first is not None else (float(row[nxt]), entropy)
                add(Word(h, len(h.data), h.logprob + mass, True, nxt, float(row[nxt]), first))
                if k == 1:
                    continue
            for t in cand:
                t = int(t)
                lp = float(row[t])
                first = h.first if h.first is not None else (lp, entropy)
                if t in tables.eog:  # only reached before the word started
                    add(Word(h, len(h.data), h.logprob + lp, True, t, lp, first))
                    continue
                child = Hypothesis(h.tokens + (t,), h.logprob + lp, h.data + (pieces[t] or b""), h.produced + 1, first)
                if not settle(child):
                    children.append(child)
        children.sort(key=lambda c: (-c.logprob, c.tokens))
        live = children[:k]
    for h in live:  # the step budget ran out before these finished
        add(Word(h, len(h.data), h.logprob, False, first=h.first))
    if not words:  # nothing could follow the coverings: the best one as it is
        h = starts[0]
        add(Word(h, len(h.data), h.logprob, False, first=h.first))
    ranked = sorted(words.values(), key=lambda w: (-w.logprob, not w.finished, w.hyp.tokens))
    logs = np.array([w.logprob for w in ranked], dtype=np.float64)
    return WordResult(
        best=ranked[0],
        runner_up=float(ranked[1].logprob) if len(ranked) > 1 else None,
        total=logsumexp(logs),
        steps=steps,
        ranked=tuple(ranked),
    )
