"""The Controller, shared by every frontend (see :mod:`daemon.controller.core`)."""

from daemon.controller.core import (  # noqa: F401
    MIN_GHOST_ROOM_PX,
    SETTLE_POLL_S,
    SETTLE_S,
    Controller,
    ControllerState,
    SwallowLedger,
    UiSink,
    WorkerLike,
    event_spec,
    next_word,
)
