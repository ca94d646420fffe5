"""Confidence of a suggestion: the probability that the user takes it.

**What "taken" means.**  The measure of what a user gains is keystrokes
saved (``ghosttype eval --simulate-user``); a suggestion helps when the user
accepts it, whole (Tab) or its first word (Ctrl+Right), and costs them a look
when its first character is not what they type next.  The confidence is a
calibrated estimate of the probability of the first, against the second, for
a suggestion shown where a user typing the text would see it (on texts the
model was not fitted on, of suggestions scored 0.7-0.8, about three in four
are taken; daemon/evaluation/README.md reports the reliability table).  The signals all
describe the suggestion's first word, which is what both keys insert first.

**Signals** (:class:`WordSignals`), all read off the search the decoder ran
anyway (:mod:`daemon.cpc.covering`, :mod:`daemon.cpc.word`):

* ``word_logprob``: log P(the completed word | the typed text): the word's
  probability, its end included, as a product over its tokens, divided by the
  probability of the typed bytes (the mass of all coverings scored);
* ``margin``: log-probability of the best word minus the second best
  (``None`` when the search found only one word, e.g. with beam width 1);
* ``share``: the best word's share of the probability of every word found
  (how much the beams agree);
* ``first_logprob``, ``first_entropy``: the first token that adds suggestion
  bytes, its log-probability among the tokens consistent with the typed text
  and the entropy of that step;
* ``word_chars``: characters the suggestion adds to the word (the remainder
  length); ``typed_chars``: characters of the word already typed;
* ``in_context``: the whole word (typed part and completion) already occurs
  as a word in the text before it (identifiers and names repeat).

**Combination.**  A logistic regression over :func:`features`, fitted with
``python -m tests.research.confidence_fit`` on what a simulated user did
with every suggestion it looked at while typing the reference texts with the
gate off (``python -m tests.research.user_policy looks``: taken, or wrong;
right suggestions typed through are left out).  Every text's suggestions are
scored by a model fitted on the other texts to measure it; the shipped
coefficients are fitted on all of them.  They are that script's output; a
test checks it still reproduces them from the saved data.  (Until this
release the label was "finishes the word right at a random mid-word cursor",
a question about the decoder rather than the user; refitted on what the user
takes, the same signals put a third fewer wrong suggestions in front of the
user for about the same keystrokes saved: daemon/evaluation/README.md,
"Keystrokes saved".)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Optional, Sequence

from .word import HOPELESS

#: Substituted for a missing margin (one word found) and the cap of a large
#: one: the search drops hypotheses this far below the best word.
MARGIN_CAP = HOPELESS
#: Floor of log-probabilities fed to the model (a token the search kept is never this unlikely).
LOGPROB_FLOOR = -20.0

FEATURE_NAMES: tuple[str, ...] = (
    "word_logprob",
    "margin",
    "share",
    "first_logprob",
    "first_entropy",
    "log1p_word_chars",
    "log1p_typed_chars",
    "in_context",
)

#: Fitted by ``python -m tests.research.confidence_fit`` (intercept first,
#: then one weight per FEATURE_NAMES entry) on the 674 suggestions a simulated
#: user looked at while typing 1,000 characters of each of the four reference
#: texts with SmolLM2, CPC k=2, gate off (363 taken, 311 wrong); the training
#: data is ``tests/unit/data/confidence_training.json``.
COEFFICIENTS: tuple[float, ...] = (0.0675165, 0.952515, 0.430468, -0.246469, 0.0123541, -0.510648, 1.03818, -0.199849, 0.355075)


@dataclass(frozen=True)
class WordSignals:
    """What the decoder knows about the word it suggests (see the module docstring)."""

    word_logprob: float
    margin: Optional[float]
    share: float
    first_logprob: float
    first_entropy: float
    word_chars: int
    typed_chars: int
    in_context: bool = False


_TRAILING_WORD = re.compile(r"\w+$")


def typed_word(text: str, word_text: str) -> tuple[int, bool]:
    """``typed_chars`` and ``in_context`` of a suggestion whose first word
    adds ``word_text`` to ``text``."""
    typed = _TRAILING_WORD.search(text)
    before = text[: typed.start()] if typed else text
    whole = (typed.group(0) if typed else "") + word_text.lstrip()
    in_context = bool(whole) and re.search(r"(?<!\w)" + re.escape(whole) + r"(?!\w)", before) is not None
    return (len(typed.group(0)) if typed else 0), in_context


def features(s: WordSignals) -> list[float]:
    """The regression inputs of ``s``, in FEATURE_NAMES order."""
    margin = MARGIN_CAP if s.margin is None else min(MARGIN_CAP, max(0.0, s.margin))
    return [
        max(LOGPROB_FLOOR, min(0.0, s.word_logprob)),
        margin,
        min(1.0, max(0.0, s.share)),
        max(LOGPROB_FLOOR, min(0.0, s.first_logprob)),
        max(0.0, s.first_entropy),
        math.log1p(max(0, s.word_chars)),
        math.log1p(max(0, s.typed_chars)),
        1.0 if s.in_context else 0.0,
    ]


def signals_from_features(x: Sequence[float]) -> WordSignals:
    """Signals whose :func:`features` are ``x`` (features clamp, so this
    inverts them for every value a search produces)."""
    return WordSignals(
        word_logprob=x[0], margin=x[1], share=x[2], first_logprob=x[3], first_entropy=x[4],
        word_chars=round(math.expm1(x[5])), typed_chars=round(math.expm1(x[6])), in_context=bool(x[7]),
    )


def logistic(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def word_confidence(s: WordSignals, coefficients: Sequence[float] = COEFFICIENTS) -> float:
    """P(the suggestion finishes the current word right), in [0, 1]."""
    x = features(s)
    if len(coefficients) != len(x) + 1:
        raise ValueError(f"expected {len(x) + 1} coefficients, got {len(coefficients)}")
    z = coefficients[0] + sum(w * v for w, v in zip(coefficients[1:], x))
    return logistic(z)
