"""The batch-thread policy: more threads only while other processes leave cores idle."""

from __future__ import annotations

import collections
import sys
import time
import types

import pytest

from daemon.backends.llamacpp.threads import BatchThreads, CpuSampler, MachineBusy


class FakeSampler:
    def __init__(self, answers):
        self.answers = list(answers)
        self.calls = 0

    def other_busy_cores(self):
        self.calls += 1
        return self.answers.pop(0) if self.answers else None


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


@pytest.mark.parametrize("cores, decode, busy, want", [
    (2, 1, 0.0, 2), (2, 1, 0.2, 2), (2, 1, 0.5, 1), (2, 1, 1.0, 1), (2, 1, 2.0, 1),
    (4, 1, 0.0, 4), (4, 1, 1.0, 3), (4, 2, 1.9, 2), (8, 2, 0.0, 4), (1, 1, 0.0, 1),
])
def test_threads_for_a_measured_load(cores, decode, busy, want):
    policy = BatchThreads(decode, cores=cores, sampler=FakeSampler([]))
    assert policy.threads_for(busy) == want


def test_samples_at_most_once_per_interval_and_starts_safe():
    clock = Clock()
    sampler = FakeSampler([None, None, 0.0, 1.5])
    policy = BatchThreads(1, cores=2, sampler=sampler, interval_s=0.25, clock=clock)
    assert sampler.calls == 1  # the first interval starts at construction
    assert policy() == 1 and sampler.calls == 2  # load unknown: keep the safe answer
    clock.t = 0.1
    assert policy() == 1 and sampler.calls == 2  # within the interval: no new sample
    clock.t = 0.3
    assert policy() == 2 and sampler.calls == 3  # idle machine: two threads
    clock.t = 0.4
    assert policy() == 2 and sampler.calls == 3
    clock.t = 0.6
    assert policy() == 1 and sampler.calls == 4  # another process took a core and a half


SystemTimes = collections.namedtuple("SystemTimes", "user system idle iowait")  # like psutil's


class FakePsutil:
    """psutil's two readings the sampler uses, set by the test: the system's
    CPU times and this process's."""

    def __init__(self):
        self.system = dict(user=0.0, system=0.0, idle=0.0, iowait=0.0)
        self.own = dict(user=0.0, system=0.0)

    def cpu_times(self):
        return SystemTimes(**self.system)

    def Process(self):  # noqa: N802 - psutil's name
        return types.SimpleNamespace(cpu_times=lambda: types.SimpleNamespace(**self.own))


def test_cpu_sampler_subtracts_this_process(monkeypatch):
    fake = FakePsutil()
    monkeypatch.setitem(sys.modules, "psutil", fake)
    clock = Clock()
    sampler = CpuSampler(clock)
    assert sampler.other_busy_cores() is None  # no interval yet
    # In 2 s: the system was busy for 3.0 s of CPU, 1.8 s of it this process's.
    clock.t = 2.0
    fake.system.update(user=2.5, system=0.5, idle=0.8, iowait=0.2)
    fake.own.update(user=1.5, system=0.3)
    assert sampler.other_busy_cores() == pytest.approx((3.0 - 1.8) / 2.0)
    # Only this process worked: the others kept nothing busy.
    clock.t = 3.0
    fake.system.update(user=3.5)
    fake.own.update(user=2.5)
    assert sampler.other_busy_cores() == pytest.approx(0.0)


def test_cpu_sampler_excludes_this_process_on_the_real_machine():
    """This process burns CPU; the reading must be lower than the whole
    machine's busy cores by about what this process used."""
    import psutil

    me = psutil.Process()

    def machine() -> tuple[float, float, float]:
        t = psutil.cpu_times()
        own = me.cpu_times()
        return time.monotonic(), sum(t) - t.idle - getattr(t, "iowait", 0.0), own.user + own.system

    sampler = CpuSampler()
    start = machine()
    assert sampler.other_busy_cores() is None
    while me.cpu_times().user - start[2] < 0.5:  # half a second of CPU in this process
        sum(i * i for i in range(10_000))
    others = sampler.other_busy_cores()
    end = machine()
    wall = end[0] - start[0]
    total = (end[1] - start[1]) / wall  # every busy core, this process included
    own = (end[2] - start[2]) / wall
    assert others is not None and end[2] - start[2] >= 0.5
    # Counting this process too would give about ``total``.
    assert others <= total - 0.7 * own, (others, total, own)


def test_machine_busy_when_others_take_half_a_core():
    clock = Clock()
    busy = MachineBusy(0.5, sampler=FakeSampler([None, None, 0.2, 0.7, 0.1]), interval_s=0.25, clock=clock)
    assert busy() is False  # unknown: not busy
    for t, want in ((0.3, False), (0.6, True), (0.7, True), (0.9, False)):
        clock.t = t
        assert busy() is want, t


@pytest.mark.parametrize("cores, busy, batch, single", [
    (2, 0.0, 2, 2), (2, 0.2, 2, 2), (2, 0.5, 1, 1), (4, 0.0, 4, 4), (4, 0.5, 3, 1), (4, 2.0, 2, 1),
])
def test_one_token_steps_take_extra_threads_only_on_a_nearly_idle_machine(cores, busy, batch, single):
    clock = Clock()
    policy = BatchThreads(1, cores=cores, sampler=FakeSampler([None, busy]), interval_s=1.0, clock=clock)
    assert policy.single() == single  # one reading, shared by both answers within the interval
    assert policy() == batch


def test_one_token_steps_keep_the_base_count_before_the_first_reading():
    policy = BatchThreads(1, cores=4, sampler=FakeSampler([None, None]))
    assert policy.single() == 1
