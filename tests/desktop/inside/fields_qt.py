#!/usr/bin/python3
"""Test app of the desktop tier: a PyQt6 (Debian's Qt 6) window with a normal QLineEdit, a password
QLineEdit (EchoMode Password) and a button.

Appends JSON lines to $APP_LOG: "ready", "active", "im" (every QInputMethodEvent: preedit, commit),
"changed" (field, text), "focus" (field that got focus). $FOCUS=password focuses the password field;
$WINDOW=max shows the window maximized, $WINDOW=small too narrow for a suggestion after the phrase;
SIGUSR1 makes the window narrower than the phrase (the application resizes itself, as one does when its
layout changes: the desktop then has no room left for a suggestion at the caret) and logs "resized".
"""
import os
import signal
import sys

from PyQt6.QtCore import QEvent, QObject, Qt, QTimer
from PyQt6.QtWidgets import QApplication, QLineEdit, QPushButton, QVBoxLayout, QWidget

from applog import log  # noqa: E402  (beside this script)


class Spy(QObject):
    def eventFilter(self, obj, ev):
        name = obj.objectName()
        if ev.type() == QEvent.Type.InputMethod:
            log("im", field=name, preedit=ev.preeditString(), commit=ev.commitString())
        elif ev.type() == QEvent.Type.FocusIn:
            log("focus", field=name)
        return False


app = QApplication(sys.argv)
w = QWidget()
w.setWindowTitle("ghosttype-fields")
w.resize(700, 140)
lay = QVBoxLayout(w)
spy = Spy()
fields = {}
for name in ("normal", "password"):
    e = QLineEdit()
    e.setObjectName(name)
    if name == "password":
        e.setEchoMode(QLineEdit.EchoMode.Password)
    e.textChanged.connect(lambda t, n=name: log("changed", field=n, text=t))
    e.installEventFilter(spy)
    lay.addWidget(e)
    fields[name] = e
b = QPushButton("next")
b.setObjectName("button")
b.installEventFilter(spy)
lay.addWidget(b)
if os.environ.get("WINDOW") == "max":
    w.showMaximized()
else:
    if os.environ.get("WINDOW") == "small":
        w.resize(330, 140)
    w.show()
fields[os.environ.get("FOCUS", "normal")].setFocus()
signal.signal(signal.SIGTERM, lambda *a: app.quit())


def shrink(*_args):
    w.resize(SHRUNK_WIDTH, w.height())
    QTimer.singleShot(300, lambda: log("resized", width=w.width()))


#: Narrower than the phrase the tier types: the field scrolls its text, and its caret stands at its right end.
SHRUNK_WIDTH = 200
signal.signal(signal.SIGUSR1, shrink)
tick = QTimer()
tick.timeout.connect(lambda: None)
tick.start(100)  # lets Python run its signal handlers
app.applicationStateChanged.connect(lambda st: st == Qt.ApplicationState.ApplicationActive and log("active"))
QTimer.singleShot(300, lambda: log("ready", platform=QApplication.platformName()))
app.exec()
