"""Fit the confidence model (:mod:`daemon.cpc.confidence`) on saved quality runs.

``python -m tests.research.confidence_fit RUN.json... [--strategy cpc2]
[--save-training OUT.json] [--training IN.json]`` reads the cases that
``ghosttype eval --json`` wrote (every case keeps the decoder's signals and
whether its suggestion finished the word right) and prints:

* a **leave-one-text-out** evaluation: each text's suggestions are scored by a
  model fitted on the other texts only; the pooled out-of-fold scores give the
  reliability table (of suggestions scored 0.7-0.8, how many were right) and
  the threshold trade-off (right and wrong suggestions each threshold would
  withhold);
* per held-out text, the threshold chosen on the *other* texts by the rule
  below and what it withholds on the held-out one;
* the coefficients fitted on every text, as the tuple to paste into
  ``daemon/cpc/confidence.py``, and the threshold the rule picks on the
  pooled out-of-fold scores (the default ``confidence_threshold``).

The training set is the non-empty suggestions of one strategy (default
``cpc2``, the product default) at mid-word cursors; a suggestion is right
when it finishes the current word exactly.  ``--save-training`` writes just
the signals, labels and text names (no text), the file the unit test refits
to check that the shipped coefficients are this script's output;
``--training`` reads such a file instead of eval runs.

The model is a logistic regression fitted by Newton's method (IRLS) with a
small ridge penalty on the weights, so the fit is deterministic and unique.

Threshold rule: lose at most ``MAX_RIGHT_LOST`` of the right suggestions;
among such thresholds, withhold as many wrong ones as possible.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import numpy as np

from daemon.cpc.confidence import COEFFICIENTS, FEATURE_NAMES, WordSignals, features

#: Ridge penalty on the weights (not the intercept).
RIDGE = 1e-3
#: The threshold rule's budget: at most this fraction of right suggestions withheld.
MAX_RIGHT_LOST = 0.10
#: Thresholds the rule considers.
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(1, 20))


@dataclass(frozen=True)
class Example:
    file: str
    signals: WordSignals
    right: bool


def examples_from_runs(runs: Iterable[dict], strategy: str) -> list[Example]:
    """The training examples of ``strategy`` in eval ``--json`` objects."""
    out = []
    for run in runs:
        for case in run["cases"]:
            if case["strategy"] != strategy or not case["suggestion"] or not case.get("mid_word", True):
                continue
            if case.get("signals") is None:
                raise ValueError("a case has no signals: re-run ghosttype eval with this version")
            out.append(Example(case["file"], WordSignals(**case["signals"]), bool(case["next_word"])))
    return out


def training_json(examples: Sequence[Example]) -> dict:
    return {
        "features": list(FEATURE_NAMES),
        "examples": [
            {"file": e.file, "right": e.right, "signals": _signals_dict(e.signals)} for e in examples
        ],
    }


def examples_from_training(obj: dict) -> list[Example]:
    return [Example(e["file"], WordSignals(**e["signals"]), bool(e["right"])) for e in obj["examples"]]


def _signals_dict(s: WordSignals) -> dict:
    import dataclasses

    return dataclasses.asdict(s)


def design(examples: Sequence[Example]) -> tuple[np.ndarray, np.ndarray]:
    """Feature matrix (with a leading column of ones) and labels."""
    x = np.array([[1.0] + features(e.signals) for e in examples], dtype=np.float64)
    y = np.array([1.0 if e.right else 0.0 for e in examples], dtype=np.float64)
    return x, y


def fit_logistic(x: np.ndarray, y: np.ndarray, ridge: float = RIDGE, iterations: int = 100) -> np.ndarray:
    """Coefficients maximising the log-likelihood minus ``ridge/2 * |w|^2``
    (the intercept, column 0, is not penalised); Newton steps to convergence."""
    n, d = x.shape
    beta = np.zeros(d)
    penalty = np.full(d, ridge * n)
    penalty[0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        grad = x.T @ (y - p) - penalty * beta
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty)
        step = np.linalg.solve(hess, grad)
        beta = beta + step
        if float(np.abs(step).max()) < 1e-10:
            break
    return beta


def predict(beta: np.ndarray, x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-(x @ beta)))


def leave_one_text_out(examples: Sequence[Example]) -> np.ndarray:
    """Out-of-fold scores: each example scored by a model fitted without its text."""
    x, y = design(examples)
    files = np.array([e.file for e in examples])
    scores = np.empty(len(examples))
    for f in sorted(set(files)):
        held = files == f
        beta = fit_logistic(x[~held], y[~held])
        scores[held] = predict(beta, x[held])
    return scores


@dataclass(frozen=True)
class Bin:
    lo: float
    hi: float
    n: int
    mean_score: float
    right: float  #: fraction right (NaN for an empty bin)


def reliability(scores: np.ndarray, right: np.ndarray, edges: Sequence[float] = tuple(i / 10 for i in range(11))) -> list[Bin]:
    out = []
    for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:])):
        last = i == len(edges) - 2
        m = (scores >= lo) & ((scores <= hi) if last else (scores < hi))
        n = int(m.sum())
        out.append(Bin(lo, hi, n, float(scores[m].mean()) if n else math.nan, float(right[m].mean()) if n else math.nan))
    return out


@dataclass(frozen=True)
class TradeOff:
    threshold: float
    withheld_right: int
    withheld_wrong: int
    n_right: int
    n_wrong: int

    @property
    def right_lost(self) -> float:
        return self.withheld_right / self.n_right if self.n_right else 0.0

    @property
    def wrong_withheld(self) -> float:
        return self.withheld_wrong / self.n_wrong if self.n_wrong else 0.0


def trade_offs(scores: np.ndarray, right: np.ndarray, thresholds: Sequence[float] = THRESHOLDS) -> list[TradeOff]:
    right = right.astype(bool)
    return [
        TradeOff(float(t), int(((scores < t) & right).sum()), int(((scores < t) & ~right).sum()),
                 int(right.sum()), int((~right).sum()))
        for t in thresholds
    ]


def choose_threshold(rows: Sequence[TradeOff], max_right_lost: float = MAX_RIGHT_LOST) -> Optional[TradeOff]:
    """The rule of the module docstring; None when even the lowest threshold loses too much."""
    ok = [r for r in rows if r.right_lost <= max_right_lost]
    if not ok:
        return None
    return max(ok, key=lambda r: (r.withheld_wrong, -r.withheld_right, -r.threshold))


def _fmt_rows(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    from daemon.evaluation.report import format_table

    return format_table(headers, rows)


def report(examples: Sequence[Example], out=print) -> tuple[np.ndarray, Optional[TradeOff]]:
    """Print the evaluation and return (coefficients fitted on all, default threshold row)."""
    x, y = design(examples)
    files = sorted({e.file for e in examples})
    out(f"{len(examples)} suggestions from {len(files)} texts, {int(y.sum())} right ({100 * y.mean():.1f}%)")
    oof = leave_one_text_out(examples)
    right = y.astype(bool)
    out("\nReliability, leave one text out (each text scored by a model fitted on the others):")
    out(_fmt_rows(("score", "suggestions", "mean score", "right"),
                  [(f"{b.lo:.1f}-{b.hi:.1f}", str(b.n), "-" if b.n == 0 else f"{b.mean_score:.2f}",
                    "-" if b.n == 0 else f"{100 * b.right:.1f}%") for b in reliability(oof, y)]))
    brier = float(((oof - y) ** 2).mean())
    base = float(((y.mean() - y) ** 2).mean())
    out(f"Brier score {brier:.4f} (always predicting the mean rate: {base:.4f})")
    rows = trade_offs(oof, y)
    out("\nTrade-off, leave one text out, pooled:")
    out(_fmt_rows(("threshold", "withheld right", "withheld wrong"),
                  [(f"{r.threshold:.2f}", f"{r.withheld_right} of {r.n_right} ({100 * r.right_lost:.1f}%)",
                    f"{r.withheld_wrong} of {r.n_wrong} ({100 * r.wrong_withheld:.1f}%)") for r in rows]))
    file_arr = np.array([e.file for e in examples])
    per_text = []
    for f in files:
        held = file_arr == f
        beta = fit_logistic(x[~held], y[~held])
        chosen = choose_threshold(trade_offs(predict(beta, x[~held]), y[~held]))
        if chosen is None:
            per_text.append((f, "-", "-", "-"))
            continue
        (r,) = trade_offs(oof[held], y[held], [chosen.threshold])
        per_text.append((f, f"{chosen.threshold:.2f}",
                         f"{r.withheld_right} of {r.n_right} ({100 * r.right_lost:.1f}%)",
                         f"{r.withheld_wrong} of {r.n_wrong} ({100 * r.wrong_withheld:.1f}%)"))
    out(f"\nPer held-out text, threshold chosen on the other texts (lose at most {100 * MAX_RIGHT_LOST:.0f}% "
        "of right suggestions, withhold the most wrong ones):")
    out(_fmt_rows(("held-out text", "threshold", "withheld right", "withheld wrong"), per_text))
    chosen = choose_threshold(rows)
    if chosen is not None:
        out(f"\nDefault threshold from the pooled out-of-fold scores: {chosen.threshold:.2f} "
            f"(withholds {100 * chosen.wrong_withheld:.1f}% of wrong, {100 * chosen.right_lost:.1f}% of right)")
    beta = fit_logistic(x, y)
    out("\nCoefficients fitted on every text (intercept, " + ", ".join(FEATURE_NAMES) + "):")
    out("COEFFICIENTS: tuple[float, ...] = (" + ", ".join(f"{b:.6g}" for b in beta) + ")")
    shipped = np.asarray(COEFFICIENTS)
    if shipped.shape == beta.shape and np.allclose(shipped, np.round(beta, 6), atol=1e-5, rtol=1e-5):
        out("(the shipped coefficients are these)")
    else:
        out("(the shipped coefficients differ: paste the tuple above into daemon/cpc/confidence.py)")
    return beta, chosen


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.research.confidence_fit", description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="*", metavar="RUN.json", help="ghosttype eval --json outputs")
    p.add_argument("--strategy", default="cpc2", help="strategy whose suggestions to fit on (default cpc2)")
    p.add_argument("--training", metavar="IN.json", help="read a --save-training file instead of runs")
    p.add_argument("--save-training", metavar="OUT.json", help="write the signals and labels used")
    args = p.parse_args(argv)
    if args.training:
        with open(args.training, encoding="utf-8") as fh:
            examples = examples_from_training(json.load(fh))
    else:
        if not args.runs:
            p.error("give RUN.json files or --training")
        runs = []
        for name in args.runs:
            with open(name, encoding="utf-8") as fh:
                runs.append(json.load(fh))
        examples = examples_from_runs(runs, args.strategy)
    if len({e.file for e in examples}) < 2:
        print("need suggestions from at least two texts to leave one out", file=sys.stderr)
        return 2
    report(examples)
    if args.save_training:
        with open(args.save_training, "w", encoding="utf-8") as fh:
            json.dump(training_json(examples), fh, indent=None, separators=(",", ":"))
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
