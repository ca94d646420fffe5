"""The Controller: one per daemon, shared by every frontend.

A frontend hands it keys, focus changes and field events, asks it what an
accept key inserts, and implements its ports (:mod:`daemon.controller.ports`);
the suggestion worker hands it results.  The class is assembled in
:mod:`daemon.controller.core` from one part per job (``keys``, ``focus``,
``field``, ``status``); ``anchor`` says which field state a suggestion
belongs to.
"""

from daemon.controller.core import Controller
from daemon.controller.field import MIN_GHOST_ROOM_PX, SETTLE_POLL_S, SETTLE_S
from daemon.controller.keys import event_spec, next_word
from daemon.controller.ports import ControllerState, Drawn, UiSink, WorkerLike

__all__ = [
    "Controller",
    "ControllerState",
    "Drawn",
    "MIN_GHOST_ROOM_PX",
    "SETTLE_POLL_S",
    "SETTLE_S",
    "UiSink",
    "WorkerLike",
    "event_spec",
    "next_word",
]
