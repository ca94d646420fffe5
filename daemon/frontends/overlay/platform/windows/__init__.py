"""The Windows backend (ctypes, comtypes): low-level hook capture, system
caret, UI Automation, SendInput.  ``backend`` is the front door for the
platform selector."""
