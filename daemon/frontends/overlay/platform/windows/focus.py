"""Windows ``FocusInfo``: the foreground window, its executable, and whether
the focused control is a password field.

* Application: the executable of the foreground window's process
  (``QueryFullProcessImageNameW``), as its lower-case file name without
  ``.exe``, which is what the denylist's "executable name" entries match
  ("KeePassXC.exe" -> "keepassxc").  ``PROCESS_QUERY_LIMITED_INFORMATION``
  is granted even for elevated processes, so this works for them too.
* Window id: the focused control's window (``GetGUIThreadInfo``'s
  ``hwndFocus``) when known, else the foreground window, so moving between
  the fields of a dialog counts as a focus change.
* Password: UI Automation's ``IsPassword`` (``uia``, when comtypes is
  installed) and, for classic edit controls, the ``ES_PASSWORD`` style, which
  costs two cheap calls and needs no COM.  Neither knowing: None.

Text before the caret and the caret itself are not read here (the caret
comes from ``caret``); the controller uses its own keystroke buffer.
"""

from __future__ import annotations

import ctypes
import logging
import ntpath
from typing import Optional

from daemon.controller.ports import FocusState
from daemon.frontends.overlay.platform.windows.api import (
    DWORD,
    ES_PASSWORD,
    GUITHREADINFO,
    GWL_STYLE,
    PROCESS_QUERY_LIMITED_INFORMATION,
    kernel32,
    user32,
)

log = logging.getLogger(__name__)

#: Window classes of controls that honour ``ES_PASSWORD`` (compared lower-case):
#: the system edit control, rich edit controls and Windows Forms' text box.
_EDIT_CLASSES = ("edit", "richedit", "windowsforms10.edit")


def exe_stem(path: str) -> str:
    """``C:\\Program Files\\KeePassXC\\KeePassXC.exe`` -> ``keepassxc``."""
    name = ntpath.basename(path.strip()).lower()
    return name[:-4] if name.endswith(".exe") else name


def edit_password(class_name: str, style: int) -> Optional[bool]:
    """Whether a classic edit control masks its text; None for any other
    window class (the style bit means something else there)."""
    cls = class_name.lower()
    if not cls.startswith(_EDIT_CLASSES):
        return None
    return bool(style & ES_PASSWORD)


def password_verdict(uia: Optional[bool], edit: Optional[bool]) -> Optional[bool]:
    """Combine the two sources: either saying "password" wins (a wrong True
    only costs suggestions, a wrong False leaks a secret into the buffer);
    otherwise any definite answer; otherwise None."""
    if uia or edit:
        return True
    if uia is False or edit is False:
        return False
    return None


class WindowsFocus:
    """``FocusInfo`` for Windows; see the module docstring.  ``uia`` is a
    ``uia.UiaPasswordProbe`` or None."""

    def __init__(self, uia: Optional[object] = None) -> None:
        self._user32 = user32()
        self._kernel32 = kernel32()
        self._uia = uia

    def watch(self, callback) -> bool:
        """No field events here: focus is followed by polling and keys."""
        return False

    def current(self) -> FocusState:
        u = self._user32
        hwnd = u.GetForegroundWindow()
        if not hwnd:
            return FocusState()
        pid = DWORD()
        thread = u.GetWindowThreadProcessId(hwnd, ctypes.byref(pid))
        info = GUITHREADINFO(cbSize=ctypes.sizeof(GUITHREADINFO))
        focused = info.hwndFocus if thread and u.GetGUIThreadInfo(thread, ctypes.byref(info)) else None
        edit = self._edit_password(focused) if focused else None
        uia = self._uia.is_password() if self._uia is not None else None  # type: ignore[attr-defined]
        return FocusState(
            app_id=self._exe(pid.value),
            window_id=int(focused or hwnd),
            is_password=password_verdict(uia, edit),
        )

    def close(self) -> None:
        if self._uia is not None:
            self._uia.close()  # type: ignore[attr-defined]

    # -- internals ---------------------------------------------------------------

    def _exe(self, pid: int) -> str:
        if not pid:
            return ""
        k = self._kernel32
        handle = k.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
        if not handle:
            return ""  # a protected process, or it just exited
        try:
            size = DWORD(32768)
            buffer = ctypes.create_unicode_buffer(size.value)
            if not k.QueryFullProcessImageNameW(handle, 0, buffer, ctypes.byref(size)):
                return ""
            return exe_stem(buffer.value)
        finally:
            k.CloseHandle(handle)

    def _edit_password(self, hwnd: int) -> Optional[bool]:
        buffer = ctypes.create_unicode_buffer(256)
        if not self._user32.GetClassNameW(hwnd, buffer, len(buffer)):
            return None
        return edit_password(buffer.value, int(self._user32.GetWindowLongW(hwnd, GWL_STYLE)))
