"""Confidence of a suggestion, in [0, 1].

Definition: the geometric mean of the probabilities of the tokens that make
up the suggestion, where

* a covering token that overshoots the typed text (" inf" -> " information")
  is scored by its probability *among the tokens consistent with what was
  typed* (its share of the valid-candidate mass at that step).  Its raw
  probability also pays for the letters the user already typed, which says
  nothing about whether the completion is right;
* continuation tokens are scored by their plain next-token probability;
* tokens entirely inside the typed text do not count.

Why a geometric mean: it does not fall just because a suggestion is longer
(a product would punish the 8-token suggestions that are most useful), and a
single confident token is not drowned out by a length-normalised sum.  The
threshold that trades withheld wrong suggestions against withheld right ones
is measured by the evaluation command, not assumed here.
"""

from __future__ import annotations

import math
from typing import Sequence


def geometric_mean_prob(logprobs: Sequence[float]) -> float:
    """``exp(mean(logprobs))`` clamped to [0, 1]; 0 for no tokens."""
    if not logprobs:
        return 0.0
    value = math.exp(sum(logprobs) / len(logprobs))
    return min(1.0, max(0.0, value))
