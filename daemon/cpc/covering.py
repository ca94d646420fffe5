"""Coverage beam search: the most likely token sequence that spells the typed tail.

Given stable tokens ``S`` and the typed byte remainder ``R``, find token
sequences ``t1..tn`` whose bytes start with ``R`` (every token but the last
lies inside ``R``; the last one may overshoot), maximising
``log P(t1..tn | S)``.

Beams start at ``S`` with log-probability 0.  Each step makes exactly one
batched ``lm.logprobs`` call for all live beams, then extends each beam by
its valid tokens: tokens that are a proper prefix of the bytes it still has
to cover, and tokens starting with them (those complete the covering).  The
candidates of all beams are scored together with one numpy gather per beam
and one ``argpartition``; the ``k`` best are kept.  Log-probabilities only
fall as a beam grows, so the best complete beam is a lower bound and every
live beam at or below it is dropped: with ``k`` large enough the result is
the exact maximum, and with ``k = 1`` it is greedy masking.

Every step consumes at least one byte, so there are at most ``len(R)``
steps.  Ties are broken by token id so results are deterministic.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from .lm import Cancelled, CancelCheck, TokenLM
from .vocab import VocabIndex


@dataclass(frozen=True)
class Covering:
    """Best covering found."""

    tokens: tuple[int, ...]  #: tokens after the stable prefix
    logprob: float  #: joint log-probability of ``tokens`` given the stable prefix
    overshoot: bytes  #: bytes of the last token beyond the remainder
    last_cond_logprob: float  #: log P(last token | it agrees with the typed tail)
    steps: int  #: batched model calls made
    found: bool = True  #: False when no token sequence spells the remainder


@dataclass(frozen=True)
class _Beam:
    tokens: tuple[int, ...]
    logprob: float
    covered: int  #: remainder bytes consumed so far


def _logsumexp(x: np.ndarray) -> float:
    m = float(x.max())
    return m + float(np.log(np.exp(x - m).sum()))


def cover(
    lm: TokenLM,
    index: VocabIndex,
    stable: Sequence[int],
    remainder: bytes,
    beam_width: int,
    cancel: Optional[CancelCheck] = None,
    allow_partial: bool = True,
) -> Covering:
    """Search the best covering of ``remainder`` after ``stable``.

    ``allow_partial=False`` restricts the search to a single token that
    starts with the remainder (single-token healing).  When no token sequence
    can spell the remainder the result has ``found=False``.  An empty remainder is covered by
    the empty sequence without calling the model.
    """
    if not remainder:
        return Covering((), 0.0, b"", 0.0, 0)
    k = max(1, int(beam_width))
    stable = tuple(stable)
    n_rem = len(remainder)
    live = [_Beam((), 0.0, 0)]
    best: Optional[_Beam] = None
    best_cond = 0.0
    best_covered_before = 0
    steps = 0
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
                continue
            lp = rows[i, ids].astype(np.float64)
            norms[i] = _logsumexp(lp)
            cand_beam.append(np.full(len(ids), i, dtype=np.int64))
            cand_tok.append(ids)
            cand_score.append(lp + beam.logprob)
            done = np.zeros(len(ids), dtype=bool)
            done[len(pre) :] = True
            cand_done.append(done)
        if not cand_tok:
            break
        beams_a = np.concatenate(cand_beam)
        toks_a = np.concatenate(cand_tok)
        scores_a = np.concatenate(cand_score)
        done_a = np.concatenate(cand_done)
        if best is not None:
            keep = scores_a > best.logprob
            beams_a, toks_a, scores_a, done_a = beams_a[keep], toks_a[keep], scores_a[keep], done_a[keep]
        if len(scores_a) > k:
            top = np.argpartition(-scores_a, k - 1)[:k]
            beams_a, toks_a, scores_a, done_a = beams_a[top], toks_a[top], scores_a[top], done_a[top]
        order = np.lexsort((toks_a, beams_a, -scores_a))  # best first, ties by beam then token id
        next_live: list[_Beam] = []
        for j in order:
            parent = live[int(beams_a[j])]
            tok = int(toks_a[j])
            score = float(scores_a[j])
            if done_a[j]:
                if best is None or score > best.logprob:
                    best = _Beam(parent.tokens + (tok,), score, n_rem)
                    best_cond = score - parent.logprob - float(norms[int(beams_a[j])])
                    best_covered_before = parent.covered
            else:
                next_live.append(_Beam(parent.tokens + (tok,), score, parent.covered + int(index.lengths[tok])))
        if best is not None:
            next_live = [b for b in next_live if b.logprob > best.logprob]
        live = next_live
    if best is None:
        return Covering((), float("-inf"), b"", 0.0, steps, found=False)
    overshoot_start = n_rem - best_covered_before
    return Covering(
        tokens=best.tokens,
        logprob=best.logprob,
        overshoot=index.piece(best.tokens[-1])[overshoot_start:],
        last_cond_logprob=best_cond,
        steps=steps,
    )
