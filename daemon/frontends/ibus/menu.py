"""The input-source menu (GNOME's keyboard indicator, the IBus panel): on/off,
pause and the status line, then "Off in <application>" for
the application of the engine that registers them (the focused one), and
"Settings...".  What they do is a :class:`daemon.user_actions.UserActions`'s
job; without one (tests of the engine alone) the menu has neither."""

from __future__ import annotations

from typing import Optional

from daemon.frontends.ibus import wire
from daemon.user_actions import UserActions

PROP_ENABLED = "ghosttype.enabled"
PROP_PAUSED = "ghosttype.paused"
PROP_STATUS = "ghosttype.status"
PROP_OFF_IN_APP = "ghosttype.off_in_app"
PROP_SETTINGS = "ghosttype.settings"


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
        props.append(wire.Property(PROP_OFF_IN_APP, f"Off in {app}", type=wire.PROP_TYPE_TOGGLE, state=state))
    props.append(wire.Property(PROP_SETTINGS, "Settings…"))
    return props


def activate(actions: Optional[UserActions], app: str, name: str) -> bool:
    """Do what the entry ``name`` says; True when the menu must be registered
    again (its "Off in" entry changed)."""
    if actions is None:
        return False
    if name == PROP_OFF_IN_APP and app:
        actions.toggle_app(app)
        return True
    if name == PROP_SETTINGS:
        actions.open_settings()
    return False
