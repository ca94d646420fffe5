"""A small PyQt6 window with three text fields, for accessibility and typing tests.

The fields are a normal ``QLineEdit`` (objectName/accessibleName ``normal``), a
password-mode ``QLineEdit`` (``password``, ``EchoMode.Password``) and a
``QPlainTextEdit`` (``editor``).  The normal field has keyboard focus at start,
so a test can type into it right away; Tab moves to the password field (the
editor keeps Tab as a character, as text editors do).

With ``--state FILE`` the app writes a JSON snapshot after every edit and every
focus change: each field's text, its screen rectangle and which field has focus.
Tests read it to check what was typed and where the fields are, without
depending on accessibility (which is what they are testing).  The file is
replaced atomically so a reader never sees half a snapshot.

With ``--focus-requests FILE`` the app moves keyboard focus by itself, as a
login page's script does: when FILE appears, the field it names gets focus
(the file is removed).

Run: ``python3 qt_fields.py [--state FILE] [--title TITLE] [--focus-requests FILE]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from PyQt6.QtCore import QTimer
from PyQt6.QtWidgets import (
    QApplication,
    QFormLayout,
    QLineEdit,
    QPlainTextEdit,
    QWidget,
)


class FieldsWindow(QWidget):
    """The test window; ``snapshot()`` describes its fields."""

    def __init__(self, state_path: Path | None, title: str) -> None:
        super().__init__()
        self.setObjectName("qt_fields")
        self.setWindowTitle(title)
        self._state_path = state_path

        self.normal = QLineEdit(self)
        self.password = QLineEdit(self)
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.editor = QPlainTextEdit(self)
        self.editor.setTabChangesFocus(False)

        layout = QFormLayout(self)
        for name, widget in (("normal", self.normal), ("password", self.password),
                             ("editor", self.editor)):
            widget.setObjectName(name)
            widget.setAccessibleName(name)
            layout.addRow(name, widget)
        self.resize(520, 300)

        self.normal.textChanged.connect(self.write_state)
        self.password.textChanged.connect(self.write_state)
        self.editor.textChanged.connect(self.write_state)
        app = QApplication.instance()
        assert isinstance(app, QApplication)
        app.focusChanged.connect(lambda _old, _new: self.write_state())

    def fields(self) -> dict[str, QWidget]:
        return {"normal": self.normal, "password": self.password, "editor": self.editor}

    def snapshot(self) -> dict:
        """Texts, screen rectangles (logical pixels), the focused field and its
        text cursor's screen rectangle (what the ghost text should line up with)."""
        out: dict = {"focus": None, "fields": {}, "caret": None}
        focus = QApplication.focusWidget()
        for name, widget in self.fields().items():
            top_left = widget.mapToGlobal(widget.rect().topLeft())
            text = widget.toPlainText() if isinstance(widget, QPlainTextEdit) else widget.text()
            out["fields"][name] = {
                "text": text,
                "rect": [top_left.x(), top_left.y(), widget.width(), widget.height()],
            }
            if widget is focus:
                out["focus"] = name
                # QPlainTextEdit's cursorRect is in its viewport's coordinates.
                owner = widget.viewport() if isinstance(widget, QPlainTextEdit) else widget
                cr = widget.cursorRect()
                at = owner.mapToGlobal(cr.topLeft())
                out["caret"] = [at.x(), at.y(), cr.width(), cr.height()]
        return out

    def follow_focus_requests(self, path: Path) -> None:
        """Every 50 ms: focus the field named in ``path``, if it exists."""

        def poll() -> None:
            try:
                name = path.read_text(encoding="utf-8").strip()
            except OSError:
                return
            path.unlink(missing_ok=True)
            widget = self.fields().get(name)
            if widget is not None:
                widget.setFocus()

        self._focus_timer = QTimer(self)
        self._focus_timer.timeout.connect(poll)
        self._focus_timer.start(50)

    def write_state(self) -> None:
        if self._state_path is None:
            return
        tmp = self._state_path.with_name(self._state_path.name + ".tmp")
        tmp.write_text(json.dumps(self.snapshot()), encoding="utf-8")
        os.replace(tmp, self._state_path)

    def showEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        super().showEvent(event)
        self.write_state()

    def moveEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        super().moveEvent(event)
        self.write_state()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state", type=Path, help="write a JSON snapshot here after every change")
    parser.add_argument("--title", default="qt_fields", help="window title")
    parser.add_argument("--focus-requests", type=Path, help="focus the field this file names when it appears")
    args, qt_args = parser.parse_known_args(argv)
    app = QApplication([sys.argv[0], *qt_args])
    app.setApplicationName("qt_fields")
    app.setDesktopFileName("qt_fields")
    window = FieldsWindow(args.state, args.title)
    window.show()
    window.normal.setFocus()
    if args.focus_requests is not None:
        window.follow_focus_requests(args.focus_requests)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
