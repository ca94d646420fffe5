"""What the likeliest words agree on: a shorter suggestion where the whole one is too unsure.

Where the confidence gate withholds a suggestion, the search has still ranked the words that could
follow the typed characters, each with its probability given what was typed (``Suggestion.words``).
When the likeliest few between them hold ``mass`` of the probability and begin alike ("configur" for
"configurable" and "configuration"), that common beginning is likelier than any one of them; it is
offered in place of nothing.  Measured as a candidate on held-out text (daemon/evaluation/README.md).
"""

from __future__ import annotations

import math
import os
from typing import Sequence

#: Shorter than this saves nothing: accepting costs a key too.
MIN_AGREED_CHARS = 2


def agreed_prefix(words: Sequence[tuple[str, float]], mass: float) -> str:
    """The common beginning of the fewest likeliest ``words`` ((text, log P), most likely first) whose
    probabilities add up to ``mass`` or more; "" when they never do, or when it has fewer than
    MIN_AGREED_CHARS characters besides blanks."""
    total = 0.0
    group: list[str] = []
    for text, logprob in words:
        group.append(text)
        total += math.exp(logprob)
        if total >= mass:
            break
    else:
        return ""
    prefix = os.path.commonprefix(group)
    return prefix if len(prefix.strip()) >= MIN_AGREED_CHARS else ""
