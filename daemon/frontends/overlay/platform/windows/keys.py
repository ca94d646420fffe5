"""Windows key codes: key specs to virtual-key codes, and the low-level hook
event to a :class:`~daemon.frontends.overlay.platform.hook_suppress.RawKey`.

Pure (the OS calls are passed in), so it is tested on any system.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from daemon.frontends.overlay.platform.hook_suppress import HookKey, RawKey, parse_hook_keys

#: ``KBDLLHOOKSTRUCT.dwExtraInfo`` / ``KEYBDINPUT.dwExtraInfo`` of the keys
#: ghosttype synthesises ("ghst"), so the accept-key filter never swallows the
#: Tab the injector passes on.
INJECTED_TAG = 0x67687374

WM_KEYDOWN, WM_KEYUP, WM_SYSKEYDOWN, WM_SYSKEYUP = 0x0100, 0x0101, 0x0104, 0x0105

VK_BACK, VK_TAB, VK_RETURN, VK_PAUSE, VK_ESCAPE, VK_SPACE = 0x08, 0x09, 0x0D, 0x13, 0x1B, 0x20

#: Canonical key names (``daemon.capture.keymap``) -> VK codes.
VK_CODES: dict[str, int] = {
    "backspace": VK_BACK, "tab": VK_TAB, "enter": VK_RETURN, "pause": VK_PAUSE,
    "escape": VK_ESCAPE, "space": VK_SPACE,
    "page_up": 0x21, "page_down": 0x22, "end": 0x23, "home": 0x24,
    "left": 0x25, "up": 0x26, "right": 0x27, "down": 0x28,
    "insert": 0x2D, "delete": 0x2E, "menu": 0x5D,
    **{f"f{i}": 0x70 + i - 1 for i in range(1, 25)},
}

#: Modifier -> the VK codes that hold it (GetAsyncKeyState reports VK_SHIFT
#: etc. for either side; the Windows key has no side-neutral code).
MODIFIER_VKS: dict[str, tuple[int, ...]] = {
    "ctrl": (0x11,), "alt": (0x12,), "shift": (0x10,), "super": (0x5B, 0x5C),
}

#: Side-specific modifier keys, for releasing exactly the ones held while
#: typing; the right-hand ones and the Windows keys are "extended" keys.
SIDED_MODIFIER_VKS: tuple[int, ...] = (0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0x5B, 0x5C)
EXTENDED_MODIFIER_VKS = frozenset({0xA3, 0xA5, 0x5B, 0x5C})
#: Whose release alone opens the menu bar (Alt) or the Start menu (Windows key).
MENU_MODIFIER_VKS = frozenset({0xA4, 0xA5, 0x5B, 0x5C})


def vk_for_key(key: str, vk_scan: Optional[Callable[[str], int]] = None) -> Optional[int]:
    """The VK code of a canonical key name, or None.

    Letters and digits have layout-independent codes (their ASCII capitals).
    Other characters depend on the keyboard layout: ``vk_scan`` is
    ``VkKeyScanW`` (low byte: the VK code, -1: no key types it); the shift
    state it also reports is ignored, so "ctrl++" means Ctrl on the key that
    carries "+".
    """
    if key in VK_CODES:
        return VK_CODES[key]
    if len(key) != 1:
        return None
    upper = key.upper()
    if "A" <= upper <= "Z" or "0" <= upper <= "9":
        return ord(upper)
    if vk_scan is None:
        return None
    result = vk_scan(key)
    if result == -1 or result & 0xFF == 0xFF:
        return None
    return result & 0xFF


def parse_vk_keys(names: Sequence[str], vk_scan: Optional[Callable[[str], int]] = None) -> list[HookKey]:
    """Key specs -> :class:`HookKey` s with Windows VK codes."""
    return parse_hook_keys(names, lambda key: vk_for_key(key, vk_scan), "Windows")


def held_modifiers(is_down: Callable[[int], bool]) -> frozenset[str]:
    """The modifiers held now; ``is_down(vk)`` is ``GetAsyncKeyState(vk) & 0x8000``."""
    return frozenset(m for m, vks in MODIFIER_VKS.items() if any(is_down(vk) for vk in vks))


def decode_hook_event(msg: int, data: Any, modifiers: Callable[[], frozenset[str]]) -> Optional[RawKey]:
    """A ``WH_KEYBOARD_LL`` event (``msg``, ``KBDLLHOOKSTRUCT``) as a RawKey.

    Modifiers are read (``modifiers()``, from GetAsyncKeyState) for presses
    only: inside the hook the asynchronous state already includes every
    earlier key, but not this one, which is what "held with this key" means.
    """
    if msg in (WM_KEYDOWN, WM_SYSKEYDOWN):
        pressed = True
    elif msg in (WM_KEYUP, WM_SYSKEYUP):
        pressed = False
    else:
        return None
    ours = (getattr(data, "dwExtraInfo", 0) or 0) == INJECTED_TAG
    return RawKey(int(data.vkCode), pressed, modifiers() if pressed and not ours else frozenset(), ours)
