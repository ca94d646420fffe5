"""The engine's entries in the input-source menu (GNOME's keyboard indicator,
IBus's panel): *Suggestions enabled*, *Paused* and the status line."""

from __future__ import annotations

from daemon.frontends.ibus import wire

PROP_ENABLED = "ghosttype.enabled"
PROP_PAUSED = "ghosttype.paused"
PROP_STATUS = "ghosttype.status"


def menu(enabled: bool, paused: bool, status: str, message: str) -> list[wire.Property]:
    """The menu's properties for the controller's state and status."""
    return [
        wire.Property(PROP_ENABLED, "Suggestions enabled", type=wire.PROP_TYPE_TOGGLE,
                      state=wire.PROP_STATE_CHECKED if enabled else wire.PROP_STATE_UNCHECKED),
        wire.Property(PROP_PAUSED, "Paused", type=wire.PROP_TYPE_TOGGLE,
                      state=wire.PROP_STATE_CHECKED if paused else wire.PROP_STATE_UNCHECKED),
        wire.Property(PROP_STATUS, f"ghosttype: {status}" + (f" ({message})" if message else ""), sensitive=False),
    ]
