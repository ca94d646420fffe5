"""The input-source menu (GNOME's keyboard indicator, the IBus panel): on/off,
pause and the status line, then "Off in <application>" for
the application of the engine that registers them (the focused one), and
"Settings...".  Without a :class:`daemon.user_actions.UserActions` (tests of
the engine alone) the menu has neither of the last two.

Who chose an entry, the engine cannot know.  ibus-daemon hands the engine a
panel's ``PropertyActivate`` (the signal of the process that owns
``org.freedesktop.IBus.Panel``, for the focused input context) and an input
context's own ``PropertyActivate`` method (any IBus client, a sandboxed one
through IBus's portal too, for the context it created under a client name it
chose) as the same call from ibus-daemon, with the same two arguments.  So an
activation here can only do what any program that talks to IBus may do:

* switch ghosttype off or pause it, for this session (what the pause key does,
  which such a program can press in its own input context anyway);
* switch it on again or resume, except where the config file switches it off
  (``enabled = false``): the menu never overrides a saved choice;
* open the settings window, where nothing changes until the user saves.

The denylist is never written from here: "Off in <application>" shows whether
ghosttype is off there, read-only.  It is changed in the settings window
(*Settings...*, or ``ghosttype settings``), or in the config file.
"""

from __future__ import annotations

import logging
from typing import Optional, Protocol

from daemon.config import Config
from daemon.frontends.ibus import wire
from daemon.user_actions import UserActions

log = logging.getLogger(__name__)

PROP_ENABLED = "ghosttype.enabled"
PROP_PAUSED = "ghosttype.paused"
PROP_STATUS = "ghosttype.status"
PROP_OFF_IN_APP = "ghosttype.off_in_app"
PROP_SETTINGS = "ghosttype.settings"


class Switches(Protocol):
    """The controller's switches the menu turns."""

    @property
    def config(self) -> Config: ...
    def set_enabled(self, enabled: bool) -> None: ...
    def set_paused(self, paused: bool) -> None: ...


def entries(enabled: bool, paused: bool, status: str, message: str, actions: Optional[UserActions],
            app: str) -> list[wire.Property]:
    """The whole menu: on/off, pause, the status line, then :func:`properties`."""
    return [
        wire.Property(PROP_ENABLED, "Suggestions enabled", type=wire.PROP_TYPE_TOGGLE,
                      state=wire.PROP_STATE_CHECKED if enabled else wire.PROP_STATE_UNCHECKED),
        wire.Property(PROP_PAUSED, "Paused", type=wire.PROP_TYPE_TOGGLE,
                      state=wire.PROP_STATE_CHECKED if paused else wire.PROP_STATE_UNCHECKED),
        wire.Property(PROP_STATUS, f"ghosttype: {status}" + (f" ({message})" if message else ""), sensitive=False),
    ] + properties(actions, app)


def properties(actions: Optional[UserActions], app: str) -> list[wire.Property]:
    """The entries for an engine whose client names ``app`` ("" when it names none)."""
    if actions is None:
        return []
    props = []
    if app:
        state = wire.PROP_STATE_CHECKED if actions.is_denied(app) else wire.PROP_STATE_UNCHECKED
        props.append(wire.Property(PROP_OFF_IN_APP, f"Off in {app}", type=wire.PROP_TYPE_TOGGLE, state=state,
                                   tooltip="Set in Settings…, Applications", sensitive=False))
    props.append(wire.Property(PROP_SETTINGS, "Settings…"))
    return props


def activate(switches: Switches, actions: Optional[UserActions], name: str, checked: bool) -> bool:
    """Do what the entry ``name`` allows (see the module docstring); True when
    the menu must be registered again (the panel shows a state that did not
    come true)."""
    if name == PROP_ENABLED:
        if checked and not switches.config.enabled:
            log.info("not switched on from the input-source menu: the config file switches ghosttype off")
            return True
        switches.set_enabled(checked)
    elif name == PROP_PAUSED:
        switches.set_paused(checked)
    elif name == PROP_SETTINGS and actions is not None:
        actions.open_settings()
    elif name == PROP_OFF_IN_APP:
        log.info("the denylist is not changed from the input-source menu: Settings… changes it")
        return True
    return False
