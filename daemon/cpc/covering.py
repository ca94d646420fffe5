"""Coverage beam search: the most likely token sequence that spells the typed tail.

Given stable tokens ``S`` and the typed byte remainder ``R``, find token
sequences ``t1..tn`` whose bytes start with ``R`` (every token but the last
lies inside ``R``; the last one may overshoot), maximising
``log P(t1..tn | S)``.

Beams start at ``S`` with log-probability 0.  Each step makes exactly one
batched ``lm.logprobs`` call for all live beams, then extends each beam by
its valid tokens: tokens that are a proper prefix of the bytes it still has
to cover (*partial* beams), and tokens starting with them (those complete
the covering).  The candidates of all beams are scored together with one
numpy gather per beam and one ``argpartition``.  Complete coverings need no
further model call, so they never compete with partial beams for a slot:
the ``k`` best complete coverings are kept, and the ``k`` best partial beams
live on.  (An earlier version took the ``k`` best of both together; a likely
partial token such as " s" then pushed the complete " shell" out of the
beam and the search ended on " s" + "hem", 8 nats worse.)  Log-probabilities
only fall as a beam grows, so the ``k``-th best complete covering is a lower
bound and every live beam at or below it is dropped: with ``k`` large enough
the result is the exact maximum, and with ``k = 1`` it is never worse than
greedy masking.

**The text's own tokenization** (``guide``: the tokens ``tokenize(T)`` ends
with, when they spell the remainder exactly) is kept alive beside the ``k``
best partial beams until it is pruned by the bound.  It is the split the
model saw in training, and a likely first token ("file") can otherwise push
it ("fil" + "est" + "ack", 5 nats better) out of a narrow beam.  A step
then decodes at most ``k + 1`` sequences.

Every step consumes at least one byte, so there are at most ``len(R)``
steps.  Ties are broken by token id so results are deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from .lm import Cancelled, CancelCheck, TokenLM
from .numeric import logsumexp
from .vocab import VocabIndex


#: Hypotheses this many nats below the best complete one are dropped, in the
#: covering as in the word search: they cannot win, and a runner-up that far
#: behind says no more than "none" (the confidence caps its margin here).
HOPELESS = 8.0


@dataclass(frozen=True)
class Covering:
    """A complete covering (the best one carries the runners-up in ``others``)."""

    tokens: tuple[int, ...]  #: tokens after the stable prefix
    logprob: float  #: joint log-probability of ``tokens`` given the stable prefix
    overshoot: bytes  #: bytes of the last token beyond the remainder
    last_cond_logprob: float  #: log P(last token | it agrees with the typed tail)
    steps: int  #: batched model calls made
    found: bool = True  #: False when no token sequence spells the remainder
    last_entropy: float = 0.0  #: entropy (nats) of the last step among the tokens agreeing with the typed tail
    #: log of the probability mass of every complete covering the search scored
    #: (pruned ones included): an estimate of log P(the typed bytes | stable prefix)
    typed_logmass: float = 0.0
    others: tuple["Covering", ...] = ()  #: the next best complete coverings, best first (at most k - 1)


@dataclass(frozen=True)
class _Beam:
    tokens: tuple[int, ...]
    logprob: float
    covered: int  #: remainder bytes consumed so far


@dataclass(frozen=True)
class _Done:
    beam: _Beam
    cond: float  #: log P(last token | agreeing with the typed tail)
    entropy: float
    covered_before: int


def _entropy(lp: np.ndarray, norm: float) -> float:
    p = np.exp(lp - norm)
    return float(-(p * (lp - norm)).sum())


def _best(idx: np.ndarray, scores: np.ndarray, toks: np.ndarray, beams: np.ndarray, k: int) -> list[int]:
    """The (at most) ``k`` best of the candidates ``idx``, best first; ties by
    beam then token id, so results are deterministic."""
    if len(idx) > k:
        idx = idx[np.argpartition(-scores[idx], k - 1)[:k]]
    order = np.lexsort((toks[idx], beams[idx], -scores[idx]))
    return [int(j) for j in idx[order]]


def cover(
    lm: TokenLM,
    index: VocabIndex,
    stable: Sequence[int],
    remainder: bytes,
    beam_width: int,
    cancel: Optional[CancelCheck] = None,
    allow_partial: bool = True,
    guide: Sequence[int] = (),
) -> Covering:
    """Search the best coverings of ``remainder`` after ``stable``.

    Up to ``beam_width`` complete coverings are kept (the best is returned,
    the others in ``others``); live beams at or below the worst kept one, or
    ``HOPELESS`` nats below the best, are pruned, so with ``beam_width = 1``
    this is the single best covering.
    ``guide``: a covering (the text's own tokens after ``stable``) whose
    partial beams are kept alive beside the ``k`` best; ignored unless its
    bytes equal ``remainder``.
    ``allow_partial=False`` restricts the search to a single token that
    starts with the remainder (single-token healing).  When no token sequence
    can spell the remainder the result has ``found=False``.  An empty remainder is covered by
    the empty sequence without calling the model.
    """
    if not remainder:
        return Covering((), 0.0, b"", 0.0, 0)
    k = max(1, int(beam_width))
    stable = tuple(stable)
    guide = tuple(int(t) for t in guide)
    if b"".join(index.piece(t) for t in guide) != remainder or len(guide) < 2:
        guide = ()  # not a covering of the remainder, or nothing to keep alive
    n_rem = len(remainder)
    live = [_Beam((), 0.0, 0)]
    done: list[_Done] = []  # best first, at most k
    mass = -np.inf
    steps = 0

    def bound() -> Optional[float]:
        if not done:
            return None
        hopeless = done[0].beam.logprob - HOPELESS
        return max(done[-1].beam.logprob, hopeless) if len(done) >= k else hopeless

    while live:
        if cancel is not None and cancel():
            raise Cancelled()
        rows = lm.logprobs([stable + b.tokens for b in live], cancel)
        steps += 1
        cand_beam: list[np.ndarray] = []
        cand_tok: list[np.ndarray] = []
        cand_score: list[np.ndarray] = []
        cand_done: list[np.ndarray] = []
        norms = np.empty(len(live), dtype=np.float64)
        lps: list[np.ndarray] = []
        for i, beam in enumerate(live):
            rest = remainder[beam.covered :]
            ext = index.starting_with(rest)
            if allow_partial:
                pre = index.prefixes_of(rest)
                ids = np.concatenate((pre, ext)) if len(pre) else ext
            else:
                pre, ids = ext[:0], ext
            if len(ids) == 0:
                norms[i] = 0.0
                lps.append(np.zeros(0))
                continue
            lp = rows[i, ids].astype(np.float64)
            lps.append(lp)
            norms[i] = logsumexp(lp)
            cand_beam.append(np.full(len(ids), i, dtype=np.int64))
            cand_tok.append(ids)
            cand_score.append(lp + beam.logprob)
            done_mask = np.zeros(len(ids), dtype=bool)
            done_mask[len(pre) :] = True
            cand_done.append(done_mask)
        if not cand_tok:
            break
        beams_a = np.concatenate(cand_beam)
        toks_a = np.concatenate(cand_tok)
        scores_a = np.concatenate(cand_score)
        done_a = np.concatenate(cand_done)
        if done_a.any():
            mass = float(np.logaddexp(mass, logsumexp(scores_a[done_a])))
        # Complete coverings cost no further model call: each competes only
        # for the k kept coverings, never for a live beam's slot.
        for j in _best(np.flatnonzero(done_a), scores_a, toks_a, beams_a, k):
            bi = int(beams_a[j])
            parent = live[bi]
            score = float(scores_a[j])
            b = bound()
            if b is not None and score <= b:
                break
            done.append(_Done(
                _Beam(parent.tokens + (int(toks_a[j]),), score, n_rem),
                score - parent.logprob - float(norms[bi]),
                _entropy(lps[bi], float(norms[bi])),
                parent.covered,
            ))
            done.sort(key=lambda d: (-d.beam.logprob, d.beam.tokens))
            del done[k:]
            done[:] = [d for d in done if d.beam.logprob > done[0].beam.logprob - HOPELESS]
        b = bound()
        partial = np.flatnonzero(~done_a)
        if b is not None:
            partial = partial[scores_a[partial] > b]
        next_live = [
            _Beam(live[int(beams_a[j])].tokens + (int(toks_a[j]),), float(scores_a[j]),
                  live[int(beams_a[j])].covered + int(index.lengths[int(toks_a[j])]))
            for j in _best(partial, scores_a, toks_a, beams_a, k)
        ]
        # The text's own tokenization stays alive beside the k best beams.
        if len(guide) > steps:  # the live beams hold ``steps`` tokens each
            path = guide[:steps]
            parent_i = next((i for i, beam in enumerate(live) if beam.tokens == path[:-1]), None)
            if parent_i is not None and all(nb.tokens != path for nb in next_live):
                parent = live[parent_i]
                score = parent.logprob + float(rows[parent_i, path[-1]])
                if b is None or score > b:
                    next_live.append(_Beam(path, score, parent.covered + int(index.lengths[path[-1]])))
        live = next_live
    if not done:
        return Covering((), float("-inf"), b"", 0.0, steps, found=False)

    def covering(d: _Done, others: tuple[Covering, ...] = ()) -> Covering:
        return Covering(
            tokens=d.beam.tokens,
            logprob=d.beam.logprob,
            overshoot=index.piece(d.beam.tokens[-1])[n_rem - d.covered_before :],
            last_cond_logprob=d.cond,
            steps=steps,
            last_entropy=d.entropy,
            typed_logmass=mass,
            others=others,
        )

    return covering(done[0], tuple(covering(d) for d in done[1:]))
