"""Cold start: the first suggestion in a field that already holds text.

For each seeded offset the model is loaded but holds nothing of the text (its
cache is cleared), and a fresh :class:`daemon.controller.Controller` and
:class:`daemon.worker.SuggestionWorker` (no debounce) receive, at the same
instant, the focus of a field whose text before the caret is the
``context_chars`` characters before the offset (as accessibility reports it
on a click) and the key that types the character at the offset: the user
clicks and types at once, the worst case.  Measured from that instant:

first_ms
    to the first suggestion shown (a streamed partial counts);
final_ms
    to the final result of that key's request (shown, or withheld when it was
    empty or below the confidence threshold).

The background warm-up of the full window that follows is not waited for.
Typed text stays in memory; nothing is logged.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from daemon.evaluation.metrics import percentile
from daemon.evaluation.offsets import choose_offsets
from daemon.evaluation.replay import RecordingSink, finite, key_event, key_record


@dataclass(frozen=True)
class ColdStart:
    n: int  #: offsets measured
    shown: int  #: offsets where a suggestion was shown
    p50_ms: float  #: focus+key -> first suggestion shown
    p95_ms: float
    p50_final_ms: float  #: focus+key -> final suggestion
    p95_final_ms: float
    near_window: int  #: requests answered from the window near the caret

    def as_json(self) -> dict:
        """The JSON object of ``--cold-start``; a percentile of nothing
        (no suggestion shown at all) is null."""
        return {"p50_ms": finite(self.p50_ms), "p95_ms": finite(self.p95_ms),
                "p50_final_ms": finite(self.p50_final_ms), "p95_final_ms": finite(self.p95_final_ms),
                "n": self.n, "shown": self.shown, "near_window": self.near_window}


def cold_start_offset(decoder: Any, lm: Any, config: Any, text: str, offset: int,
                      timeout_s: float = 120.0) -> tuple[Optional[float], float, bool]:
    """One cold start at ``offset``: (first_ms, final_ms, answered from the near window)."""
    from daemon.controller import Controller
    from daemon.backends.llamacpp.threads import MachineBusy
    from daemon.controller.ports import FocusState
    from daemon.worker import SuggestionWorker

    lm.clear_cache()
    sink = RecordingSink()
    controller = Controller(config, sink)
    done = threading.Event()
    finished: list[float] = []

    def on_result(request_id: int, suggestion: Any, final: bool) -> None:
        controller.on_result(request_id, suggestion, final)
        if final and not done.is_set():
            finished.append(time.perf_counter())
            done.set()

    worker = SuggestionWorker(decoder, on_result=on_result, debounce_ms=0, busy=MachineBusy())
    controller.attach_worker(worker)
    worker.start()
    try:
        before = text[max(0, offset - 1 - config.context_chars) : offset - 1]
        n_events = len(sink)
        work = lm.stats.snapshot()
        t0 = time.perf_counter()
        controller.on_focus(FocusState(window_id=offset, text_before_caret=before))
        controller.on_key(key_event(text[offset - 1]))
        t_returned = time.perf_counter()
        if not done.wait(timeout_s):
            raise TimeoutError("the worker did not answer a cold request in time")
        events = [e for e in sink.since(n_events) if e[0] >= t0]
        record = key_record(t0, t_returned, events, False, lm.stats.since(work), 0)
        return record.first_ms, (finished[0] - t0) * 1000.0, bool(decoder.used_near_window)
    finally:
        worker.stop()
        controller.close()


def run_cold_start(decoder: Any, lm: Any, config: Any, text: str, n: int, seed: int,
                   progress: Optional[Callable[[int, int], None]] = None) -> ColdStart:
    """Cold starts at ``n`` seeded offsets with at least ``context_chars``
    characters before them (fewer offsets when the text is shorter)."""
    offsets = choose_offsets(text, n, "any", seed, min_offset=min(len(text) - 1, config.context_chars + 1))
    firsts: list[float] = []
    finals: list[float] = []
    near = 0
    for i, offset in enumerate(offsets):
        first, final, used_near = cold_start_offset(decoder, lm, config, text, offset)
        if first is not None:
            firsts.append(first)
        finals.append(final)
        near += used_near
        if progress is not None:
            progress(i + 1, len(offsets))
    return ColdStart(
        n=len(offsets), shown=len(firsts),
        p50_ms=percentile(firsts, 50), p95_ms=percentile(firsts, 95),
        p50_final_ms=percentile(finals, 50), p95_final_ms=percentile(finals, 95),
        near_window=near,
    )
