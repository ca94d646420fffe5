"""The Qt front end of ``ghosttype run``: the QApplication, the ghost-text
overlay, the tray and the mailbox, bundled behind the small ``FrontEnd`` shape
that ``daemon.frontends.overlay.app`` drives.

Everything here lives on the GUI (main) thread; other threads reach it only
through :attr:`QtFrontEnd.sink` (the mailbox).
"""

from __future__ import annotations

import logging
import pathlib
from typing import Callable, Optional

from daemon.user_actions import UserActions
from ui.mailbox import Mailbox, MailboxSink, UiDispatcher
from ui.overlay import GhostOverlay
from ui.qtapp import QtAppError, create_app, run_event_loop
from ui.tray import Tray

log = logging.getLogger(__name__)

__all__ = ["QtFrontEnd", "QtAppError"]


class QtFrontEnd:
    """Create on the main thread.  Raises ``QtAppError`` (one clear line)
    when no display can be opened."""

    def __init__(
        self,
        config_path: Optional[pathlib.Path],
        on_enabled: Callable[[bool], None],
        on_pause: Callable[[bool], None],
        actions: Optional[UserActions] = None,
    ) -> None:
        self.app = create_app()
        self.overlay = GhostOverlay()
        self.tray = Tray(
            on_enabled=on_enabled,
            on_pause=on_pause,
            on_quit=self.app.quit,
            config_path=config_path,
            actions=actions,
        )
        self._mailbox = Mailbox(UiDispatcher(self.overlay, self.tray))
        self.sink = MailboxSink(self._mailbox)

    def scale(self) -> float:
        """Device pixels per logical pixel of the primary screen (for
        converting X11 caret positions into Qt coordinates)."""
        screen = self.app.primaryScreen()
        return float(screen.devicePixelRatio()) if screen is not None else 1.0

    def run(self) -> int:
        """Run the event loop until Quit, SIGINT or SIGTERM."""
        return run_event_loop(self.app)

    def quit(self) -> None:
        """Thread-safe: ask the event loop to end."""
        self.sink.call_soon(self.app.quit)

    def close(self) -> None:
        self._mailbox.close()
        self.overlay.hide_suggestion()
        self.tray.close()
