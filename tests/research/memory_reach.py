"""How much of what is typed now continues a phrase of the memory: the most any memory of earlier text could
suggest, whatever its weights.

For each corpus of ``daemon/evaluation/README.md`` (*Learning the user's words*), the spans the 10 keys/s
benchmark types (its ``--seed``, 0 unless told) are walked word by word: at each word start, the longest
continuation of the true text that the memory's text holds right after the same ``--context`` characters (the
characters typed just before it) counts as reachable when it is at least ``--least`` characters long, and the
walk goes on after it.  The share of the span's characters so reached, with the same author's earlier text and
with an unrelated author's, says how much there is to learn: a memory cannot suggest a phrase it never saw after
that context, and the model already knows the phrases every author writes.

    python -m tests.research.memory_reach --corpora learn-corpora [--context 10] [--least 5] [--seed 0]

Counts characters, not keystrokes: an upper bound on what history completion could show, not a forecast of
what the token cache saves (which also changes the model's other suggestions and the gate).
"""

from __future__ import annotations

import argparse
import pathlib
from typing import Optional

from tests.research.memory_weights import CORPORA, typed_span

#: between two pieces of the memory in its text: no phrase spans two pieces (as in the memory's index)
PIECE_BREAK = "\0"


def reach(span: str, before: str, memory: str, context: int, least: int) -> int:
    """Characters of ``span`` (typed after ``before``) that continue a phrase of ``memory``: at each word
    start, the longest continuation at least ``least`` long that ``memory`` holds after the ``context``
    characters before it (binary search: a continuation found there means every shorter one is)."""
    text = before + span
    start = len(before)
    covered, i = 0, 0
    while i < len(span):
        if i and not span[i - 1].isspace():
            i += 1
            continue
        at = start + i
        ctx = text[max(0, at - context):at]
        lo, hi = 0, len(span) - i
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if ctx + span[i:i + mid] in memory:
                lo = mid
            else:
                hi = mid - 1
        if lo >= least:
            covered += lo
            i += lo
        else:
            i += 1
    return covered


def main(argv: Optional[list[str]] = None) -> None:
    from daemon.evaluation.learn import learned_memory

    p = argparse.ArgumentParser(prog="python -m tests.research.memory_reach", description=__doc__.split("\n\n")[0])
    p.add_argument("--corpora", type=pathlib.Path, required=True)
    p.add_argument("--context", type=int, default=10, help="characters before a continuation that must match")
    p.add_argument("--least", type=int, default=5, help="the shortest continuation counted")
    p.add_argument("--seed", type=int, default=0, help="the spans of this seed of the benchmark's commands")
    args = p.parse_args(argv)
    print(f"characters of the typed spans (seed {args.seed}) that continue a phrase of the memory (at least "
          f"{args.least} characters, after the same {args.context} characters)")
    for name, (files, chars, same, other) in CORPORA.items():
        found = []
        for source in (same, other):
            memory, _params, _learned = learned_memory([str(args.corpora / source)], None)
            text = PIECE_BREAK.join(memory.pieces())
            covered = total = 0
            for file_name in files:
                typed, at = typed_span(args.corpora, file_name, chars, args.seed)
                span = typed[at:at + chars]
                covered += reach(span, typed[:at], text, args.context, args.least)
                total += len(span)
            found.append(100.0 * covered / max(1, total))
        print(f"{name:10s} same author {found[0]:5.1f}%   unrelated author {found[1]:5.1f}%")


if __name__ == "__main__":
    main()
