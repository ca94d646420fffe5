"""Passwords typed in a terminal, on the X11 overlay's route: the real
Controller reads the focused terminal through the real AT-SPI reader and the
X11 focus's merge of its answer, over an accessibility bus that serves one
terminal object (role TERMINAL, its screen as text, the caret at its end,
as VTE's and konsole's accessible objects do).  The keyboard listener's keys
and the accessibility events (a reading of the field after each) are
played by the test.  No typed secret may reach the worker or the screen; a
shell line still gets suggestions."""

from __future__ import annotations

import pytest

from daemon.capture.events import KeyEvent, Kind
from daemon.config import Config
from daemon.controller.ports import FocusState
from daemon.cpc.suggestion import Suggestion
from daemon.frontends.overlay.platform.atspi import constants as C
from daemon.frontends.atspi_bus import ACCESSIBLE, TEXT
from daemon.frontends.overlay.platform.atspi.bus import AtspiCallError
from daemon.frontends.overlay.platform.atspi.reader import AtspiFocus, StallBackoff
from daemon.frontends.overlay.platform.x11.focus import X11Focus
from tests.daemon.fakes import FakeInjector, FakeSuppressor, ManualWorker, RecordingSink, overlay

SHELL = "alice@host:~$ "
SUDO = "[sudo] password for alice: "
TERMINAL = ("1.42", "/org/a11y/atspi/accessible/7")


class AccessibleTerminal:
    """The accessibility bus as the reader sees it, serving one focused
    terminal object whose text is ``screen`` with the caret at its end."""

    def __init__(self, screen: str, role: int = C.ROLE_TERMINAL) -> None:
        self.screen = screen
        self.role = role

    def call(self, bus_name, path, interface, method, signature=None, body=(), timeout=None) -> tuple:
        if (interface, method) == (ACCESSIBLE, "GetRole"):
            return (self.role,)
        if (interface, method) == (ACCESSIBLE, "GetAttributes"):
            return ({},)
        if (interface, method) == (TEXT, "GetText"):
            start, end = body
            return (self.screen[start:end],)
        if (interface, method) == (TEXT, "GetCharacterExtents"):  # 10x16 cells, 80 columns
            offset = body[0]
            line = self.screen[:offset].count("\n")
            column = offset - (self.screen.rfind("\n", 0, offset) + 1)
            return (100 + 10 * column, 100 + 16 * line, 10, 16)
        raise AtspiCallError(f"{interface}.{method} is not served here", bus_name)

    def get_property(self, bus_name, path, interface, name, timeout=None):
        if (interface, name) == (TEXT, "CaretOffset"):
            return len(self.screen)
        if (interface, name) == (TEXT, "CharacterCount"):
            return len(self.screen)
        if (interface, name) == (ACCESSIBLE, "Name"):
            return "gnome-terminal-server"
        raise AtspiCallError(f"{interface}.{name} is not served here", bus_name)


def reader_on(bus: AccessibleTerminal) -> AtspiFocus:
    """The real reader, talking to ``bus`` (built without a session bus)."""
    reader = AtspiFocus.__new__(AtspiFocus)
    reader.max_chars, reader.walk_budget = 2000, 0.15
    reader._bus, reader._tracker, reader._app_names, reader._walk_miss = bus, None, {}, None
    reader._stalled = StallBackoff(AtspiFocus.STALL_BACKOFF_S, AtspiFocus.STALL_BACKOFF_MAX_S)
    reader._locate = lambda: (TERMINAL, [1 << C.STATE_FOCUSED | 1 << C.STATE_EDITABLE, 0])
    return reader


class TerminalWindow:
    """X11's focus for the terminal's window, merged with the reader's answer
    (the real ``X11Focus._merge_atspi``, without an X server)."""

    def __init__(self, bus: AccessibleTerminal) -> None:
        self.focus = X11Focus.__new__(X11Focus)
        self.focus._atspi, self.focus._atspi_failed = reader_on(bus), False

    def current(self) -> FocusState:
        return self.focus._merge_atspi(FocusState(app_id="gnome-terminal-server", window_id=7))

    def watch(self, callback) -> bool:
        return False  # the test plays the accessibility events


def event(ch: str) -> KeyEvent:
    return KeyEvent(Kind.ENTER, name="enter") if ch == "\n" else KeyEvent(Kind.CHAR, char=ch)


class Rig:
    def __init__(self, screen: str = SHELL, **cfg) -> None:
        self.bus = AccessibleTerminal(screen)
        self.sink = RecordingSink()
        self.worker = ManualWorker()
        self.c, self.keys = overlay(Config(**{"debounce_ms": 0, **cfg}), self.sink, FakeSuppressor(), FakeInjector(),
                                    worker=self.worker, focus=TerminalWindow(self.bus))
        self.c.start()
        self.c.on_focus()

    def type(self, text: str, echo: bool = True, feedback: str = "") -> None:
        """Each key as the listener reports it, then the terminal's echo (or
        none) and the accessibility event that makes the controller read it."""
        for ch in text:
            self.keys.on_key(event(ch))
            self.bus.screen += ch if echo else feedback
            self.c.on_field_event()

    def enter(self, output: str) -> None:
        self.keys.on_key(event("\n"))
        self.bus.screen += "\n"
        self.c.on_field_event()
        self.bus.screen += output
        self.c.on_field_event()

    def sent(self) -> list[str]:
        return [text for _, text in self.worker.requests] + self.worker.prefills

    def answer(self, text: str) -> None:
        """The worker answers its newest request (and the one the field's text
        asked for instead, when it did not agree with the keys)."""
        for _ in range(2):
            if self.worker.requests:
                self.c.on_result(self.worker.last[0], Suggestion(text, 0.9), True)


def test_the_reader_tells_a_terminal_at_a_password_prompt_from_one_at_a_shell():
    reader = reader_on(AccessibleTerminal("alice@host:~$ sudo ls\n" + SUDO + "***"))
    answer = reader.query()
    assert answer.is_password is True and answer.text_before_caret is None and answer.terminal
    reader = reader_on(AccessibleTerminal("alice@host:~$ sudo ls\n" + SHELL))
    answer = reader.query()
    assert answer.is_password is None and answer.text_before_caret.endswith(SHELL) and answer.terminal
    assert reader_on(AccessibleTerminal(SUDO, role=C.ROLE_ENTRY)).query().terminal is False


@pytest.mark.parametrize("prompt,feedback", [(SUDO, ""), (SUDO, "*"), ("[sudo] Passwort für alice: ", ""),
                                             ("Key: ", "")])
def test_a_password_typed_twice_at_a_terminal_prompt_reaches_no_worker_and_is_never_shown(prompt, feedback):
    r = Rig()
    r.type("sudo apt update")
    assert r.worker.last[1].endswith("sudo apt update")
    r.enter(prompt)
    r.type("hunter2", echo=False, feedback=feedback)
    r.answer("hunter2!")
    r.enter("Sorry, try again.\n" + prompt)
    r.type("hunter3", echo=False, feedback=feedback)
    r.answer("hunter3!")
    assert r.sink.visible == ""
    r.enter(SHELL)
    assert not any("hunter" in text for text in r.sent())
    assert "hunter" not in r.c.buffer_text
    assert not any("hunter" in str(e) for e in r.sink.events)
    r.type("git sta")
    assert r.worker.last[1].endswith("git sta")
    r.answer("tus")
    assert r.sink.visible == "tus"


def test_keys_typed_before_the_prompt_appears_reach_no_worker():
    """Typed ahead: the keys arrive before the terminal has even printed the
    prompt; they are not shown on the caret's line, so nothing is asked."""
    r = Rig()
    r.type("ssh host")
    r.keys.on_key(event("\n"))
    requests = len(r.worker.requests)
    for ch in "hunter2":
        r.keys.on_key(event(ch))
    r.c.on_field_event()
    assert len(r.worker.requests) == requests
    r.bus.screen += "\nalice@host's password: "
    r.c.on_field_event()
    assert not any("hunter" in text for text in r.sent())


def test_a_password_typed_at_a_prompt_that_echoes_it_reaches_no_worker():
    """``read -p "Password: "`` shows what is typed: the prompt's words make the
    terminal a password field, and once the line is above the caret it is no
    part of what the worker is given."""
    r = Rig()
    r.type("./deploy.sh")
    r.enter("Password: ")
    r.type("hunter2")
    r.answer("hunter2!")
    r.enter(SHELL)
    r.type("ls -")
    r.answer("la")
    assert r.worker.last[1].endswith("ls -")
    assert not any("hunter" in text for text in r.sent())
    assert not any("hunter" in str(e) for e in r.sink.events)
