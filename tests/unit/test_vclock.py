"""The simulated user on a virtual clock (``ghosttype eval --simulate-user --virtual-clock``): keys pressed on
the time the model's work is charged, through the real Controller and worker."""

from __future__ import annotations

import itertools
import random
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.config import Config
from daemon.cpc.lm import Cancelled
from daemon.evaluation.simulate import simulate_user
from daemon.evaluation.vclock import USAGE, CostModel, TimedLM, VirtualClock
from tests.unit.cpc_fakes import ScriptedLM
from tests.unit.test_simulate_user import Scripted

TEXT = "the cat sat on a mat and the dog sat on the cat"


class Charged(Scripted):
    """The scripted suggester, doing its work in ``steps`` pieces of ``step_ms`` charged to ``clock`` (a cancel
    check before each, as the decoder's), and sleeping a random real moment in each (wall-clock jitter).
    ``steps`` < 0: 2, 3 or 4 pieces by the length of the text (some requests in time, some not)."""

    def __init__(self, reference: str, clock: VirtualClock, steps: int, step_ms: float, jitter_s: float = 0.0,
                 seed: int = 0) -> None:
        super().__init__(reference)
        self.clock, self.steps, self.step_ms, self.jitter_s = clock, steps, step_ms, jitter_s
        self.random = random.Random(seed)

    def complete(self, text, params, cancel=None, on_partial=None):
        for _ in range(self.steps if self.steps >= 0 else 2 + len(text) % 3):
            if cancel is not None and cancel():
                raise Cancelled()
            if self.jitter_s:
                time.sleep(self.random.uniform(0.0, self.jitter_s))
            self.clock.spend(self.step_ms)
        return super().complete(text, params)


def _run(steps: int, step_ms: float, debounce_ms: int = 15, **kw):
    clock = VirtualClock()
    return simulate_user(Charged(TEXT, clock, steps, step_ms, **kw), Config(debounce_ms=debounce_ms), TEXT,
                         key_interval_ms=100.0, clock=clock)


def _figures(run) -> tuple:
    return run.keystrokes, run.accepts, run.word_accepts, run.accepted_chars, run.wrong_ghosts, run.late_keys


def test_work_that_ends_before_the_next_key_is_seen_as_by_a_patient_user():
    patient = simulate_user(Scripted(TEXT), Config(debounce_ms=15), TEXT, key_interval_ms=0)
    fast = _run(steps=4, step_ms=20.0)  # 15 + 80 ms: ready 5 ms before the next key
    assert _figures(fast) == _figures(patient) and fast.accepts > 0


def test_work_that_ends_at_the_next_key_or_later_is_never_seen():
    """A request that needs the whole interval is cancelled by the next key, every time: nothing is accepted,
    as on a machine too slow for the pace (the wall clock would tell it apart only by chance)."""
    run = _run(steps=5, step_ms=17.0)  # 15 + 85 ms: ends exactly at the next key
    assert (run.keystrokes, run.accepts, run.word_accepts) == (len(TEXT), 0, 0)
    assert _run(steps=4, step_ms=30.0).accepts == 0  # 15 + 120 ms: past it


def test_the_debounce_counts_as_time():
    assert _run(steps=4, step_ms=21.0, debounce_ms=15).accepts > 0  # 99 ms
    assert _run(steps=4, step_ms=21.0, debounce_ms=16).accepts == 0  # 100 ms


def test_the_same_run_twice_gives_the_same_figures_whatever_the_wall_clock_does():
    runs = [_run(steps=-1, step_ms=25.0, jitter_s=0.003, seed=seed) for seed in range(3)]  # 65, 90 or 115 ms
    assert len({_figures(r) for r in runs}) == 1
    assert 0 < runs[0].accepts + runs[0].word_accepts and runs[0].keystrokes > _run(steps=2, step_ms=25.0).keystrokes


def test_the_clock_jumps_over_idle_time_and_holds_a_worker_past_the_next_key():
    clock = VirtualClock()
    clock.run_until(100.0, idle=lambda: True)
    assert clock.now == 100.0  # nothing to do: the next key comes at once
    clock.pressed(100.0, 15.0)
    spent = threading.Event()

    def work() -> None:
        clock.spend(50.0)  # 165: before the key at 200
        clock.spend(50.0)  # 215: past it, held here
        spent.set()

    worker = threading.Thread(target=work)
    worker.start()
    clock.run_until(200.0, idle=lambda: False)
    assert clock.now == 215.0 and not spent.is_set()  # held until the user pressed the key
    clock.pressed(200.0, 15.0)
    assert clock.now == 215.0  # the step in progress ends after the key's debounce would
    clock.run_until(300.0, idle=lambda: spent.is_set())
    worker.join(2.0)
    assert spent.is_set() and clock.now == 300.0
    clock.release()


def test_the_model_is_charged_by_the_cost_model_from_what_the_backend_counts():
    costs = CostModel(call_ms=0.5, decode_ms=10.0, token_ms=2.0, tokenize_ms=3.0, memory_call_ms=0.25)
    pieces = [b"a", b"b", b" "]
    clock = VirtualClock()
    timed = TimedLM(ScriptedLM(pieces, tokenizer=lambda t: [pieces.index(c.encode()) for c in t]), clock, costs)
    assert timed.tokenize("ab a") == [0, 1, 2, 0] and clock.now == 3.0
    timed.logprobs([[0, 1], [1, 1, 2]])  # the scripted backend: one batch of 5 tokens
    assert clock.now == pytest.approx(3.0 + 0.5 + 10.0 + 2.0 * 5)
    assert dict(zip(USAGE, timed.usage)) == {"call_ms": 1, "decode_ms": 1, "token_ms": 5, "tokenize_ms": 1,
                                             "memory_call_ms": 0}  # what clock_fit fits on

    class WithMemory(ScriptedLM):
        memory = object()

    mixed = TimedLM(WithMemory(pieces), VirtualClock(), costs)
    mixed.logprobs([[0]])
    assert mixed.clock.now == pytest.approx(0.5 + 10.0 + 2.0 + 0.25)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(4, 30), st.integers(1, 4))
def test_the_cost_fit_is_the_best_non_negative_least_squares_a_search_over_every_subset_finds(seed, n, k):
    from tests.research.clock_fit import nnls

    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 5, (n, k))
    y = x @ rng.normal(1.0, 2.0, k) + rng.normal(0, 0.5, n)
    got = nnls(x, y)
    best = np.inf
    for cols in itertools.chain.from_iterable(itertools.combinations(range(k), r) for r in range(k + 1)):
        coef = np.zeros(k)
        if cols:
            sol, *_ = np.linalg.lstsq(x[:, cols], y, rcond=None)
            if (sol < 0).any():
                continue
            coef[list(cols)] = sol
        best = min(best, float(((x @ coef - y) ** 2).sum()))
    assert (got >= 0).all()
    assert float(((x @ got - y) ** 2).sum()) <= best * (1 + 1e-9) + 1e-9
