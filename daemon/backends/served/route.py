"""Where suggestions come from: the server, or the local model while the
server cannot answer, and back.

:class:`ServedRoute` is the worker's ``Completer`` when ``backend =
"server"``.  Requests go to the server while it answers.  The route leaves
the server

* at once when it is unreachable, refuses the request (token), answers an
  HTTP error or something that is not a completions stream;
* after ``SLOW_AFTER`` requests in a row (prefills included) missed their
  deadline (one slow answer is often the first request in a field, whose
  prompt the engine had to evaluate; it stays cached, so the next one is
  fast).  A server that
  answers but too slowly is tried again after ``slow_retry_s`` (doubling
  each time it is left for slowness, up to ten minutes), so a server that is
  always slow does not make the route, the log and the status go back and
  forth every few seconds.

The request that failed is answered by the local model (when
``server_fallback = "local"``) on the same keystroke.  Leaving and coming
back are each said once, in the log and in the status (``on_status``, the
worker's status callback: ``ready`` with a message saying where
suggestions come from; ``error`` when there is no local model to fall back
to).  While away, a probe thread asks the server (``GET /v1/models``, no
typed text) every ``retry_s`` seconds and switches back when it answers.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable, Optional

from daemon.cpc.lm import CancelCheck
from daemon.cpc.suggestion import BeamParams, Completer, Suggestion

from .client import ServerError
from .completer import ServedCompleter

log = logging.getLogger(__name__)

#: Deadlines missed in a row before the route leaves the server.
SLOW_AFTER = 3
#: First wait before trying a server that was left for slowness (then doubled), and its cap.
SLOW_RETRY_S = 30.0
SLOW_RETRY_MAX_S = 600.0


class ServedRoute:
    """See the module docstring.  ``complete``/``prefill`` run on the worker
    thread; the probe thread only flips the route back."""

    def __init__(self, served: ServedCompleter, local: Optional[Completer] = None,
                 on_status: Optional[Callable[[str, str], None]] = None, retry_s: float = 2.0,
                 slow_retry_s: float = SLOW_RETRY_S) -> None:
        self.served = served
        self.local = local
        self._on_status = on_status
        self._retry_s = retry_s
        self._slow_retry_s = slow_retry_s  # the next wait after leaving for slowness
        self._lock = threading.Lock()
        self._on_server = True
        self._slow = 0
        self._reason = ""  # why the route left the server (never typed text)
        self._stop = threading.Event()
        self._probe: Optional[threading.Thread] = None
        self.switches = 0  #: times the route left the server (tests, benchmarks)

    # ------------------------------------------------------------------ state

    @property
    def on_server(self) -> bool:
        return self._on_server

    def describe(self) -> str:
        """Where suggestions come from, in one line (status and ``doctor``)."""
        if self._on_server:
            return f"suggestions from the server {self.served.server.url}"
        why = f"the server {self.served.server.url} does not answer ({self._reason})"
        if self.local is not None:
            return f"{why}: suggestions from the local model"
        return f"{why}: no suggestions until it does"

    def announce(self) -> None:
        self._status()

    def _status(self) -> None:
        if self._on_status is None:
            return
        state = "ready" if (self._on_server or self.local is not None) else "error"
        try:
            self._on_status(state, self.describe())
        except Exception:
            log.exception("status handler failed")

    def leave(self, error: ServerError) -> None:
        with self._lock:
            if not self._on_server:
                return
            self._on_server = False
            self._reason = str(error)
            self._slow = 0
            self.switches += 1
            first_wait = self._retry_s
            if error.kind == "slow":
                first_wait = self._slow_retry_s
                self._slow_retry_s = min(SLOW_RETRY_MAX_S, 2 * self._slow_retry_s)
            self._probe = threading.Thread(target=self._probe_loop, args=(first_wait,),
                                           name="ghosttype-server-probe", daemon=True)
            self._probe.start()
        log.warning("%s", self.describe())
        self._status()

    def _probe_loop(self, first_wait: float) -> None:
        wait = first_wait
        while not self._stop.wait(wait):
            wait = self._retry_s
            problem = self.served.server.probe(timeout=min(2.0, self._retry_s))
            if problem is None:
                with self._lock:
                    self._on_server = True
                log.warning("the server %s answers again: %s", self.served.server.url, self.describe())
                self._status()
                return

    def close(self) -> None:
        self._stop.set()
        self.served.close()
        close = getattr(self.local, "close", None)
        if close is not None:
            close()

    # ------------------------------------------------------------------ Completer

    @property
    def warming(self) -> bool:
        return not self._on_server and bool(getattr(self.local, "warming", False))

    def warm_step(self, cancel: Optional[CancelCheck] = None) -> bool:
        if self._on_server or self.local is None:
            return False
        return bool(self.local.warm_step(cancel))  # type: ignore[attr-defined]

    def _failed(self, error: ServerError) -> None:
        """A request failed: leave at once, or after ``SLOW_AFTER`` slow ones in a row."""
        if error.kind == "slow":
            self._slow += 1
            if self._slow < SLOW_AFTER:
                return
        self.leave(error)

    def prefill(self, text: str, params: BeamParams, cancel: Optional[CancelCheck] = None) -> None:
        if self._on_server:
            try:
                self.served.prefill(text, params, cancel)
                return
            except ServerError as e:
                self._failed(e)
        if self.local is not None:
            self.local.prefill(text, params, cancel)

    def complete(self, text: str, params: BeamParams, cancel: Optional[CancelCheck] = None,
                 on_partial: Optional[Callable[[Suggestion], None]] = None) -> Suggestion:
        if self._on_server:
            try:
                result = self.served.complete(text, params, cancel, on_partial)
                self._slow = 0
                return result
            except ServerError as e:
                self._failed(e)
        if self.local is None:
            return Suggestion(text="", confidence=0.0)
        return self.local.complete(text, params, cancel, on_partial)


__all__ = ["ServedRoute", "SLOW_AFTER"]
