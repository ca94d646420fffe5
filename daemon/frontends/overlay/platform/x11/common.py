"""What the X11 backend modules share: connecting, XTEST, modifier bits,
window geometry.  Each backend object owns its own connection (an Xlib
connection must not be used from several threads without care, and these
objects are driven from different threads); connections are cheap."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional

from Xlib import X, XK, error
from Xlib.display import Display

from daemon.controller.ports import Rect
from daemon.frontends.base import PlatformError


def open_display(name: str | None = None) -> Display:
    """Connect to the X server, turning Xlib's errors into a ``PlatformError``
    that says what to check."""
    shown = name or os.environ.get("DISPLAY") or "(unset)"
    try:
        return Display(name)
    except (error.DisplayError, error.ConnectionClosedError, OSError) as exc:
        raise PlatformError(
            f"cannot connect to the X server at DISPLAY={shown}: {exc}. "
            "Check that the X session is running and that this user may connect "
            "(XAUTHORITY set, or `xhost +SI:localuser:$USER`)."
        ) from exc


def require_xtest(display: Display) -> None:
    """XTEST is how keys are typed (xterm and others ignore XSendEvent)."""
    if not display.has_extension("XTEST"):
        raise PlatformError(
            "the X server has no XTEST extension, so ghosttype cannot type suggestions; "
            "enable it in the server configuration (it is on by default in Xorg and Xvfb)"
        )


# --------------------------------------------------------------------------- #
# Modifiers                                                                   #
# --------------------------------------------------------------------------- #

MOD_MASKS = (X.ShiftMask, X.LockMask, X.ControlMask, X.Mod1Mask, X.Mod2Mask,
              X.Mod3Mask, X.Mod4Mask, X.Mod5Mask)


@dataclass(frozen=True)
class ModifierBits:
    """Which modifier bit each logical modifier lives on in this server's
    modifier mapping (Alt is usually Mod1, NumLock Mod2, Super Mod4, but
    layouts move them)."""

    bits: dict  #: "shift" | "ctrl" | "alt" | "super" -> mask
    lock_masks: tuple[int, ...]  #: CapsLock, NumLock, ScrollLock masks (ignored by grabs)
    keycodes: tuple[tuple[int, ...], ...]  #: keycodes per modifier index 0..7

    @classmethod
    def read(cls, display: Display) -> "ModifierBits":
        mapping = [tuple(k for k in row if k) for row in display.get_modifier_mapping()]

        def mask_of(*names: str, default: int) -> int:
            wanted = {XK.string_to_keysym(n) for n in names}
            for index, codes in enumerate(mapping):
                for code in codes:
                    syms = {display.keycode_to_keysym(code, i) for i in range(4)}
                    if syms & wanted:
                        return MOD_MASKS[index]
            return default

        bits = {
            "shift": X.ShiftMask,
            "ctrl": X.ControlMask,
            "alt": mask_of("Alt_L", "Alt_R", "Meta_L", "Meta_R", default=X.Mod1Mask),
            "super": mask_of("Super_L", "Super_R", "Hyper_L", "Hyper_R", default=X.Mod4Mask),
        }
        locks = [X.LockMask, mask_of("Num_Lock", default=0), mask_of("Scroll_Lock", default=0)]
        return cls(bits=bits, lock_masks=tuple(m for m in locks if m), keycodes=tuple(mapping))


def window_rect(display: Display, root, window_id: int) -> Optional[Rect]:
    """A window's rectangle in root (device pixel) coordinates, or None if it
    is gone."""
    if not window_id:
        return None
    try:
        window = display.create_resource_object("window", window_id)
        geo = window.get_geometry()
        origin = root.translate_coords(window, 0, 0)
        return Rect(origin.x, origin.y, geo.width, geo.height)
    except (error.XError, error.ConnectionClosedError):
        return None
