"""Plain-text tables for the benchmark results (what ``ghosttype eval`` prints).

Kept free of any model code so the formatting is unit-testable and the same
rows can go to the terminal or into a README.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Sequence

from daemon.evaluation.metrics import QualitySummary, SweepRow
from daemon.evaluation.replay_summary import ReplaySummary
from daemon.evaluation.vocab_bench import LookupTiming


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns padded to their widest cell; the first column left-aligned, the
    others right-aligned (they hold numbers)."""
    widths = [len(h) for h in headers]
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"row has {len(row)} cells, expected {len(headers)}")
        widths = [max(w, len(c)) for w, c in zip(widths, row)]

    def line(cells: Sequence[str]) -> str:
        out = [cells[0].ljust(widths[0])]
        out += [c.rjust(w) for c, w in zip(cells[1:], widths[1:])]
        return "  ".join(out).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def fmt_num(x: Optional[float], digits: int = 2) -> str:
    """A number for a table cell; "-" for None and NaN."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}f}"


def fmt_pct(fraction: Optional[float]) -> str:
    return "-" if fraction is None else f"{100.0 * fraction:.1f}%"


QUALITY_HEADERS = (
    "strategy",
    "n",
    "mean matched",
    "median",
    "word compl.",
    "ws in word",
    "suppr. right",
    "suppr. wrong",
    "mean ms",
)


def quality_table(summaries: Mapping[str, QualitySummary]) -> str:
    """One row per strategy, in the order given."""
    rows = [
        (
            name,
            str(s.n),
            fmt_num(s.mean_matched),
            fmt_num(s.median_matched, 1),
            fmt_pct(s.word_completion) + (f" of {s.n_mid}" if s.n_mid != s.n else ""),
            str(s.whitespace_in_word),
            str(s.suppressed_right),
            str(s.suppressed_wrong),
            fmt_num(s.mean_ms, 1),
        )
        for name, s in summaries.items()
    ]
    return format_table(QUALITY_HEADERS, rows)



VOCAB_HEADERS = ("look-up", "inputs", "calls", "p50 us", "p99 us", "max us", "mean ids")


def vocab_table(rows: Sequence[LookupTiming]) -> str:
    """One row per (look-up, input set) of the vocabulary micro-benchmark."""
    return format_table(
        VOCAB_HEADERS,
        [
            (
                r.lookup,
                r.inputs,
                str(r.calls),
                fmt_num(r.p50_us, 1),
                fmt_num(r.p99_us, 1),
                fmt_num(r.max_us, 1),
                fmt_num(r.mean_results, 1),
            )
            for r in rows
        ],
    )


REPLAY_HEADERS = (
    "strategy",
    "keys",
    "model keys",
    "typed-thru",
    "p50 ms",
    "p95 ms",
    "p50 final",
    "p95 final",
    "p50 all",
    "p95 all",
    "calls/key",
    "tokens/key",
    "again/key",
    "prompt again/mid-key",
    "stale shown",
    "cut short",
)


def replay_table(summaries: Mapping[str, ReplaySummary]) -> str:
    """One row per strategy.  "p50/p95 ms": key -> first shown suggestion on
    keys that needed the model; "final": key -> final suggestion on those
    keys; "all": first shown suggestion on every key, typed-through included;
    "again/key": tokens decoded a second time per key (beam positions whose
    cache slot another beam took, or prompt); "prompt again/mid-key": prompt
    tokens decoded a second time per mid-word key (the target is 0); "stale
    shown": suggestions that appeared after a key the daemon had not yet seen
    and disagreed with it (paced typing; 0 by construction otherwise); "cut
    short": completions ended at the worker's time budget with the whole
    words already shown."""
    rows = [
        (
            name,
            str(s.keys),
            str(s.model_keys),
            str(s.typed_through),
            fmt_num(s.p50_ms, 1),
            fmt_num(s.p95_ms, 1),
            fmt_num(s.p50_final_ms, 1),
            fmt_num(s.p95_final_ms, 1),
            fmt_num(s.p50_all_ms, 1),
            fmt_num(s.p95_all_ms, 1),
            fmt_num(s.calls_per_key, 2),
            fmt_num(s.tokens_per_key, 1),
            fmt_num(s.reeval_per_key, 2),
            fmt_num(s.prompt_tokens_reeval_midword, 2),
            str(s.stale_shown),
            str(s.cut_short),
        )
        for name, s in summaries.items()
    ]
    return format_table(REPLAY_HEADERS, rows)


COLD_START_HEADERS = ("cold starts", "shown", "near window", "p50 ms", "p95 ms", "p50 final", "p95 final")


def cold_start_table(result: Any) -> str:
    """One row: focus + first key -> first shown / final suggestion
    (:class:`daemon.evaluation.coldstart.ColdStart`)."""
    row = (str(result.n), str(result.shown), str(result.near_window), fmt_num(result.p50_ms, 1),
           fmt_num(result.p95_ms, 1), fmt_num(result.p50_final_ms, 1), fmt_num(result.p95_final_ms, 1))
    return format_table(COLD_START_HEADERS, [row])


SWEEP_HEADERS = ("strategy", "threshold", "shown", "right of shown", "withheld right", "withheld wrong")


def sweep_table(sweeps: Mapping[str, Sequence[SweepRow]]) -> str:
    """One row per (strategy, threshold): what suppression below that
    confidence would keep and withhold ("right" = types the next word)."""
    rows = [
        (
            name,
            f"{r.threshold:g}",
            str(r.shown),
            fmt_pct(r.shown_right / r.shown if r.shown else None),
            str(r.withheld_right),
            str(r.withheld_wrong),
        )
        for name, sweep in sweeps.items()
        for r in sweep
    ]
    return format_table(SWEEP_HEADERS, rows)
