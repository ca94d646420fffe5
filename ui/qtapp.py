"""Creating the QApplication the way a tray daemon needs it, and running its
event loop with Ctrl+C / SIGTERM handled.

Why each setting:

* ``setQuitOnLastWindowClosed(False)``: ghosttype has no main window; hiding
  the overlay (its only window) must not end the program.
* High-DPI rounding ``PassThrough``: fractional scales (1.25, 1.5) keep their
  exact value, so the ghost text has the same size as the application's text.
* On Linux the X11 (xcb) platform is chosen unless the user chose one
  (``-platform`` or ``QT_QPA_PLATFORM``): the overlay places itself at global
  screen coordinates, which native Wayland clients cannot do (XWayland can).
* Qt aborts the process (not an exception) when it cannot open the display, so
  the display is checked first and reported as one clear ``QtAppError``.
* Python signal handlers only run when the interpreter gets control, which a
  blocking C++ event loop never gives it.  ``signal.set_wakeup_fd`` writes a
  byte to a socket when a signal arrives; a ``QSocketNotifier`` on the other
  end wakes the loop, Python runs the handler, and the handler quits the app.
  No polling timer, so the idle daemon uses no CPU.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
from typing import Mapping, Optional, Sequence

from PyQt6.QtCore import QSocketNotifier, Qt, qVersion
from PyQt6.QtGui import QGuiApplication
from PyQt6.QtWidgets import QApplication

log = logging.getLogger(__name__)

APP_NAME = "ghosttype"
DESKTOP_FILE_NAME = "ghosttype"  # matches packaging/linux/ghosttype.desktop


class QtAppError(RuntimeError):
    """The GUI cannot start; the message says why and how to fix it."""


def _requested_platform(argv: Sequence[str], env: Mapping[str, str]) -> Optional[str]:
    """The platform plugin named by ``-platform NAME`` or ``QT_QPA_PLATFORM``."""
    args = list(argv)
    for i, arg in enumerate(args[:-1]):
        if arg in ("-platform", "--platform"):
            return args[i + 1]
    return env.get("QT_QPA_PLATFORM") or None


def check_display(platform: str, environ: Optional[Mapping[str, str]] = None) -> None:
    """Raise ``QtAppError`` when Qt would abort for lack of an X display.

    Only X11 (``xcb``) is checked: it is what ``create_app`` selects on Linux.
    Other platforms (e.g. ``offscreen``) are left to Qt.
    """
    env = os.environ if environ is None else environ
    if platform.split(":")[0] != "xcb" or env.get("DISPLAY"):
        return
    if env.get("WAYLAND_DISPLAY"):
        raise QtAppError(
            "no X display: on Wayland ghosttype needs XWayland to place its overlay "
            "at the caret; enable XWayland (DISPLAY is not set)"
        )
    raise QtAppError(
        "no display: DISPLAY is not set; run ghosttype inside a graphical session "
        "(or set DISPLAY, e.g. DISPLAY=:0)"
    )


def create_app(argv: Optional[Sequence[str]] = None) -> QApplication:
    """Return the process's QApplication, creating and configuring it if needed.

    ``argv`` may carry Qt options such as ``-platform offscreen``.  The
    environment is not modified (child processes must not inherit our choice).
    Raises ``QtAppError`` (instead of letting Qt abort) when there is no display.
    """
    existing = QApplication.instance()
    if existing is not None:
        if not isinstance(existing, QApplication):
            raise QtAppError("a non-widget Qt application already exists in this process")
        existing.setQuitOnLastWindowClosed(False)
        return existing

    args = list(argv) if argv is not None else list(sys.argv[:1] or [APP_NAME])
    platform = _requested_platform(args, os.environ)
    if platform is None and sys.platform.startswith("linux"):
        platform = "xcb"
        args += ["-platform", platform]
    if platform is not None:
        check_display(platform)

    QGuiApplication.setHighDpiScaleFactorRoundingPolicy(
        Qt.HighDpiScaleFactorRoundingPolicy.PassThrough
    )
    QApplication.setApplicationName(APP_NAME)
    QApplication.setApplicationDisplayName(APP_NAME)
    QApplication.setDesktopFileName(DESKTOP_FILE_NAME)
    app = QApplication(args)
    app.setQuitOnLastWindowClosed(False)
    log.info("Qt %s on platform %r", qVersion(), app.platformName())
    return app


def run_event_loop(app: QApplication, signals: Sequence[int] = (signal.SIGINT, signal.SIGTERM)) -> int:
    """Run ``app.exec()`` until quit; SIGINT/SIGTERM quit it cleanly.

    Must be called from the main thread (Python delivers signals there).
    Previous signal handlers and wakeup fd are restored on return.
    """
    reader, writer = socket.socketpair()
    reader.setblocking(False)
    writer.setblocking(False)
    received: list[int] = []

    def on_signal(signum: int, _frame: object) -> None:
        received.append(signum)
        app.quit()

    def drain() -> None:
        try:
            while reader.recv(64):
                pass
        except (BlockingIOError, InterruptedError):
            pass

    notifier = QSocketNotifier(reader.fileno(), QSocketNotifier.Type.Read)
    notifier.activated.connect(drain)
    previous_fd = signal.set_wakeup_fd(writer.fileno())
    previous = {s: signal.signal(s, on_signal) for s in signals}
    try:
        code = app.exec()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        signal.set_wakeup_fd(previous_fd)
        notifier.setEnabled(False)
        reader.close()
        writer.close()
    if received:
        log.info("quit on signal %s", ", ".join(signal.Signals(s).name for s in received))
    return code
