"""Fit the virtual clock's cost model (:class:`daemon.evaluation.vclock.CostModel`) on this machine.

Types each file's first ``--chars`` characters (from ``--start``) one character a request through the decoder, as
the simulated user does at a patient pace (the background warm-up of the full window between requests
included), and times every request and warm-up step on the wall clock.  Each is described by what it asked of the
model, as the virtual clock's :class:`~daemon.evaluation.vclock.TimedLM` counts it: ``logprobs`` calls, batches
and tokens the backend decoded, tokenizations, and the calls that went through a memory (``--learn-from``: the
same run again with that memory mixed in).  Non-negative least squares of the milliseconds on those counts
(Lawson and Hanson's method) gives the coefficients; the script prints them, how well they predict (R squared,
the mean and 90th percentile of the error) and the Python literal to paste into ``SMOLLM2_COSTS``.

    python -m tests.research.clock_fit FILE... [--learn-from DIR] [--chars 600] [--start 2000]

Run it on an idle machine (nothing else running): what it measures is the machine.
"""

from __future__ import annotations

import argparse
import time
from typing import Optional

import numpy as np

from daemon.evaluation.vclock import SMOLLM2_COSTS, USAGE, CostModel, TimedLM, VirtualClock


def nnls(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Non-negative least squares, ``argmin |x c - y|`` over ``c >= 0`` (Lawson and Hanson's active-set method:
    add the column whose coefficient would most lower the residual, solve on the columns taken, and step back
    to the last feasible point while a coefficient would go negative)."""
    m, n = x.shape
    tol = 10 * np.finfo(float).eps * np.abs(x).sum(axis=0).max() * max(m, n)
    taken = np.zeros(n, dtype=bool)
    coef = np.zeros(n)
    gradient = x.T @ (y - x @ coef)
    for _ in range(3 * n + 10):
        if taken.all() or gradient[~taken].max() <= tol:
            return coef
        taken[int(np.argmax(np.where(taken, -np.inf, gradient)))] = True
        while True:
            trial = np.zeros(n)
            trial[taken] = np.linalg.lstsq(x[:, taken], y, rcond=None)[0]
            if (trial[taken] > tol).all():
                break
            falling = taken & (trial <= tol)
            step = float(np.min(coef[falling] / (coef[falling] - trial[falling])))
            coef = coef + step * (trial - coef)
            taken &= coef > tol
        coef = trial
        gradient = x.T @ (y - x @ coef)
    raise RuntimeError("non-negative least squares did not converge")


def samples(texts: list[str], memory, chars: int, start: int) -> tuple[np.ndarray, np.ndarray]:
    from daemon.backends.llamacpp.models import resolve_model
    from daemon.backends.llamacpp.open import load_lm
    from daemon.cpc.beam import Decoder
    from daemon.cpc.suggestion import BeamParams

    params = BeamParams()
    lm = load_lm(str(resolve_model("smollm2")), n_seq_max=max(8, 2 * params.beam_width + 2))
    lm.warm_up()
    rows, ys = [], []
    for mixed in ([False, True] if memory is not None else [False]):
        base = lm
        if mixed:
            from daemon.memory.cache_lm import MemoryLM

            base = MemoryLM(lm, memory)
            base.refresh()
        # what the virtual clock charges, counted (a clock that never holds: no key is due)
        counting = TimedLM(base, VirtualClock(), SMOLLM2_COSTS)

        def timed(step) -> None:
            before = counting.usage.copy()
            t0 = time.perf_counter()
            step()
            ys.append((time.perf_counter() - t0) * 1000.0)
            rows.append(counting.usage - before)

        for text in texts:
            lm.clear_cache()
            decoder = Decoder(counting)
            for end in range(start + 1, min(len(text), start + chars) + 1):
                timed(lambda: decoder.complete(text[:end], params))
                while decoder.warming:
                    timed(decoder.warm_step)
    return np.array(rows), np.array(ys)


def main(argv: Optional[list[str]] = None) -> int:
    from daemon.evaluation.simulate import as_typed, kind_of

    ap = argparse.ArgumentParser(prog="python -m tests.research.clock_fit", description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--learn-from", action="append", default=None, metavar="DIR_OR_FILE")
    ap.add_argument("--chars", type=int, default=600)
    ap.add_argument("--start", type=int, default=2000)
    args = ap.parse_args(argv)
    texts = [as_typed(open(f, encoding="utf-8").read(), kind_of(f)) for f in args.files]
    memory = None
    if args.learn_from:
        from daemon.evaluation.learn import learned_memory

        memory, _, _ = learned_memory(args.learn_from)
    x, y = samples(texts, memory, args.chars, min(args.start, min(len(t) for t in texts) // 2))
    coef = nnls(x, y)
    pred = x @ coef
    err = np.abs(pred - y)
    r2 = 1.0 - float(((y - pred) ** 2).sum()) / float(((y - y.mean()) ** 2).sum())
    print(f"{len(y)} requests and warm-up steps, {y.sum() / 1000:.1f} s; R^2 {r2:.3f}; "
          f"|error| mean {err.mean():.2f} ms, 90th percentile {np.percentile(err, 90):.2f} ms; "
          f"measured mean {y.mean():.2f} ms, predicted {pred.mean():.2f} ms")
    model = CostModel(**{n: round(float(c), 4) for n, c in zip(USAGE, coef)})
    print(repr(model))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
