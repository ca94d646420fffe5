"""Micro-benchmark of the vocabulary look-ups of the CPC decoder.

Every search step asks the :class:`daemon.cpc.vocab.VocabIndex` for the tokens
that are a proper prefix of the uncovered remainder and the tokens that start
with it (daemon/cpc/README.md).  This times both calls, one call per sample with
``time.perf_counter_ns``, over

* remainders sampled from real text: at seeded cursor offsets the context is
  tokenized and split exactly as the decoder does (``split_stable``), and the
  byte remainder is kept (empty remainders need no look-up and are skipped);
* the worst cases ``b" "``, ``b"e"`` and ``b"\\n"``, whose "starts with" sets are
  the largest in a byte-level BPE vocabulary.

Only timings and byte lengths are reported, never the remainders themselves.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from daemon.evaluation.metrics import percentile
from daemon.evaluation.offsets import choose_offsets

WORST_CASES: tuple[bytes, ...] = (b" ", b"e", b"\n")


@dataclass(frozen=True)
class LookupTiming:
    """p50/p99 of one look-up over one set of inputs."""

    lookup: str  #: "prefixes_of" or "starting_with"
    inputs: str  #: "sampled" or repr of a worst case
    calls: int
    p50_us: float
    p99_us: float
    max_us: float
    mean_results: float  #: average number of token ids returned


def sample_remainders(
    lm: Any, index: Any, texts: Sequence[str], per_text: int, seed: int, context_chars: int
) -> list[bytes]:
    """Non-empty split remainders at ``per_text`` seeded offsets of each text."""
    from daemon.cpc.split import split_stable

    pieces = lm.token_bytes()
    out: list[bytes] = []
    for text in texts:
        for offset in choose_offsets(text, per_text, "any", seed):
            context = text[max(0, offset - context_chars) : offset]
            split = split_stable(lm.tokenize(context), context, pieces, index)
            if split.remainder:
                out.append(bytes(split.remainder))
    return out


def _time_calls(fn: Callable[[bytes], np.ndarray], inputs: Sequence[bytes], repeat: int) -> tuple[list[float], float]:
    samples: list[float] = []
    sizes = 0
    clock = time.perf_counter_ns
    for b in inputs:
        for _ in range(repeat):
            t0 = clock()
            ids = fn(b)
            samples.append((clock() - t0) / 1000.0)
        sizes += len(ids)
    return samples, sizes / max(1, len(inputs))


def bench_index(
    index: Any, remainders: Sequence[bytes], repeat: int = 5, worst_repeat: int = 2000
) -> list[LookupTiming]:
    """Time ``prefixes_of`` and ``starting_with`` on the sampled remainders and on
    each worst case.  A few warm-up calls run first so one-time costs (numpy
    dispatch, caches the index builds lazily) do not count as look-up time."""
    for b in (*WORST_CASES, *remainders[:20]):
        index.prefixes_of(b)
        index.starting_with(b)
    rows: list[LookupTiming] = []
    groups: list[tuple[str, Sequence[bytes], int]] = []
    if remainders:
        groups.append(("sampled", remainders, repeat))
    groups += [(repr(b), [b], worst_repeat) for b in WORST_CASES]
    for label, inputs, reps in groups:
        for name in ("prefixes_of", "starting_with"):
            samples, mean_results = _time_calls(getattr(index, name), inputs, reps)
            rows.append(
                LookupTiming(
                    lookup=name,
                    inputs=label,
                    calls=len(samples),
                    p50_us=percentile(samples, 50),
                    p99_us=percentile(samples, 99),
                    max_us=max(samples),
                    mean_results=mean_results,
                )
            )
    return rows


@dataclass(frozen=True)
class VocabBenchResult:
    model: str
    n_vocab: int
    indexed_tokens: int  #: tokens with bytes (control/unused excluded)
    build_ms: float  #: VocabIndex construction
    remainders: int
    mean_remainder_bytes: float
    rows: list[LookupTiming]


def run_vocab_bench(
    model_name: str, lm: Any, texts: Sequence[str], per_text: int = 200, seed: int = 0,
    context_chars: int = 1500,
) -> VocabBenchResult:
    """Build the index from ``lm``'s vocabulary and time its look-ups."""
    from daemon.cpc.vocab import VocabIndex

    pieces = lm.token_bytes()
    t0 = time.perf_counter()
    index = VocabIndex(pieces)
    build_ms = (time.perf_counter() - t0) * 1000.0
    remainders = sample_remainders(lm, index, texts, per_text, seed, context_chars) if texts else []
    return VocabBenchResult(
        model=model_name,
        n_vocab=len(pieces),
        indexed_tokens=sum(1 for p in pieces if p),
        build_ms=build_ms,
        remainders=len(remainders),
        mean_remainder_bytes=float(np.mean([len(r) for r in remainders])) if remainders else 0.0,
        rows=bench_index(index, remainders),
    )
