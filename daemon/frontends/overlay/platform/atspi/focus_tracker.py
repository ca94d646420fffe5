"""Remember which accessible object has keyboard focus, from AT-SPI events.

Applications only emit accessibility events that some assistive technology
has asked for (they consult the registry's list, e.g. Qt does), so the
tracker first registers ``object:state-changed:focused`` with the AT-SPI
registry, then listens for ``StateChanged("focused", 1)`` signals on its own
connection in a daemon thread.  The registration is tied to that connection:
when it closes, the registry forgets it.

It also follows caret moves and text changes (``object:text-caret-moved``,
``object:text-changed``) of the focused object, and tells a watcher (see
:meth:`FocusTracker.watch`) about those and every focus change: a browser tab,
a dialog or another field can take focus, and a field's text can change by
paste, undo or autocorrect, all without the X window changing.

Only the (bus name, object path) of the last focused object is kept; no
text ever passes through here (text-changed events carry the inserted text
in their body; it is not looked at).
"""

from __future__ import annotations

import collections
import logging
import threading
from typing import Callable, Optional

from jeepney import MatchRule, MessageType

from daemon.frontends.atspi_bus import EVENT_OBJECT, REGISTRY_BUS, REGISTRY_IFACE, REGISTRY_PATH
from daemon.frontends.overlay.platform.atspi.bus import AtspiBus, AtspiCallError

log = logging.getLogger(__name__)

#: An accessible object on the bus: (unique bus name, object path).
ObjectRef = tuple[str, str]

FOCUS_EVENT = "object:state-changed:focused"
#: Events of the focused object that may invalidate a visible suggestion.
FIELD_EVENTS = ("object:text-caret-moved", "object:text-changed")
FIELD_MEMBERS = frozenset({"TextCaretMoved", "TextChanged"})


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
    #: How many recently focused objects ``recent()`` remembers.
    RECENT = 4

    def __init__(self, address: str) -> None:
        self._bus = AtspiBus(address, timeout=1.0)
        self._lock = threading.Lock()
        self._last: Optional[ObjectRef] = None
        #: objects that gained focus recently, newest last (see ``recent``)
        self._recent: collections.deque[ObjectRef] = collections.deque(maxlen=self.RECENT)
        self._generation = 0
        self._stop = threading.Event()
        self._watchers: list[Callable[[], None]] = []
        try:
            for member in ("StateChanged", *sorted(FIELD_MEMBERS)):
                self._bus.add_match(MatchRule(type="signal", interface=EVENT_OBJECT, member=member))
            for event in (FOCUS_EVENT, *FIELD_EVENTS):
                self._bus.call(REGISTRY_BUS, REGISTRY_PATH, REGISTRY_IFACE, "RegisterEvent",
                               "sass", (event, [], ""))
        except AtspiCallError:
            self._bus.close()
            raise
        self._thread = threading.Thread(target=self._run, name="atspi-focus", daemon=True)
        self._thread.start()

    def last(self) -> Optional[ObjectRef]:
        with self._lock:
            return self._last

    def recent(self) -> list[ObjectRef]:
        """Objects that gained focus recently, newest first.  A browser that
        regains the X focus (e.g. when a key grab ends) announces its
        document after the field inside it, so the newest is not always the
        field the user types in."""
        with self._lock:
            return list(reversed(self._recent))

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

    def watch(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` on the listener thread after every focus change
        and every caret move or text change of the focused object.  It must
        return quickly (hand work to another thread)."""
        with self._lock:
            self._watchers.append(callback)

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
        if msg.header.message_type != MessageType.signal or fields.get(2) != EVENT_OBJECT:
            return
        member = fields.get(3)
        ref = (str(fields.get(7, "")), str(fields.get(1, "")))
        if member in FIELD_MEMBERS:
            with self._lock:
                relevant = ref == self._last
                watchers = list(self._watchers) if relevant else []
            self._notify(watchers)
            return
        body = msg.body
        if member != "StateChanged" or len(body) < 2 or body[0] != "focused":
            return
        with self._lock:
            self._generation += 1
            if body[1] == 1:
                self._last = ref
                if ref in self._recent:
                    self._recent.remove(ref)
                self._recent.append(ref)
            elif self._last == ref:
                self._last = None
            watchers = list(self._watchers)
        log.debug("AT-SPI focus %s on %s %s", "gained" if body[1] == 1 else "lost", *ref)
        self._notify(watchers)

    @staticmethod
    def _notify(watchers: list[Callable[[], None]]) -> None:
        for callback in watchers:
            try:
                callback()
            except Exception:  # noqa: BLE001 - a watcher must not end the listener
                log.exception("AT-SPI event watcher failed")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2 * self.POLL_S + 1.0)
        self._bus.close()
