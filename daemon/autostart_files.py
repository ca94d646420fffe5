"""The startup files of ``ghosttype autostart``: one template per method and
the quoting of a program (argv) in each file's own syntax.

``packaging/linux/ghosttype.service``, ``packaging/linux/ghosttype.desktop`` and
``packaging/macos/io.github.ghosttype.plist`` are these templates rendered
with a placeholder path (a test keeps them equal); :mod:`daemon.autostart`
installs them.
"""

from __future__ import annotations

import string
from typing import Callable, Sequence
from xml.sax.saxutils import escape as xml_escape


class AutostartError(Exception):
    """A failure reported as one line; ``code`` is the exit status."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


# --------------------------------------------------------------------------
# Templates.  ``$command`` is the program to start, already in the file's own
# syntax (see ``format_command``); ``run`` is appended by the template.

_SYSTEMD_UNIT = """\
# ghosttype's systemd user unit; `ghosttype autostart enable` installs it in
# ~/.config/systemd/user/ with the path of the ghosttype it was run from.
[Unit]
Description=ghosttype: local autocomplete with ghost text at the caret
Documentation=https://pypi.org/project/ghosttype/
PartOf=graphical-session.target
After=graphical-session.target
Requisite=graphical-session.target

[Service]
Type=simple
ExecStart=$command run
Restart=on-failure
RestartSec=5
# The daemon reads the display and session bus from the user manager's environment
# (imported by the desktop session via `systemctl --user import-environment`).

[Install]
WantedBy=graphical-session.target
"""

_DESKTOP_ENTRY = """\
# ghosttype's XDG autostart entry; `ghosttype autostart enable` installs it in
# ~/.config/autostart/ with the path of the ghosttype it was run from.
[Desktop Entry]
Type=Application
Name=ghosttype
GenericName=Autocomplete
Comment=Local autocomplete: grey ghost text at the caret, Tab to accept
Exec=$command run
Icon=input-keyboard
Terminal=false
Categories=Utility;
X-GNOME-Autostart-enabled=true
X-GNOME-Autostart-Delay=5
"""

_LAUNCH_AGENT = """\
<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- ghosttype's LaunchAgent; `ghosttype autostart enable` installs it in
     ~/Library/LaunchAgents/ with the path of the ghosttype it was run from. -->
<plist version="1.0">
<dict>
  <key>Label</key>
  <string>io.github.ghosttype</string>
  <key>ProgramArguments</key>
  <array>
$command
    <string>run</string>
  </array>
  <key>RunAtLoad</key>
  <true/>
  <key>KeepAlive</key>
  <dict>
    <key>SuccessfulExit</key>
    <false/>
  </dict>
  <key>ProcessType</key>
  <string>Interactive</string>
  <key>LimitLoadToSessionType</key>
  <string>Aqua</string>
</dict>
</plist>
"""

# A batch file: CRLF line ends, minimised console (the console-script
# launcher is a console program).
_STARTUP_CMD = (
    "@echo off\r\n"
    "rem ghosttype: started at login from the Startup folder (`ghosttype autostart enable`).\r\n"
    'start "ghosttype" /min $command run\r\n'
)

TEMPLATES = {"systemd": _SYSTEMD_UNIT, "xdg": _DESKTOP_ENTRY, "launchd": _LAUNCH_AGENT, "startup": _STARTUP_CMD}


# --------------------------------------------------------------------------
# Quoting a program (argv) for each file format.

_DESKTOP_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def _systemd_quote(word: str) -> str:
    if word and not any(c.isspace() or c in "\"'\\;" for c in word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _systemd_command(program: Sequence[str]) -> str:
    # '%' starts a specifier anywhere in ExecStart=; '$' a variable, but only
    # in the arguments.  systemd refuses ' " and \ in the executable's path
    # ("Executable name contains special characters").
    exe, *args = program
    if any(c in "\"'\\" for c in exe):
        raise AutostartError(f"systemd does not accept ', \" or \\ in an executable path ({exe}); "
                             "use --method xdg")
    words = [exe.replace("%", "%%")] + [a.replace("%", "%%").replace("$", "$$") for a in args]
    return " ".join(_systemd_quote(w) for w in words)


def _desktop_word(word: str) -> str:
    # Desktop Entry spec, "The Exec key": quote arguments with reserved
    # characters, escape " ` $ \ inside quotes, double '%'; then the string
    # value escape doubles every backslash again.
    word = word.replace("%", "%%")
    if word and not any(c in _DESKTOP_RESERVED for c in word):
        return word
    inner = "".join("\\" + c if c in '"`$\\' else c for c in word)
    return ('"' + inner + '"').replace("\\", "\\\\")


def _cmd_word(word: str) -> str:
    # Windows paths cannot contain '"'; '%' would expand in a batch file.
    return '"' + word.replace("%", "%%") + '"'


_FORMATTERS: dict[str, Callable[[Sequence[str]], str]] = {
    "systemd": _systemd_command,
    "xdg": lambda program: " ".join(_desktop_word(w) for w in program),
    "launchd": lambda program: "\n".join(f"    <string>{xml_escape(w)}</string>" for w in program),
    "startup": lambda program: " ".join(_cmd_word(w) for w in program),
}


def format_command(method: str, program: Sequence[str]) -> str:
    """``program`` (absolute executable, then arguments) in the syntax of
    ``method``'s file; AutostartError when the file cannot express it."""
    if not program or any(c < " " for w in program for c in w):
        raise AutostartError(f"cannot start {list(program)!r} at login: empty or control characters")
    return _FORMATTERS[method](program)


def fill(method: str, command: str) -> str:
    """``method``'s template with ``command`` (already in the file's syntax)."""
    return string.Template(TEMPLATES[method]).substitute(command=command)


def render(method: str, program: Sequence[str]) -> str:
    """The startup file of ``method`` that runs ``program run``."""
    return fill(method, format_command(method, program))
