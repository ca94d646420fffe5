"""macOS ``FocusInfo``: the focused application and text field, through
the Accessibility (AX) API.

* Application: the focused application's executable name, lower-cased
  (``NSRunningApplication.executableURL``; the bundle id when there is
  none).  That is the vocabulary of the denylist's "executable name"
  entries, so the default entries ("keepassxc", "1password", "bitwarden")
  match on macOS too.
* Password: Secure Event Input (``IsSecureEventInputEnabled`` from Carbon)
  means some application is reading a secret, and the event tap sees no
  keys anyway; otherwise the focused element's role or subrole
  ``AXSecureTextField`` (Cocoa secure fields, and password inputs in
  Safari and Chromium).  Text fields with another role are not password
  fields; a terminal, whose password prompts AX cannot reveal, and elements
  that are not text fields give None ("cannot tell").
* Text before the caret: ``AXSelectedTextRange`` gives the caret (the start
  of the selection: typing replaces the selection) in UTF-16 units, and
  ``AXStringForRange`` reads only the characters before it (falling back to
  ``AXValue``), so a long document costs no more than a short field.  The
  text of a password field is never read.
* Caret: ``AXBoundsForRange`` of the empty range at the caret, or of the
  characters around it (``caret_geometry.caret_from_extents``).

Coordinates: AX reports global coordinates in points with the origin at the
top-left corner of the main display and y growing downwards (unlike Cocoa's
bottom-left origin).  That is exactly Qt's logical coordinate system on
macOS, so AX rectangles are only rounded (:func:`ax_box_to_rect`), never
scaled; displays left of or above the main one have negative coordinates.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import threading
from typing import Any, Callable, Optional

from daemon.controller.ports import FocusState, Rect
from daemon.frontends.overlay.platform.caret_geometry import Extents, caret_from_extents, usable
from daemon.frontends.overlay.platform.utf16 import strip_lone_surrogates, utf16_len, utf16_prefix

log = logging.getLogger(__name__)

SECURE_ROLE = "AXSecureTextField"
TEXT_ROLES = frozenset({"AXTextField", "AXTextArea", "AXComboBox"})
#: Executable names of terminal emulators (lower case): a shell's password
#: prompt looks like any other text there.
TERMINAL_APPS = frozenset({"terminal", "iterm2", "alacritty", "kitty", "wezterm-gui", "ghostty",
                           "hyper", "tabby"})
DEFAULT_MAX_CHARS = 2000
CARBON = "/System/Library/Frameworks/Carbon.framework/Carbon"

Box = Optional[tuple[float, float, float, float]]


# -- pure helpers (unit-tested) -----------------------------------------------------

def password_verdict(role: Optional[str], subrole: Optional[str], secure_input: Optional[bool],
                     terminal: bool = False) -> Optional[bool]:
    """Whether the focused element holds a secret; see the module docstring."""
    if secure_input:
        return True
    if role == SECURE_ROLE or subrole == SECURE_ROLE:
        return True
    if terminal or role not in TEXT_ROLES:
        return None
    return False


def app_id_from(executable: Optional[str], bundle_id: Optional[str]) -> str:
    """The denylist name of an application: its executable, else its bundle id."""
    name = (executable or "").strip() or (bundle_id or "").strip()
    return name.lower()


def read_window(caret: int, max_chars: int) -> tuple[int, int]:
    """The UTF-16 range ``(location, length)`` to read before the caret: twice
    ``max_chars`` units, enough for ``max_chars`` characters even if all of
    them are outside the BMP."""
    start = max(0, caret - 2 * max_chars)
    return start, caret - start


def tail_text(text: str, max_chars: int) -> str:
    """The last ``max_chars`` characters of a string read by UTF-16 range,
    without a half surrogate pair at either end."""
    text = strip_lone_surrogates(text)
    return text[len(text) - max_chars:] if max_chars > 0 else ""


def ax_box_to_rect(box: Box) -> Optional[Rect]:
    """An AX rectangle (global points, top-left origin) in Qt logical pixels:
    the same space, rounded to whole pixels."""
    if box is None:
        return None
    x, y, w, h = box
    return Rect(round(x), round(y), max(0, round(w)), max(0, round(h)))


def _extents(box: Box) -> Extents:
    rect = ax_box_to_rect(box)
    return None if rect is None else (rect.x, rect.y, rect.width, rect.height)


def caret_from_ax(insertion: Box, before: Box, at: Box, previous_char: Optional[str]) -> Optional[Rect]:
    """The caret from ``AXBoundsForRange`` answers: the empty range at the
    caret (``insertion``; Cocoa text views answer it with the insertion
    point), else the characters before and after it."""
    box = _extents(insertion)
    if usable(box):
        x, y, _w, h = box  # type: ignore[misc]
        return Rect(x, y, 1, h)
    return caret_from_extents(_extents(before), _extents(at), previous_char)


def element_token(pid: int, element_hash: int) -> int:
    """A ``FocusState.window_id`` for a focused element: changes when the
    application or the element does."""
    return (pid & 0xFFFFFFFF) << 32 | (element_hash & 0xFFFFFFFF)


# -- OS access -------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _secure_input_function() -> Any:
    fn = ctypes.CDLL(CARBON).IsSecureEventInputEnabled
    fn.restype, fn.argtypes = ctypes.c_bool, []
    return fn


def secure_input_enabled() -> Optional[bool]:
    """Whether any process has Secure Event Input on (None: cannot tell)."""
    try:
        return bool(_secure_input_function()())
    except (OSError, AttributeError):
        return None


class AppKitApps:
    """What MacFocus asks AppKit and CoreFoundation (replaced by a fake in tests)."""

    def __init__(self) -> None:
        from AppKit import NSRunningApplication, NSWorkspace
        from CoreFoundation import CFHash

        self._running, self._workspace, self._cfhash = NSRunningApplication, NSWorkspace, CFHash

    def frontmost_pid(self) -> int:
        app = self._workspace.sharedWorkspace().frontmostApplication()
        return int(app.processIdentifier()) if app is not None else 0

    def names(self, pid: int) -> tuple[Optional[str], Optional[str]]:
        """(executable file name, bundle id) of a running application."""
        app = self._running.runningApplicationWithProcessIdentifier_(pid)
        if app is None:
            return None, None
        url = app.executableURL()
        return (str(url.lastPathComponent()) if url is not None else None,
                str(app.bundleIdentifier() or "") or None)

    def element_hash(self, element: Any) -> int:
        return int(self._cfhash(element))


class MacFocus:
    """``FocusInfo`` for macOS; see the module docstring.  ``ax`` is a
    ``ax.AX``, ``apps`` an :class:`AppKitApps` (both faked in tests).
    Application names are cached per pid."""

    def __init__(self, ax: Any, apps: Optional[AppKitApps] = None,
                 secure_input: Callable[[], Optional[bool]] = secure_input_enabled,
                 max_chars: int = DEFAULT_MAX_CHARS) -> None:
        self._ax = ax
        self._apps = apps if apps is not None else AppKitApps()
        self._secure_input = secure_input
        self.max_chars = max_chars
        self._lock = threading.Lock()
        self._names: dict[int, str] = {}

    def watch(self, callback) -> bool:
        """No field events here: focus is followed by polling and keys."""
        return False

    def current(self) -> FocusState:
        with self._lock:
            return self._query()

    def close(self) -> None:
        pass

    # -- internals ---------------------------------------------------------------

    def _query(self) -> FocusState:
        ax = self._ax
        secure = self._secure_input()
        app = ax.attr(ax.system, "AXFocusedApplication")
        pid = ax.pid(app) if app is not None else self._apps.frontmost_pid()
        app_id = self._app_id(pid)
        element = ax.attr(app, "AXFocusedUIElement") if app is not None else None
        if element is None:
            return FocusState(app_id, element_token(pid, 0), True if secure else None)
        verdict = password_verdict(ax.attr(element, "AXRole"), ax.attr(element, "AXSubrole"),
                                   secure, terminal=app_id in TERMINAL_APPS)
        window_id = element_token(pid, self._apps.element_hash(element))
        if verdict:
            return FocusState(app_id, window_id, True)  # a secret's text is never read
        text, caret = self._text_and_caret(element)
        return FocusState(app_id, window_id, verdict, text, caret)

    def _text_and_caret(self, element: Any) -> tuple[Optional[str], Optional[Rect]]:
        ax = self._ax
        selection = ax.range(ax.attr(element, "AXSelectedTextRange"))
        if selection is None or selection[0] < 0:
            return None, None
        caret = selection[0]
        start, length = read_window(caret, self.max_chars)
        raw = ax.param(element, "AXStringForRange", start, length) if length else ""
        if raw is None:  # some fields answer AXValue only
            value = ax.attr(element, "AXValue")
            if not isinstance(value, str):
                return None, None
            raw = utf16_prefix(value, caret)
        text = tail_text(str(raw), self.max_chars)
        previous = text[-1:] or None
        insertion = ax.rect(ax.param(element, "AXBoundsForRange", caret, 0))
        if usable(_extents(insertion)):  # one round trip in the common case
            return text, caret_from_ax(insertion, None, None, previous)
        before = None
        if previous:
            units = utf16_len(previous)
            before = ax.rect(ax.param(element, "AXBoundsForRange", caret - units, units))
        at = ax.rect(ax.param(element, "AXBoundsForRange", caret, 1))
        return text, caret_from_ax(insertion, before, at, previous)

    def _app_id(self, pid: int) -> str:
        if not pid:
            return ""
        name = self._names.get(pid)
        if name is None:
            name = app_id_from(*self._apps.names(pid))
            if len(self._names) > 256:
                self._names.clear()
            self._names[pid] = name
        return name
