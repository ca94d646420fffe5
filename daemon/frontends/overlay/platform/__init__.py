"""Choose the platform backend for this session.

``select_platform()`` is the one place that decides which implementation of
the controller's OS ports (``daemon.controller.ports``) ghosttype uses.  It looks at the OS and
the display server (``daemon.frontends.session``), honours the override
``GHOSTTYPE_PLATFORM`` (``x11``, ``wayland``, ``macos``, ``windows``), logs
what it chose, and otherwise raises ``PlatformError`` with a message that says
how to fix the situation.

Backend modules (Xlib, AT-SPI, pyobjc, Win32) are imported only here, on
demand, so that importing the ports stays free of display
libraries.  The macOS and Windows front doors (``macos.parts``,
``windows.parts``) return factories for focus, caret, injector and
suppressor; :func:`_assemble` builds them and closes what was built if a
later one fails.
"""

from __future__ import annotations

import importlib
import logging
import os
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

from daemon.controller.ports import CaretLocator, FocusInfo
from daemon.frontends.base import ListenerHook, PlatformError
from daemon.frontends.overlay.platform.ports import KeySuppressor, TextInjector
from daemon.frontends.session import DisplayServer, Session, detect_session

log = logging.getLogger(__name__)

ENV_OVERRIDE = "GHOSTTYPE_PLATFORM"
KNOWN_PLATFORMS = ("x11", "wayland", "macos", "windows")
DEFAULT_ACCEPT_KEYS = ("Tab", "ctrl+Right")

WAYLAND_HELP = (
    "`ghosttype run` watches keys from outside the applications, which Wayland does "
    "not allow (no reading other applications' keys, grabbing keys or typing into them). "
    "On Wayland use ghosttype as an input-method engine instead: run "
    "`ghosttype ibus install`, then add ghosttype as an input source (GNOME: Settings › "
    "Keyboard › Input Sources). Other options: an X11 session, or XWayland with DISPLAY "
    "set (X11 applications only). A uinput backend does not exist."
)


@dataclass
class Platform:
    """The OS touchpoints for one session, bundled for the composition root."""

    name: str  #: "x11", ...
    focus: FocusInfo
    caret: CaretLocator
    suppressor: KeySuppressor
    injector: TextInjector
    session: Optional[Session] = None
    #: The accept-key filter the keyboard listener must install (Windows,
    #: macOS: see ``base.ListenerHook``); None where the suppressor grabs
    #: keys itself (X11).
    listener_hook: Optional[ListenerHook] = None

    def close(self) -> None:
        """Release everything (the suppressor first: it must leave no grab behind)."""
        for part in (self.suppressor, self.injector, self.caret, self.focus):
            close = getattr(part, "close", None)
            if close is None:
                continue
            try:
                close()
            except Exception:  # closing must finish even if one part fails
                log.exception("closing %s failed", type(part).__name__)


def select_platform(
    env: Mapping[str, str] | None = None,
    *,
    accept_keys: Sequence[str] = DEFAULT_ACCEPT_KEYS,
    scale: float | Callable[[], float] = 1.0,
    use_atspi: bool = True,
    os_name: str | None = None,
) -> Platform:
    """Build the platform backend for this session.

    ``accept_keys`` are the key names the suppressor grabs (config
    ``accept_key`` and ``accept_word_key``); ``scale`` is the screen scale
    factor (or a callable returning it) for converting X11 caret positions to
    Qt logical pixels (macOS and Windows convert per display themselves);
    ``os_name`` defaults to ``sys.platform`` (tests pass it).
    """
    env = os.environ if env is None else env
    session = detect_session(env, os_name)
    choice = (env.get(ENV_OVERRIDE) or "").strip().lower()
    if choice:
        if choice not in KNOWN_PLATFORMS:
            raise PlatformError(
                f"{ENV_OVERRIDE}={choice!r} is not a known platform; use one of: "
                + ", ".join(KNOWN_PLATFORMS) + " (or unset it to detect automatically)"
            )
        log.info("platform forced by %s=%s (session: %s)", ENV_OVERRIDE, choice, session.describe())
    else:
        choice = _choose(session)
    if choice == "x11":
        return _x11(env, session, accept_keys, scale, use_atspi)
    if choice == "wayland":
        raise PlatformError(WAYLAND_HELP)
    if choice in ("macos", "windows"):
        return _native(choice, session, accept_keys)
    raise AssertionError(choice)  # pragma: no cover - _choose covers every server


def _choose(session: Session) -> str:
    server = session.server
    if server is DisplayServer.X11:
        return "x11"
    if server is DisplayServer.XWAYLAND:
        log.warning(
            "Wayland session with XWayland: ghosttype uses X11 and works in X11 "
            "applications only; native Wayland windows get no suggestions "
            "(for those, use the input-method engine: ghosttype ibus install)"
        )
        return "x11"
    if server is DisplayServer.WAYLAND:
        return "wayland"
    if server is DisplayServer.MACOS:
        return "macos"
    if server is DisplayServer.WINDOWS:
        return "windows"
    raise PlatformError(
        "no graphical session: DISPLAY is not set. Run ghosttype inside your desktop "
        "session (e.g. from its autostart), or set DISPLAY to your X server, e.g. DISPLAY=:0"
    )


def _x11(env: Mapping[str, str], session: Session, accept_keys: Sequence[str],
         scale: float | Callable[[], float], use_atspi: bool) -> Platform:
    display = env.get("DISPLAY") or None
    if display is None:
        raise PlatformError(
            "the X11 backend needs DISPLAY (e.g. DISPLAY=:0); it is not set in this environment"
        )
    try:
        from daemon.frontends.overlay.platform.x11 import backend as x11
    except ImportError as exc:
        raise PlatformError(
            f"the X11 backend needs python-xlib ({exc}); install it with `pip install python-xlib`"
        ) from exc
    from daemon.frontends.overlay.platform.x11.keys import KeyNameError, parse_keys

    try:
        parse_keys(accept_keys)  # a config mistake is reported before any connection
    except KeyNameError as exc:
        raise PlatformError(f"invalid accept key: {exc}") from exc
    atspi = _atspi(env) if use_atspi else None
    focus, caret, injector, suppressor = _assemble([
        lambda: x11.X11Focus(display, atspi=atspi),
        lambda: x11.X11CaretLocator(display, scale=scale),
        lambda: x11.X11TextInjector(display),
        lambda: x11.X11KeySuppressor(accept_keys, display),
    ])
    log.info(
        "platform: x11 on DISPLAY=%s (%s); accessibility: %s; accept keys: %s",
        display, session.describe(), "AT-SPI" if atspi is not None else "off",
        ", ".join(accept_keys),
    )
    return Platform("x11", focus, caret, suppressor, injector, session)  # type: ignore[arg-type]


def _native(name: str, session: Session, accept_keys: Sequence[str]) -> Platform:
    """The macOS or Windows backend (``daemon.frontends.overlay.platform.macos.backend`` / ``.windows``)."""
    module = importlib.import_module(f"daemon.frontends.overlay.platform.{name}.backend")
    focus, caret, injector, suppressor = _assemble(module.parts(accept_keys))
    log.info("platform: %s (%s); accept keys: %s", name, session.describe(), ", ".join(accept_keys))
    return Platform(name, focus, caret, suppressor, injector, session,  # type: ignore[arg-type]
                    listener_hook=suppressor.listener_hook)  # type: ignore[attr-defined]


def _assemble(factories: Sequence[Callable[[], object]]) -> list[object]:
    """Call ``factories`` in order; if one raises, close the parts already
    built (newest first) so no connection, grab or thread is left behind."""
    parts: list[object] = []
    try:
        for factory in factories:
            parts.append(factory())
    except BaseException:
        for part in reversed(parts):
            try:
                part.close()  # type: ignore[attr-defined]
            except Exception:
                pass
        raise
    return parts


def _atspi(env: Mapping[str, str]) -> object | None:
    """The AT-SPI reader, when its module imports and a session bus exists."""
    bus = env.get("DBUS_SESSION_BUS_ADDRESS")
    if not bus:
        runtime = env.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"
        if not os.path.exists(os.path.join(runtime, "bus")):
            log.info("no D-Bus session bus: accessibility (AT-SPI) is off")
            return None
    try:
        module = importlib.import_module("daemon.frontends.overlay.platform.atspi.reader")
    except ImportError as exc:
        log.info("accessibility (AT-SPI) unavailable: %s", exc)
        return None
    try:
        return module.AtspiFocus()
    except Exception as exc:  # a broken bus must not stop the daemon
        log.warning("accessibility (AT-SPI) unavailable: %s", exc)
        return None
