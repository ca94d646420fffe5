"""How many CPU threads llama.cpp may use for a decode, decided by how busy
the machine is right now.

llama.cpp has two thread counts: ``n_threads`` for single-token decodes (the
continuation) and ``n_threads_batch`` for batches of more than one token (a
prefill chunk, a step of several beams).  Its threads meet at a barrier for
every graph node, so a thread the OS deschedules stalls the others: on a
loaded 2-core machine two threads made a SmolLM2 step take 40-1,230 ms where
one thread took 24 ms.  But on an idle machine a second thread nearly doubles
prefill speed and makes a one-token step 1.7x faster (10.8 instead of 18.7
ms).  So both counts start from the configured one (one on two cores) and
get more threads only while the cores they would use are idle.

"Idle" is measured, not guessed: :class:`CpuSampler` reads the system's and
this process's CPU times (psutil) and reports how many cores *other*
processes kept busy since the previous sample; this process's own work does
not count against it.  :class:`BatchThreads` turns that into a thread count,
sampling at most every ``interval_s`` (reading the counters costs tens of
microseconds; a decode step costs milliseconds).
"""

from __future__ import annotations

import logging
import math
import os
import time
from typing import Callable, Optional, Protocol

log = logging.getLogger(__name__)

Clock = Callable[[], float]


class BusySampler(Protocol):
    def other_busy_cores(self) -> Optional[float]:
        """Cores other processes kept busy since the previous call (None on
        the first call, or when it cannot be measured)."""


class CpuSampler:
    """Busy cores of the rest of the system, from psutil's CPU times."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        import psutil

        self._psutil = psutil
        self._process = psutil.Process()
        self._clock = clock
        self._last: Optional[tuple[float, float, float]] = None

    def _read(self) -> tuple[float, float, float]:
        total = self._psutil.cpu_times()
        busy = sum(total) - getattr(total, "idle", 0.0) - getattr(total, "iowait", 0.0)
        own = self._process.cpu_times()
        return self._clock(), busy, own.user + own.system

    def other_busy_cores(self) -> Optional[float]:
        try:
            now = self._read()
        except Exception:  # a process table we may not read: say "unknown"
            return None
        last, self._last = self._last, now
        if last is None or now[0] <= last[0]:
            return None
        others = (now[1] - last[1]) - (now[2] - last[2])
        return max(0.0, others / (now[0] - last[0]))


class OtherLoad:
    """The cores other processes kept busy, read from ``sampler`` at most
    every ``interval_s`` (the last reading in between; None until the first).
    Reading starts at construction, so the first interval runs from there."""

    def __init__(self, sampler: Optional[BusySampler] = None, interval_s: float = 0.25,
                 clock: Clock = time.monotonic) -> None:
        self._sampler = sampler if sampler is not None else CpuSampler(clock)
        self._interval = float(interval_s)
        self._clock = clock
        self._next_sample = -math.inf
        self._cores: Optional[float] = None
        self._sampler.other_busy_cores()

    def __call__(self) -> Optional[float]:
        now = self._clock()
        if now >= self._next_sample:
            self._next_sample = now + self._interval
            cores = self._sampler.other_busy_cores()
            if cores is not None:
                self._cores = cores
        return self._cores


class BatchThreads:
    """Threads for the next decode: ``decode_threads`` plus the cores
    other processes leave idle, at most ``max_threads``.

    A core counts as idle when other processes used less than ``slack`` of
    it since the last sample.  Before the first measurement it answers
    ``decode_threads`` (the safe choice under load).
    """

    def __init__(
        self,
        decode_threads: int,
        max_threads: Optional[int] = None,
        *,
        cores: Optional[int] = None,
        sampler: Optional[BusySampler] = None,
        interval_s: float = 0.25,
        slack: float = 0.25,
        clock: Clock = time.monotonic,
    ) -> None:
        self.decode_threads = max(1, int(decode_threads))
        self.cores = int(cores or os.cpu_count() or 1)
        self.max_threads = max(self.decode_threads, int(max_threads or min(4, self.cores)))
        self._slack = float(slack)
        self._load = OtherLoad(sampler, interval_s, clock)

    def __call__(self) -> int:
        busy = self._load()
        return self.decode_threads if busy is None else self.threads_for(busy)

    def single(self) -> int:
        """Threads for a one-token decode: more than ``decode_threads`` only
        while other processes leave the machine nearly idle (at most
        ``slack`` of a core busy), whatever the number of cores: a one-token
        step is short, so a thread stalled by another process costs it the
        most.  (On two cores with one base thread this is the batch rule.)"""
        busy = self._load()
        if busy is None or busy > self._slack:
            return self.decode_threads
        return self.threads_for(busy)

    def threads_for(self, other_busy_cores: float) -> int:
        """The answer for a measured load (pure; unit-tested)."""
        idle = self.cores - self.decode_threads - other_busy_cores
        extra = max(0, math.floor(idle + self._slack))
        return max(self.decode_threads, min(self.max_threads, self.decode_threads + extra))


class MachineBusy:
    """True while other processes keep at least ``threshold`` cores busy
    (sampled at most every ``interval_s``; False until the first reading).
    The worker asks it between decode steps to decide whether to cut a
    continuation short."""

    def __init__(self, threshold: float = 1.0, *, sampler: Optional[BusySampler] = None,
                 interval_s: float = 0.25, clock: Clock = time.monotonic) -> None:
        self._threshold = float(threshold)
        self._load = OtherLoad(sampler, interval_s, clock)

    def __call__(self) -> bool:
        cores = self._load()
        return cores is not None and cores >= self._threshold


__all__ = ["BatchThreads", "BusySampler", "CpuSampler", "MachineBusy", "OtherLoad"]
