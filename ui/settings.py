"""The settings window (``ghosttype settings``; the tray's and the IBus
menu's "Settings..." start it as a process of its own).

It shows the settings people change (on/off, the model, how eager and how
long suggestions are, the IBus display, the keys, the applications
ghosttype stays out of, what it learns of the user's words, with a button
that forgets it) in plain words, and what ghosttype saved (counts only).
Save writes only the settings that changed, through
:func:`daemon.config_edit.edit_config`: comments and order are kept, and the
project's own validation runs before anything is written, so a bad value
gets a message here and the file stays as it was.  A running ghosttype
reloads the file and applies it at once.

It is an ordinary application window: Qt picks the platform (X11 or
Wayland); only the daemon's overlay needs X11.
"""

from __future__ import annotations

import logging
import os
import pathlib
import sys
from typing import Any, Optional, Sequence

from PyQt6.QtCore import QTimer
from PyQt6.QtGui import QKeySequence, QShortcut
from PyQt6.QtWidgets import (QApplication, QCheckBox, QComboBox, QFileDialog, QFormLayout, QGridLayout, QGroupBox,
                             QHBoxLayout, QLabel, QLineEdit, QListWidget, QPushButton, QVBoxLayout, QWidget)

from daemon.capture.keymap import KeySpecError, normalize_key_spec
from daemon.config import IBUS_DISPLAYS, Config, ConfigError, load_config
from daemon.config_edit import edit_config
from daemon.memory.forget import forget_everything
from daemon.stats import FIELDS, LABELS, StatsFile, summary
from ui.qtapp import run_event_loop

log = logging.getLogger(__name__)

TITLE = "ghosttype settings"
#: The confidence threshold, in plain words (README: ``confidence_threshold``).
EAGERNESS = (("Only when nearly sure", 0.8), ("When fairly sure (balanced)", 0.6), ("Eagerly", 0.35),
             ("Always, even unlikely guesses", 0.0))
#: ``max_tokens``, in plain words.
LENGTHS = (("A word or two", 4), ("A few words", 8), ("A longer phrase", 16), ("As long as it goes on", 32))
DISPLAYS = {"auto": "Automatic: grey text where it stays private, else the popup",
            "preedit": "Grey text after the caret", "popup": "A popup under the caret"}
#: ``learn``, in plain words (README: Privacy).
LEARN = (("While ghosttype runs (gone when it stops)", "session"),
         ("Also across restarts (an encrypted file, its key in your keyring)", "persist"), ("Nothing", "off"))
KEYS = (("accept_key", "Insert the whole suggestion"), ("accept_word_key", "Insert its next word"),
        ("dismiss_key", "Hide it"), ("pause_key", "Pause and resume everywhere (empty: no key)"))
STATS_REFRESH_MS = 3_000


def _preset_combo(presets: Sequence[tuple[str, Any]], value: Any) -> QComboBox:
    """A combo box of named values, with the current value as "Custom" when it is none of them."""
    combo = QComboBox()
    for label, preset in presets:
        combo.addItem(label, preset)
    index = combo.findData(value)
    if index < 0:
        combo.addItem(f"Custom ({value})", value)
        index = combo.count() - 1
    combo.setCurrentIndex(index)
    return combo


def _machine() -> str:
    import psutil

    return f"this computer: {psutil.cpu_count() or 1} cores, {psutil.virtual_memory().total / 2**30:.0f} GB of memory"


class SettingsWindow(QWidget):
    """See the module docstring.  ``stats`` is where the counts are read."""

    def __init__(self, config_path: pathlib.Path, stats: Optional[StatsFile] = None) -> None:
        super().__init__()
        self.setWindowTitle(TITLE)
        self.config_path = pathlib.Path(config_path)
        self.stats = stats or StatsFile()
        self.message = QLabel()
        self.message.setWordWrap(True)
        try:
            self.current = load_config(self.config_path)
        except ConfigError as e:
            self.current = Config()
            self._say(f"The config file has a mistake; fix it (or save here to replace the values shown):\n{e}",
                      error=True)
        cfg = self.current

        self.enabled = QCheckBox("Suggest as I type")
        self.enabled.setChecked(cfg.enabled)

        self.model = QComboBox()
        self.model_path = QLineEdit()
        self.browse = QPushButton("Choose…")
        self.server_url = QLineEdit(cfg.server_url)
        self.server_url.setPlaceholderText("http://host:port")
        self.model_cost = QLabel()
        self.model_cost.setWordWrap(True)
        self._fill_models(cfg)

        self.eagerness = _preset_combo(EAGERNESS, cfg.confidence_threshold)
        self.length = _preset_combo(LENGTHS, cfg.max_tokens)
        self.single_line = QCheckBox("Stop at the end of the line")
        self.single_line.setChecked(cfg.single_line)
        self.display = _preset_combo([(DISPLAYS.get(d, d), d) for d in IBUS_DISPLAYS], cfg.ibus_display)
        self.keys = {name: QLineEdit(getattr(cfg, name)) for name, _ in KEYS}

        self.denylist = QListWidget()
        self.denylist.addItems(cfg.denylist)
        self.deny_entry = QLineEdit()
        self.deny_entry.setPlaceholderText("application (X11 WM_CLASS or program name)")
        add, remove = QPushButton("Add"), QPushButton("Remove selected")
        add.clicked.connect(self._add_denied)
        self.deny_entry.returnPressed.connect(self._add_denied)
        remove.clicked.connect(self._remove_denied)

        self.learn = _preset_combo(LEARN, cfg.learn)
        self.forget_button = QPushButton("Forget what ghosttype learned")
        self.forget_button.clicked.connect(self.forget)

        self.keep_stats = QCheckBox("Keep these counts (numbers only, never what you type)")
        self.keep_stats.setChecked(cfg.stats)
        self.stat_labels = {(col, key): QLabel("0") for col in ("today", "total") for key in FIELDS}
        reset = QPushButton("Reset counts")
        reset.clicked.connect(self.reset_stats)

        self.save_button = QPushButton("Save")
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(self.save)
        QShortcut(QKeySequence.StandardKey.Save, self, activated=self.save)
        close = QPushButton("Close")
        close.clicked.connect(self.close)

        self._lay_out(add, remove, reset, close)
        self.refresh_stats()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.refresh_stats)
        self._timer.start(STATS_REFRESH_MS)
        self.enabled.setFocus()

    # -- layout -----------------------------------------------------------------------

    def _lay_out(self, add: QPushButton, remove: QPushButton, reset: QPushButton, close: QPushButton) -> None:
        general = QFormLayout()
        general.addRow(self.enabled)
        general.addRow("Model", self.model)
        path_row = QHBoxLayout()
        path_row.addWidget(self.model_path)
        path_row.addWidget(self.browse)
        general.addRow("GGUF file", path_row)
        general.addRow("Server", self.server_url)
        general.addRow("", self.model_cost)
        general.addRow("Show suggestions", self.eagerness)
        general.addRow("Length", self.length)
        general.addRow("", self.single_line)
        general.addRow("IBus display", self.display)
        keys = QFormLayout()
        for name, label in KEYS:
            keys.addRow(label, self.keys[name])
        apps = QVBoxLayout()
        apps.addWidget(self.denylist)
        entry = QHBoxLayout()
        for w in (self.deny_entry, add, remove):
            entry.addWidget(w)
        apps.addLayout(entry)
        counts = QGridLayout()
        counts.addWidget(QLabel("<b>today</b>"), 0, 1)
        counts.addWidget(QLabel("<b>in total</b>"), 0, 2)
        for row, key in enumerate(FIELDS, 1):
            counts.addWidget(QLabel(LABELS[key].capitalize()), row, 0)
            counts.addWidget(self.stat_labels[("today", key)], row, 1)
            counts.addWidget(self.stat_labels[("total", key)], row, 2)
        counts.addWidget(self.keep_stats, len(FIELDS) + 1, 0, 1, 2)
        counts.addWidget(reset, len(FIELDS) + 1, 2)
        learning = QFormLayout()
        learning.addRow("Remember my words", self.learn)
        learning.addRow("", self.forget_button)
        buttons = QHBoxLayout()
        buttons.addWidget(self.message, 1)
        buttons.addWidget(self.save_button)
        buttons.addWidget(close)

        columns = QHBoxLayout()
        left, right = QVBoxLayout(), QVBoxLayout()
        for box, title, layout in ((left, "Suggestions", general), (left, "Keys", keys),
                                   (right, "Applications ghosttype stays out of", apps),
                                   (right, "What ghosttype learns of your words", learning),
                                   (right, "What ghosttype saved you", counts)):
            group = QGroupBox(title)
            group.setLayout(layout)
            box.addWidget(group)
        columns.addLayout(left, 3)
        columns.addLayout(right, 2)
        outer = QVBoxLayout(self)
        outer.addLayout(columns)
        outer.addLayout(buttons)

    # -- the model --------------------------------------------------------------------

    def _fill_models(self, cfg: Config) -> None:
        from daemon.backends.llamacpp.models import available_models

        self._model_info = {}
        for info in available_models():
            label = f"{info.name} — {info.description}" + ("" if info.installed else " (not installed)")
            self.model.addItem(label, f"local:{info.name}")
            self._model_info[info.name] = info
            if not info.installed:
                self.model.model().item(self.model.count() - 1).setEnabled(False)
        self.model.addItem("A GGUF file on this computer", "file:")
        self.model.addItem("A server (OpenAI-compatible, your text is sent to it)", "server:")
        if cfg.backend == "server":
            choice = "server:"
        elif cfg.model in self._model_info:
            choice = f"local:{cfg.model}"
        else:
            choice = "file:"
            self.model_path.setText(cfg.model)
        self.model.setCurrentIndex(self.model.findData(choice))
        self.model.currentIndexChanged.connect(self._model_changed)
        self.model_path.textChanged.connect(self._model_changed)
        self.browse.clicked.connect(self._browse)
        self._model_changed()

    def _model_changed(self) -> None:
        kind, _, name = self.model.currentData().partition(":")
        self.model_path.setEnabled(kind == "file")
        self.browse.setEnabled(kind == "file")
        self.server_url.setEnabled(kind == "server")
        if kind == "local":
            info = self._model_info[name]
            cost = f"{info.description}; {_machine()}."
            if not info.installed:
                cost += f" Install it with: {info.install_hint}"
        elif kind == "file":
            path = pathlib.Path(self.model_path.text().strip()).expanduser()
            size = f"{path.stat().st_size / 2**20:.0f} MB file" if path.is_file() else "no such file yet"
            cost = f"{size}; {_machine()}."
        else:
            cost = "Runs on the server: what you type before the caret is sent there."
        self.model_cost.setText(cost)

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "A GGUF model file", str(pathlib.Path.home()),
                                              "GGUF models (*.gguf);;All files (*)")
        if path:
            self.model_path.setText(path)

    # -- the applications -------------------------------------------------------------

    def _add_denied(self) -> None:
        app = self.deny_entry.text().strip().lower()
        existing = {self.denylist.item(i).text() for i in range(self.denylist.count())}
        if app and app not in existing:
            self.denylist.addItem(app)
        self.deny_entry.clear()

    def _remove_denied(self) -> None:
        for item in self.denylist.selectedItems():
            self.denylist.takeItem(self.denylist.row(item))

    # -- saving -----------------------------------------------------------------------

    def values(self) -> dict[str, Any]:
        """Every setting as the window shows it now."""
        kind, _, name = self.model.currentData().partition(":")
        values: dict[str, Any] = {
            "enabled": self.enabled.isChecked(),
            "backend": "server" if kind == "server" else "local",
            "confidence_threshold": self.eagerness.currentData(),
            "max_tokens": self.length.currentData(),
            "single_line": self.single_line.isChecked(),
            "ibus_display": self.display.currentData(),
            "denylist": sorted({self.denylist.item(i).text() for i in range(self.denylist.count())}),
            "stats": self.keep_stats.isChecked(),
            "learn": self.learn.currentData(),
        }
        if kind == "local":
            values["model"] = name
        elif kind == "file":
            values["model"] = self.model_path.text().strip()
        else:
            values["server_url"] = self.server_url.text().strip()
        for key, edit in self.keys.items():
            values[key] = edit.text().strip().lower()
        return values

    def changes(self) -> dict[str, Any]:
        """The settings that differ from the config in force."""
        out = {}
        for key, value in self.values().items():
            now = getattr(self.current, key)
            if key == "denylist":
                same = tuple(value) == tuple(now)
            elif key in self.keys and value:
                try:
                    same = normalize_key_spec(value) == now
                except KeySpecError:
                    same = False
            else:
                same = value == now
            if not same:
                out[key] = value
        return out

    def save(self) -> bool:
        """Write what changed; True when the file now holds it."""
        changes = self.changes()
        if not changes:
            self._say("Nothing to save: the file already says this.")
            return True
        try:
            self.current = edit_config(changes, self.config_path)
        except ConfigError as e:
            self._say(f"Not saved, the file is unchanged:\n{e}", error=True)
            return False
        except OSError as e:
            self._say(f"Not saved: cannot write {self.config_path}: {e.strerror or e}", error=True)
            return False
        log.info("settings saved: %s", ", ".join(sorted(changes)))  # the names, never the values
        self._say(f"Saved ({', '.join(sorted(changes))}); ghosttype applies it now.")
        return True

    def _say(self, text: str, error: bool = False) -> None:
        self.message.setStyleSheet("color: #b00020;" if error else "color: #1b5e20;")
        self.message.setText(text)

    # -- what ghosttype learned -------------------------------------------------------

    def forget(self) -> None:
        """What ``ghosttype forget`` does: the file, the key, every running ghosttype's memory."""
        done = forget_everything()
        self._say("Forgotten: " + "; ".join(done.lines()) + ".", error=not done.complete)

    # -- counts -----------------------------------------------------------------------

    def refresh_stats(self) -> None:
        view = summary(self.stats.read())
        for (col, key), label in self.stat_labels.items():
            label.setText(f"{view[col][key]:,}")

    def reset_stats(self) -> None:
        self.stats.reset()
        self.refresh_stats()
        self._say("Counts reset.")


def main(config_path: pathlib.Path, argv: Optional[Sequence[str]] = None) -> int:
    """Open the window and run until it is closed."""
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
                                                 or os.environ.get("QT_QPA_PLATFORM")):
        print("ghosttype: no display (neither DISPLAY nor WAYLAND_DISPLAY is set)", file=sys.stderr)
        return 2
    QApplication.setApplicationName("ghosttype")  # the window's WM_CLASS: the tray's "Off in" skips it
    QApplication.setDesktopFileName("ghosttype")
    app = QApplication.instance() or QApplication(list(argv) if argv is not None else sys.argv[:1] or ["ghosttype"])
    window = SettingsWindow(config_path)
    window.show()
    window.raise_()
    window.activateWindow()
    return run_event_loop(app)
