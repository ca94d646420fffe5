"""The Win32 structures and functions ghosttype uses, declared with ctypes.

Structures are plain ctypes definitions and import on any OS (tests check
their layout); the DLLs are loaded on first use by :func:`user32` and
:func:`kernel32`.  They are private ``WinDLL`` instances rather than
``ctypes.windll.user32``: setting ``argtypes`` on the shared ``windll``
function objects would change them for pynput too, which declares its own.
Functions a Windows version lacks are left out (see :func:`has`).
"""

from __future__ import annotations

import ctypes
import functools
from ctypes import wintypes
from typing import Any, Optional

from daemon.frontends.base import PlatformError

# Fixed-size types spelled out: ``ctypes.wintypes`` maps DWORD and LONG to C
# ``long``, which is 4 bytes on Windows but 8 on Linux and macOS, so the
# structures would only have their Windows layout on Windows.  With these
# they have it everywhere, and their layout is tested on any OS.
DWORD = ctypes.c_uint32
LONG = ctypes.c_int32
WORD = ctypes.c_uint16
BOOL = ctypes.c_int32
UINT = ctypes.c_uint32
HANDLE = ctypes.c_void_p
HWND = HANDLE
HMONITOR = HANDLE
ULONG_PTR = ctypes.c_size_t  # pointer-sized unsigned, as in the Windows headers

INPUT_KEYBOARD = 1
KEYEVENTF_EXTENDEDKEY = 0x0001
KEYEVENTF_KEYUP = 0x0002
KEYEVENTF_UNICODE = 0x0004

PROCESS_QUERY_LIMITED_INFORMATION = 0x1000
MONITOR_DEFAULTTONEAREST = 2
MDT_EFFECTIVE_DPI = 0
GWL_STYLE = -16
ES_PASSWORD = 0x0020
DPI_AWARENESS_UNAWARE = 0


class POINT(ctypes.Structure):
    _fields_ = [("x", LONG), ("y", LONG)]


class RECT(ctypes.Structure):
    _fields_ = [("left", LONG), ("top", LONG), ("right", LONG), ("bottom", LONG)]


class KEYBDINPUT(ctypes.Structure):
    _fields_ = [
        ("wVk", WORD),
        ("wScan", WORD),
        ("dwFlags", DWORD),
        ("time", DWORD),
        ("dwExtraInfo", ULONG_PTR),
    ]


class MOUSEINPUT(ctypes.Structure):
    _fields_ = [
        ("dx", LONG),
        ("dy", LONG),
        ("mouseData", DWORD),
        ("dwFlags", DWORD),
        ("time", DWORD),
        ("dwExtraInfo", ULONG_PTR),
    ]


class HARDWAREINPUT(ctypes.Structure):
    _fields_ = [("uMsg", DWORD), ("wParamL", WORD), ("wParamH", WORD)]


class _INPUTUNION(ctypes.Union):
    # MOUSEINPUT is the largest member: without it sizeof(INPUT) is wrong and
    # SendInput rejects every event (cbSize mismatch).
    _fields_ = [("mi", MOUSEINPUT), ("ki", KEYBDINPUT), ("hi", HARDWAREINPUT)]


class INPUT(ctypes.Structure):
    _anonymous_ = ("u",)
    _fields_ = [("type", DWORD), ("u", _INPUTUNION)]


class GUITHREADINFO(ctypes.Structure):
    _fields_ = [
        ("cbSize", DWORD),
        ("flags", DWORD),
        ("hwndActive", HWND),
        ("hwndFocus", HWND),
        ("hwndCapture", HWND),
        ("hwndMenuOwner", HWND),
        ("hwndMoveSize", HWND),
        ("hwndCaret", HWND),
        ("rcCaret", RECT),
    ]


class MONITORINFO(ctypes.Structure):
    _fields_ = [
        ("cbSize", DWORD),
        ("rcMonitor", RECT),
        ("rcWork", RECT),
        ("dwFlags", DWORD),
    ]


#: name -> (restype, argtypes); functions missing on old Windows are skipped.
_USER32 = {
    "GetForegroundWindow": (HWND, []),
    "GetWindowThreadProcessId": (DWORD, [HWND, ctypes.POINTER(DWORD)]),
    "GetGUIThreadInfo": (BOOL, [DWORD, ctypes.POINTER(GUITHREADINFO)]),
    "ClientToScreen": (BOOL, [HWND, ctypes.POINTER(POINT)]),
    "GetWindowRect": (BOOL, [HWND, ctypes.POINTER(RECT)]),
    "GetCursorPos": (BOOL, [ctypes.POINTER(POINT)]),
    "MonitorFromPoint": (HMONITOR, [POINT, DWORD]),
    "GetMonitorInfoW": (BOOL, [HMONITOR, ctypes.POINTER(MONITORINFO)]),
    "GetThreadDpiAwarenessContext": (HANDLE, []),  # Windows 10 1607+
    "GetAwarenessFromDpiAwarenessContext": (ctypes.c_int, [HANDLE]),
    "GetClassNameW": (ctypes.c_int, [HWND, wintypes.LPWSTR, ctypes.c_int]),
    "GetWindowLongW": (LONG, [HWND, ctypes.c_int]),
    "GetAsyncKeyState": (wintypes.SHORT, [ctypes.c_int]),
    "VkKeyScanW": (wintypes.SHORT, [wintypes.WCHAR]),
    "SendInput": (UINT, [UINT, ctypes.POINTER(INPUT), ctypes.c_int]),
}
_SHCORE = {  # Windows 8.1+
    "GetDpiForMonitor": (ctypes.c_long, [HMONITOR, ctypes.c_int,
                                         ctypes.POINTER(UINT), ctypes.POINTER(UINT)]),
}
_KERNEL32 = {
    "OpenProcess": (HANDLE, [DWORD, BOOL, DWORD]),
    "QueryFullProcessImageNameW": (
        BOOL, [HANDLE, DWORD, wintypes.LPWSTR, ctypes.POINTER(DWORD)]),
    "CloseHandle": (BOOL, [HANDLE]),
}


def _load(name: str, table: dict[str, tuple[Any, list[Any]]]) -> Any:
    loader = getattr(ctypes, "WinDLL", None)
    if loader is None:
        raise PlatformError("the Windows backend runs on Windows only (ctypes has no WinDLL here)")
    dll = loader(name, use_last_error=True)
    for fn_name, (restype, argtypes) in table.items():
        fn = getattr(dll, fn_name, None)
        if fn is not None:
            fn.restype, fn.argtypes = restype, argtypes
    return dll


@functools.lru_cache(maxsize=1)
def user32() -> Any:
    return _load("user32", _USER32)


@functools.lru_cache(maxsize=1)
def kernel32() -> Any:
    return _load("kernel32", _KERNEL32)


@functools.lru_cache(maxsize=1)
def shcore() -> Optional[Any]:
    """shcore.dll (per-monitor DPI), or None before Windows 8.1."""
    try:
        return _load("shcore", _SHCORE)
    except OSError:
        return None


def has(dll: Any, name: str) -> bool:
    """Whether this Windows version exports ``name`` (e.g. ``GetDpiForWindow``)."""
    try:
        getattr(dll, name)
    except AttributeError:
        return False
    return True


def rect_of(r: RECT) -> tuple[int, int, int, int]:
    """A Win32 RECT (left, top, right, bottom) as (x, y, width, height)."""
    return int(r.left), int(r.top), int(r.right - r.left), int(r.bottom - r.top)
