"""Time slices (daemon/timeslice.py): the model's threads ask for long ones, so
whatever handles a key takes a core from them at once; the IBus engine's
D-Bus thread asks for a short one.  Read back from the kernel; skipped where
it has no custom slices (Linux before 6.12)."""

from __future__ import annotations

import threading
import time

import pytest
from jeepney.io.blocking import open_dbus_connection

from daemon import timeslice
from daemon.cpc.suggestion import BeamParams, Suggestion
from daemon.frontends.ibus.bus import IBusService
from daemon.frontends.ibus.frontend import IBusFrontend
from daemon.worker import SuggestionWorker
from tests.daemon.test_ibus_bus_order import bus_address  # noqa: F401  (the private dbus-daemon)


def _kernel_has_slices() -> bool:
    took: list[bool] = []
    probe = threading.Thread(target=lambda: took.append(timeslice.request(0.003)))  # a thread of its own
    probe.start()
    probe.join()
    return took[0]


pytestmark = pytest.mark.skipif(not _kernel_has_slices(), reason="the kernel has no custom time slices (Linux < 6.12)")


class SliceRecordingDecoder:
    """Records the slice of the thread it decodes on and of a thread it starts there (as llama.cpp's)."""

    def __init__(self) -> None:
        self.slices: list[float | None] = []

    def complete(self, text, params, cancel=None, on_partial=None) -> Suggestion:
        self.slices.append(timeslice.current())
        helper = threading.Thread(target=lambda: self.slices.append(timeslice.current()))
        helper.start()
        helper.join()
        return Suggestion("x", 0.9)

    def prefill(self, text, params, cancel=None) -> None:
        pass


def test_the_models_threads_ask_for_long_slices():
    decoder = SliceRecordingDecoder()
    worker = SuggestionWorker(decoder, on_result=lambda *a: None, debounce_ms=0)
    worker.start()
    try:
        worker.submit(1, "text", BeamParams())
        assert worker.wait_idle(5)
    finally:
        assert worker.stop(timeout=2)
    assert decoder.slices == [timeslice.MODEL, timeslice.MODEL]
    assert timeslice.current() != timeslice.MODEL  # the thread that started the worker keeps its own


def test_the_engines_dbus_thread_asks_for_a_short_slice(bus_address):
    daemon = open_dbus_connection(bus_address)
    service = IBusService(bus_address, IBusFrontend(), daemon_sender=daemon.unique_name)
    thread = threading.Thread(target=service.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 5
        while timeslice.current(thread.native_id) != timeslice.KEYS and time.monotonic() < deadline:
            time.sleep(0.01)
        assert timeslice.current(thread.native_id) == timeslice.KEYS
    finally:
        service.close()
        thread.join(timeout=10)
        daemon.close()
