"""Remember which accessible object has keyboard focus, from AT-SPI events.

Applications only emit accessibility events that some assistive technology
has asked for (they consult the registry's list, e.g. Qt does), so the
tracker first registers ``object:state-changed:focused`` with the AT-SPI
registry, then listens for ``StateChanged("focused", 1)`` signals on its own
connection in a daemon thread.  The registration is tied to that connection:
when it closes, the registry forgets it.

Only the (bus name, object path) of the last focused object is kept; no
text ever passes through here.
"""

from __future__ import annotations

import logging
import threading
from typing import Optional

from jeepney import MatchRule, MessageType

from daemon.platform.atspi.bus import (
    EVENT_OBJECT,
    REGISTRY_BUS,
    REGISTRY_IFACE,
    REGISTRY_PATH,
    AtspiBus,
    AtspiCallError,
)

log = logging.getLogger(__name__)

#: An accessible object on the bus: (unique bus name, object path).
ObjectRef = tuple[str, str]

FOCUS_EVENT = "object:state-changed:focused"


class FocusTracker:
    """Background listener for focus changes on the accessibility bus.

    ``last()`` returns the most recently focused object, or None when no focus
    event has been seen (e.g. the field was focused before we started) or the
    focus was dropped.  The caller must verify the object still has focus:
    focus can also move to an application that does not speak AT-SPI, which
    sends no event.
    """

    #: How often the thread wakes up to check whether it should stop.
    POLL_S = 0.2

    def __init__(self, address: str) -> None:
        self._bus = AtspiBus(address, timeout=1.0)
        self._lock = threading.Lock()
        self._last: Optional[ObjectRef] = None
        self._generation = 0
        self._stop = threading.Event()
        try:
            self._bus.add_match(MatchRule(type="signal", interface=EVENT_OBJECT, member="StateChanged"))
            self._bus.call(REGISTRY_BUS, REGISTRY_PATH, REGISTRY_IFACE, "RegisterEvent",
                           "sass", (FOCUS_EVENT, [], ""))
        except AtspiCallError:
            self._bus.close()
            raise
        self._thread = threading.Thread(target=self._run, name="atspi-focus", daemon=True)
        self._thread.start()

    def last(self) -> Optional[ObjectRef]:
        with self._lock:
            return self._last

    @property
    def generation(self) -> int:
        """Counts focus events seen; lets callers cache a slow lookup until
        focus changes again."""
        with self._lock:
            return self._generation

    def remember(self, ref: Optional[ObjectRef]) -> None:
        """Record ``ref`` as focused (used by the tree-walk fallback too)."""
        with self._lock:
            self._last = ref

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                msg = self._bus.receive(timeout=self.POLL_S)
            except TimeoutError:
                continue
            except Exception:  # noqa: BLE001 - a broken bus ends tracking, never the daemon
                if not self._stop.is_set():
                    log.warning("AT-SPI focus listener stopped: connection lost", exc_info=True)
                return
            self._handle(msg)

    def _handle(self, msg) -> None:
        fields = msg.header.fields
        # HeaderFields: 1 path, 2 interface, 3 member, 7 sender.
        if (msg.header.message_type != MessageType.signal or fields.get(2) != EVENT_OBJECT
                or fields.get(3) != "StateChanged"):
            return
        body = msg.body
        if len(body) < 2 or body[0] != "focused":
            return
        ref = (str(fields.get(7, "")), str(fields.get(1, "")))
        with self._lock:
            self._generation += 1
            if body[1] == 1:
                self._last = ref
            elif self._last == ref:
                self._last = None
        log.debug("AT-SPI focus %s on %s %s", "gained" if body[1] == 1 else "lost", *ref)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2 * self.POLL_S + 1.0)
        self._bus.close()
