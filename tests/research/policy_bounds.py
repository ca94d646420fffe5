"""How much a better gate or length rule could still gain from the decoder's
suggestions, and how much a length rule learned from them does gain.

The patient user of :mod:`tests.research.user_policy` is replayed over the
suggestions ``collect`` saved, under display rules of two kinds:

* **Foresight** (no real rule can do this: it reads the text ahead).  The
  *gate* shows a suggestion whole when its first word is right, else nothing;
  the *length* shows it (when the shipped gate does) cut after its last right
  word; *both* together; and, as the loosest bound, the right part of every
  suggestion cut at any character.  They say which of the two a better rule
  should work on, and how much there is to gain.
* **Learned length**: the probability that the suggestion's next word is
  right given that the ones before it are, a logistic regression over what
  the decoder knows of that word (its tokens' log-probabilities, the
  suggestion's confidence, how far in it is, whether it is punctuation or the
  generation's last piece).  The suggestion is shown while the product of
  those probabilities stays at or above ``tau``.  Fitted on the other texts
  and measured on each held-out one, against the shipped rule
  (``continue_min_prob``) chosen the same way.

    python -m tests.research.policy_bounds DIR/*.json

These are benchmark texts, not anything a user typed.
"""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from typing import Callable, Optional, Sequence

import numpy as np

from daemon.controller import next_word
from daemon.cpc.suggestion import BeamParams
from tests.research.confidence_fit import fit_logistic
from daemon.evaluation.simulate import UserRun
from tests.research.user_policy import (
    _WORD_CHAR, MAX_WRONG_PER_100, Policy, _first_word_end, best_policy, confidence, evaluate, load, most_saved,
    replay, shown_text,
)

GRID_THRESHOLDS = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75)
GRID_CONTINUE = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5)
GRID_TAU = (0.2, 0.3, 0.4, 0.5, 0.6, 0.7)
FEATURE_NAMES = ("intercept", "log_confidence", "logprob_so_far", "word_logprob", "word_min_token_logprob",
                 "log1p_index", "punctuation", "log1p_word_chars", "last_piece", "space_before")


def right_word_end(suggestion: str, ahead: str) -> int:
    """Length of the longest beginning of ``suggestion`` that the text
    ``ahead`` continues with and that ends where a word of the text ends."""
    n = right_chars(suggestion, ahead)
    while n > 0 and n < len(ahead) and _WORD_CHAR.match(suggestion[n - 1]) and _WORD_CHAR.match(ahead[n]):
        n -= 1
    return n


def right_chars(suggestion: str, ahead: str) -> int:
    """Length of the longest beginning of ``suggestion`` that ``ahead`` begins with."""
    n = 0
    while n < min(len(suggestion), len(ahead)) and suggestion[n] == ahead[n]:
        n += 1
    return n


def foresight(record: dict, before: str, ahead: str, policy: Policy, gate: bool, length: bool) -> str:
    """What a rule with foresight shows: the gate (``gate``) and/or the cut
    (``length``) see ``ahead``; the other part is the shipped ``policy``."""
    text = record["text"]
    if not text:
        return ""
    first = _first_word_end(text)
    right = right_word_end(text, ahead)
    if gate and right < first:
        return ""
    if not gate and not shown_text(record, before, policy):
        return ""
    if length:
        return text[:max(first, right)]
    return shown_text(record, before, Policy(0.0, policy.continue_min)) or text[:first]


def piece_ends(text: str, start: int) -> list[int]:
    """Where each word of ``text`` after ``start`` ends (what Ctrl+Right would take, one after another)."""
    ends, i = [], start
    while text[i:].strip():
        i += len(next_word(text[i:]))
        ends.append(i)
    return ends


def piece_features(record: dict, start: int, ends: Sequence[int]) -> np.ndarray:
    """One row of FEATURE_NAMES per word end in ``ends`` (after ``start``)."""
    text, tokens = record["text"], record["tail"]
    log_conf = math.log(max(1e-6, record["confidence"]))
    rows, so_far, t, prev = [], 0.0, 0, start
    for j, end in enumerate(ends):
        own = []  #: the tokens that end in this word
        while t < len(tokens) and tokens[t][0] <= end:
            own.append(tokens[t][1])
            t += 1
        so_far += sum(own)
        # a word inside one token that spans it and the next takes that token's log-probability
        logprobs = own or ([tokens[t][1]] if t < len(tokens) else [0.0])
        piece = text[prev:end]
        rows.append([1.0, log_conf, max(-20.0, so_far), max(-20.0, sum(logprobs)), max(-20.0, min(logprobs)),
                     math.log1p(j), 0.0 if _WORD_CHAR.search(piece) else 1.0, math.log1p(len(piece.strip())),
                     1.0 if end >= len(text) else 0.0, 1.0 if piece[:1].isspace() else 0.0])
        prev = end
    return np.array(rows).reshape(len(rows), len(FEATURE_NAMES))


def length_examples(runs: Sequence[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Every word after a right first word, up to the first wrong one: its
    features and whether it (and all before it) is what the text goes on with."""
    xs, ys = [], []
    for run in runs:
        for pos, record in run["records"].items():
            text, ahead = record["text"], run["text"][pos:]
            first, right = _first_word_end(text), right_word_end(text, ahead)
            if not text or right < first:
                continue
            ends = piece_ends(text, first)
            for row, end in zip(piece_features(record, first, ends), ends):
                xs.append(row)
                ys.append(1.0 if end <= right else 0.0)
                if end > right:
                    break
    return np.array(xs).reshape(len(xs), len(FEATURE_NAMES)), np.array(ys)


def learned_cut(text: str, first: int, ends: Sequence[int], probabilities: Sequence[float], tau: float) -> str:
    """``text`` up to the last word end in ``ends`` at which the product of
    ``probabilities`` (one per word after the first, which ends at ``first``
    and is always kept) is still >= ``tau``."""
    keep, joint = first, 1.0
    for end, p in zip(ends, probabilities):
        joint *= p
        if joint < tau:
            break
        keep = end
    return text[:keep]


def _replay_all(runs: Sequence[dict], show_for: Callable[[dict], Callable[[int], str]]) -> UserRun:
    total = UserRun(name="")
    for run in runs:
        total.add(replay(run["text"], run["start"], run["records"], Policy(), show=show_for(run)))
    return total


def foresight_run(runs: Sequence[dict], policy: Policy, gate: bool, length: bool) -> UserRun:
    return _replay_all(runs, lambda r: lambda p: foresight(r["records"][p], r["text"][:p], r["text"][p:],
                                                           policy, gate, length))


def any_char_run(runs: Sequence[dict]) -> UserRun:
    return _replay_all(runs, lambda r: lambda p: r["records"][p]["text"][:right_chars(r["records"][p]["text"],
                                                                                       r["text"][p:])])


def learned_run(runs: Sequence[dict], beta: np.ndarray, threshold: float, tau: float) -> UserRun:
    def show_for(run: dict) -> Callable[[int], str]:
        def show(pos: int) -> str:
            record = run["records"][pos]
            text = record["text"]
            c = confidence(record, None)
            if not text or c < threshold or c <= 0.0:
                return ""
            first = _first_word_end(text)
            ends = piece_ends(text, first)
            rows = piece_features(record, first, ends)
            return learned_cut(text, first, ends, 1.0 / (1.0 + np.exp(-(rows @ beta))), tau)
        return show
    return _replay_all(runs, show_for)


def held_out(runs: Sequence[dict], out=print) -> tuple[UserRun, UserRun]:
    """Leave one text out: the shipped rule's (threshold, continue_min) and the
    learned rule's (threshold, tau) chosen on the other texts for at most
    MAX_WRONG_PER_100 wrong suggestions, measured on the held-out text."""
    shipped_total, learned_total = UserRun(name="shipped rule"), UserRun(name="learned length")
    for i, held in enumerate(runs):
        others = [r for j, r in enumerate(runs) if j != i]
        policy, _ = best_policy(others, [Policy(t, c) for t, c in itertools.product(GRID_THRESHOLDS, GRID_CONTINUE)])
        beta = fit_logistic(*length_examples(others))
        _, (t, tau) = most_saved([(learned_run(others, beta, t, tau), (t, tau))
                                  for t, tau in itertools.product(GRID_THRESHOLDS, GRID_TAU)])
        shipped, learned = evaluate([held], policy), learned_run([held], beta, t, tau)
        shipped_total.add(shipped)
        learned_total.add(learned)
        out(f"  {held['file']:24} shipped rule {policy.name():24} {_fmt(shipped)}   "
            f"learned length threshold {t:g} tau {tau:g} {_fmt(learned)}")
    return shipped_total, learned_total


def _fmt(run: UserRun) -> str:
    return f"{100 * run.saved:5.1f}% saved, {run.wrong_per_100:4.1f} wrong/100"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.research.policy_bounds",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", help="what `python -m tests.research.user_policy collect` wrote")
    args = parser.parse_args(argv)
    runs = load(args.files)
    defaults = BeamParams()
    shipped = Policy(defaults.confidence_threshold, defaults.continue_min_prob)
    groups = {"all": runs, **{k: [r for r in runs if r["kind"] == k] for k in sorted({r["kind"] for r in runs})}}
    rows = [("gate off, everything the decoder generated", lambda rs: evaluate(rs, Policy(0.0, 0.0))),
            (f"shipped: {shipped.name()}", lambda rs: evaluate(rs, shipped)),
            ("foresight gate, shipped length", lambda rs: foresight_run(rs, shipped, True, False)),
            ("shipped gate, foresight length", lambda rs: foresight_run(rs, shipped, False, True)),
            ("foresight gate and length (word ends)", lambda rs: foresight_run(rs, shipped, True, True)),
            ("foresight at any character", any_char_run)]
    for name, group in groups.items():
        if not group:
            continue
        print(f"{name} ({', '.join(r['file'] for r in group)})")
        for label, measure in rows:
            print(f"  {label:42} {_fmt(measure(group))}")
    if len(runs) >= 2:
        print(f"\nleave one text out, each rule chosen on the other texts for at most {MAX_WRONG_PER_100:g} "
              "wrong per 100:")
        shipped_total, learned_total = held_out(runs)
        print(f"  {'pooled':24} shipped rule {_fmt(shipped_total)}   learned length {_fmt(learned_total)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
