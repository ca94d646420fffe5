"""What the simulated user would gain under other display policies, measured
offline (for choosing the gate and the suggestion length).

``ghosttype eval --simulate-user`` types in real time through the daemon, so
trying one more gate or length rule costs minutes per text.  The patient user
(one keystroke after the daemon went idle) sees, at every position, the
suggestion the decoder gives for the text before it, or the one it was already
showing advanced by typing through it.  So the decoder's suggestion at every
position of a span is computed once (``collect``: gate off, every signal kept),
and the user's path through the span is then replayed for any policy in
microseconds (``replay``), following the controller's rules: a typed character
equal to the ghost's next one advances it; anything else, or an exhausted
ghost, asks for a new suggestion; an accept inserts the ghost (or its next
word) and asks again.

A policy decides what of a suggestion is shown: nothing (the gate), or its
beginning up to where the continuation's probability drops (the length rule).

    python -m tests.research.user_policy collect FILE... --chars 1000 --out DIR [--model M]
    python -m tests.research.user_policy sweep DIR/*.json
    python -m tests.research.user_policy looks DIR/*.json --save-training OUT.json

``looks`` labels every fresh suggestion the user looked at with the gate off
(useful: accepted whole or by its first word; wrong: its first character was
not the next one; right suggestions the user typed through are left out) and
writes them in the training format of :mod:`tests.research.confidence_fit`,
which fits the confidence on them.

These are benchmark texts, not anything a user typed; ``collect`` writes the
suggestions for them to DIR.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import pathlib
import re
import sys
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

from daemon.evaluation.replay import choose_start
from daemon.evaluation.simulate import MIN_WORD_ACCEPT, UserRun, as_typed, kind_of
from daemon.evaluation.tune import MAX_WRONG_PER_100, most_saved

_WORD_CHAR = re.compile(r"\w")


@dataclass(frozen=True)
class Policy:
    """What of a suggestion is shown.

    ``threshold``: the gate on the suggestion's confidence; ``continue_min``:
    the words after the first are shown while the confidence times the
    probability of the continuation so far stays at or above it (0: all that
    was generated); ``coefficients``: score the suggestion with these
    confidence coefficients instead of the ones it was collected with."""

    threshold: float = 0.60
    continue_min: float = 0.0
    coefficients: Optional[tuple[float, ...]] = None

    def name(self) -> str:
        return f"threshold {self.threshold:g} continue {self.continue_min:g}" + (" refit" if self.coefficients else "")


def confidence(record: dict, coefficients: Optional[Sequence[float]]) -> float:
    if coefficients is None or record["features"] is None:
        return record["confidence"]
    from daemon.cpc.confidence import signals_from_features, word_confidence

    return word_confidence(signals_from_features(record["features"]), coefficients)


def shown_text(record: dict, before: str, policy: Policy) -> str:
    """What ``policy`` shows of the suggestion ``record`` made after ``before``."""
    text = record["text"]
    if not text:
        return ""
    p = confidence(record, policy.coefficients)
    if p < policy.threshold or p <= 0.0:
        return ""
    if policy.continue_min <= 0.0:
        return text
    # As the decoder does (daemon.cpc.beam): words after the first while
    # confidence x P(continuation so far) holds, cut at a word end.
    first_word_end = _first_word_end(text)
    total = math.log(p)
    limit = math.log(policy.continue_min)
    if total >= limit and not record["tail"]:
        return text
    end = first_word_end
    for chars, logprob in record["tail"]:
        total += logprob
        if total < limit:
            return _cut_to_word_end(text, min(end, len(text)), first_word_end)
        end = max(end, chars)
    return text if total >= limit else text[:first_word_end]


def _first_word_end(text: str) -> int:
    """Where the suggestion's first word ends: what Ctrl+Right takes."""
    from daemon.controller import next_word

    return len(next_word(text))


def _cut_to_word_end(text: str, end: int, minimum: int) -> str:
    """``text[:end]``, shortened so that it does not stop inside a word."""
    if end >= len(text):
        return text
    i = end
    while i > minimum and _WORD_CHAR.match(text[i - 1]) and _WORD_CHAR.match(text[i]):
        i -= 1
    return text[:max(i, minimum)].rstrip(" ") if i > minimum else text[:minimum]


def replay(text: str, start: int, records: dict[int, dict], policy: Policy,
           on_look: Optional[Callable[[int, str], None]] = None,
           show: Optional[Callable[[int], str]] = None) -> UserRun:
    """The patient simulated user's path from ``start`` to the end of the
    span ``records`` covers, under ``policy`` (see the module docstring).
    ``on_look(pos, outcome)`` hears, for every fresh suggestion the user
    looked at (``pos``: where it was asked for), what the user did with it:
    ``accept``, ``word``, ``typed`` (right, typed through) or ``wrong``.
    ``show(pos)``, when given, decides what is shown of the suggestion asked
    for at ``pos`` instead of ``policy`` (the bounds of
    :mod:`tests.research.policy_bounds` see the text ahead)."""
    from daemon.controller import next_word

    end = max(records) + 1
    run = UserRun(name=policy.name(), chars=end - start)
    pos = start
    fresh: Optional[int] = None  #: where the visible ghost was asked for, until the user first looks at it

    def ask(p: int) -> str:
        nonlocal fresh
        if p >= end or not text[:p].strip():
            return ""
        shown = show(p) if show is not None else shown_text(records[p], text[:p], policy)
        fresh = p if shown else None
        return shown

    ghost = ""
    while pos < end:
        upcoming = text[pos:pos + max(1, len(ghost))]
        word = next_word(ghost) if ghost else ""
        looked, fresh = fresh, None
        run.keystrokes += 1
        if ghost and ghost[0] != upcoming[0]:
            run.wrong_ghosts += 1
        if ghost and upcoming == ghost:
            outcome = "accept"
            run.accepts += 1
            run.accepted_chars += len(ghost)
            pos += len(ghost)
            ghost = ask(pos)
        elif len(word) >= MIN_WORD_ACCEPT and text.startswith(word, pos):
            outcome = "word"
            run.word_accepts += 1
            run.accepted_chars += len(word)
            pos += len(word)
            ghost = ghost[len(word):] or ask(pos)
        else:
            ch = text[pos]
            outcome = "typed" if ghost and ghost[0] == ch else "wrong"
            ghost = (ghost[1:] or ask(pos + 1)) if ghost and ghost[0] == ch else ask(pos + 1)
            pos += 1
        if looked is not None and on_look is not None:
            on_look(looked, outcome)
    return run


# --------------------------------------------------------------------------- collect


def collect(decoder, text: str, start: int, end: int, params, progress=None) -> dict[int, dict]:
    """The decoder's suggestion (gate off) after ``text[:pos]`` for every
    ``pos`` in ``[start, end)``."""
    import dataclasses

    from daemon.cpc.confidence import features

    params = dataclasses.replace(params, confidence_threshold=0.0, continue_min_prob=0.0, quick_context_chars=0)
    out: dict[int, dict] = {}
    for i, pos in enumerate(range(start, end)):
        s = decoder.complete(text[:pos], params)
        out[pos] = {"text": s.text, "confidence": s.confidence, "tail": [list(t) for t in s.tail],
                    "words": [list(w) for w in s.words],
                    "features": features(s.signals) if s.signals is not None else None}
        if progress is not None:
            progress(i + 1, end - start)
    return out


def _cmd_collect(args: argparse.Namespace) -> int:
    from daemon.backends.llamacpp.open import load_lm, resolve
    from daemon.cpc.beam import Decoder
    from daemon.cpc.suggestion import BeamParams
    from daemon.evaluation.progress import terminal_progress

    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    lm = load_lm(resolve(args.model), n_seq_max=8)
    try:
        decoder = Decoder(lm)
        params = BeamParams(beam_width=args.beam_width, max_tokens=args.max_tokens)
        for name in args.files:
            path = pathlib.Path(name)
            kind = kind_of(path.name)
            text = as_typed(path.read_text(encoding="utf-8"), kind)
            start = choose_start(text, args.chars, params.context_chars, args.seed)
            end = min(len(text), start + args.chars)
            lm.clear_cache()
            records = collect(decoder, text, start, end, params, terminal_progress(path.name))
            (out_dir / f"{path.stem}.{args.model}.json").write_text(json.dumps({
                "file": path.name, "kind": kind, "model": args.model, "start": start, "end": end,
                "text": text[:end], "records": {str(k): v for k, v in records.items()},
            }))
    finally:
        lm.close()
    return 0


# --------------------------------------------------------------------------- sweep


def load(paths: Iterable[str]) -> list[dict]:
    runs = []
    for p in paths:
        obj = json.loads(pathlib.Path(p).read_text())
        obj["records"] = {int(k): v for k, v in obj["records"].items()}
        runs.append(obj)
    return runs


def evaluate(runs: Sequence[dict], policy: Policy) -> UserRun:
    total = UserRun(name=policy.name())
    for r in runs:
        total.add(replay(r["text"], r["start"], r["records"], policy))
    return total


def looks(runs: Sequence[dict], policy: Policy = Policy(0.0, 0.0)) -> list:
    """Training examples (:class:`tests.research.confidence_fit.Example`)
    from the fresh suggestions the user looked at under ``policy`` (by
    default everything the decoder proposed, gate off)."""
    from daemon.cpc.confidence import signals_from_features
    from tests.research.confidence_fit import Example

    out = []
    for r in runs:
        seen: list[tuple[int, str]] = []
        replay(r["text"], r["start"], r["records"], policy, on_look=lambda p, o: seen.append((p, o)))
        for pos, outcome in seen:
            f = r["records"][pos]["features"]
            if f is None or outcome == "typed":
                continue
            out.append(Example(r["file"], signals_from_features(f), outcome in ("accept", "word")))
    return out


def _cmd_looks(args: argparse.Namespace) -> int:
    from tests.research.confidence_fit import training_json

    examples = looks(load(args.files))
    useful = sum(e.right for e in examples)
    print(f"{len(examples)} suggestions looked at: {useful} accepted, {len(examples) - useful} wrong")
    pathlib.Path(args.save_training).write_text(json.dumps(training_json(examples), separators=(",", ":")) + "\n")
    return 0


GRID_THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(0, 19))
GRID_CONTINUE = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)


def policies(coefficients: Optional[tuple[float, ...]] = None) -> list[Policy]:
    return [Policy(t, c, coefficients) for t, c in itertools.product(GRID_THRESHOLDS, GRID_CONTINUE) if c <= t or t == 0]


def best_policy(runs: Sequence[dict], candidates: Sequence[Policy], max_wrong: float = MAX_WRONG_PER_100
                ) -> tuple[Policy, UserRun]:
    """The candidate that saves the most keystrokes on ``runs`` with at most
    ``max_wrong`` wrong suggestions seen per 100 keystrokes."""
    run, policy = most_saved([(evaluate(runs, p), p) for p in candidates], max_wrong)
    return policy, run


def frontier(runs: Sequence[dict], candidates: Sequence[Policy]) -> list[tuple[UserRun, Policy]]:
    """The candidates no other beats on both keystrokes saved and wrong suggestions."""
    out: list[tuple[UserRun, Policy]] = []
    for run, p in sorted(((evaluate(runs, p), p) for p in candidates), key=lambda rp: rp[0].wrong_per_100):
        if not out or run.saved > out[-1][0].saved:
            out.append((run, p))
    return out


def _cmd_sweep(args: argparse.Namespace) -> int:
    from tests.research.confidence_fit import design, fit_logistic

    runs = load(args.files)
    print(f"{'policy':34} {'saved':>7} {'wrong/100':>9} {'accepts':>8} {'words':>6}")
    for run, p in frontier(runs, policies()):
        print(f"{p.name():34} {100 * run.saved:6.1f}% {run.wrong_per_100:9.1f} {run.accepts:8} {run.word_accepts:6}")
    if len(runs) < 2:
        return 0
    print(f"\nleave one text out: confidence refitted on what the user accepted in the other texts, policy chosen "
          f"there for at most {MAX_WRONG_PER_100:g} wrong per 100 keystrokes, measured on the held-out text")
    held_total = UserRun(name="held out")
    for i, held in enumerate(runs):
        others = [r for j, r in enumerate(runs) if j != i]
        x, y = design(looks(others))
        coefficients = tuple(float(b) for b in fit_logistic(x, y))
        policy, _ = best_policy(others, policies(coefficients))
        run = evaluate([held], policy)
        held_total.add(run)
        base = evaluate([held], Policy())
        print(f"{held['file']:24} {policy.name():34} saved {100 * run.saved:5.1f}% wrong {run.wrong_per_100:5.1f}"
              f"   (shipped default: {100 * base.saved:5.1f}% / {base.wrong_per_100:5.1f})")
    print(f"{'pooled':24} {'':34} saved {100 * held_total.saved:5.1f}% wrong {held_total.wrong_per_100:5.1f}")
    x, y = design(looks(runs))
    coefficients = tuple(float(b) for b in fit_logistic(x, y))
    policy, run = best_policy(runs, policies(coefficients))
    print(f"\non every text: {policy.name()}: saved {100 * run.saved:.1f}% wrong {run.wrong_per_100:.1f}")
    print("coefficients: (" + ", ".join(f"{c:.6g}" for c in coefficients) + ")")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.research.user_policy", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("files", nargs="+")
    c.add_argument("--out", required=True)
    c.add_argument("--chars", type=int, default=1000)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--model", default="smollm2")
    c.add_argument("--beam-width", type=int, default=2)
    c.add_argument("--max-tokens", type=int, default=8)
    c.set_defaults(func=_cmd_collect)
    s = sub.add_parser("sweep")
    s.add_argument("files", nargs="+")
    s.set_defaults(func=_cmd_sweep)
    lk = sub.add_parser("looks")
    lk.add_argument("files", nargs="+")
    lk.add_argument("--save-training", required=True, metavar="OUT.json")
    lk.set_defaults(func=_cmd_looks)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
