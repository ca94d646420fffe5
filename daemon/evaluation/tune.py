"""Choosing the model and the suggestion gate on the user's own text
(``ghosttype tune``).

Each candidate (a model, a ``confidence_threshold``, a ``continue_min_prob``)
types the same stretch of the user's text through the simulated user of
:mod:`daemon.evaluation.simulate`, at the user's typing speed.  The search is
in two steps per model, to keep it to minutes: every threshold of the grid at
the user's continuation rule (its closest grid value), then every
continuation rule at the best threshold.  The best candidate saves the most
keystrokes among those that show at most ``max_wrong`` wrong suggestions per
100 keystrokes; when none does, the one with the fewest wrong suggestions.

The text stays in memory: nothing of it is written or logged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, TypeVar

from daemon.cpc.suggestion import BeamParams
from daemon.evaluation.simulate import UserRun, simulate_user

T = TypeVar("T")

#: What the choice is made for: at most this many wrong suggestions seen per 100 keystrokes.
MAX_WRONG_PER_100 = 15.0
#: The grid the written values come from.
THRESHOLDS = (0.4, 0.5, 0.55, 0.6, 0.7, 0.8)
CONTINUE_MIN_PROBS = (0.05, 0.1, 0.2, 0.4)


@dataclass(frozen=True)
class Trial:
    """One candidate and what the simulated user did with it."""

    model: str
    confidence_threshold: float
    continue_min_prob: float
    run: UserRun


def most_saved(scored: Sequence[tuple[UserRun, T]], max_wrong: float = MAX_WRONG_PER_100) -> tuple[UserRun, T]:
    """Of ``(run, rule)`` pairs, the one that saved the most keystrokes with at
    most ``max_wrong`` wrong suggestions per 100 (the fewest wrong if none did)."""
    ok = [(r, p) for r, p in scored if r.wrong_per_100 <= max_wrong] or [min(scored, key=lambda rp: rp[0].wrong_per_100)]
    return max(ok, key=lambda rp: rp[0].saved)


def best_trial(trials: Sequence[Trial], max_wrong: float = MAX_WRONG_PER_100) -> Trial:
    """The trial that saves the most keystrokes within ``max_wrong`` wrong
    suggestions per 100 keystrokes; when none is within, the one with the
    fewest wrong suggestions (:func:`most_saved`)."""
    if not trials:
        raise ValueError("no trials to choose from")
    return most_saved([(t.run, t) for t in trials], max_wrong)[1]


def closest(value: float, grid: Sequence[float]) -> float:
    return min(grid, key=lambda g: (abs(g - value), g))


@dataclass
class Stretch:
    """The part of the user's text the simulated user types: ``text[start:]``
    after a field already holding ``text[:start]``."""

    text: str
    start: int


def tune_model(
    name: str,
    completer: Any,
    stretch: Stretch,
    base: BeamParams,
    key_interval_ms: float,
    make_config: Callable[[BeamParams], Any],
    thresholds: Sequence[float] = THRESHOLDS,
    continue_min_probs: Sequence[float] = CONTINUE_MIN_PROBS,
    max_wrong: float = MAX_WRONG_PER_100,
    before_run: Optional[Callable[[], None]] = None,
    on_trial: Optional[Callable[[Trial], None]] = None,
) -> list[Trial]:
    """Every trial of the two-step search on one model's ``completer``.
    ``make_config(params)`` is the daemon's configuration for a session with
    ``params``; ``before_run`` empties the model's cache between trials."""
    trials: list[Trial] = []

    def trial(threshold: float, cont: float) -> None:
        params = dataclasses.replace(base, confidence_threshold=threshold, continue_min_prob=cont)
        if before_run is not None:
            before_run()
        run = simulate_user(completer, make_config(params), stretch.text, stretch.start, key_interval_ms,
                            name=f"{name} t={threshold:g} c={cont:g}")
        trials.append(Trial(name, threshold, cont, run))
        if on_trial is not None:
            on_trial(trials[-1])

    cont0 = closest(base.continue_min_prob, continue_min_probs)
    for threshold in thresholds:
        trial(threshold, cont0)
    best_threshold = best_trial(trials, max_wrong).confidence_threshold
    for cont in continue_min_probs:
        if cont != cont0:
            trial(best_threshold, cont)
    return trials


def trials_table(trials: Sequence[Trial]) -> str:
    header = ("model", "threshold", "continue_min_prob", "saved", "wrong /100 keys", "accepts", "late keys")
    rows = [(t.model, f"{t.confidence_threshold:g}", f"{t.continue_min_prob:g}", f"{100 * t.run.saved:.1f}%",
             f"{t.run.wrong_per_100:.1f}", str(t.run.accepts + t.run.word_accepts), str(t.run.late_keys))
            for t in trials]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)
