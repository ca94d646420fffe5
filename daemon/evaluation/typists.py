"""Many typists on one server (``ghosttype eval FILE... --server URL --typists N``).

``N`` simulated typists type at the same time, each through its own
Controller, SuggestionWorker and served completer with a connection of its
own (as ``N`` desktops would), one key every ``key_interval_ms`` (10 keys/s
by default) whatever the server is doing: the typing replay of
:mod:`daemon.evaluation.replay` on ``N`` threads.  Typist ``i`` types
``chars`` characters of file ``i mod len(files)`` from its own seeded start
(seed ``seed + i``), after its field was focused with the text before that
start and the prefill finished; all start typing together.

Figures, pooled over the typists: the first ghost after each key that
needed the model (p50/p95, key to first shown suggestion, as the replay
measures it), the share of those keys that showed one before the next key
came, and the requests the server *served* (answered to their end or until
the suggestion was complete: sent minus cancelled by a newer key minus
failed) per second of typing, prefills excluded.

Typed text stays in memory; nothing is logged.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Optional, Sequence

from daemon.evaluation.replay import ServedCounters, choose_start, default_preload, replay_text, session_config
from daemon.evaluation.replay_summary import KeyRecord, summarize_replay


@dataclass(frozen=True)
class TypistsResult:
    """One ``--typists`` run, pooled over its typists."""

    typists: int
    keys: int
    model_keys: int  #: keys the ghost could not type through
    shown: float  #: share of model keys after which a suggestion was shown
    p50_ms: float  #: key -> first ghost, model keys that showed one
    p95_ms: float
    p50_final_ms: float
    p95_final_ms: float
    requests: int  #: sent, prefills excluded
    served: int  #: of which answered (not cancelled by a newer key, not failed)
    cancelled: int
    failed: int
    seconds: float  #: from the first key to the last typist's end
    served_per_s: float
    per_typist: tuple = ()  #: (p50_ms, p95_ms, served) per typist

    def to_json(self) -> dict:
        from daemon.evaluation.replay import finite

        out = {k: (finite(v) if isinstance(v, float) else v) for k, v in asdict(self).items()}
        out["per_typist"] = [{"p50_ms": finite(p50), "p95_ms": finite(p95), "served": served}
                             for p50, p95, served in self.per_typist]
        return out


@dataclass
class _Typist:
    records: list
    requests: int = 0
    cancelled: int = 0
    failed: int = 0
    error: Optional[BaseException] = None


def run_typists(open_completer: Callable[[], Any], files: Sequence[tuple[str, str]], params: Any, n: int,
                chars: int, seed: int = 0, key_interval_ms: float = 100.0,
                idle_timeout_s: float = 600.0) -> TypistsResult:
    """Run ``n`` typists (see the module docstring); ``open_completer()``
    gives each its own :class:`~daemon.backends.served.completer.ServedCompleter`."""
    if n < 1:
        raise ValueError(f"need at least one typist, got {n}")
    config = session_config(params)
    completers = [open_completer() for _ in range(n)]
    typists = [_Typist([]) for _ in range(n)]
    go = threading.Barrier(n + 1)  # the typists, each after its prefill, and the clock below

    def type_one(i: int) -> None:
        completer, typist = completers[i], typists[i]
        _name, text = files[i % len(files)]
        start = choose_start(text, chars, params.context_chars, seed + i)
        preload = min(start, default_preload(params.context_chars, chars))
        counters = ServedCounters(completer)
        state = {}

        def ready() -> None:  # the prefill is done: count from here, start with the others
            state["before"] = (completer.requests, completer.cancelled, completer.failed)
            go.wait()

        try:
            records, _cancelled, _stale, _cut = replay_text(
                completer, counters, config, text, start, chars, preload, idle_timeout_s=idle_timeout_s,
                key_interval_ms=key_interval_ms, ready=ready)
            typist.records = records
        except BaseException as e:  # reported by run_typists, on its own thread
            typist.error = e
            go.abort()
        finally:
            r0, c0, f0 = state.get("before", (0, 0, 0))
            typist.requests = completer.requests - r0
            typist.cancelled = completer.cancelled - c0
            typist.failed = completer.failed - f0

    threads = [threading.Thread(target=type_one, args=(i,), name=f"ghosttype-typist-{i}", daemon=True)
               for i in range(n)]
    for t in threads:
        t.start()
    try:
        try:
            go.wait(timeout=idle_timeout_s)
        except threading.BrokenBarrierError:
            pass  # a typist failed: its error is raised below
        t0 = time.perf_counter()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - t0
    finally:
        for c in completers:
            c.close()
    for typist in typists:
        if typist.error is not None:
            raise typist.error
    return _pooled(typists, seconds)


def _pooled(typists: Sequence[_Typist], seconds: float) -> TypistsResult:
    records: list[KeyRecord] = [r for t in typists for r in t.records]
    summary = summarize_replay(records)
    model = summary.model_keys
    requests = sum(t.requests for t in typists)
    cancelled = sum(t.cancelled for t in typists)
    failed = sum(t.failed for t in typists)
    served = requests - cancelled - failed
    alone = [summarize_replay(t.records) for t in typists]
    per = tuple((s.p50_ms, s.p95_ms, t.requests - t.cancelled - t.failed) for s, t in zip(alone, typists))
    return TypistsResult(
        typists=len(typists), keys=summary.keys, model_keys=model,
        shown=(sum(1 for r in records if not r.typed_through and r.first_ms is not None) / model) if model else 0.0,
        p50_ms=summary.p50_ms, p95_ms=summary.p95_ms, p50_final_ms=summary.p50_final_ms,
        p95_final_ms=summary.p95_final_ms, requests=requests, served=served, cancelled=cancelled, failed=failed,
        seconds=seconds, served_per_s=served / seconds if seconds > 0 else 0.0,
        per_typist=per,
    )


def typists_table(result: TypistsResult) -> str:
    from daemon.evaluation.report import fmt_num

    header = ("typists", "keys", "model keys", "ghost shown", "first ghost p50/p95 ms", "final p50/p95 ms",
              "requests", "served", "cancelled", "failed", "served/s")
    row = (str(result.typists), str(result.keys), str(result.model_keys), f"{100 * result.shown:.0f}%",
           f"{fmt_num(result.p50_ms, 1)} / {fmt_num(result.p95_ms, 1)}",
           f"{fmt_num(result.p50_final_ms, 1)} / {fmt_num(result.p95_final_ms, 1)}",
           str(result.requests), str(result.served), str(result.cancelled), str(result.failed),
           fmt_num(result.served_per_s, 1))
    widths = [max(len(h), len(c)) for h, c in zip(header, row)]
    return "\n".join(["  ".join(h.ljust(w) for h, w in zip(header, widths)),
                      "  ".join("-" * w for w in widths),
                      "  ".join(c.ljust(w) for c, w in zip(row, widths))])


__all__ = ["TypistsResult", "run_typists", "typists_table"]
