"""The quality benchmark (the NinetyFive protocol; daemon/evaluation/README.md).

For each chosen cursor offset, the text before it (at most ``context_chars``
characters) goes to the decoder once per strategy, back to back, after one
``prefill`` of that context: the backend keeps the shared stable prefix in its
KV cache, so every strategy pays only for its own search, and the per-case
times compare decoding strategies rather than prompt processing.
"""

from __future__ import annotations

import dataclasses
import math
import re
import time
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from daemon.cpc.limits import limit, span
from daemon.cpc.suggestion import BeamParams, Completer
from daemon.evaluation.metrics import (
    QualitySummary,
    SweepRow,
    next_word_target,
    score_case,
    summarize,
    threshold_sweep,
)
from daemon.evaluation.offsets import is_mid_word

#: Strategy names accepted by ``--strategies``: naive, heal and cpcK (CPC with beam width K).
_STRATEGY = re.compile(r"^(naive|heal|cpc(\d+))$")
DEFAULT_STRATEGIES = "naive,heal,cpc1,cpc2,cpc4"
#: Characters of the true continuation kept in each JSON case (at least; more
#: when the suggestion or the next word is longer), enough to recompute every score.
REFERENCE_CHARS = 80


@dataclass(frozen=True)
class StrategySpec:
    """A named decoding strategy: ``naive``, ``heal`` or ``cpcK``."""

    name: str
    strategy: str  #: BeamParams.strategy
    beam_width: int

    def params(self, base: BeamParams) -> BeamParams:
        return dataclasses.replace(base, strategy=self.strategy, beam_width=self.beam_width)


def parse_strategy(name: str, default_width: int = 2) -> StrategySpec:
    """``naive`` | ``heal`` | ``cpcK`` (K within the beam width's range).  Raises ValueError with the fix."""
    m = _STRATEGY.match(name.strip())
    if m is None:
        raise ValueError(
            f"unknown strategy {name.strip()!r}; use naive, heal or cpcK with a beam width K of "
            f"{span('beam_width')} (e.g. cpc2)"
        )
    if m.group(2) is None:
        return StrategySpec(m.group(1), m.group(1), default_width)
    k = int(m.group(2))
    if (why := limit("beam_width")(k)) is not None:
        raise ValueError(f"strategy {name.strip()!r}: the beam width K of cpcK {why}")
    return StrategySpec(f"cpc{k}", "cpc", k)


def parse_strategies(spec: str) -> list[StrategySpec]:
    """A comma-separated list, e.g. ``naive,heal,cpc1,cpc2,cpc4`` (order kept,
    duplicates rejected)."""
    names = [s for s in (p.strip() for p in spec.split(",")) if s]
    if not names:
        raise ValueError("no strategy given; e.g. --strategies naive,heal,cpc2")
    specs = [parse_strategy(n) for n in names]
    seen: set[str] = set()
    for s in specs:
        if s.name in seen:
            raise ValueError(f"strategy {s.name!r} is listed twice")
        seen.add(s.name)
    return specs


@dataclass(frozen=True)
class CaseResult:
    """One (offset, strategy) case, with its scores."""

    offset: int
    strategy: str
    suggestion: str  #: the decoder's text (also when suppressed)
    reference: str  #: the true text after the offset, clipped (see REFERENCE_CHARS)
    matched: int
    confidence: float
    suppressed: bool
    ms: float  #: wall time of Decoder.complete (the shared prefill excluded)
    mid_word: bool
    next_word: bool
    whitespace_in_word: bool
    #: the decoder's confidence inputs (daemon.cpc.confidence.WordSignals), so
    #: the confidence can be refitted from saved cases without the model
    signals: Optional[dict] = None
    words: list = dataclasses.field(default_factory=list)  #: the words the search compared (Suggestion.words)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


@dataclass
class QualityRun:
    """Everything one file's run produced."""

    strategies: list[StrategySpec]
    cases: list[CaseResult]
    prefill_ms: list[float]  #: one per offset

    def summaries(self) -> dict[str, QualitySummary]:
        out = {}
        for spec in self.strategies:
            rows = [c for c in self.cases if c.strategy == spec.name]
            out[spec.name] = summarize(
                [score_case(c.suggestion, c.reference, c.mid_word) for c in rows],
                [c.suppressed for c in rows],
                [c.ms for c in rows],
            )
        return out


    def sweep(self, thresholds: Sequence[float]) -> dict[str, list[SweepRow]]:
        """Per strategy, what each confidence threshold would withhold."""
        return {
            spec.name: threshold_sweep(
                [(c.suggestion, c.confidence, c.next_word) for c in self.cases if c.strategy == spec.name],
                thresholds,
            )
            for spec in self.strategies
        }


def clip_reference(reference: str, suggestion: str) -> str:
    """Enough of the true continuation to recompute every score of the case."""
    keep = max(REFERENCE_CHARS, len(suggestion) + 1, len(next_word_target(reference)) + 1)
    return reference[:keep]


def run_quality(
    decoder: Completer,
    text: str,
    offsets: Sequence[int],
    strategies: Sequence[StrategySpec],
    base: BeamParams,
    on_case: Optional[Callable[[int, int], None]] = None,
) -> QualityRun:
    """Run every strategy at every offset of ``text``.

    ``base`` supplies max_tokens, context_chars, the confidence threshold and the
    stopping rules; each strategy overrides only strategy and beam width.
    ``on_case(done, total)`` is called after each offset (progress display).
    """
    if not strategies:
        raise ValueError("no strategy to run")
    cases: list[CaseResult] = []
    prefill_ms: list[float] = []
    for i, offset in enumerate(offsets):
        if not 0 < offset < len(text):
            raise ValueError(f"offset {offset} is outside the text (1..{len(text) - 1})")
        context = text[max(0, offset - base.context_chars) : offset]
        reference = text[offset:]
        mid = is_mid_word(text, offset)
        t0 = time.perf_counter()
        decoder.prefill(context, strategies[0].params(base))
        prefill_ms.append((time.perf_counter() - t0) * 1000.0)
        for spec in strategies:
            t0 = time.perf_counter()
            sug = decoder.complete(context, spec.params(base))
            ms = (time.perf_counter() - t0) * 1000.0
            score = score_case(sug.text, reference, mid)
            cases.append(
                CaseResult(
                    offset=offset,
                    strategy=spec.name,
                    suggestion=sug.text,
                    reference=clip_reference(reference, sug.text),
                    matched=score.matched,
                    confidence=float(sug.confidence),
                    suppressed=bool(sug.suppressed),
                    ms=ms,
                    mid_word=mid,
                    next_word=score.next_word,
                    whitespace_in_word=score.whitespace_in_word,
                    signals=None if sug.signals is None else dataclasses.asdict(sug.signals),
                    words=[list(w) for w in sug.words],
                )
            )
        if on_case is not None:
            on_case(i + 1, len(offsets))
    return QualityRun(list(strategies), cases, prefill_ms)


def summary_json(summaries: dict[str, QualitySummary]) -> dict:
    """The ``summary`` object of ``--json``: the issue's keys (mean_matched,
    median_matched, word_completion as a fraction, n) plus the other table columns."""
    def clean(v: object) -> object:  # strict JSON has no NaN
        return None if isinstance(v, float) and math.isnan(v) else v

    return {
        name: {k: clean(v) for k, v in dataclasses.asdict(s).items()}
        for name, s in summaries.items()
    }
