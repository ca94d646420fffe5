"""The tray icon and menu, with and without a tray host, and its icons."""

from __future__ import annotations

import logging
import pathlib
import time

import pytest

from PyQt6.QtCore import QObject, QUrl, pyqtSlot
from PyQt6.QtGui import QDesktopServices, QImage
from PyQt6.QtWidgets import QApplication, QSystemTrayIcon

from ui.icons import draw_icon, state_icon
from ui.qtapp import create_app
from ui.tray import Tray, status_text


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    return create_app(["ghosttype-tests", "-platform", "offscreen"])


class Calls:
    def __init__(self) -> None:
        self.enabled: list[bool] = []
        self.paused: list[bool] = []
        self.quits = 0

    def tray(self, **kw) -> Tray:
        return Tray(self.enabled.append, self.paused.append, self.quit, **kw)

    def quit(self) -> None:
        self.quits += 1


def test_without_a_tray_host_warns_once_and_keeps_working(qapp: QApplication, caplog: pytest.LogCaptureFixture) -> None:
    assert not QSystemTrayIcon.isSystemTrayAvailable()  # offscreen: no tray host
    caplog.set_level(logging.WARNING, logger="ui.tray")
    calls = Calls()
    tray = calls.tray()
    try:
        assert tray.icon is None
        tray.set_status("error", "model failed to load")
        tray.set_status("ready")
        assert tray.state == "ready" and tray.status_action.text() == "Ready"
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1 and "tray" in warnings[0].getMessage()
        # the menu still drives the callbacks (e.g. from a future host)
        tray.quit_action.trigger()
        assert calls.quits == 1
    finally:
        tray.close()


def test_menu_items_call_the_callbacks(qapp: QApplication) -> None:
    calls = Calls()
    tray = calls.tray(available=lambda: True)
    try:
        assert tray.icon is not None and tray.icon.contextMenu() is tray.menu
        texts = [a.text() for a in tray.menu.actions() if not a.isSeparator()]
        assert texts == ["Loading model…", "Enabled", "Pause", "Open config file", "Quit"]
        assert not tray.status_action.isEnabled()  # a label, not a command
        assert not tray.config_action.isEnabled()  # no config path given
        tray.enabled_action.trigger()
        tray.enabled_action.trigger()
        tray.pause_action.trigger()
        tray.quit_action.trigger()
        assert calls.enabled == [False, True]
        assert calls.paused == [True]
        assert calls.quits == 1
    finally:
        tray.close()


def test_status_updates_icon_tooltip_and_items_without_firing_callbacks(qapp: QApplication) -> None:
    calls = Calls()
    tray = calls.tray(available=lambda: True)
    try:
        icon = tray.icon
        assert icon is not None
        seen_icons = {}
        for state, message in [("loading", ""), ("ready", ""), ("disabled", ""), ("paused", ""), ("error", "no model")]:
            tray.set_status(state, message)
            assert tray.status_action.text() == status_text(state, message)
            assert icon.toolTip() == f"ghosttype — {status_text(state, message)}"
            seen_icons[state] = icon.icon().pixmap(32, 32).toImage()
        assert status_text("error", "no model") == "Error: no model"
        assert seen_icons["ready"] != seen_icons["disabled"]
        assert seen_icons["ready"] != seen_icons["error"]
        tray.set_status("disabled")
        assert not tray.enabled_action.isChecked()
        tray.set_status("paused")
        assert tray.enabled_action.isChecked() and tray.pause_action.isChecked()
        tray.set_status("ready")
        assert tray.enabled_action.isChecked() and not tray.pause_action.isChecked()
        assert calls.enabled == [] and calls.paused == []  # status sync is not a user action
    finally:
        tray.close()


def test_tray_appears_when_a_host_shows_up_later(qapp: QApplication, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Tray, "RETRY_INTERVAL_MS", 10)
    answers = iter([False, False, True])
    tray = Calls().tray(available=lambda: next(answers, True))
    try:
        assert tray.icon is None
        tray.set_status("ready")
        deadline = time.monotonic() + 5
        while tray.icon is None and time.monotonic() < deadline:
            qapp.processEvents()
            time.sleep(0.005)
        assert tray.icon is not None
        assert tray.icon.toolTip() == "ghosttype — Ready"  # current status, not the initial one
    finally:
        tray.close()


class _UrlCatcher(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @pyqtSlot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


def test_open_config_file(qapp: QApplication, tmp_path: pathlib.Path) -> None:
    catcher = _UrlCatcher()
    QDesktopServices.setUrlHandler("file", catcher, "open")
    config = tmp_path / "config.toml"
    tray = Calls().tray(config_path=lambda: config)
    try:
        assert tray.config_action.isEnabled()
        assert tray.open_config() is False  # not there yet: nothing opened
        config.write_text("enabled = true\n")
        tray.config_action.trigger()
        assert [u.toLocalFile() for u in catcher.urls] == [str(config)]
    finally:
        QDesktopServices.unsetUrlHandler("file")
        tray.close()


def test_icons_per_state(qapp: QApplication) -> None:
    def colours(img: QImage) -> set[tuple[int, int, int]]:
        return {
            (c.red(), c.green(), c.blue())
            for c in (img.pixelColor(x, y) for x in range(img.width()) for y in range(img.height()))
            if c.alpha() == 255
        }

    for size in (16, 22, 32, 64):
        img = draw_icon("ready", size).toImage()
        assert (img.width(), img.height()) == (size, size)
        assert img.pixelColor(0, 0).alpha() == 0  # rounded, transparent corners
    red = [c for c in colours(draw_icon("error", 64).toImage()) if c[0] > 180 and c[1] < 80 and c[2] < 80]
    assert red, "error icon has a red badge"
    assert not [c for c in colours(draw_icon("ready", 64).toImage()) if c[0] > 180 and c[1] < 80]
    grey = colours(draw_icon("disabled", 64).toImage())
    assert all(abs(r - g) < 3 and abs(g - b) < 3 for r, g, b in grey)  # disabled is all grey
    assert not state_icon("ready").isNull() and 64 in [s.width() for s in state_icon("ready").availableSizes()]


def test_off_in_the_last_application_and_todays_counts(qapp: QApplication, tmp_path: pathlib.Path) -> None:
    """"Off in <application>" names the application that last had the focus
    when the menu opens, writes the denylist and applies it at once; the
    tooltip carries today's counts."""
    import collections

    from daemon.config import default_template, load_config
    from daemon.stats import StatsFile, StatsRecorder
    from daemon.user_actions import UserActions

    config_path = tmp_path / "config.toml"
    config_path.write_text(default_template())
    applied = [load_config(config_path)]
    counters: collections.Counter[str] = collections.Counter()
    recorder = StatsRecorder(counters, lambda: applied[-1].stats, StatsFile(tmp_path / "stats.json"))
    last = ["xterm"]
    actions = UserActions(config_path, lambda: applied[-1], applied.append, recorder, lambda: last[0])
    tray = Calls().tray(available=lambda: True, config_path=config_path, actions=actions)
    try:
        texts = [a.text() for a in tray.menu.actions() if not a.isSeparator()]
        assert texts == ["Loading model…", "Enabled", "Pause", "Off in this application", "Settings…",
                         "Open config file", "Quit"]
        tray.menu.aboutToShow.emit()
        assert tray.off_in_app_action.text() == "Off in xterm" and not tray.off_in_app_action.isChecked()
        tray.off_in_app_action.trigger()
        assert applied[-1].is_denied("xterm") and load_config(config_path).is_denied("xterm")
        assert tray.off_in_app_action.isChecked()
        last[0] = "mousepad"  # another application had the focus when the menu opens again
        tray.menu.aboutToShow.emit()
        assert tray.off_in_app_action.text() == "Off in mousepad" and not tray.off_in_app_action.isChecked()
        last[0] = "xterm"
        tray.menu.aboutToShow.emit()
        assert tray.off_in_app_action.isChecked()
        tray.off_in_app_action.trigger()
        assert not applied[-1].is_denied("xterm") and not load_config(config_path).is_denied("xterm")
        assert "keepassxc" in applied[-1].denylist  # the defaults stay

        counters.update({"new_suggestions": 4, "accepted": 2, "accepted_chars": 20})
        recorder.flush()
        tray.set_status("ready")
        assert tray.icon is not None
        assert tray.icon.toolTip() == "ghosttype — Ready\nToday: 18 keystrokes saved, 2 of 4 suggestions taken"
    finally:
        tray.close()
