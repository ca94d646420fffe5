"""Numeric helpers the decoder's searches share."""

from __future__ import annotations

import numpy as np


def logsumexp(x: np.ndarray) -> float:
    """``log(sum(exp(x)))`` without overflow; ``-inf`` when every entry is
    ``-inf`` (no probability mass), ``+inf``/``nan`` passed through."""
    m = float(x.max())
    if not np.isfinite(m):
        return m
    return m + float(np.log(np.exp(x - m).sum()))
