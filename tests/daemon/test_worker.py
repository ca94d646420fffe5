from __future__ import annotations

import logging
import threading
import time

import pytest

from daemon.cpc.lm import Cancelled
from daemon.cpc.suggestion import BeamParams
from daemon.worker import SuggestionWorker, whole_words
from tests.daemon.fakes import FakeDecoder

P = BeamParams()


class Results:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[tuple[int, str, bool]] = []

    def __call__(self, rid, s, final) -> None:
        with self.lock:
            self.items.append((rid, s.text, final))

    def finals(self):
        with self.lock:
            return [(r, t) for r, t, f in self.items if f]


@pytest.fixture
def make():
    workers = []

    def _make(decoder=None, **kw):
        res = Results()
        w = SuggestionWorker(decoder, on_result=res, **kw)
        w.start()
        workers.append(w)
        return w, res

    yield _make
    for w in workers:
        assert w.stop(timeout=2.0)


def test_result_and_partial(make):
    dec = FakeDecoder(lambda t: t.upper(), partial=True)
    w, res = make(dec, debounce_ms=0)
    w.submit(1, "abcd", P)
    assert w.wait_idle(5)
    assert res.items == [(1, "AB", False), (1, "ABCD", True)]


def test_newest_wins_and_stale_is_cancelled(make):
    dec = FakeDecoder(lambda t: "<" + t + ">", steps=20, step_s=0.01)
    w, res = make(dec, debounce_ms=30)  # request 2 cannot start before 3 replaces it
    w.submit(1, "one", P)
    deadline = time.monotonic() + 2
    while not dec.started and time.monotonic() < deadline:
        time.sleep(0.001)
    w.submit(2, "two", P)
    w.submit(3, "three", P)  # replaces 2 before it starts
    assert w.wait_idle(5)
    assert res.finals() == [(3, "<three>")]
    assert dec.cancelled == ["one"]
    assert "two" not in dec.started
    assert w.stats.cancelled == 1 and w.stats.superseded >= 1


def test_debounce_coalesces_a_burst(make):
    dec = FakeDecoder(lambda t: t)
    # Each submit restarts the debounce; a whole second between two of these
    # calls would be needed for an early one to start.
    w, res = make(dec, debounce_ms=1000)
    for i, text in enumerate(["a", "ab", "abc", "abcd"], 1):
        w.submit(i, text, P)
    assert w.wait_idle(30)
    assert dec.started == ["abcd"]
    assert res.finals() == [(4, "abcd")]


def test_debounce_delays_start(make):
    dec = FakeDecoder(lambda t: t)
    w, res = make(dec, debounce_ms=100)
    t0 = time.monotonic()
    w.submit(1, "x", P)
    assert w.wait_idle(5)
    assert time.monotonic() - t0 >= 0.095


def test_errors_are_logged_without_text_and_worker_survives(make, caplog):
    dec = FakeDecoder(lambda t: t + "!", fail=lambda t: t == "secret words")
    w, res = make(dec, debounce_ms=0)
    with caplog.at_level(logging.DEBUG):
        w.submit(1, "secret words", P)
        assert w.wait_idle(5)
        w.submit(2, "fine", P)
        assert w.wait_idle(5)
    assert res.finals() == [(2, "fine!")]
    assert w.stats.errors == 1
    assert "RuntimeError" in caplog.text
    assert "secret" not in caplog.text and "exploded" not in caplog.text


def test_cancel_drops_running_work(make):
    dec = FakeDecoder(lambda t: t, steps=50, step_s=0.01)
    w, res = make(dec, debounce_ms=0)
    w.submit(1, "abc", P)
    while not dec.started:
        time.sleep(0.001)
    w.cancel()
    assert w.wait_idle(5)
    assert res.items == [] and dec.cancelled == ["abc"]


def test_prefill_warms_the_decoder(make):
    dec = FakeDecoder(lambda t: t)
    w, res = make(dec, debounce_ms=0)
    w.prefill("context", P)
    assert w.wait_idle(5)
    assert dec.prefilled == ["context"]


def test_factory_loads_on_the_worker_thread_and_reports_status():
    statuses = []
    threads = []

    def factory():
        threads.append(threading.current_thread().name)
        time.sleep(0.05)
        return FakeDecoder(lambda t: t)

    res = Results()
    w = SuggestionWorker(decoder_factory=factory, on_result=res, on_status=lambda s, m: statuses.append(s),
                         debounce_ms=0, name="gt-worker")
    w.start()
    w.submit(1, "queued while loading", P)
    assert w.wait_idle(5)
    assert threads == ["gt-worker"] and statuses == ["loading", "ready"]
    assert res.finals() == [(1, "queued while loading")]
    assert w.stop()


def test_failed_load_reports_error_and_keeps_running():
    statuses = []

    def factory():
        raise OSError("model file missing: /x.gguf\nmore detail")

    w = SuggestionWorker(decoder_factory=factory, on_result=lambda *a: None,
                         on_status=lambda s, m: statuses.append((s, m)), debounce_ms=0)
    w.start()
    assert w.wait_idle(5)
    assert statuses[-1] == ("error", "model file missing: /x.gguf")
    w.submit(1, "x", P)
    assert w.wait_idle(5) and w.is_alive() and not w.ready
    assert w.stop()


class GatedDecoder:
    """Decodes in steps that each wait for the test's go-ahead, checking
    ``cancel`` between steps like the real decoder."""

    def __init__(self) -> None:
        self.gate = threading.Semaphore(0)
        self.steps = 0
        self.cancel = None
        self.started = threading.Event()

    def complete(self, text, params, cancel=None, on_partial=None):
        self.cancel = cancel
        self.started.set()
        while True:
            if cancel():
                raise Cancelled()
            assert self.gate.acquire(timeout=60)
            self.steps += 1


def test_stop_waits_only_for_the_step_in_flight():
    dec = GatedDecoder()
    w = SuggestionWorker(dec, on_result=lambda *a: None, debounce_ms=0)
    w.start()
    w.submit(1, "x", P)
    assert dec.started.wait(30)
    dec.gate.release()
    dec.gate.release()
    deadline = time.monotonic() + 30
    while dec.steps < 2 and time.monotonic() < deadline:  # two steps done; the third may be in flight
        time.sleep(0.001)
    assert dec.steps == 2
    stopped: list[bool] = []
    stopper = threading.Thread(target=lambda: stopped.append(w.stop(timeout=60)))
    stopper.start()
    deadline = time.monotonic() + 30
    while not dec.cancel() and time.monotonic() < deadline:  # stop() has cancelled the job
        time.sleep(0.001)
    assert dec.cancel()
    dec.gate.release()  # the step in flight (if it had started) ends; no other step may start
    stopper.join(60)
    assert stopped == [True] and not w.is_alive()
    assert dec.steps in (2, 3)


def test_result_callback_exception_does_not_kill_the_worker(make):
    calls = []

    def bad(rid, s, final):
        calls.append(rid)
        raise ValueError("boom")

    w = SuggestionWorker(FakeDecoder(lambda t: t), on_result=bad, debounce_ms=0)
    w.start()
    w.submit(1, "a", P)
    assert w.wait_idle(5)
    w.submit(2, "b", P)
    assert w.wait_idle(5)
    assert calls == [1, 2]
    assert w.stop()


def test_needs_exactly_one_decoder_source():
    with pytest.raises(ValueError):
        SuggestionWorker(on_result=lambda *a: None)


class WarmingDecoder(FakeDecoder):
    """A FakeDecoder with background warm-up: ``chunks`` warm steps of
    ``chunk_s`` seconds each become pending after every completion."""

    def __init__(self, chunks: int, chunk_s: float = 0.0, **kw) -> None:
        super().__init__(lambda t: t, **kw)
        self.chunks, self.chunk_s = chunks, chunk_s
        self.left = 0
        self.warmed = 0
        self.warm_cancelled = 0
        self.events: list[str] = []

    @property
    def warming(self) -> bool:
        return self.left > 0

    def complete(self, text, params, cancel=None, on_partial=None):
        self.events.append("complete")
        out = super().complete(text, params, cancel, on_partial)
        self.left = self.chunks
        return out

    def warm_step(self, cancel=None) -> bool:
        if not self.left:
            return False
        deadline = time.monotonic() + self.chunk_s
        while time.monotonic() < deadline:
            if cancel is not None and cancel():
                self.warm_cancelled += 1
                raise Cancelled()
            time.sleep(0.001)
        self.left -= 1
        self.warmed += 1
        self.events.append("warm")
        return True


def test_background_warm_up_runs_when_idle_and_yields_to_requests(make):
    dec = WarmingDecoder(chunks=50, chunk_s=0.02)
    w, res = make(dec, debounce_ms=0)
    w.submit(1, "a", P)
    deadline = time.monotonic() + 5
    while dec.warmed < 2 and time.monotonic() < deadline:
        time.sleep(0.005)
    assert dec.warmed >= 2 and not w.wait_idle(0.01)  # warming counts as busy
    w.submit(2, "ab", P)  # cancels the chunk in progress at its next check
    deadline = time.monotonic() + 5
    while not res.finals()[1:] and time.monotonic() < deadline:
        time.sleep(0.005)
    assert res.finals() == [(1, "a"), (2, "ab")]
    assert dec.warm_cancelled == 1
    assert w.wait_idle(10)  # and then it warms up to the end
    assert dec.left == 0 and dec.events[-1] == "warm"
    assert w.stats.warm_steps == dec.warmed and w.stats.cancelled == 0


def test_failing_warm_up_is_not_retried_until_the_next_request(make, caplog):
    dec = WarmingDecoder(chunks=3)

    def explode(cancel=None):
        dec.events.append("boom")
        raise RuntimeError("secret typed text")

    dec.warm_step = explode
    w, res = make(dec, debounce_ms=0)
    with caplog.at_level(logging.ERROR):
        w.submit(1, "a", P)
        assert w.wait_idle(5)
    assert dec.events == ["complete", "boom"] and w.stats.errors == 1
    assert "secret" not in caplog.text
    w.submit(2, "ab", P)
    assert w.wait_idle(5)
    assert dec.events == ["complete", "boom", "complete", "boom"]


class SlowStreamingDecoder(FakeDecoder):
    """Streams ``pieces`` one per ``step_s``, like the continuation's tokens."""

    def __init__(self, pieces: list[str], step_s: float) -> None:
        super().__init__(lambda t: "".join(pieces))
        self.pieces, self.step_s = pieces, step_s

    def complete(self, text, params, cancel=None, on_partial=None):
        from daemon.cpc.suggestion import Suggestion

        out = ""
        for piece in self.pieces:
            if cancel is not None and cancel():
                raise Cancelled()
            time.sleep(self.step_s)
            out += piece
            if on_partial is not None:
                on_partial(Suggestion(out, 0.5))
        return Suggestion(out, 0.9)


def test_busy_machine_out_of_time_the_streamed_words_become_final(make):
    dec = SlowStreamingDecoder(["nt", " neural", " networks", " are", " used"], step_s=0.06)
    w, res = make(dec, debounce_ms=0, finish_within_ms=100, busy=lambda: True)
    w.submit(1, "recurre", P)
    assert w.wait_idle(5)
    # at 120 ms "nt neural" is streamed: "nt" is a finished word, "neural" may not be
    assert res.finals() == [(1, "nt")]
    assert w.stats.cut_short == 1 and w.stats.completed == 1


@pytest.mark.parametrize("text, words", [("nt neural", "nt"), ("nt neural ", "nt neural"), (" world", ""),
                                         ("ing, and", "ing"), ("", ""), ("a.b", "a")])
def test_whole_words(text, words):
    assert whole_words(text) == words


def test_idle_machine_runs_the_continuation_to_its_end(make):
    dec = SlowStreamingDecoder(["nt", " neural", " networks"], step_s=0.06)
    w, res = make(dec, debounce_ms=0, finish_within_ms=50, busy=lambda: False)
    w.submit(1, "recurre", P)
    assert w.wait_idle(5)
    assert res.finals() == [(1, "nt neural networks")] and w.stats.cut_short == 0


def test_without_a_whole_word_the_request_runs_to_its_end(make):
    dec = SlowStreamingDecoder(["n", "t"], step_s=0.08)
    w, res = make(dec, debounce_ms=0, finish_within_ms=50, busy=lambda: True)
    w.submit(1, "recurre", P)
    assert w.wait_idle(5)
    assert res.finals() == [(1, "nt")] and w.stats.cut_short == 0
