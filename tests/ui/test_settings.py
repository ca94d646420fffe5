"""The settings window on Qt's offscreen platform: what it shows comes from
the config file, a change made in it is saved with the user's comments and
order kept, a bad value gets a message and leaves the file alone, and the
counts are shown and reset.  (The window as a process of its own, on Xvfb
with a running daemon: tests/e2e/test_settings_e2e.py.)"""

from __future__ import annotations

import pathlib

import pytest
from PyQt6.QtCore import Qt
from PyQt6.QtTest import QTest
from PyQt6.QtWidgets import QApplication

from daemon.config import default_template, load_config
from daemon.stats import StatsFile
from ui.qtapp import create_app
from ui.settings import SettingsWindow

USER_LINES = "# my own note\nmax_tokens = 6  # short ones\n"


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    return create_app(["ghosttype-tests", "-platform", "offscreen"])


@pytest.fixture
def config(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "config.toml"
    path.write_text(USER_LINES + default_template())
    return path


def window(path: pathlib.Path) -> SettingsWindow:
    w = SettingsWindow(path, StatsFile(path.parent / "stats.json"))
    w.show()
    return w


def test_the_window_shows_the_file_and_saves_a_change_keeping_comments(qapp: QApplication,
                                                                       config: pathlib.Path) -> None:
    w = window(config)
    try:
        assert w.enabled.isChecked() and w.focusWidget() is w.enabled  # Space toggles it at once
        assert w.length.currentData() == 6 and w.length.currentText() == "Custom (6)"  # not one of the presets
        assert w.eagerness.currentText() == "When fairly sure (balanced)"
        assert w.model.currentData() == "local:smollm2"
        w.eagerness.setCurrentIndex(w.eagerness.findData(0.8))
        QTest.keyClicks(w.deny_entry, "Mousepad")
        QTest.keyClick(w.deny_entry, Qt.Key.Key_Return)
        QTest.keyClick(w.enabled, Qt.Key.Key_Space)
        assert not w.enabled.isChecked()
        QTest.mouseClick(w.save_button, Qt.MouseButton.LeftButton)
        assert "Saved (confidence_threshold, denylist, enabled)" in w.message.text(), w.message.text()
        text = config.read_text()
        assert text.startswith(USER_LINES)
        assert [line for line in text.splitlines() if line.startswith("#")] == \
            [line for line in (USER_LINES + default_template()).splitlines() if line.startswith("#")]
        cfg = load_config(config)
        assert cfg.confidence_threshold == 0.8 and not cfg.enabled
        assert cfg.is_denied("mousepad") and cfg.is_denied("keepassxc")  # added to the defaults
        assert cfg.max_tokens == 6  # untouched settings are not written
        assert w.save() and w.message.text().startswith("Nothing to save")
    finally:
        w.close()


def test_a_bad_value_gets_a_message_and_the_file_is_not_touched(qapp: QApplication, config: pathlib.Path) -> None:
    before = config.read_bytes()
    w = window(config)
    try:
        w.keys["accept_key"].setText("ctrl+")
        assert not w.save()
        assert "Not saved" in w.message.text() and "accept_key" in w.message.text(), w.message.text()
        w.keys["accept_key"].setText("tab")
        w.model.setCurrentIndex(w.model.findData("server:"))  # a server, but no address
        assert not w.save()
        assert "server_url" in w.message.text(), w.message.text()
        assert config.read_bytes() == before
    finally:
        w.close()


def test_a_broken_file_is_said_at_once(qapp: QApplication, config: pathlib.Path) -> None:
    config.write_text("max_tokens = 'many'\n")
    w = window(config)
    try:
        assert "mistake" in w.message.text() and "max_tokens" in w.message.text(), w.message.text()
    finally:
        w.close()


def test_the_counts_are_shown_and_reset(qapp: QApplication, config: pathlib.Path) -> None:
    stats = StatsFile(config.parent / "stats.json")
    stats.add({"shown": 7, "accepted": 3, "chars_inserted": 1234, "keystrokes_saved": 1231})
    w = window(config)
    try:
        assert w.stat_labels[("today", "shown")].text() == "7"
        assert w.stat_labels[("total", "keystrokes_saved")].text() == "1,231"
        w.reset_stats()
        assert not stats.path.exists()
        assert w.stat_labels[("total", "keystrokes_saved")].text() == "0"
    finally:
        w.close()
