"""The figures of a typing replay (:mod:`daemon.evaluation.replay`): what each
key cost (:class:`KeyRecord`) and one strategy's summary (:class:`ReplaySummary`,
a row of :func:`daemon.evaluation.report.replay_table`).  Pure: the replay
produces these, the report formats them, and neither imports the other for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from daemon.cpc.lm import LMStats
from daemon.evaluation.metrics import percentile


@dataclass(frozen=True)
class KeyRecord:
    """What one typed character cost."""

    mid_word: bool
    typed_through: bool
    first_ms: Optional[float]
    final_ms: float
    model_calls: int
    tokens_decoded: int
    reeval_tokens: int
    prompt_reeval_tokens: int = 0


def key_record(
    t_key: float,
    t_returned: float,
    events: Sequence[tuple[float, str, str]],
    mid_word: bool,
    work: LMStats,
    reeval_tokens: int,
    prompt_reeval_tokens: int = 0,
) -> KeyRecord:
    """Reduce the sink events that followed one key (pure, unit-tested).

    ``t_returned`` is when ``on_key`` returned: a non-empty show before it is
    the controller typing through its own suggestion.
    """
    shows = [(t, s) for t, kind, s in events if kind == "show" and s]
    first = shows[0][0] if shows else None
    typed_through = first is not None and first <= t_returned
    last = events[-1][0] if events else t_key
    return KeyRecord(
        mid_word=mid_word,
        typed_through=typed_through,
        first_ms=None if first is None else (first - t_key) * 1000.0,
        final_ms=max(0.0, (last - t_key) * 1000.0),
        model_calls=work.decode_calls,
        tokens_decoded=work.tokens_decoded,
        reeval_tokens=reeval_tokens,
        prompt_reeval_tokens=prompt_reeval_tokens,
    )


@dataclass(frozen=True)
class ReplaySummary:
    """One strategy's replay figures (one row of the replay table).

    *Model keys* are the keys the controller could not answer by typing
    through its visible suggestion; their latency is the cost of a request.
    """

    keys: int
    shown: int  #: keys after which a suggestion was shown
    typed_through: int
    model_keys: int
    p50_ms: float  #: key -> first shown suggestion, model keys that showed one
    p95_ms: float
    p50_final_ms: float  #: key -> final suggestion shown (or hidden), model keys
    p95_final_ms: float
    p50_all_ms: float  #: key -> first shown suggestion, every key that showed one (typed-through included)
    p95_all_ms: float
    p50_typed_through_ms: float  #: key -> advanced ghost text, typed-through keys
    calls_per_key: float  #: mean decode calls per key (all keys)
    tokens_per_key: float  #: mean tokens decoded per key (all keys)
    reeval_per_key: float  #: mean tokens decoded twice per key (see module doc)
    prompt_tokens_reeval_midword: float  #: mean prompt tokens decoded twice per mid-word key
    midword_keys: int
    cancelled_calls: int = 0
    stale_shown: int = 0  #: suggestions shown for a text the user had already typed past
    cut_short: int = 0  #: completions the worker ended at its time budget (``WorkerStats.cut_short``)


def stale_shows(
    events: Sequence[tuple[float, str, str]], presses: Sequence[tuple[float, float, str]]
) -> int:
    """Shows that were stale when they appeared (pure, unit-tested).

    ``presses`` are ``(due, seen, char)`` per key: when the user pressed it and
    when the daemon started handling it.  A show at time ``t`` is stale when
    keys were pressed before ``t`` but not yet seen, and the ghost text does not
    begin with what they typed (the text had moved on and the ghost disagrees).
    """
    stale = 0
    for t, kind, ghost in events:
        if kind != "show" or not ghost:
            continue
        pending = "".join(ch for due, seen, ch in presses if due <= t < seen)
        if pending and not ghost.startswith(pending):
            stale += 1
    return stale


def summarize_replay(records: Sequence[KeyRecord], cancelled_calls: int = 0, stale_shown: int = 0,
                     cut_short: int = 0) -> ReplaySummary:
    model = [r for r in records if not r.typed_through]
    through = [r for r in records if r.typed_through]
    mids = [r for r in records if r.mid_word]
    n = max(1, len(records))
    return ReplaySummary(
        keys=len(records),
        shown=sum(r.first_ms is not None for r in records),
        typed_through=len(through),
        model_keys=len(model),
        p50_ms=percentile([r.first_ms for r in model if r.first_ms is not None], 50),
        p95_ms=percentile([r.first_ms for r in model if r.first_ms is not None], 95),
        p50_final_ms=percentile([r.final_ms for r in model], 50),
        p95_final_ms=percentile([r.final_ms for r in model], 95),
        p50_all_ms=percentile([r.first_ms for r in records if r.first_ms is not None], 50),
        p95_all_ms=percentile([r.first_ms for r in records if r.first_ms is not None], 95),
        p50_typed_through_ms=percentile([r.first_ms for r in through if r.first_ms is not None], 50),
        calls_per_key=sum(r.model_calls for r in records) / n,
        tokens_per_key=sum(r.tokens_decoded for r in records) / n,
        reeval_per_key=sum(r.reeval_tokens for r in records) / n,
        prompt_tokens_reeval_midword=(sum(r.prompt_reeval_tokens for r in mids) / len(mids)) if mids else 0.0,
        midword_keys=len(mids),
        cancelled_calls=cancelled_calls,
        stale_shown=stale_shown,
        cut_short=cut_short,
    )
