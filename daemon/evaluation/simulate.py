"""A simulated user: how many keystrokes ghosttype saves, and how many wrong
suggestions it puts in front of the user (``ghosttype eval --simulate-user``).

It is a model of a user, not a user.  The user types a text through the real
:class:`~daemon.controller.Controller`, :class:`~daemon.worker.SuggestionWorker`
and decoder, one keystroke every ``key_interval_ms`` whatever the daemon is
doing (or, with an interval of 0, an infinitely patient user who waits for the
daemon to go idle before every keystroke).  Just before each keystroke the
user looks at the visible suggestion (the ghost) and

1. if the whole ghost is exactly what they were about to type, presses the
   accept key: one keystroke inserts all of it;
2. otherwise, if the ghost's next word (what the accept-word key inserts, at
   least 2 characters) is what they were about to type, presses the
   accept-word key;
3. otherwise types the next character (Enter for a newline).

Looking and pressing are one instant (the controller's state cannot change
between them), so the field always ends up holding exactly the text.  A ghost
is *wrong* when its first character is not the one the user types next;
every keystroke made while a wrong ghost was visible counts one wrong ghost
seen.

Figures: keystrokes saved ``1 - keystrokes / characters``, accepts (whole and
word), characters inserted per accept, wrong ghosts seen per 100 keystrokes.
Prose is typed as one paragraph (its whitespace runs become one space); code
keeps its newlines and indentation (tabs expanded to four spaces, since Tab
is the accept key).

With ``--virtual-clock`` the keys are pressed on a clock that the model's
work advances instead of the wall clock (:mod:`daemon.evaluation.vclock`):
the same command gives the same figures every run.

Two baselines run through the same path: naive decoding, and
:class:`FieldWordCompleter`, an editor's word completion with no model.

Typed text stays in memory; nothing is logged.
"""

from __future__ import annotations

import collections
import re
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional, Sequence

from daemon.cpc.suggestion import BeamParams, Suggestion

_WORD_AT_END = re.compile(r"\w+\Z")
_WORDS = re.compile(r"\w+")
#: File endings typed as code (newlines and indentation kept).
CODE_SUFFIXES = (".py", ".c", ".h", ".cc", ".cpp", ".rs", ".go", ".js", ".ts", ".java", ".rb", ".sh", ".lua")
#: Shortest next word the user accepts with the accept-word key.
MIN_WORD_ACCEPT = 2


def as_typed(text: str, kind: str) -> str:
    """The text as the simulated user types it: ``prose`` as one paragraph,
    ``code`` with its lines (tabs expanded, since Tab accepts)."""
    if kind == "prose":
        return " ".join(text.split())
    return text.replace("\r\n", "\n").expandtabs(4)


def kind_of(file_name: str) -> str:
    return "code" if file_name.endswith(CODE_SUFFIXES) else "prose"


class FieldWordCompleter:
    """The no-model baseline: an editor's word completion.  After at least
    one character of a word, it suggests the rest of the most frequent
    earlier word of the field that extends what was typed (the most recent
    one among equally frequent words)."""

    def complete(self, text: str, params: BeamParams, cancel: Any = None,
                 on_partial: Optional[Callable[[Suggestion], None]] = None) -> Suggestion:
        m = _WORD_AT_END.search(text)
        if m is None:
            return Suggestion("", 0.0)
        prefix = m.group(0)
        counts: collections.Counter[str] = collections.Counter()
        last_seen: dict[str, int] = {}
        for i, w in enumerate(_WORDS.finditer(text, 0, m.start())):
            word = w.group(0)
            if len(word) > len(prefix) and word.startswith(prefix):
                counts[word] += 1
                last_seen[word] = i
        if not counts:
            return Suggestion("", 0.0)
        best = max(counts, key=lambda w: (counts[w], last_seen[w]))
        return Suggestion(best[len(prefix):], 1.0)

    def prefill(self, text: str, params: BeamParams, cancel: Any = None) -> None:
        pass


class SimulatedField:
    """The application's text field: what the user types and what an accept
    key inserts land here (the simulated user asks the controller what an
    accept key inserts, as a frontend does)."""

    def __init__(self, initial: str = "") -> None:
        self.parts: list[str] = [initial]

    def type_text(self, text: str) -> None:
        self.parts.append(text)

    @property
    def text(self) -> str:
        return "".join(self.parts)


@dataclass
class UserRun:
    """What one simulated user did with one text and one suggester."""

    name: str
    chars: int = 0  #: characters of the text typed
    keystrokes: int = 0
    accepts: int = 0  #: whole-suggestion accepts
    word_accepts: int = 0
    accepted_chars: int = 0  #: characters inserted by accepts of either kind
    wrong_ghosts: int = 0  #: keystrokes made while a wrong ghost was visible
    late_keys: int = 0  #: keystrokes pressed later than due (the machine could not keep the pace)
    seconds: float = 0.0

    @property
    def saved(self) -> float:
        return 1.0 - self.keystrokes / self.chars if self.chars else 0.0

    @property
    def chars_per_accept(self) -> float:
        n = self.accepts + self.word_accepts
        return self.accepted_chars / n if n else 0.0

    @property
    def wrong_per_100(self) -> float:
        return 100.0 * self.wrong_ghosts / self.keystrokes if self.keystrokes else 0.0

    def add(self, other: "UserRun") -> None:
        for f in ("chars", "keystrokes", "accepts", "word_accepts", "accepted_chars", "wrong_ghosts", "late_keys"):
            setattr(self, f, getattr(self, f) + getattr(other, f))
        self.seconds += other.seconds

    def to_json(self) -> dict:
        return {**asdict(self), "saved": self.saved, "chars_per_accept": self.chars_per_accept,
                "wrong_per_100": self.wrong_per_100}


def simulate_user(
    completer: Any,
    config: Any,
    text: str,
    start: int = 0,
    key_interval_ms: float = 100.0,
    name: str = "",
    idle_timeout_s: float = 600.0,
    on_key: Optional[Callable[[int, int], None]] = None,
    clock: Any = None,
    memory: Any = None,
) -> UserRun:
    """Type ``text[start:]`` as the simulated user (see the module docstring)
    into a field that already holds ``text[:start]``, through a fresh
    Controller and SuggestionWorker over ``completer`` with ``config``.
    ``key_interval_ms = 0``: wait for the worker to go idle before each
    keystroke.  ``on_key(done, total)`` reports progress in characters.
    ``clock``: a :class:`~daemon.evaluation.vclock.VirtualClock` the
    completer's model charges its work to; the keys are pressed on it
    instead of the wall clock (:mod:`daemon.evaluation.vclock`).  ``memory``:
    the controller learns what is typed into it, as the daemon's does with
    ``learn`` on (:mod:`daemon.memory.learner`)."""
    from daemon.controller import Controller, next_word
    from daemon.evaluation.replay import RecordingSink, key_event
    from daemon.backends.llamacpp.threads import MachineBusy
    from daemon.controller.ports import FocusState
    from daemon.worker import SuggestionWorker

    field_ = SimulatedField(text[:start])
    controller = Controller(config, RecordingSink())
    worker = SuggestionWorker(completer, on_result=controller.on_result, debounce_ms=config.debounce_ms,
                              busy=MachineBusy() if clock is None else None)
    controller.attach_worker(worker)
    if memory is not None:
        controller.set_memory(memory)
    worker.start()
    run = UserRun(name=name, chars=len(text) - start)
    # The user's look and press happen under the controller's lock: the
    # worker thread cannot change the ghost between them.
    lock: threading.RLock = controller._lock  # noqa: SLF001  (the simulated user sits inside the daemon)
    try:
        controller.on_focus(FocusState(window_id=1, text_before_caret=text[max(0, start - config.buffer_chars):start]))
        if not worker.wait_idle(idle_timeout_s):
            raise TimeoutError("the worker did not finish prefilling the text before the caret")
        interval = max(0.0, key_interval_ms) / 1000.0
        pos = start
        t0 = time.perf_counter()
        v0 = clock.now if clock is not None else 0.0
        while pos < len(text):
            if clock is not None:
                due_ms = v0 + run.keystrokes * key_interval_ms
                clock.run_until(due_ms, lambda: worker.wait_idle(0))
                clock.pressed(due_ms, config.debounce_ms)  # the worker is held or idle: nothing runs before the key
            elif interval:
                due = t0 + run.keystrokes * interval
                delay = due - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
                elif delay < -interval:
                    run.late_keys += 1
            elif not worker.wait_idle(idle_timeout_s):
                raise TimeoutError("the worker did not answer a keystroke in time")
            with lock:
                ghost = controller.visible
                upcoming = text[pos:pos + max(1, len(ghost))]
                if ghost and ghost[0] != upcoming[0]:
                    run.wrong_ghosts += 1
                word = next_word(ghost) if ghost else ""
                if ghost and upcoming == ghost:
                    piece, spec = ghost, config.accept_key
                    run.accepts += 1
                elif len(word) >= MIN_WORD_ACCEPT and text.startswith(word, pos):
                    piece, spec = word, config.accept_word_key
                    run.word_accepts += 1
                else:
                    piece, spec = text[pos], ""
                run.keystrokes += 1
                if spec:
                    run.accepted_chars += len(piece)
                    inserted = controller.accept(spec)  # the frontend's question, then its insertion
                    if inserted != piece:
                        raise RuntimeError(f"{spec} inserted {len(inserted or '')} characters where the "
                                           f"simulated user read {len(piece)}")
                    field_.type_text(inserted)
                    controller.inserted(True)
                else:
                    field_.type_text(piece)  # the application inserts the typed character
                    controller.on_key(key_event(piece))
            pos += len(piece)
            if on_key is not None:
                on_key(pos - start, run.chars)
        run.seconds = time.perf_counter() - t0
    finally:
        if clock is not None:
            clock.release()
        worker.stop()
        controller.close()
    if field_.text != text:
        raise AssertionError("the simulated field does not hold the text the user typed")
    return run


@dataclass
class SimulationReport:
    """Every run of ``--simulate-user``: per file and suggester, and pooled."""

    runs: list[tuple[str, UserRun]] = field(default_factory=list)  #: (file, run)

    def pooled(self) -> dict[str, UserRun]:
        out: dict[str, UserRun] = {}
        for _file, r in self.runs:
            out.setdefault(r.name, UserRun(name=r.name)).add(r)
        return out


def user_table(runs: Sequence[UserRun]) -> str:
    header = ("suggester", "chars", "keystrokes", "saved", "accepts", "word accepts", "chars/accept",
              "wrong ghosts /100 keys", "late keys")
    rows = [(r.name, str(r.chars), str(r.keystrokes), f"{100 * r.saved:.1f}%", str(r.accepts), str(r.word_accepts),
             f"{r.chars_per_accept:.1f}", f"{r.wrong_per_100:.1f}", str(r.late_keys)) for r in runs]
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


def _routed(decoder: Any) -> Optional[tuple[int, int]]:
    """(requests to the code model, all requests) of a :class:`~daemon.code_route.CodeRoute`, else None."""
    if not hasattr(decoder, "code_requests"):
        return None
    return decoder.code_requests, decoder.code_requests + decoder.main_requests


def _with_memory(lm: Any, memory: Any, cache_params: Any, background: bool = True) -> Any:
    """``lm`` as the daemon wires it with a memory, its index built before typing starts (``background``
    False: rebuilt on the worker's thread when the memory changes, for the virtual clock's same figures)."""
    if memory is None:
        return lm
    from daemon.memory.cache_lm import CacheParams, MemoryLM

    wrapped = MemoryLM(lm, memory, cache_params or CacheParams(), background=background)
    wrapped.refresh()
    return wrapped


def simulate_files(
    model_name: str,
    model_path: str,
    files: Sequence[tuple[str, str]],
    params: BeamParams,
    chars: int,
    seed: int,
    key_interval_ms: float,
    out: Callable[[str], None] = print,
    baselines: bool = True,
    served: Any = None,
    code_model: Optional[tuple[str, str]] = None,
    wrap: Optional[Callable[[str, Any], Any]] = None,
    memory: Any = None,
    cache_params: Any = None,
    history_params: Any = None,
    empty_field: bool = False,
    learn_typed: bool = False,
    virtual_clock: bool = False,
) -> dict:
    """Run the simulated user on every file with the configured suggester and,
    with ``baselines``, naive decoding and the field's own words; print a
    table per file and the pooled one; return the JSON object of
    ``--simulate-user --json``.  ``served``: a served model's completer
    instead of loading ``model_path``; ``code_model``: (name, path) of a
    model for the windows that look like code (:mod:`daemon.code_route`);
    ``wrap(file_name, decoder)``: the completer the configured suggester
    uses on that file instead of the decoder (a research candidate's
    wrapper, see tests/research/); ``memory``: a
    :class:`~daemon.memory.store.Memory` mixed into each local model's
    probabilities as the daemon does with ``learn`` on
    (``Decoder(MemoryLM(model, memory))``, :mod:`daemon.memory.cache_lm`),
    with history completion where ``history_params`` are given
    (:mod:`daemon.memory.history`); ``learn_typed``: the configured suggester's controller learns into
    ``memory`` what the simulated user types, file after file, as the daemon does (its index rebuilt on the
    worker's thread with the virtual clock, where it costs nothing; the daemon rebuilds it on a thread of its
    own, about 40 ms for a full memory); ``empty_field``: the same spans typed into an empty field (nothing of
    the text before them); ``virtual_clock``: keys pressed on a virtual
    clock that the model's work advances (:mod:`daemon.evaluation.vclock`;
    its cost model is SmolLM2's on this project's machine)."""
    from daemon.backends.llamacpp.open import load_lm
    from daemon.cpc.beam import Decoder
    from daemon.evaluation.progress import terminal_progress
    from daemon.evaluation.replay import choose_start, session_config, strategy_name
    from daemon.evaluation.vclock import SMOLLM2_COSTS, TimedLM, VirtualClock
    from daemon.memory.history import with_history

    main_name = strategy_name(params.strategy, params.beam_width)
    models = f"{model_name}, code_model={code_model[0]}" if code_model else model_name
    suggesters = [(main_name, params.strategy)]
    if baselines:
        suggesters += [("naive", "naive"), ("field words", "")]
    report = SimulationReport()
    n_seq_max = max(8, 2 * params.beam_width + 2)
    lm = load_lm(model_path, n_seq_max=n_seq_max) if served is None else served
    code_lm = None
    clock = VirtualClock() if virtual_clock else None

    def timed(model: Any) -> Any:
        return model if clock is None else TimedLM(model, clock, SMOLLM2_COSTS)

    try:
        decoder = served
        if served is None:
            lm.warm_up()
            background = not virtual_clock
            decoder = with_history(Decoder(timed(_with_memory(lm, memory, cache_params, background))), memory,
                                   history_params)
            if code_model is not None:
                from daemon.code_route import CodeRoute

                code_lm = load_lm(code_model[1], n_seq_max=n_seq_max)
                code_lm.warm_up()
                code = Decoder(timed(_with_memory(code_lm, memory, cache_params, background)))
                decoder = CodeRoute(decoder, with_history(code, memory, history_params))
        for file_name, raw in files:
            kind = kind_of(file_name)
            text = as_typed(raw, kind)
            start = choose_start(text, chars, params.context_chars, seed)
            end = min(len(text), start + chars)
            offset = start
            if empty_field:
                text, start, end = text[start:end], 0, end - start
            runs = []
            for name, strategy in suggesters:
                if served is None:
                    lm.clear_cache()
                    if code_lm is not None:
                        code_lm.clear_cache()
                config = session_config(params, strategy or "cpc", debounce_ms=None)
                completer = decoder if strategy else FieldWordCompleter()
                if wrap is not None and name == main_name:
                    completer = wrap(file_name, decoder)
                routed = _routed(decoder)
                run = simulate_user(completer, config, text[:end], start, key_interval_ms, name=name,
                                    on_key=terminal_progress(f"{file_name} [{name}]"), clock=clock,
                                    memory=memory if learn_typed and name == main_name else None)
                if strategy and routed is not None:
                    code, total = (a - b for a, b in zip(_routed(decoder), routed))
                    out(f"{file_name} [{name}]: {code} of {total} requests to the code model {code_model[0]}")
                runs.append(run)
                report.runs.append((file_name, run))
            pace = f"one key every {key_interval_ms:g} ms" if key_interval_ms else "waiting for the daemon before each key"
            pace += " (virtual clock)" if clock is not None else ""
            field_note = "  into an empty field" if empty_field else ""
            out(f"\n{file_name}  ({kind})  model={models}  {end - start} chars from offset {offset} (seed {seed}){field_note}  "
                f"{pace}  threshold={params.confidence_threshold:g}")
            out(user_table(runs))
    finally:
        lm.close()
        if code_lm is not None:
            code_lm.close()
    pooled = report.pooled()
    if len(files) > 1:
        out(f"\nall files  model={models}")
        out(user_table(list(pooled.values())))
    return {
        "settings": {"model": model_name, "code_model": code_model[0] if code_model else "", "chars": chars,
                     "seed": seed, "key_interval_ms": key_interval_ms, "empty_field": empty_field,
                     "learn_typed": learn_typed,
                     "virtual_clock": asdict(SMOLLM2_COSTS) if clock is not None else None,
                     "strategy": main_name, "confidence_threshold": params.confidence_threshold,
                     "max_tokens": params.max_tokens, "context_chars": params.context_chars},
        "runs": [{"file": f, **r.to_json()} for f, r in report.runs],
        "pooled": {n: r.to_json() for n, r in pooled.items()},
    }
