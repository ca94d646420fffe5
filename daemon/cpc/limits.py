"""The one table of the decoder's knobs' ranges, and the checks that say why a value is out.

:class:`~daemon.cpc.suggestion.BeamParams`, the config file (:mod:`daemon.config`), the
command line of ``complete`` / ``eval`` / ``tune`` and the benchmarks' ``cpcK`` all take
their bounds from :data:`LIMITS` and their words from :func:`int_range` /
:func:`float_range`, so a value refused in one place is refused in every other with the
same message (``max_tokens: must be between 1 and 64, got 0``).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional

Check = Callable[[Any], Optional[str]]  #: value -> why it is refused, or None when it is valid

#: Inclusive bounds of each numeric knob of a request.  Integers for the counts, floats for the
#: probabilities.
LIMITS: dict[str, tuple[float, float]] = {
    "beam_width": (1, 8),  # beams kept while matching the typed part of a word
    "max_tokens": (1, 64),  # tokens generated after the covering
    "confidence_threshold": (0.0, 1.0),
    "continue_min_prob": (0.0, 1.0),
    "context_chars": (50, 100_000),  # characters before the caret given to the model
    "quick_context_chars": (0, 100_000),  # near the caret while the full window is not cached (0: off)
}


def kind_of(v: Any) -> str:
    """What a value is, in the words of an error message (never the value: it may be typed text)."""
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", tuple: "a list", dict: "a table"}.get(type(v), type(v).__name__)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def int_range(lo: int, hi: int) -> Check:
    def check(v: Any) -> Optional[str]:
        if not is_int(v):
            return f"expected an integer, got {kind_of(v)}"
        return None if lo <= v <= hi else f"must be between {lo} and {hi}, got {v}"

    return check


def float_range(lo: float, hi: float) -> Check:
    def check(v: Any) -> Optional[str]:
        if not (is_int(v) or isinstance(v, float)) or (isinstance(v, float) and math.isnan(v)):
            return f"expected a number, got {kind_of(v)}"
        return None if lo <= v <= hi else f"must be between {lo:g} and {hi:g}, got {v}"

    return check


def limit(name: str) -> Check:
    """The check of knob ``name`` (a key of :data:`LIMITS`)."""
    lo, hi = LIMITS[name]
    return float_range(lo, hi) if isinstance(lo, float) else int_range(int(lo), int(hi))


def span(name: str) -> str:
    """``name``'s range in words, for help texts: ``1-64``, ``0-1``."""
    lo, hi = LIMITS[name]
    return f"{lo:g}-{hi:g}"
