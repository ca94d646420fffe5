"""Run a callback on its own thread after bursts of notifications.

Event sources such as the accessibility bus listener must not block, yet
what an event triggers (re-reading the focused field) takes milliseconds.
:class:`EventPump` decouples the two: :meth:`poke` only sets a flag; the
pump's thread wakes up and calls the callback once for any number of pokes
that arrived meanwhile (a typed key produces several caret and text events).
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

log = logging.getLogger(__name__)


class EventPump:
    def __init__(self, callback: Callable[[], None], name: str = "ghosttype-events") -> None:
        self._callback = callback
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.runs = 0

    def start(self) -> None:
        self._thread.start()

    def poke(self) -> None:
        """Ask for one more run of the callback (cheap, never blocks)."""
        self._wake.set()

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            self._wake.wait()
            if self._stop.is_set():
                return
            self._wake.clear()
            self.runs += 1
            try:
                self._callback()
            except Exception:  # noqa: BLE001 - one failure must not end the pump
                log.exception("event callback failed")
