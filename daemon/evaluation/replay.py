"""Typing replay: keystroke latency and model work through the daemon's own
request path (daemon/evaluation/README.md, "Keystroke latency").

A text is typed one character at a time into a real
:class:`daemon.controller.Controller` driving a real
:class:`daemon.worker.SuggestionWorker` (no debounce) over a real backend; the
UI is a :class:`RecordingSink` that timestamps every ``show``/``hide``.  Before
typing, ``preload`` characters before the start offset are loaded into the
field as if it already held them (a focus event with the field's text, as
accessibility would report it), and the worker prefills them (not measured).
After each key the replay waits until the worker is idle, so every keystroke
is measured alone (a person typing faster would only see more cancellations).
With a typing pace (``key_interval_ms``) keys are pressed on a clock instead,
whatever the daemon is doing, as a person types; latencies then count from
the moment the key was due, and ``stale_shown`` counts suggestions that
appeared after a key was pressed but before the daemon had seen it and that
disagree with it (the text had already moved on when they appeared).
``--load K`` runs either beside ``K`` spinning processes
(:mod:`daemon.evaluation.load`).  Each strategy starts from an empty model
cache.

The headline latency (``p50_ms``/``p95_ms``) is over *model keys*: keys the
controller could not answer by typing through its visible suggestion.
Typed-through keys (latency ~0, no model call) are counted and reported
separately, and included in ``p50_all_ms``/``p95_all_ms``.

Per keystroke it records:

first_ms
    key -> first ``show`` of a non-empty suggestion (a streamed partial counts).
    None when nothing was shown for that key.
final_ms
    key -> the last UI update caused by the key: the show of the final
    suggestion (or the hide when the final answer was empty).
typed_through
    the controller advanced the visible ghost text itself, inside ``on_key``,
    because the typed character was the next one of the suggestion: latency
    ~0 and no model work is needed for the first show.
model_calls, tokens_decoded
    deltas of the backend's ``LMStats`` (``decode_calls``, ``tokens_decoded``).
reeval_tokens, prompt_reeval_tokens
    tokens the backend decoded during this key that it had already decoded
    earlier in the same run (the same token after the same history), and the
    part of them inside the request's prompt (the stable prefix the decoder
    planned; for naive decoding the whole tokenized context).  The backend
    says which part of each sequence it decoded (``LlamaLM.decoded_from``), so
    both counts are exact; the target for prompt tokens on mid-word keys (the
    typed character and the one before it are word characters, so the stable
    prefix does not change) is zero.  Re-decoded tokens outside the prompt are
    beam positions whose cache slot was reused by another beam.

Typed characters stay in memory; nothing is logged.
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np

from daemon.cpc.beam import Decoder
from daemon.cpc.lm import CancelCheck, Cancelled, LMStats, WrappedLM
from daemon.evaluation.load import BusyLoad
from daemon.evaluation.offsets import is_word_char
from daemon.evaluation.progress import terminal_progress
from daemon.evaluation.replay_summary import (  # noqa: F401  (re-exported: the replay's records)
    KeyRecord,
    ReplaySummary,
    key_record,
    stale_shows,
    summarize_replay,
)


class DecodedSet:
    """Every token position decoded so far, as a trie keyed by token history
    (the same token after a different history is a different position)."""

    def __init__(self) -> None:
        self._root: dict[int, dict] = {}

    def record(self, seq: Sequence[int], start: int, prompt_len: int) -> tuple[int, int]:
        """Mark ``seq[start:]`` decoded; return how many of those positions
        were decoded before, and how many of those lie below ``prompt_len``."""
        again = again_prompt = 0
        node = self._root
        for pos, tok in enumerate(seq):
            child = node.get(tok)
            if pos >= start and child is not None:
                again += 1
                again_prompt += pos < prompt_len
            if child is None:
                child = node[tok] = {}
            node = child
        return again, again_prompt

    def clear(self) -> None:
        self._root = {}


class CountingLM(WrappedLM):
    """A transparent ``TokenLM`` wrapper that counts tokens decoded twice.

    Forwards everything to ``inner``, which must say where each call decoded
    (``decoded_from``, see :class:`daemon.backends.llamacpp.llama.LlamaLM`).  ``prompt_len``
    is set by :class:`PlanRecordingDecoder` before each request's model calls.
    A cancelled call is counted in ``cancelled``; what it decoded before the
    cancel stays in the backend's cache and is not counted as decoded here, so
    finishing it later is not counted as a repeat either.
    """

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self._decoded = DecodedSet()
        self._lock = threading.Lock()
        self.reeval_tokens = 0
        self.prompt_reeval_tokens = 0
        self.prompt_len = 0
        self.cancelled = 0

    def logprobs(self, seqs: Sequence[Sequence[int]], cancel: Optional[CancelCheck] = None) -> np.ndarray:
        with self._lock:
            try:
                out = self.inner.logprobs(seqs, cancel)
            except Cancelled:
                self.cancelled += 1
                raise
            for seq, start in self.inner.decoded_from:
                again, again_prompt = self._decoded.record(seq, start, self.prompt_len)
                self.reeval_tokens += again
                self.prompt_reeval_tokens += again_prompt
            return out

    def clear_cache(self) -> None:
        """Clear the backend's cache and forget what was decoded (a new run)."""
        with self._lock:
            self.inner.clear_cache()
            self._decoded.clear()


class ServedCounters:
    """What :func:`replay_text` reads of a ``CountingLM``, for a served model
    (:class:`daemon.backends.served.completer.ServedCompleter`): model calls
    are requests, decoded tokens are the tokens streamed back; what the
    engine re-evaluates of its prompt is not visible from here (0)."""

    reeval_tokens = 0
    prompt_reeval_tokens = 0

    def __init__(self, completer: Any) -> None:
        self.completer = completer

    @property
    def stats(self) -> LMStats:
        return LMStats(decode_calls=self.completer.requests, tokens_decoded=self.completer.tokens)

    @property
    def cancelled(self) -> int:
        return self.completer.cancelled

    def clear_cache(self) -> None:
        """The engine keeps its own prompt cache; nothing to clear here."""

    def close(self) -> None:
        self.completer.close()


class PlanRecordingDecoder(Decoder):
    """The real decoder, telling a :class:`CountingLM` the prompt length of
    each request before the request reaches the model."""

    lm: CountingLM

    def plan(self, text: str, params: Any) -> Any:
        split = super().plan(text, params)
        self.lm.prompt_len = len(split.stable)
        return split


class RecordingSink:
    """A ``UiSink`` that timestamps what the daemon would show (in memory only)."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.events: list[tuple[float, str, str]] = []  #: (time, "show"|"hide", text)
        self._lock = threading.Lock()

    def show(self, text: str, caret: Any = None, look: Any = None, drawn: Any = None) -> None:
        with self._lock:
            self.events.append((self.clock(), "show", text))
        if drawn is not None:
            drawn(text)  # on the screen at once, all of it

    def hide(self) -> None:
        with self._lock:
            self.events.append((self.clock(), "hide", ""))

    def set_status(self, state: str, message: str = "") -> None:
        pass

    def since(self, index: int) -> list[tuple[float, str, str]]:
        with self._lock:
            return list(self.events[index:])

    def __len__(self) -> int:
        with self._lock:
            return len(self.events)


def default_preload(context_chars: int, chars: int) -> int:
    """Characters pre-loaded into the field by default: as many as still let
    the whole typed text fit in the model's context window.

    Once the text before the caret is longer than ``context_chars``, the window
    start moves with every key; the first prompt token changes and the whole
    prompt is decoded again.  ``--preload-chars`` larger than this measures
    that regime on purpose.
    """
    return max(0, context_chars - chars)


def choose_start(text: str, chars: int, context_chars: int, seed: int) -> int:
    """A seeded start offset for typing ``chars`` characters: at a word start
    (after whitespace, so the pre-loaded field ends cleanly), with up to
    ``context_chars`` of text before it when the text is long enough."""
    if len(text) <= chars:
        return 0
    hi = len(text) - chars
    lo = min(context_chars, hi)
    candidates = [i for i in range(lo, hi + 1) if i > 0 and text[i - 1].isspace() and not text[i].isspace()]
    if not candidates:
        return lo
    return random.Random(seed).choice(candidates)


def is_mid_word_key(typed: str, index: int) -> bool:
    """The key at ``typed[index]`` continues a word: it and the character
    before it (typed or pre-loaded) are word characters."""
    return index > 0 and is_word_char(typed[index]) and is_word_char(typed[index - 1])


def key_event(ch: str) -> Any:
    """The key a user presses to type ``ch``."""
    from daemon.capture.events import KeyEvent, Kind

    if ch == "\n":
        return KeyEvent(Kind.ENTER, name="enter")
    if ch == "\t":
        return KeyEvent(Kind.TAB, name="tab")
    return KeyEvent(Kind.CHAR, char=ch)


def replay_text(
    decoder: Any,
    lm: CountingLM,
    config: Any,
    text: str,
    start: int,
    chars: int,
    preload: int,
    idle_timeout_s: float = 600.0,
    key_interval_ms: float = 0.0,
    on_key: Optional[Callable[[int, int], None]] = None,
    ready: Optional[Callable[[], None]] = None,
) -> tuple[list[KeyRecord], int, int, int]:
    """Type ``text[start:start+chars]`` into a fresh Controller + SuggestionWorker
    (``config`` gives the strategy; its debounce should be 0) whose field
    already holds the ``preload`` characters before ``start``: one key at a
    time, each after the worker went idle, or with ``key_interval_ms`` one
    key every that many milliseconds.  Returns one record per key, the number
    of cancelled model calls, of stale suggestions shown and of completions
    cut short at the worker's time budget.  ``on_key(done, total)`` is called
    after each key's record (progress display); ``ready()`` once the
    pre-loaded text is prefilled, before the first key."""
    from daemon.controller import Controller
    from daemon.controller.ports import FocusState
    from daemon.backends.llamacpp.threads import MachineBusy
    from daemon.worker import SuggestionWorker

    sink = RecordingSink()
    controller = Controller(config, sink)
    worker = SuggestionWorker(decoder, on_result=controller.on_result, debounce_ms=0, busy=MachineBusy())
    controller.attach_worker(worker)
    worker.start()
    cancelled_before = lm.cancelled
    records: list[KeyRecord] = []
    try:
        field_text = text[max(0, start - min(preload, config.buffer_chars)) : start]
        controller.on_focus(FocusState(window_id=1, text_before_caret=field_text))
        if not worker.wait_idle(idle_timeout_s):
            raise TimeoutError("the worker did not finish prefilling the pre-loaded text")
        if ready is not None:
            ready()
        interval = max(0.0, key_interval_ms) / 1000.0
        presses: list[tuple[float, float, str]] = []
        first_event = len(sink)
        t_start = time.perf_counter()
        keys = range(start, min(len(text), start + chars))
        pending: Optional[tuple] = None  # paced mode: the key whose events are still coming

        def close(key: tuple, until: Optional[float]) -> None:
            i, t_due, t_seen, t_returned, n_events, before, reeval, prompt_reeval = key
            events = [e for e in sink.since(n_events) if until is None or e[0] < until]
            records.append(key_record(
                t_due, t_returned, events, is_mid_word_key(text, i), lm.stats.since(before),
                lm.reeval_tokens - reeval, lm.prompt_reeval_tokens - prompt_reeval,
            ))
            if on_key is not None:
                on_key(len(records), len(keys))

        for n, i in enumerate(keys):
            if interval:
                t_due = t_start + n * interval
                delay = t_due - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
            n_events = len(sink)
            before = lm.stats.snapshot()
            reeval_before, prompt_reeval_before = lm.reeval_tokens, lm.prompt_reeval_tokens
            t_seen = time.perf_counter()
            if not interval:
                t_due = t_seen
            if pending is not None:
                close(pending, t_seen)
            controller.on_key(key_event(text[i]))
            t_returned = time.perf_counter()
            presses.append((t_due, t_seen, text[i]))
            pending = (i, t_due, t_seen, t_returned, n_events, before, reeval_before, prompt_reeval_before)
            if not interval:
                if not worker.wait_idle(idle_timeout_s):
                    raise TimeoutError("the worker did not answer a keystroke in time")
                close(pending, None)
                pending = None
        if pending is not None:
            if not worker.wait_idle(idle_timeout_s):
                raise TimeoutError("the worker did not answer a keystroke in time")
            close(pending, None)
        stale = stale_shows(sink.since(first_event), presses)
    finally:
        worker.stop()
        controller.close()
    return records, lm.cancelled - cancelled_before, stale, worker.stats.cut_short


def session_config(params: Any, strategy: Optional[str] = None, debounce_ms: Optional[int] = 0) -> Any:
    """The daemon's configuration for a benchmark session with ``params``'s
    knobs (``strategy`` overrides its strategy) and no debounce (``None``:
    the product's default debounce)."""
    from daemon.config import Config, ConfigError
    from daemon.usage import UsageError

    try:
        return Config().with_params(params).with_overrides(strategy=strategy, debounce_ms=debounce_ms)
    except ConfigError as exc:
        raise UsageError(str(exc).splitlines()[0]) from None


def strategy_name(strategy: str, beam_width: int) -> str:
    """The benchmark's name for a strategy: naive, heal or cpcK."""
    return f"cpc{beam_width}" if strategy == "cpc" else strategy


def replay_files(
    model_name: str,
    model_path: str,
    files: Sequence[tuple[str, str]],
    params: Any,
    chars: int,
    seed: int,
    preload_chars: Optional[int] = None,
    out: Callable[[str], None] = print,
    load: int = 0,
    key_interval_ms: float = 0.0,
    batch_threads: Optional[int] = None,
    served: Any = None,
) -> dict:
    """Replay every file with ``params``'s strategy and with naive decoding
    (same model load, cache cleared before each run), print a table per file,
    and return the JSON object of ``--replay --json``.  ``served``: a served
    model's completer instead of loading ``model_path``."""
    from daemon.backends.llamacpp.open import load_lm
    from daemon.evaluation.report import fmt_num, replay_table

    runs = [(strategy_name(params.strategy, params.beam_width), params.strategy)]
    if params.strategy != "naive":
        runs.append(("naive", "naive"))
    configs = {name: session_config(params, strategy) for name, strategy in runs}
    lm: Any = ServedCounters(served) if served is not None else \
        CountingLM(load_lm(model_path, n_seq_max=max(8, params.beam_width + 1), batch_threads=batch_threads))
    results: list[dict] = []
    try:
        decoder = served if served is not None else PlanRecordingDecoder(lm)
        for file_name, text in files:
            start = choose_start(text, chars, params.context_chars, seed)
            preload = min(start, default_preload(params.context_chars, chars) if preload_chars is None else preload_chars)
            summaries: dict[str, ReplaySummary] = {}
            for name, _ in runs:
                lm.clear_cache()
                with BusyLoad(load):
                    records, cancelled, stale, cut = replay_text(
                        decoder, lm, configs[name], text, start, chars, preload, key_interval_ms=key_interval_ms,
                        on_key=terminal_progress(f"{file_name} [{name}]"))
                summaries[name] = summarize_replay(records, cancelled, stale, cut)
            first, *others = runs
            ratio = summaries[first[0]].p50_ms / summaries["naive"].p50_ms if others else 1.0
            out(
                f"\n{file_name}  model={model_name}  {summaries[first[0]].keys} keys typed from offset "
                f"{start} (seed {seed}) after {preload} pre-loaded chars  context={params.context_chars} chars  "
                f"max_tokens={params.max_tokens}  load={load}"
                + (f"  one key every {key_interval_ms:g} ms" if key_interval_ms else "")
            )
            out(replay_table(summaries))
            out(f"p50 ratio {first[0]}/naive (keys needing the model): {fmt_num(ratio)}")
            results.append(
                {
                    "file": file_name,
                    "model": model_name,
                    "start": start,
                    "replay": {n: _summary_json(s) for n, s in summaries.items()},
                    "preload_chars": preload,
                    "ratio_p50": finite(ratio),
                    "load": load,
                    "key_interval_ms": key_interval_ms,
                }
            )
    finally:
        lm.close()
    last = results[-1]
    return {"replay": last["replay"], "ratio_p50": last["ratio_p50"], "load": load,
            "key_interval_ms": key_interval_ms, "runs": results}


def finite(x: float) -> Optional[float]:
    """``x``, or None for NaN and infinities (JSON has neither)."""
    return None if x != x or x in (float("inf"), float("-inf")) else x


def _summary_json(s: ReplaySummary) -> dict:
    import dataclasses

    d = dataclasses.asdict(s)
    return {k: finite(v) if isinstance(v, float) else v for k, v in d.items()}
