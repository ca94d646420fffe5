"""A thin adapter over the macOS Accessibility API (pyobjc's HIServices).

The AX C API returns error codes and wraps structures (ranges, rectangles)
in ``AXValue`` objects; this adapter turns both into plain Python: ``None``
for any error, tuples for structures.  It holds no logic of its own, so the
decisions made from its answers (``focus``) are tested with a fake of
this class.

Every call is a round trip to the target application.  The messaging
timeout set on the system-wide element applies to all elements, and bounds
how long a hung application can stall a focus query.
"""

from __future__ import annotations

from typing import Any, Optional

AX_SUCCESS = 0  #: kAXErrorSuccess


class AX:
    """See the module docstring.  Imports pyobjc when constructed."""

    def __init__(self, timeout_s: float = 0.05) -> None:
        import ApplicationServices as AS

        self._as = AS
        self.system = AS.AXUIElementCreateSystemWide()
        AS.AXUIElementSetMessagingTimeout(self.system, timeout_s)

    def attr(self, element: Any, name: str) -> Any:
        """An attribute's value (``AXRole``, ``AXValue``, ...), or None."""
        err, value = self._as.AXUIElementCopyAttributeValue(element, name, None)
        return value if err == AX_SUCCESS else None

    def param(self, element: Any, name: str, location: int, length: int) -> Any:
        """A range-parameterised attribute (``AXStringForRange``,
        ``AXBoundsForRange``) for ``(location, length)`` in UTF-16 units, or None."""
        rng = self._as.AXValueCreate(self._as.kAXValueCFRangeType, (location, length))
        if rng is None:
            return None
        err, value = self._as.AXUIElementCopyParameterizedAttributeValue(element, name, rng, None)
        return value if err == AX_SUCCESS else None

    def range(self, value: Any) -> Optional[tuple[int, int]]:
        """A CFRange ``AXValue`` as (location, length)."""
        ok, rng = self._unpack(value, self._as.kAXValueCFRangeType)
        return (int(rng.location), int(rng.length)) if ok else None

    def rect(self, value: Any) -> Optional[tuple[float, float, float, float]]:
        """A CGRect ``AXValue`` as (x, y, width, height) in global points."""
        ok, r = self._unpack(value, self._as.kAXValueCGRectType)
        return (r.origin.x, r.origin.y, r.size.width, r.size.height) if ok else None

    def point(self, value: Any) -> Optional[tuple[float, float]]:
        ok, p = self._unpack(value, self._as.kAXValueCGPointType)
        return (p.x, p.y) if ok else None

    def size(self, value: Any) -> Optional[tuple[float, float]]:
        ok, s = self._unpack(value, self._as.kAXValueCGSizeType)
        return (s.width, s.height) if ok else None

    def pid(self, element: Any) -> int:
        err, pid = self._as.AXUIElementGetPid(element, None)
        return int(pid) if err == AX_SUCCESS else 0

    def _unpack(self, value: Any, kind: int) -> tuple[bool, Any]:
        if value is None:
            return False, None
        try:
            ok, out = self._as.AXValueGetValue(value, kind, None)
        except (TypeError, ValueError):  # not an AXValue of that kind
            return False, None
        return bool(ok), out
