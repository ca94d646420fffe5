"""Parameters and result of one completion request (pure data, no logic)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Literal, Optional, Protocol

from .confidence import WordSignals
from .limits import LIMITS, limit

if TYPE_CHECKING:
    from .lm import CancelCheck

Strategy = Literal["naive", "heal", "cpc"]
STRATEGIES: tuple[str, ...] = ("naive", "heal", "cpc")


@dataclass(frozen=True)
class BeamParams:
    """Knobs of one request.  Defaults are the product defaults; the numeric knobs' ranges are
    :data:`~daemon.cpc.limits.LIMITS` (a value outside raises ValueError: ``name: why``)."""

    strategy: Strategy = "cpc"
    beam_width: int = 2  #: k, beams kept during the coverage search
    max_tokens: int = 8  #: tokens generated after the covering
    #: suppress when confidence (P(the user accepts the suggestion)) is below
    #: this; chosen with tests.research.user_policy: the most keystrokes
    #: saved with at most 15 wrong suggestions seen per 100 keystrokes
    confidence_threshold: float = 0.60
    #: words after the first are suggested while the confidence times the
    #: continuation's probability stays at or above this (0: up to max_tokens);
    #: chosen by the simulated user at 10 keys/s (daemon/evaluation/README.md, "Keystrokes saved")
    continue_min_prob: float = 0.10
    single_line: bool = True  #: stop at a newline
    stop_at_sentence_end: bool = True  #: stop after ". ", "! ", "? "
    context_chars: int = 1500  #: only this many characters before the caret are used
    #: while the full window is not cached, answer from this many characters
    #: near the caret (0: always the full window; see daemon.cpc.progressive)
    quick_context_chars: int = 256

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(
                f"unknown strategy {self.strategy!r}; choose one of {', '.join(STRATEGIES)}"
            )
        for name in LIMITS:
            if (why := limit(name)(getattr(self, name))) is not None:
                raise ValueError(f"{name}: {why}")


@dataclass(frozen=True)
class Suggestion:
    """What the decoder proposes to insert after the caret."""

    text: str  #: only what comes after the typed characters ("" = nothing to show)
    confidence: float  #: P(the current word is finished right), in [0, 1]; see daemon.cpc.confidence
    suppressed: bool = False  #: True when confidence < threshold (text kept for evaluation)
    stable_tokens: int = 0  #: tokens in the stable prefix
    remainder: bytes = b""  #: typed bytes after the stable prefix that the covering had to match
    tokens_generated: int = 0  #: tokens chosen (covering + continuation)
    steps: int = 0  #: batched model calls made for this request
    timings_ms: dict = field(default_factory=dict)  #: phase -> milliseconds
    signals: Optional[WordSignals] = None  #: what the confidence was computed from
    #: the words the search compared, most likely first: (word, log P(word | typed)), at most 4
    words: tuple[tuple[str, float], ...] = ()
    #: the greedy continuation after the first word, per token: (characters generated up to the
    #: end of the token, log P(token | everything before)); ends may lie past ``text``, which
    #: stopping rules or ``continue_min_prob`` cut
    tail: tuple[tuple[int, float], ...] = ()

    @property
    def visible(self) -> str:
        """The text to show: empty when suppressed."""
        return "" if self.suppressed else self.text


class Completer(Protocol):
    """What the worker and the benchmarks need of :class:`daemon.cpc.beam.Decoder`
    (tests substitute fakes)."""

    def complete(
        self,
        text: str,
        params: BeamParams,
        cancel: Optional["CancelCheck"] = None,
        on_partial: Optional[Callable[[Suggestion], None]] = None,
    ) -> Suggestion: ...

    def prefill(self, text: str, params: BeamParams, cancel: Optional["CancelCheck"] = None) -> None: ...
