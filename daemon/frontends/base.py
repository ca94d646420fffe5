"""What the overlay frontend's platform backends share besides the
controller's ports (:mod:`daemon.controller.ports`, which they implement):
the accept-key filter a keyboard hook installs, and the error a platform
that cannot be used raises."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class ListenerHook:
    """A key filter that must run inside the keyboard listener's own OS hook.

    On Windows (low-level keyboard hook) and macOS (event tap) the only way to
    swallow a key is to decide inside the hook that already delivers every key
    to pynput: a second hook would race the first.  A suppressor for those
    systems therefore hands the keyboard adapter (``daemon.frontends.overlay.keyboard``,
    the only module that knows pynput) this plain callable, and the adapter
    installs it through pynput's ``win32_event_filter`` / ``darwin_intercept``
    listener options.  Nothing here depends on pynput.

    ``swallow(a, b)`` receives the backend's raw event pair, ``(msg,
    KBDLLHOOKSTRUCT)`` on ``"win32"`` and ``(event_type, CGEventRef)`` on
    ``"darwin"``, and returns True to drop the event before any application
    sees it.  It runs on the hook thread with a system deadline, so it must
    decide in microseconds and never block.
    """

    backend: str  #: "win32" or "darwin": whose raw events ``swallow`` understands
    swallow: Callable[[Any, Any], bool]


class PlatformError(RuntimeError):
    """The platform cannot be used; the message says how to fix it."""

