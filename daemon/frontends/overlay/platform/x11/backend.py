"""The X11 platform: focus, caret fallback, accept-key suppression, text
injection, built on python-xlib.

One module per job (``focus``, ``caret``, ``suppress``,
``inject``, shared bits in ``common``, key names in ``keys``);
this module is the backend's front door for the platform selector.  Only
these modules import Xlib.
"""

from __future__ import annotations

from daemon.frontends.overlay.platform.x11.caret import X11CaretLocator
from daemon.frontends.overlay.platform.x11.common import ModifierBits, open_display, require_xtest
from daemon.frontends.overlay.platform.x11.focus import X11Focus
from daemon.frontends.overlay.platform.x11.inject import X11TextInjector
from daemon.frontends.overlay.platform.x11.suppress import DEFAULT_KEYS, X11KeySuppressor

__all__ = [
    "DEFAULT_KEYS",
    "ModifierBits",
    "X11CaretLocator",
    "X11Focus",
    "X11KeySuppressor",
    "X11TextInjector",
    "open_display",
    "require_xtest",
]
