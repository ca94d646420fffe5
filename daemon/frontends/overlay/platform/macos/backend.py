"""The macOS platform: the selector's front door to the modules of this package.

* focus: ``focus`` (AX focused element, Secure Event Input)
* caret: ``caret`` (AX caret from the focus state, else near the pointer)
* accept keys: :class:`~daemon.frontends.overlay.platform.hook_suppress.HookKeySuppressor`
  deciding inside pynput's event tap (``darwin_intercept``)
* typing: ``inject`` (Quartz events with Unicode strings)

Needs pyobjc (``pyobjc-framework-ApplicationServices`` and
``pyobjc-framework-Quartz``, imported only here and in those modules) and
two permissions, which macOS grants to the *responsible* application: the
terminal ghosttype was started from, or the Python interpreter when the
LaunchAgent starts it.

* Accessibility: reading other applications' fields, and an event tap that
  may drop keys (``kCGEventTapOptionDefault``), and posting keys.  Without it
  nothing works, so :func:`parts` asks macOS to show its prompt and stops
  with instructions.
* Input Monitoring: listen-only event taps (pynput's mouse listener).
  Without it clicks go unseen; ghosttype asks for it and warns.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Callable, Optional, Sequence

from daemon.frontends.base import PlatformError
from daemon.frontends.overlay.platform.hook_suppress import HookKeySuppressor

log = logging.getLogger(__name__)

PYOBJC_HINT = "pip install pyobjc-framework-ApplicationServices pyobjc-framework-Quartz"
SETTINGS = "System Settings > Privacy & Security"


def permission_problems(trusted: bool, listen: Optional[bool], executable: str) -> tuple[Optional[str], list[str]]:
    """(fatal message or None, warnings) for the permission state:
    ``trusted`` is ``AXIsProcessTrusted``, ``listen`` is
    ``CGPreflightListenEventAccess`` (None before macOS 10.15, which has no
    Input Monitoring permission)."""
    who = (f"the application you started ghosttype from (your terminal), or {executable} "
           "when it runs as a LaunchAgent")
    fatal = None
    if not trusted:
        fatal = (f"ghosttype needs the Accessibility permission to read text fields and to type. "
                 f"Open {SETTINGS} > Accessibility, enable {who}, then start ghosttype again.")
    warnings = []
    if listen is False:
        warnings.append(f"Input Monitoring is not granted, so mouse clicks are not seen; enable "
                        f"{who} in {SETTINGS} > Input Monitoring and restart ghosttype.")
    return fatal, warnings


def parts(accept_keys: Sequence[str]) -> list[Callable[[], object]]:
    """Factories for focus, caret, injector and suppressor, in that order.
    Raises ``PlatformError`` when pyobjc is missing, a permission is missing,
    or an accept key is invalid."""
    if sys.platform != "darwin":
        raise PlatformError("the macOS backend runs on macOS only")
    try:
        import ApplicationServices
        import Quartz
    except ImportError as exc:
        raise PlatformError(f"the macOS backend needs pyobjc ({exc}); install it with `{PYOBJC_HINT}`") from exc
    from daemon.frontends.overlay.platform.macos.ax import AX
    from daemon.frontends.overlay.platform.macos.caret import MacCaretLocator
    from daemon.frontends.overlay.platform.macos.focus import MacFocus
    from daemon.frontends.overlay.platform.macos.inject import MacTextInjector
    from daemon.frontends.overlay.platform.macos.keys import make_decoder, parse_mac_keys

    try:
        parse_mac_keys(accept_keys)  # a config mistake is reported before anything starts
    except ValueError as exc:
        raise PlatformError(f"invalid accept key: {exc}") from exc
    _check_permissions(ApplicationServices, Quartz)
    ax = AX()

    def suppressor() -> HookKeySuppressor:
        return HookKeySuppressor(accept_keys, parse_mac_keys, make_decoder(Quartz, os.getpid()),
                                 backend="darwin")

    return [lambda: MacFocus(ax), lambda: MacCaretLocator(ax), MacTextInjector, suppressor]


def _check_permissions(app_services: object, quartz: object) -> None:
    AS, Q = app_services, quartz
    # Asking with the prompt option makes macOS show its "allow" dialog once.
    trusted = bool(AS.AXIsProcessTrustedWithOptions({AS.kAXTrustedCheckOptionPrompt: True}))  # type: ignore[attr-defined]
    preflight = getattr(Q, "CGPreflightListenEventAccess", None)
    listen = bool(preflight()) if preflight is not None else None
    fatal, warnings = permission_problems(trusted, listen, sys.executable)
    if listen is False:
        request = getattr(Q, "CGRequestListenEventAccess", None)
        if request is not None:
            request()  # shows the system prompt
    for warning in warnings:
        log.warning("%s", warning)
    if fatal:
        raise PlatformError(fatal)
