"""Scores for one suggestion against the true text after the cursor, and their
summaries.  Pure functions; the definitions here are the ones ``ghosttype eval``
reports, so they are spelled out precisely.

Definitions (``s`` is the suggestion, ``ref`` the true text after the cursor):

matched characters
    Length of the longest common prefix of ``s`` and ``ref``: characters are
    compared left to right and counting stops at the first mismatch.  A
    suggestion that is right for five characters and then wrong scores 5.

next word / word completion
    The *target* is ``ref`` up to the end of its next word: the leading run of
    non-word characters followed by the run of word characters after it (regex
    ``^\\W*\\w*``; word characters are ``\\w``, see :mod:`.offsets`).  ``s``
    *gets the next word right* when it starts with the target and the target is
    either all of ``s`` or followed in ``s`` by a non-word character -- i.e.
    accepting ``s`` up to its first word boundary types exactly the right word,
    no more and no less.  At a mid-word cursor the target is simply the rest of
    the current word (``ref`` starts with a word character), and this is the
    *word completion* of the quality benchmark: "the suggestion finishes the current word
    exactly".  Word completion is only reported over mid-word cursors.

whitespace in word
    A mid-word cursor whose suggestion starts with a whitespace character: the
    classic token-boundary failure (the model ends the word where the user is
    still typing it).

suppressed right / wrong
    Among suggestions withheld by the confidence threshold, how many got the
    next word right (a withheld good suggestion, a loss) and how many did not
    (a withheld bad one, a win).  Matched characters are always scored on the
    decoder's text, withheld or not, so the quality figures do not depend on
    the threshold; the threshold's effect is read from these two counts.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import numpy as np

from daemon.evaluation.offsets import is_word_char

_NEXT_WORD = re.compile(r"\W*\w*")


def matched_chars(suggestion: str, reference: str) -> int:
    """Characters of ``suggestion`` that equal ``reference`` up to the first mismatch."""
    n = 0
    for a, b in zip(suggestion, reference):
        if a != b:
            break
        n += 1
    return n


def next_word_target(reference: str) -> str:
    """``reference`` up to the end of its next word (``^\\W*\\w*``)."""
    m = _NEXT_WORD.match(reference)
    return m.group(0) if m else ""


def gets_next_word(suggestion: str, reference: str) -> bool:
    """True when ``suggestion`` types exactly the next word of ``reference``
    (see the module docstring).  An empty suggestion never does, unless the
    reference is empty too."""
    target = next_word_target(reference)
    if not target:
        return suggestion == ""
    if not suggestion.startswith(target):
        return False
    return len(suggestion) == len(target) or not is_word_char(suggestion[len(target)])


def starts_with_whitespace(suggestion: str) -> bool:
    return suggestion[:1].isspace()


@dataclass(frozen=True)
class CaseScore:
    """The scores of one (offset, strategy) case."""

    matched: int
    next_word: bool  #: the suggestion types exactly the next word (see module doc)
    mid_word: bool  #: the cursor was inside a word
    whitespace_in_word: bool  #: mid-word and the suggestion starts with whitespace

    @property
    def word_completion(self) -> Optional[bool]:
        """Word completion for mid-word cursors, None elsewhere."""
        return self.next_word if self.mid_word else None


def score_case(suggestion: str, reference: str, mid_word: bool) -> CaseScore:
    return CaseScore(
        matched=matched_chars(suggestion, reference),
        next_word=gets_next_word(suggestion, reference),
        mid_word=mid_word,
        whitespace_in_word=mid_word and starts_with_whitespace(suggestion),
    )


@dataclass(frozen=True)
class QualitySummary:
    """One strategy's figures over many cases (one row of the quality table)."""

    n: int
    mean_matched: float
    median_matched: float
    n_mid: int  #: mid-word cases (the denominator of word_completion)
    word_completion: Optional[float]  #: fraction in [0, 1]; None without mid-word cases
    whitespace_in_word: int
    suppressed_right: int
    suppressed_wrong: int
    mean_ms: float


def summarize(
    scores: Sequence[CaseScore], suppressed: Sequence[bool], ms: Sequence[float]
) -> QualitySummary:
    """Aggregate parallel sequences of per-case scores, suppression flags and times."""
    if not (len(scores) == len(suppressed) == len(ms)):
        raise ValueError("scores, suppressed and ms must have the same length")
    matched = [s.matched for s in scores]
    mids = [s for s in scores if s.mid_word]
    return QualitySummary(
        n=len(scores),
        mean_matched=statistics.fmean(matched) if matched else math.nan,
        median_matched=float(statistics.median(matched)) if matched else math.nan,
        n_mid=len(mids),
        word_completion=(sum(s.next_word for s in mids) / len(mids)) if mids else None,
        whitespace_in_word=sum(s.whitespace_in_word for s in scores),
        suppressed_right=sum(1 for s, sup in zip(scores, suppressed) if sup and s.next_word),
        suppressed_wrong=sum(1 for s, sup in zip(scores, suppressed) if sup and not s.next_word),
        mean_ms=statistics.fmean(ms) if ms else math.nan,
    )


@dataclass(frozen=True)
class SweepRow:
    """What one confidence threshold would do to a set of suggestions."""

    threshold: float
    shown: int  #: non-empty suggestions with confidence >= threshold
    shown_right: int  #: of those, the ones that type the next word exactly
    withheld_right: int  #: suppressed although they were right
    withheld_wrong: int  #: suppressed and wrong (the point of suppressing)


def threshold_sweep(
    cases: Sequence[tuple[str, float, bool]], thresholds: Sequence[float]
) -> list[SweepRow]:
    """Re-decide suppression at each threshold for ``(suggestion, confidence,
    right)`` cases.  Suppression only depends on the confidence, so one run
    of the decoder answers every threshold.  Empty suggestions show nothing
    either way and are left out."""
    shown = [(conf, right) for text, conf, right in cases if text]
    rows = []
    for t in thresholds:
        kept = [right for conf, right in shown if conf >= t]
        dropped = [right for conf, right in shown if conf < t]
        rows.append(SweepRow(float(t), len(kept), sum(kept), sum(dropped), len(dropped) - sum(dropped)))
    return rows


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q``-th percentile (0..100), numpy's default linear interpolation;
    NaN for no values."""
    xs = list(values)
    if not xs:
        return math.nan
    return float(np.percentile(np.asarray(xs, dtype=np.float64), q))
