"""The Windows platform: the selector's front door to the modules of this package.

* focus: ``focus`` (foreground window, executable, password field
  via UI Automation when ``comtypes`` is installed, and classic edit styles)
* caret: ``caret`` (system caret, physical -> Qt logical pixels)
* accept keys: :class:`~daemon.frontends.overlay.platform.hook_suppress.HookKeySuppressor`
  deciding inside pynput's low-level keyboard hook (``win32_event_filter``)
* typing: ``inject`` (``SendInput`` with Unicode key events)

Only ctypes is required; everything is loaded when :func:`parts` runs.
"""

from __future__ import annotations

import importlib.util
import logging
import sys
from typing import Callable, Sequence

from daemon.frontends.base import PlatformError
from daemon.frontends.overlay.platform.hook_suppress import HookKeySuppressor

log = logging.getLogger(__name__)


def parts(accept_keys: Sequence[str]) -> list[Callable[[], object]]:
    """Factories for focus, caret, injector and suppressor, in that order.
    Raises ``PlatformError`` when this is not Windows or a key is invalid."""
    if not sys.platform.startswith(("win32", "cygwin")):
        raise PlatformError("the Windows backend runs on Windows only")
    from daemon.frontends.overlay.platform.windows import api as windows_api
    from daemon.frontends.overlay.platform.windows.caret import WindowsCaretLocator
    from daemon.frontends.overlay.platform.windows.focus import WindowsFocus
    from daemon.frontends.overlay.platform.windows.inject import WindowsTextInjector
    from daemon.frontends.overlay.platform.windows.keys import decode_hook_event, held_modifiers, parse_vk_keys

    user32 = windows_api.user32()

    def is_down(vk: int) -> bool:
        return bool(user32.GetAsyncKeyState(vk) & 0x8000)

    def vk_scan(ch: str) -> int:
        return int(user32.VkKeyScanW(ch))

    def parse(names: Sequence[str]):
        return parse_vk_keys(names, vk_scan)

    try:
        parse(accept_keys)  # a config mistake is reported before anything starts
    except ValueError as exc:
        raise PlatformError(f"invalid accept key: {exc}") from exc

    def focus() -> WindowsFocus:
        return WindowsFocus(uia=_uia_probe())

    def suppressor() -> HookKeySuppressor:
        return HookKeySuppressor(
            accept_keys, parse,
            decode=lambda msg, data: decode_hook_event(msg, data, lambda: held_modifiers(is_down)),
            backend="win32",
        )

    return [focus, WindowsCaretLocator, lambda: WindowsTextInjector(is_down), suppressor]


def _uia_probe() -> object | None:
    """The UI Automation password probe, or None without comtypes.  comtypes
    is looked up, not imported: importing it initialises COM on the importing
    thread, which must be the probe's own thread (see ``uia``)."""
    if importlib.util.find_spec("comtypes") is None:
        log.info("comtypes is not installed: password fields are recognised in classic "
                 "edit controls only (pip install comtypes)")
        return None
    from daemon.frontends.overlay.platform.windows.uia import UiaPasswordProbe

    return UiaPasswordProbe()
