"""Pairing the accept keys a suppressor swallowed with the keyboard listener's
view of the same presses (:class:`SwallowLedger`)."""

from __future__ import annotations

import collections

from daemon.controller.ports import Clock


class SwallowLedger:
    """Pairs key presses the suppressor swallowed with the listener's view of
    the same press, so each physical press is handled exactly once.

    Used only with suppressors whose swallowed keys also reach the listener
    (``KeySuppressor.listener_sees_swallowed``): on X11 the listener records
    a grabbed key in either order relative to the suppressor's report; on
    macOS it reports it first.  Unpaired reports expire after ``ttl_s``.
    With ``pairs=False`` (the listener never sees a swallowed key) it pairs
    nothing: every key the listener reports is a real one.  At most
    ``MAX_UNPAIRED`` presses of a key wait for their other view (no hand
    presses a key faster within ``ttl_s``), so it stays small however long
    one view goes missing.
    """

    MAX_UNPAIRED = 8

    def __init__(self, clock: Clock, ttl_s: float = 1.0, pairs: bool = True) -> None:
        self._clock = clock
        self._ttl = ttl_s
        self._pairs = pairs
        self._reported: dict[str, collections.deque[float]] = collections.defaultdict(
            lambda: collections.deque(maxlen=self.MAX_UNPAIRED))
        self._seen: dict[str, int] = collections.defaultdict(int)

    def reported(self, spec: str) -> None:
        """The suppressor swallowed a press of ``spec``."""
        if not self._pairs:
            return
        if self._seen[spec] > 0:
            self._seen[spec] -= 1
        else:
            self._reported[spec].append(self._clock() + self._ttl)

    def listener_saw(self, spec: str, armed_for: frozenset[str]) -> bool:
        """The listener saw ``spec``; True when that press was (or is being)
        swallowed and the event must be ignored."""
        if not self._pairs:
            return False
        q = self._reported.get(spec)
        now = self._clock()
        while q and q[0] < now:
            q.popleft()
        if q:
            q.popleft()
            return True
        if spec in armed_for:
            self._seen[spec] = min(self._seen[spec] + 1, self.MAX_UNPAIRED)
            return True
        return False

    def clear(self) -> None:
        self._reported.clear()
        self._seen.clear()
