"""The tray icon and its menu: the user's only window into the daemon.

Menu: a status line, Enabled (checkable), Pause (checkable), "Off in
<application>" (checkable, for the application that last had the focus),
Settings..., Open config file, Quit.  What the items do is not decided here:
the composition root passes plain Python callables (and the
:class:`~daemon.user_actions.UserActions` behind the per-application item,
Settings and the counts).  Status changes update the icon (grey when disabled
or paused, a red badge on error), the tooltip (with today's counts of what
ghosttype saved, refreshed every few seconds) and the status line; entering
the error state also pops up a notification with the message, because an
error is the one status the user must notice.

Without a tray host (bare X servers, some Wayland desktops) the tray logs one
warning and the program keeps running; because autostarted daemons often
start before the panel, it looks again a few times for a minute and appears
when a host shows up.
"""

from __future__ import annotations

import logging
import pathlib
from typing import Callable, Optional, Union

from PyQt6.QtCore import QObject, QTimer, QUrl
from PyQt6.QtGui import QAction, QDesktopServices
from PyQt6.QtWidgets import QMenu, QSystemTrayIcon

from daemon.user_actions import UserActions
from ui.icons import state_icon

log = logging.getLogger(__name__)

STATE_LABELS = {
    "loading": "Loading model…",
    "ready": "Ready",
    "disabled": "Disabled",
    "paused": "Paused",
    "error": "Error",
}

ConfigPath = Union[pathlib.Path, str, Callable[[], Union[pathlib.Path, str]]]


def status_text(state: str, message: str = "") -> str:
    """The one-line status shown in the menu and tooltip."""
    label = STATE_LABELS.get(state, state.capitalize() or "Unknown")
    return f"{label}: {message}" if message else label


class Tray(QObject):
    """The tray icon (if a tray host exists) plus the daemon's status.

    Create on the GUI thread.  ``on_enabled(bool)`` and ``on_pause(bool)`` fire
    when the user toggles the checkable items, ``on_quit()`` on Quit.
    """

    RETRY_INTERVAL_MS = 5_000
    RETRY_ATTEMPTS = 12  # one minute
    TOOLTIP_REFRESH_MS = 5_000

    def __init__(
        self,
        on_enabled: Callable[[bool], None],
        on_pause: Callable[[bool], None],
        on_quit: Callable[[], None],
        config_path: Optional[ConfigPath] = None,
        available: Callable[[], bool] = QSystemTrayIcon.isSystemTrayAvailable,
        parent: Optional[QObject] = None,
        actions: Optional[UserActions] = None,
    ) -> None:
        super().__init__(parent)
        self._on_enabled = on_enabled
        self._on_pause = on_pause
        self._on_quit = on_quit
        self._config_path = config_path
        self._available = available
        self._actions = actions
        self._app = ""  #: the application "Off in" names, as of the menu's last opening
        self._state = "loading"
        self._message = ""
        self._icon: Optional[QSystemTrayIcon] = None

        self.menu = QMenu()
        self.status_action = QAction(status_text(self._state), self.menu)
        self.status_action.setEnabled(False)
        self.enabled_action = QAction("Enabled", self.menu, checkable=True, checked=True)
        self.pause_action = QAction("Pause", self.menu, checkable=True, checked=False)
        self.off_in_app_action = QAction("Off in this application", self.menu, checkable=True)
        self.settings_action = QAction("Settings…", self.menu)
        self.config_action = QAction("Open config file", self.menu)
        self.quit_action = QAction("Quit", self.menu)
        self.enabled_action.toggled.connect(self._enabled_toggled)
        self.pause_action.toggled.connect(self._pause_toggled)
        self.off_in_app_action.toggled.connect(self._off_in_app_toggled)
        self.settings_action.triggered.connect(lambda: self._actions.open_settings() if self._actions else None)
        self.menu.aboutToShow.connect(self.refresh_app)
        self.config_action.triggered.connect(self.open_config)
        self.quit_action.triggered.connect(lambda: self._on_quit())
        self.menu.addAction(self.status_action)
        self.menu.addSeparator()
        self.menu.addAction(self.enabled_action)
        self.menu.addAction(self.pause_action)
        if actions is not None:
            self.menu.addAction(self.off_in_app_action)
            self.menu.addSeparator()
            self.menu.addAction(self.settings_action)
        else:
            self.menu.addSeparator()
        self.menu.addAction(self.config_action)
        self.menu.addAction(self.quit_action)
        self.config_action.setEnabled(config_path is not None)

        self._retries = 0
        self._retry_timer = QTimer(self)
        self._retry_timer.setInterval(self.RETRY_INTERVAL_MS)
        self._retry_timer.timeout.connect(self._retry)
        self._tooltip_timer = QTimer(self)
        self._tooltip_timer.setInterval(self.TOOLTIP_REFRESH_MS)
        self._tooltip_timer.timeout.connect(self._refresh_tooltip)
        if actions is not None:
            self._tooltip_timer.start()
        if self._available():
            self._create_icon()
        else:
            log.warning("no system tray available; running without a tray icon")
            self._retry_timer.start()

    # -- public API -------------------------------------------------------------------

    @property
    def icon(self) -> Optional[QSystemTrayIcon]:
        """The tray icon, or None while no tray host exists."""
        return self._icon

    @property
    def state(self) -> str:
        return self._state

    @property
    def message(self) -> str:
        return self._message

    def set_status(self, state: str, message: str = "") -> None:
        """Show the daemon's state (``loading``/``ready``/``disabled``/
        ``paused``/``error``) and keep the checkable items in step with it."""
        state = str(getattr(state, "value", state))
        entering_error = state == "error" and (self._state, self._message) != (state, message)
        self._state, self._message = state, message
        if state == "disabled":
            self._set_checked(self.enabled_action, False)
        elif state == "paused":
            self._set_checked(self.enabled_action, True)
            self._set_checked(self.pause_action, True)
        elif state == "ready":
            self._set_checked(self.enabled_action, True)
            self._set_checked(self.pause_action, False)
        self._refresh()
        if entering_error and self._icon is not None and QSystemTrayIcon.supportsMessages():
            self._icon.showMessage("ghosttype", status_text(state, message), QSystemTrayIcon.MessageIcon.Warning)

    def set_config_path(self, path: Optional[ConfigPath]) -> None:
        self._config_path = path
        self.config_action.setEnabled(path is not None)

    def open_config(self) -> bool:
        """Open the config file in the user's default application."""
        if self._config_path is None:
            return False
        path = self._config_path() if callable(self._config_path) else self._config_path
        path = pathlib.Path(path)
        if not path.exists():
            log.warning("config file %s does not exist", path)
            return False
        ok = QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))
        if not ok:
            log.warning("no application to open %s", path)
        return ok

    def refresh_app(self) -> None:
        """Name the application that last had the focus in "Off in ..." (the
        menu calls this as it opens)."""
        if self._actions is None:
            return
        self._app = self._actions.last_app()
        label = f"Off in {self._app.replace('&', '&&')}" if self._app else "Off in this application"
        self.off_in_app_action.setText(label)
        self.off_in_app_action.setEnabled(bool(self._app))
        self._set_checked(self.off_in_app_action, bool(self._app) and self._actions.is_denied(self._app))

    def close(self) -> None:
        self._retry_timer.stop()
        self._tooltip_timer.stop()
        if self._icon is not None:
            self._icon.hide()
            self._icon.deleteLater()
            self._icon = None

    # -- internals --------------------------------------------------------------------

    def _create_icon(self) -> None:
        self._icon = QSystemTrayIcon(self)
        self._icon.setContextMenu(self.menu)
        self._refresh()
        self._icon.show()

    def _retry(self) -> None:
        self._retries += 1
        if self._available():
            self._retry_timer.stop()
            log.info("system tray appeared; showing the tray icon")
            self._create_icon()
        elif self._retries >= self.RETRY_ATTEMPTS:
            self._retry_timer.stop()

    def _refresh(self) -> None:
        text = status_text(self._state, self._message)
        self.status_action.setText(text)
        if self._icon is not None:
            self._icon.setIcon(state_icon(self._state))
        self._refresh_tooltip()

    def _refresh_tooltip(self) -> None:
        if self._icon is None:
            return
        counts = self._actions.stats_line() if self._actions is not None else ""
        text = status_text(self._state, self._message)
        self._icon.setToolTip(f"ghosttype — {text}" + (f"\n{counts}" if counts else ""))

    @staticmethod
    def _set_checked(action: QAction, checked: bool) -> None:
        """Change a checkable item without firing the user callback."""
        blocked = action.blockSignals(True)
        action.setChecked(checked)
        action.blockSignals(blocked)

    def _enabled_toggled(self, checked: bool) -> None:
        self._on_enabled(checked)

    def _pause_toggled(self, checked: bool) -> None:
        self._on_pause(checked)

    def _off_in_app_toggled(self, checked: bool) -> None:
        if self._actions is None or not self._app:
            return
        denied = self._actions.toggle_app(self._app)
        self._set_checked(self.off_in_app_action, bool(denied) if denied is not None else not checked)
