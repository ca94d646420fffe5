"""The settings window's ``learn`` setting and its "Forget what ghosttype
learned" button, on Qt's offscreen platform: the setting shows the file's
value and saves a change; the button does what ``ghosttype forget`` does
(the memory file and its key in a real keyring, ``tests/secret_service.py``,
are gone, and a running ghosttype's forget watcher hears it)."""

from __future__ import annotations

import pathlib
import time

import pytest
from PyQt6.QtCore import Qt
from PyQt6.QtTest import QTest
from PyQt6.QtWidgets import QApplication

from daemon.config import default_template, load_config
from daemon.memory.forget import ForgetWatcher
from daemon.memory.persist import MemoryKeeper, default_memory_path
from daemon.memory.store import Memory
from daemon.stats import StatsFile
from tests.secret_service import ghosttype_items, private_secret_service
from ui.qtapp import create_app
from ui.settings import SettingsWindow


@pytest.fixture(scope="module")
def qapp() -> QApplication:
    return create_app(["ghosttype-tests", "-platform", "offscreen"])


def window(path: pathlib.Path) -> SettingsWindow:
    w = SettingsWindow(path, StatsFile(path.parent / "stats.json"))
    w.show()
    return w


def test_the_learn_setting_is_shown_and_saved(qapp: QApplication, tmp_path: pathlib.Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(default_template())
    w = window(config)
    try:
        assert w.learn.currentData() == "session" and "gone when it stops" in w.learn.currentText()
        assert [w.learn.itemData(i) for i in range(w.learn.count())] == ["session", "persist", "off"]
        w.learn.setCurrentIndex(w.learn.findData("persist"))
        QTest.mouseClick(w.save_button, Qt.MouseButton.LeftButton)
        assert "Saved (learn)" in w.message.text(), w.message.text()
        assert load_config(config).learn == "persist"
    finally:
        w.close()
    w = window(config)
    try:
        assert w.learn.currentData() == "persist"
    finally:
        w.close()


def test_the_forget_button_wipes_the_file_the_key_and_a_running_memory(qapp: QApplication,
                                                                       tmp_path: pathlib.Path) -> None:
    with pytest.MonkeyPatch.context() as mp, private_secret_service(tmp_path, mp):
        memory = Memory()
        keeper = MemoryKeeper(memory, "persist", save_delay_s=0.05)
        keeper.start()
        watcher = ForgetWatcher(keeper.forget)
        watcher.start()
        config = tmp_path / "config.toml"
        config.write_text('learn = "persist"\n')
        w = window(config)
        try:
            memory.add("a sentence the user typed in a field")
            assert keeper.wait_idle() and default_memory_path().exists() and ghosttype_items() == 1
            assert w.forget_button.text() == "Forget what ghosttype learned"
            QTest.mouseClick(w.forget_button, Qt.MouseButton.LeftButton)
            assert w.message.text().startswith("Forgotten:") and "memory file deleted" in w.message.text(), \
                w.message.text()
            assert not default_memory_path().exists() and ghosttype_items() == 0
            deadline = time.monotonic() + 10
            while watcher.forgets == 0 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert watcher.forgets == 1 and keeper.wait_idle() and memory.pieces() == ()
            assert config.read_text() == 'learn = "persist"\n'  # forgetting changes no setting
        finally:
            w.close()
            watcher.stop()
            keeper.stop()
