"""A token cache over the memory, mixed into the model's probabilities.

:class:`MemoryLM` wraps any :class:`~daemon.cpc.lm.TokenLM` and changes one
thing: the rows :meth:`~MemoryLM.logprobs` returns.  For each sequence asked,
it finds the longest suffix of the sequence's tokens (at most
:attr:`CacheParams.max_order`) that the memory's text contains followed by a
token, and the distribution of the tokens that followed it there
(``p_cache``, counts over every occurrence).  The row becomes

    p = (1 - lam) * p_LM + lam * p_cache

computed in log space, still a log-softmax (only the few tokens the memory
saw after the match change beyond one shared shift; a token impossible for
both stays ``-inf``).  ``lam`` grows with the match's length and with how
consistently one token followed it (:meth:`CacheParams.weight`); no match
(or a match shorter than :attr:`CacheParams.min_order`) leaves the row as
the model gave it, byte for byte.

The decoder is not changed: the coverage search still spells exactly the
typed characters, and the confidence gate judges the mixed probabilities,
so a remembered phrase that does not fit here is withheld like any other
unlikely suggestion.

**The trust.**  Every ``lam`` is scaled by one number, how far the memory
as a whole is trusted now (:attr:`MemoryLM.trust`), learned from what the
user types: the decoder tells the stable tokens of each request
(:meth:`MemoryLM.observe`), and each token typed after the last request's
scores the row the memory made there against the model's alone.  The trust
is the posterior weight of the two (the model with the memory trusted whole,
the model alone), drawn back toward its prior by a fixed share after each
token so that it can rise again: a memory of another author, whose rows make
what is typed less likely, is soon hardly mixed in; one that knows the
user's words stays near whole.  ``trust_max_order`` limits it to the short
matches (the trust scales, and learns from, matches of at most that many
tokens; longer ones are trusted whole).  Shipped on, over matches of one
and two tokens (``trust_prior`` 0.8, ``trust_share`` 0.02,
``trust_max_order`` 2): on the simulated user's virtual clock at 10 keys/s
it takes an unrelated author's cost (1.0 to 3.7 points a cell with the
memory always trusted whole) to within a point in every cell and keeps the
same author's gain on the changelog (``daemon/evaluation/README.md``, *The
trust on the virtual clock*).

**The index.** Each memory piece is tokenized once with the model's own
tokenizer (kept by piece while the piece is in memory).  N-grams never span
two pieces.  Order ``n`` gets exact integer ids built from order ``n - 1``
(an n-gram is its first token and the id of the (n-1)-gram after it), so a
look-up walks outwards from the last token with one binary search per
order, and the followers of an id are one contiguous slice: a few
microseconds per sequence, never a scan.  Building it is vectorised numpy,
tens of milliseconds for the memory's 200,000 characters.  It is rebuilt
when ``memory.generation`` moved: on a background thread by default (the
suggestion in progress uses the previous index meanwhile), or in the
calling thread with ``background=False`` (tests, evaluation).

Everything else (tokenize, token_bytes, the llama.cpp backend's
``cached_tokens``, ``warm_up``, ``clear_cache``, ``close``...) is the base
model's.  Nothing here logs text: counts only.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
import time
from typing import Optional, Sequence

import numpy as np

from daemon.cpc.lm import CancelCheck, TokenLM, WrappedLM
from daemon.cpc.word import WORD_BYTE

#: Bytes that spell words the memory is trusted to finish: letters, underscore
#: and non-ASCII, not digits (numbers change from one text to the next).
LETTER_BYTE = WORD_BYTE.copy()
LETTER_BYTE[ord("0"):ord("9") + 1] = False
LETTER_BYTE.setflags(write=False)
from daemon.memory.store import Memory

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class CacheParams:
    """How much the memory is trusted.

    ``lam = lam_max * min(1, (n - min_order + 1) / ramp) * c / (c + beta * u)``
    for a match of ``n`` tokens whose ``c`` occurrences were followed by
    ``u`` distinct tokens (with ``beta = 1``, Witten-Bell's trust in a
    context: one half for a context seen once, near 1 for one that always
    went on the same way); 0 below ``min_order``.  After a token that ends
    in a letter or underscore, the followers that go on with the word (start
    with one) have a schedule of their own (``lam_word``,
    ``min_order_word``, ``ramp_word``, ``beta_word``): how a word the user
    wrote is spelled is what the memory knows best, and a model cannot know
    a name it never saw.  (The row then is ``(1 - s) p_LM`` plus each
    follower's ``lam_f * share_f``, with ``s`` the sum of those: still a
    distribution.)  The shipped values, and weights that predict the text
    better but save fewer keystrokes: ``daemon/evaluation/README.md``,
    *Learning the user's words*."""

    max_order: int = 8  #: longest suffix looked up, in tokens
    min_order: int = 1  #: shorter matches do not change the row
    lam_max: float = 0.5  #: the most weight the memory gets
    ramp: int = 2  #: match lengths (from min_order) until lam_max applies
    beta: float = 1.0  #: how much each distinct follower lowers the trust
    lam_word: float = 0.9  #: lam_max for followers that go on with a word
    min_order_word: int = 1  #: min_order for them
    ramp_word: int = 2  #: ramp for them
    beta_word: float = 1.0  #: beta for them
    #: the trust in the memory as a whole before any evidence (1: always whole, nothing learned; see
    #: MemoryLM.observe, and daemon/evaluation/README.md for what the shipped values measured)
    trust_prior: float = 0.8
    #: how far the trust goes back toward trust_prior after each token it learned from (a fixed share)
    trust_share: float = 0.02
    #: the longest match (in tokens) the trust scales and learns from; longer matches are trusted whole
    #: (max_order: every match)
    trust_max_order: int = 2

    def __post_init__(self) -> None:
        if not (1 <= self.min_order <= self.max_order and 1 <= self.min_order_word <= self.max_order):
            raise ValueError("need 1 <= min_order, min_order_word <= max_order")
        if not (0.0 <= self.lam_max < 1.0 and 0.0 <= self.lam_word < 1.0):
            raise ValueError("lam_max and lam_word must be in [0, 1)")
        if self.ramp < 1 or self.ramp_word < 1:
            raise ValueError("ramp and ramp_word must be at least 1")
        if self.beta <= 0 or self.beta_word <= 0:
            raise ValueError("beta and beta_word must be positive")
        if not (0.0 < self.trust_prior <= 1.0 and 0.0 <= self.trust_share < 1.0):
            raise ValueError("trust_prior must be in (0, 1] and trust_share in [0, 1)")
        if self.trust_max_order < 1:
            raise ValueError("trust_max_order must be at least 1")

    def weight(self, order: int, count: int, distinct: int, in_word: bool = False) -> float:
        """``lam`` for a match of ``order`` tokens seen ``count`` times with
        ``distinct`` different followers (``in_word``: a follower that goes
        on with the word the match's last token ends inside of)."""
        top, least, ramp, beta = ((self.lam_word, self.min_order_word, self.ramp_word, self.beta_word) if in_word
                                  else (self.lam_max, self.min_order, self.ramp, self.beta))
        if order < least or count <= 0:
            return 0.0
        return top * min(1.0, (order - least + 1) / ramp) * count / (count + beta * distinct)


@dataclasses.dataclass(frozen=True)
class Match:
    """The longest suffix found and what followed it in the memory."""

    order: int  #: tokens matched
    followers: np.ndarray  #: distinct next tokens (int64), ascending
    counts: np.ndarray  #: how often each followed (int64)

    @property
    def total(self) -> int:
        return int(self.counts.sum())


class CacheIndex:
    """The n-gram -> next-token counts of token streams (see the module docstring).

    Immutable once built; built from a list of token arrays (one per piece)."""

    def __init__(self, streams: Sequence[Sequence[int]], max_order: int, generation: int = 0) -> None:
        self.generation = generation
        self.max_order = max_order
        arrays = [np.asarray(s, dtype=np.int64) for s in streams if len(s) >= 2]
        self.tokens = int(sum(len(a) for a in arrays))
        #: per order (index n - 1): sorted unique n-gram keys, follower offsets per id,
        #: followers and counts (sorted by id, then token)
        self._keys: list[np.ndarray] = []
        self._offsets: list[np.ndarray] = []
        self._followers: list[np.ndarray] = []
        self._counts: list[np.ndarray] = []
        self._widths: list[int] = []  #: per order, the id range of order n - 1 (keys are first * width + id)
        if not arrays:
            return
        toks = np.concatenate(arrays)
        piece = np.concatenate([np.full(len(a), i, dtype=np.int64) for i, a in enumerate(arrays)])
        start = _starts(arrays)
        n_tok = len(toks)
        pos = np.arange(n_tok, dtype=np.int64)
        # positions i whose token has a follower in the same piece
        has_next = np.zeros(n_tok, dtype=bool)
        has_next[:-1] = piece[:-1] == piece[1:]
        ids = toks.copy()  # order-1 "id" of the n-gram ending at i: before ranking, the token itself
        for n in range(1, max_order + 1):
            valid = has_next & (pos - start >= n - 1)
            if not valid.any():
                break
            at = pos[valid]
            if n == 1:
                raw = toks[at]
            else:
                first = toks[at - (n - 1)]
                prev_ids = ids[at]  # id of the (n-1)-gram ending at i
                width = int(prev_ids.max()) + 1
                raw = first * width + prev_ids
            keys, inverse = np.unique(raw, return_inverse=True)
            new_ids = np.full(n_tok, -1, dtype=np.int64)
            new_ids[at] = inverse
            nxt = toks[at + 1]
            width_t = int(toks.max()) + 1
            pair, pair_counts = np.unique(inverse.astype(np.int64) * width_t + nxt, return_counts=True)
            pair_ids = pair // width_t
            offsets = np.searchsorted(pair_ids, np.arange(len(keys) + 1, dtype=np.int64))
            self._keys.append(keys)
            self._offsets.append(offsets)
            self._followers.append(pair % width_t)
            self._counts.append(pair_counts.astype(np.int64))
            self._widths.append(0 if n == 1 else width)
            ids = new_ids

    @property
    def empty(self) -> bool:
        return not self._keys

    def lookup(self, seq: Sequence[int]) -> Optional[Match]:
        """The longest suffix of ``seq`` (at most ``max_order`` tokens) that
        the streams contain followed by a token, and its followers."""
        best: Optional[tuple[int, int]] = None  # (order, id)
        prev = -1
        n_seq = len(seq)
        for n in range(1, min(len(self._keys), n_seq) + 1):
            tok = int(seq[n_seq - n])
            if n == 1:
                key = tok
            else:
                width = self._widths[n - 1]
                if prev >= width:
                    break
                key = tok * width + prev
            keys = self._keys[n - 1]
            i = int(np.searchsorted(keys, key))
            if i >= len(keys) or int(keys[i]) != key:
                break
            best, prev = (n, i), i
        if best is None:
            return None
        n, i = best
        lo, hi = int(self._offsets[n - 1][i]), int(self._offsets[n - 1][i + 1])
        return Match(n, self._followers[n - 1][lo:hi], self._counts[n - 1][lo:hi])


def _starts(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """Per position, the position where its piece starts."""
    lengths = np.array([len(a) for a in arrays], dtype=np.int64)
    firsts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return np.repeat(firsts, lengths)


def memory_mass(match: Match, params: CacheParams, continues: Optional[np.ndarray] = None) -> np.ndarray:
    """Per follower of ``match``, the probability the memory adds to it: ``lam_f * share_f`` (``continues``:
    see :func:`mix_row`)."""
    total = match.total
    distinct = len(match.followers)
    lam = params.weight(match.order, total, distinct)
    if continues is not None and continues.any():
        per = np.where(continues, params.weight(match.order, total, distinct, True), lam)
    else:
        per = np.full(distinct, lam)
    return per * (match.counts / total)


def mix_row(row: np.ndarray, match: Optional[Match], params: CacheParams,
            continues: Optional[np.ndarray] = None, trust: float = 1.0) -> np.ndarray:
    """``row`` (a log-softmax) mixed with the match's distribution; ``row``
    itself when the match does not count.  ``continues``: after a token
    that ends inside a word, which of the match's followers go on with the
    word (they get ``lam_word``'s weight, the others ``lam_max``'s).
    ``trust`` scales every follower's weight (:class:`MemoryLM`'s trust)."""
    if match is None:
        return row
    mass = memory_mass(match, params, continues) * trust
    spent = float(mass.sum())  # the memory's share of the mixed row
    if spent <= 0.0:
        return row
    keep = math.log1p(-spent)
    out = row + np.float32(keep)
    f = match.followers
    with np.errstate(divide="ignore"):
        mixed = np.logaddexp(row[f].astype(np.float64) + keep, np.log(mass))
    out[f] = mixed.astype(np.float32)
    return out


class MemoryLM(WrappedLM):
    """A :class:`~daemon.cpc.lm.TokenLM` whose rows mix in the memory (see the module docstring); the rest
    is the base model's (:class:`~daemon.cpc.lm.WrappedLM`)."""

    def __init__(self, base: TokenLM, memory: Memory, params: CacheParams = CacheParams(),
                 background: bool = True) -> None:
        super().__init__(base)
        self.memory = memory
        self.params = params
        self.background = background
        self._index = CacheIndex([], params.max_order, generation=-1)
        self._piece_tokens: dict[str, np.ndarray] = {}
        self._build_lock = threading.Lock()  # one build at a time
        self._builder: Optional[threading.Thread] = None
        self.builds = 0  #: indexes built (counts only)
        self.last_build_ms = 0.0
        self.matched = 0  #: rows changed by the memory
        self.rows = 0  #: rows asked for
        self.trust = params.trust_prior  #: how far the memory is trusted now (see observe)
        #: the stable tokens of the decoder's last request, and what the memory added to the row after them
        #: (followers, their added probability, the model's own probability of them; None: nothing matched)
        self._stable: Optional[tuple[int, ...]] = None
        self._stable_row: Optional[tuple[np.ndarray, np.ndarray, np.ndarray]] = None
        pieces = list(base.token_bytes())
        #: per token id: its text ends with a letter (the word may go on) / starts with one
        self._ends_word = np.array([bool(p) and bool(LETTER_BYTE[p[-1]]) for p in pieces], dtype=bool)
        self._starts_word = np.array([bool(p) and bool(LETTER_BYTE[p[0]]) for p in pieces], dtype=bool)
        generation, pieces = memory.snapshot()
        if not pieces:
            self._index = CacheIndex([], params.max_order, generation)
        elif background:
            self._current()  # a memory loaded before (learn = "persist") starts indexing now

    # ------------------------------------------------------------ the index

    def refresh(self) -> CacheIndex:
        """Bring the index up to the memory's generation now, in this thread."""
        with self._build_lock:
            generation, pieces = self.memory.snapshot()
            if generation == self._index.generation:
                return self._index
            t0 = time.perf_counter()
            cache: dict[str, np.ndarray] = {}
            streams = []
            for piece in pieces:
                toks = self._piece_tokens.get(piece)
                if toks is None:
                    toks = np.asarray(self.inner.tokenize(piece), dtype=np.int64)
                cache[piece] = toks
                streams.append(toks)
            self._piece_tokens = cache  # forget pieces the memory dropped
            index = CacheIndex(streams, self.params.max_order, generation)
            self._index = index
            self.builds += 1
            self.last_build_ms = (time.perf_counter() - t0) * 1000.0
            log.debug("memory index: %d pieces, %d tokens, %.0f ms", len(pieces), index.tokens, self.last_build_ms)
            return index

    def _current(self) -> CacheIndex:
        """The index to use now: rebuilt here, or the previous one while a
        background build runs."""
        index = self._index
        if index.generation == self.memory.generation:
            return index
        if not self.background:
            return self.refresh()
        with self._build_lock:
            builder = self._builder
            if builder is None or not builder.is_alive():
                self._builder = threading.Thread(target=self._build_quietly, name="ghosttype-memory-index",
                                                 daemon=True)
                self._builder.start()
        return index

    def _build_quietly(self) -> None:
        try:
            self.refresh()
        except Exception as exc:  # noqa: BLE001 - a failed build leaves the previous index
            log.warning("memory index not rebuilt: %s", type(exc).__name__)

    def wait_index(self, timeout: float = 10.0) -> bool:
        """Wait for a background build in progress; True when the index is current."""
        builder = self._builder
        if builder is not None:
            builder.join(timeout)
        return self._index.generation == self.memory.generation

    def match(self, seq: Sequence[int]) -> Optional[Match]:
        """What the memory says follows ``seq`` (None: nothing)."""
        index = self._current()
        if index.empty:
            return None
        return index.lookup(seq[-self.params.max_order:])

    def observe(self, stable: Sequence[int]) -> None:
        """The decoder's stable tokens for a request: text the user typed.  Where the last request's are a
        proper prefix of them, the token the user typed after those scores the memory's row there against
        the model's alone, and the trust follows: the posterior weight of the two (Bayes, the prior
        ``trust_prior``), drawn back toward the prior by ``trust_share`` after each token, so that it can
        rise again.  An unrelated author's memory, whose rows make the typed tokens less likely, is soon
        hardly mixed in; one that predicts the user's text is trusted whole.  (``trust_prior`` 1: always
        trusted whole.)"""
        if self.params.trust_prior >= 1.0:
            return  # trusted whole whatever is typed
        stable = tuple(stable)
        last, row = self._stable, self._stable_row
        self._stable, self._stable_row = stable, None
        if row is None or last is None or len(stable) <= len(last) or stable[:len(last)] != last:
            return
        followers, mass, model = row
        at = np.flatnonzero(followers == stable[len(last)])
        # p_mix / p_LM of the typed token, with the memory trusted whole
        ratio = 1.0 - float(mass.sum()) + (float(mass[at[0]] / max(model[at[0]], 1e-30)) if at.size else 0.0)
        w, prior, alpha = self.trust, self.params.trust_prior, self.params.trust_share
        w = w * ratio / ((1.0 - w) + w * ratio)
        self.trust = (1.0 - alpha) * w + alpha * prior

    def logprobs(self, seqs: Sequence[Sequence[int]], cancel: Optional[CancelCheck] = None) -> np.ndarray:
        rows = self.inner.logprobs(seqs, cancel)
        index = self._current()
        self.rows += len(seqs)
        if index.empty:
            return rows
        out = rows
        stable = self._stable
        for i, seq in enumerate(seqs):
            m = index.lookup(seq[-self.params.max_order:]) if len(seq) else None
            continues = self._continues(seq[-1], m) if m is not None else None
            trusted = m is not None and m.order <= self.params.trust_max_order
            if trusted and stable is not None and len(seq) == len(stable) and tuple(seq) == stable:
                self._stable_row = (m.followers, memory_mass(m, self.params, continues),
                                    np.exp(rows[i][m.followers].astype(np.float64)))
            mixed = mix_row(rows[i], m, self.params, continues, self.trust if trusted else 1.0)
            if mixed is not rows[i]:
                if out is rows:
                    out = rows.copy()
                out[i] = mixed
                self.matched += 1
        return out

    def _continues(self, last: int, match: Match) -> Optional[np.ndarray]:
        """Which followers go on with the word ``last`` ends inside of; None
        when ``last`` does not end inside a word."""
        if not (0 <= last < len(self._ends_word) and self._ends_word[last]):
            return None
        f = match.followers
        inside = f < len(self._starts_word)
        return np.where(inside, self._starts_word[np.where(inside, f, 0)], False)

    def __repr__(self) -> str:  # never the text
        return f"MemoryLM({self.inner!r}, {self._index.tokens} tokens indexed)"
