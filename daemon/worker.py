"""The suggestion worker: one thread that owns the decoder (and so the model).

llama.cpp contexts are not thread-safe and decoding is the slow part, so all
model work happens on this one thread, one request at a time.  Requests
arrive on other threads (the keyboard listener, through the controller);
only the newest matters:

* ``submit`` replaces any request still waiting (newest wins), and the
  request being decoded sees its cancel check turn true at the next decode
  step (the decoder raises :class:`~daemon.cpc.lm.Cancelled` and leaves the
  model's cache consistent);
* a completion waits ``debounce_ms`` after its submission before it starts, so
  a burst of keystrokes costs one decode, not one per key;
* ``prefill`` (focus moved to a field whose text we know) warms the model's
  cache with that text at once; any completion supersedes it;
* background warm-up: when the decoder answered from the window near the
  caret because the full context was not cached yet
  (:mod:`daemon.cpc.progressive`), the worker prefills the full window in
  short chunks whenever no request is waiting or running.  A new request
  cancels the chunk in progress at its next decode step; what was decoded
  stays cached and the warm-up resumes when the worker is idle again.

On a busy machine (``busy()`` true: other programs keep the CPU occupied)
every decode step is slower and competes with the user's own work, so a
completion finishes within ``finish_within_ms`` of its keystroke: once that
much time has passed and the suggestion streamed so far ends at least one
word, the rest of the continuation is not generated and what was streamed,
up to the end of its last whole word, becomes the final result (counted in
``stats.cut_short``).  On an idle machine (or without ``busy``) a
completion runs to its end; a newer keystroke cancels it either way.

Results, partial and final, go to ``on_result(request_id, suggestion, final)``
on this thread.  A decoder exception is logged without its message (it might
quote typed text) and the worker carries on.  The decoder may be given ready
made or as a factory that runs on this thread (loading a model takes seconds;
``on_status`` reports ``loading`` / ``ready`` / ``error``).
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Callable, Optional

from daemon import timeslice
from daemon.cpc.lm import Cancelled
from daemon.cpc.suggestion import BeamParams, Completer, Suggestion

log = logging.getLogger(__name__)

ResultCallback = Callable[[int, Suggestion, bool], None]
StatusCallback = Callable[[str, str], None]

#: Default time budget from a keystroke to its final suggestion.
FINISH_WITHIN_MS = 150.0
_WORD_END = re.compile(r"\w(?=\W)")


def whole_words(text: str) -> str:
    """``text`` up to the end of its last word that something else follows
    ("" when no word is known to be finished)."""
    last = None
    for last in _WORD_END.finditer(text):
        pass
    return text[: last.end()] if last is not None else ""


@dataclass(frozen=True)
class _Job:
    seq: int
    kind: str  # "complete" | "prefill" | "warm"
    request_id: int
    text: str
    params: Optional[BeamParams]
    submitted: float

    def __repr__(self) -> str:  # never show the text
        return f"_Job({self.kind}, id={self.request_id}, chars={len(self.text)})"


@dataclass
class WorkerStats:
    submitted: int = 0
    completed: int = 0  #: final results delivered
    cancelled: int = 0  #: started, then superseded
    superseded: int = 0  #: replaced before they started
    prefills: int = 0
    warm_steps: int = 0  #: background warm-up chunks decoded
    cut_short: int = 0  #: completions ended at ``finish_within_ms`` with what was streamed
    errors: int = 0


def describe_exception(exc: BaseException) -> str:
    """Exception type and where it was raised, without its message (which
    might quote the text being completed)."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" at {tb[-1].filename.rsplit('/', 1)[-1]}:{tb[-1].lineno}" if tb else ""
    return f"{type(exc).__name__}{where}"


class SuggestionWorker:
    """Runs completions on its own thread; see the module docstring.

    Thread-safety: every public method may be called from any thread.  The
    callbacks run on the worker thread and must not block for long.
    """

    def __init__(
        self,
        decoder: Optional[Completer] = None,
        *,
        decoder_factory: Optional[Callable[[], Completer]] = None,
        on_result: ResultCallback,
        on_status: Optional[StatusCallback] = None,
        debounce_ms: float = 15.0,
        finish_within_ms: float = FINISH_WITHIN_MS,
        busy: Optional[Callable[[], bool]] = None,
        name: str = "ghosttype-worker",
    ) -> None:
        if (decoder is None) == (decoder_factory is None):
            raise ValueError("give exactly one of decoder and decoder_factory")
        self._decoder = decoder
        self._factory = decoder_factory
        self._on_result = on_result
        self._on_status = on_status
        self._debounce_s = max(0.0, float(debounce_ms)) / 1000.0
        self._finish_within_s = max(0.0, float(finish_within_ms)) / 1000.0
        self._busy_machine = busy
        self._cond = threading.Condition()
        self._job: Optional[_Job] = None
        self._seq = 0  # sequence number of the newest job; running jobs compare against it
        self._busy = False
        self._warming = False  #: the decoder has background warm-up left (worker thread writes)
        self._loading = decoder is None
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.stats = WorkerStats()
        self.load_error: Optional[str] = None

    # ------------------------------------------------------------------ control

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> bool:
        """Cancel everything and end the thread; True if it ended within
        ``timeout`` seconds (a decode step in progress finishes first)."""
        with self._cond:
            self._stopping = True
            self._seq += 1
            self._job = None
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    @property
    def ready(self) -> bool:
        """The decoder exists (loaded without error)."""
        return self._decoder is not None

    def set_debounce(self, debounce_ms: float) -> None:
        with self._cond:
            self._debounce_s = max(0.0, float(debounce_ms)) / 1000.0
            self._cond.notify_all()

    # ------------------------------------------------------------------ requests

    def submit(self, request_id: int, text: str, params: BeamParams) -> None:
        """Ask for a completion of ``text``; supersedes every earlier request."""
        self._post("complete", request_id, text, params)

    def prefill(self, text: str, params: BeamParams) -> None:
        """Warm the model's cache with ``text`` (no result); superseded by any
        later request."""
        self._post("prefill", -1, text, params)

    def cancel(self) -> None:
        """Drop the waiting request and cancel the running one."""
        with self._cond:
            self._seq += 1
            if self._job is not None:
                self.stats.superseded += 1
            self._job = None
            self._cond.notify_all()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Block until nothing is waiting or running, background warm-up
        included (and the decoder has loaded or failed); False on timeout.
        For tests and benchmarks."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._job is not None or self._busy or self._loading or self._warming:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._thread.is_alive():
                    return False
                self._cond.wait(remaining)
            return True

    def _post(self, kind: str, request_id: int, text: str, params: BeamParams) -> None:
        with self._cond:
            if self._stopping:
                return
            self._seq += 1
            if self._job is not None:
                self.stats.superseded += 1
            self._job = _Job(self._seq, kind, request_id, text, params, time.monotonic())
            self.stats.submitted += 1
            self._cond.notify_all()

    # ------------------------------------------------------------------ the thread

    def _run(self) -> None:
        # Before the model starts its threads from this one: they inherit it,
        # and whatever handles a key takes a core from them at once.
        timeslice.request(timeslice.MODEL)
        if self._decoder is None:
            self._load()
        while True:
            job = self._next_job()
            if job is None:
                self._close_decoder()
                return
            ok = False
            try:
                ok = self._execute(job)
            finally:
                # A failing warm-up is not retried until the next request.
                warming = (ok or job.kind != "warm") and bool(getattr(self._decoder, "warming", False))
                with self._cond:
                    self._busy = False
                    self._warming = warming
                    self._cond.notify_all()

    def _close_decoder(self) -> None:
        """A decoder with a ``close`` (a served route: its connection and
        threads) is closed when the worker stops, on this thread."""
        close = getattr(self._decoder, "close", None)
        if close is not None:
            try:
                close()
            except Exception as e:
                log.error("closing the decoder failed: %s", describe_exception(e))

    def _load(self) -> None:
        self._status("loading", "")
        try:
            assert self._factory is not None
            self._decoder = self._factory()
        except Exception as e:  # the daemon keeps running, disabled, and says why
            self.load_error = (str(e).splitlines() or [type(e).__name__])[0]
            log.error("model failed to load: %s", self.load_error)
            self._status("error", self.load_error)
        else:
            announce = getattr(self._decoder, "announce", None)  # a route says where suggestions come from
            if announce is not None:
                announce()
            else:
                self._status("ready", "")
        finally:
            with self._cond:
                self._loading = False
                self._cond.notify_all()

    def _next_job(self) -> Optional[_Job]:
        """Wait for a job and its debounce; None when stopping."""
        with self._cond:
            while True:
                if self._job is None and self._warming and not self._stopping:
                    self._busy = True
                    return _Job(self._seq, "warm", -1, "", None, time.monotonic())
                while self._job is None and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return None
                job = self._job
                assert job is not None
                if job.kind == "complete":
                    remaining = job.submitted + self._debounce_s - time.monotonic()
                    if remaining > 0:
                        self._cond.wait(remaining)
                        continue  # re-check: a newer job or stop may have arrived
                self._job = None
                self._busy = True
                return job

    def _execute(self, job: _Job) -> bool:
        """Run one job; False when the decoder raised an error."""
        decoder = self._decoder
        if decoder is None:  # the model failed to load: nothing to do
            return True

        def cancel() -> bool:
            return self._seq != job.seq

        try:
            if job.kind == "warm":
                if decoder.warm_step(cancel):  # type: ignore[attr-defined]
                    self.stats.warm_steps += 1
                return True
            if job.kind == "prefill":
                decoder.prefill(job.text, job.params, cancel)
                self.stats.prefills += 1
                return True

            streamed: list[Suggestion] = []

            def partial(s: Suggestion) -> None:
                if not cancel():
                    streamed[:] = [s]
                    self._deliver(job.request_id, s, False)

            def enough() -> bool:
                """Stale, or out of time on a busy machine with a whole word already shown."""
                if cancel():
                    return True
                return (
                    self._busy_machine is not None
                    and time.monotonic() - job.submitted > self._finish_within_s
                    and bool(streamed)
                    and bool(whole_words(streamed[0].visible))
                    and self._busy_machine()
                )

            try:
                result = decoder.complete(job.text, job.params, enough, partial)
            except Cancelled:
                if cancel() or not streamed:
                    raise
                # Out of time: the whole words the user already sees are final.
                result = dataclasses.replace(streamed[0], text=whole_words(streamed[0].visible))
                self.stats.cut_short += 1
            if cancel():
                self.stats.cancelled += 1
                return True
            self.stats.completed += 1
            self._deliver(job.request_id, result, True)
        except Cancelled:
            if job.kind != "warm":  # background work yielding to a request is not a cancelled request
                self.stats.cancelled += 1
        except Exception as e:
            self.stats.errors += 1
            log.error("decoder failed on a %d-character %s job: %s", len(job.text), job.kind, describe_exception(e))
            return False
        return True

    def _deliver(self, request_id: int, s: Suggestion, final: bool) -> None:
        try:
            self._on_result(request_id, s, final)
        except Exception as e:
            log.error("result handler failed: %s", describe_exception(e))

    def _status(self, state: str, message: str) -> None:
        if self._on_status is None:
            return
        try:
            self._on_status(state, message)
        except Exception as e:
            log.error("status handler failed: %s", describe_exception(e))

    def __repr__(self) -> str:
        return f"SuggestionWorker(ready={self.ready}, stats={self.stats})"


__all__ = ["SuggestionWorker", "WorkerStats", "describe_exception"]
