"""A virtual clock for the simulated user: a typing pace without the wall clock's noise.

At a typing pace the simulated user (:func:`daemon.evaluation.simulate.simulate_user`) presses a key every
``key_interval_ms`` of wall-clock time, and a suggestion counts only when it is ready before the next key.  Which
requests finish in time then turns on a few milliseconds of scheduling, and one suggestion seen or not changes what
the user does next: the same command run twice the same hour saved 22.0% and 24.9% of keystrokes
(``daemon/evaluation/README.md``, *A clock that counts*).  Comparing two settings within a point took many runs.

With ``--virtual-clock`` time is counted instead of measured:

* every call the decoder makes to the model costs what a :class:`CostModel` says: a fixed part per call (the
  decoder's own work around it), one per batch the backend decodes and one per token it decodes, and a fixed part
  per tokenization (a request's split).  The shipped model is fitted on this project's 2-core machine
  (``python -m tests.research.clock_fit``);
* the model's worker thread is held at the first call that ends past the next keystroke (:meth:`VirtualClock.spend`)
  until the user has pressed it; the newer request then cancels the held one at its next decode step, as it would
  on the wall clock, and a result of that late call is never shown;
* when the worker has nothing to do, the clock jumps to the next keystroke; a keystroke's request starts
  ``debounce_ms`` after it.

The same command gives the same figures every time (up to the model's arithmetic, which is deterministic here), so
two settings compare with one run each.  The figures are those of a machine exactly as fast as the cost model, which
is a model of this one: what a busy machine or a slower one does is not in it.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from typing import Callable, Optional, Sequence

import numpy as np

from daemon.cpc.lm import CancelCheck, TokenLM, WrappedLM


@dataclasses.dataclass(frozen=True)
class CostModel:
    """Milliseconds of the model's work, from what the backend counts (:class:`daemon.cpc.lm.LMStats`)."""

    call_ms: float  #: each ``logprobs`` call: the decoder's own work around it
    decode_ms: float  #: each batch the backend decodes
    token_ms: float  #: each token it decodes
    tokenize_ms: float  #: each tokenization (a request's split, twice while the near window answers)
    memory_call_ms: float  #: each call more, when a memory is mixed into the rows (:mod:`daemon.memory.cache_lm`)

    def cost(self, usage: Sequence[float]) -> float:
        """The milliseconds of ``usage``: how many of each thing the fields price, in their order (:data:`USAGE`)."""
        return float(np.dot(dataclasses.astuple(self), usage))


#: What :class:`CostModel` prices, in its fields' order: calls, batches decoded, tokens decoded, tokenizations,
#: calls through a memory.  :class:`TimedLM` counts these and ``tests/research/clock_fit.py`` fits on its counts.
USAGE: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(CostModel))


#: Fitted by ``python -m tests.research.clock_fit`` on this project's 2-core machine (SmolLM2, the product's
#: defaults, requests along prose and code; daemon/evaluation/README.md, *A clock that counts*).
SMOLLM2_COSTS = CostModel(call_ms=0.4297, decode_ms=13.4667, token_ms=2.5683, tokenize_ms=3.757, memory_call_ms=0.185)


class VirtualClock:
    """The simulated user's time, in milliseconds, advanced by the model's work (see the module docstring).

    Two threads use it: the worker's (:meth:`spend`, through :class:`TimedLM`) and the simulated user's
    (:meth:`run_until`, :meth:`pressed`, :meth:`release`)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.now = 0.0  #: virtual milliseconds
        self._until = math.inf  #: the next keystroke: the worker is held at the first call that ends past it
        self._held = False

    def spend(self, ms: float) -> None:
        """The worker did ``ms`` of work; it waits here while that took it past the next keystroke."""
        with self._cond:
            self.now += ms
            while self.now >= self._until:
                self._held = True
                self._cond.notify_all()
                self._cond.wait()
            self._held = False

    def run_until(self, t: float, idle: Callable[[], bool], poll_s: float = 0.0005) -> None:
        """Let the worker run until virtual time ``t``: return once it is held past ``t`` or has nothing to do
        (then the clock jumps to ``t``).  ``idle()``: the worker has no job, running or waiting."""
        with self._cond:
            self._until = t
            self._held = self._held and self.now >= t  # a held worker goes on unless its step also ended past t
            self._cond.notify_all()
            while not self._held and not idle():
                self._cond.wait(poll_s)  # the worker's idleness is its own lock's: poll it
            if not self._held:
                self.now = max(self.now, t)

    def pressed(self, t: float, debounce_ms: float) -> None:
        """The user pressed a key at ``t``: the request it makes starts ``debounce_ms`` later (or when the step
        in progress ends, if that is later)."""
        with self._cond:
            self.now = max(self.now, t + debounce_ms)

    def release(self) -> None:
        """Hold the worker no more (the run is over)."""
        with self._cond:
            self._until = math.inf
            self._cond.notify_all()


class TimedLM(WrappedLM):
    """``inner`` whose work is charged to a :class:`VirtualClock` by a :class:`CostModel`; ``usage`` counts
    what was charged (:data:`USAGE`), all calls together."""

    def __init__(self, inner: TokenLM, clock: VirtualClock, costs: CostModel) -> None:
        super().__init__(inner)
        self.clock = clock
        self.costs = costs
        self._memory = getattr(inner, "memory", None) is not None
        self.usage = np.zeros(len(USAGE))

    def _charge(self, usage: Sequence[float]) -> None:
        self.usage += usage
        self.clock.spend(self.costs.cost(usage))

    def tokenize(self, text: str) -> list[int]:
        tokens = self.inner.tokenize(text)
        self._charge((0, 0, 0, 1, 0))
        return tokens

    def logprobs(self, seqs: Sequence[Sequence[int]], cancel: Optional[CancelCheck] = None) -> np.ndarray:
        before = self.inner.stats.snapshot()
        try:
            return self.inner.logprobs(seqs, cancel)
        finally:
            done = self.inner.stats.since(before)
            self._charge((1, done.decode_calls, done.tokens_decoded, 0, int(self._memory)))
