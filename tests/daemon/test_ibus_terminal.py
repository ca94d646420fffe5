"""Passwords typed in a terminal: the IBus engine with a client whose input
purpose is *terminal*, the real Controller, and a terminal that reports its
screen as surrounding text after each key, echoing what is typed or not (as
a terminal does at sudo's, ssh's or passwd's prompt).  No typed secret may
reach the worker (requests or prefills) or the screen; a shell line in the
same terminal still gets suggestions."""

from __future__ import annotations

from typing import Optional

import pytest

from daemon.config import Config
from daemon.frontends.ibus import wire
from tests.daemon.test_ibus_engine import BACKSPACE, REPORTS_TEXT, TAB, Rig, press

RETURN = 0xFF0D
SHELL = "alice@host:~$ "
SUDO = "[sudo] password for alice: "


class Terminal:
    """A terminal as its IBus client shows it: the screen's text before the
    caret, reported after each key (by default a report comes right after
    each key; ``late``: a report still shows the screen before the key)."""

    def __init__(self, rig: Rig, client: str = "gnome-shell", screen: str = SHELL) -> None:
        self.rig = rig
        self.engine, self.out = rig.engine(client, caps=REPORTS_TEXT)
        self.engine.set_content_type(wire.PURPOSE_TERMINAL, 0)
        self.screen = screen
        self.report()

    def report(self, screen: Optional[str] = None) -> None:
        screen = self.screen if screen is None else screen
        self.engine.set_surrounding_text(screen, len(screen), len(screen))

    def type(self, text: str, echo: bool = True, feedback: str = "", late: bool = False) -> None:
        for ch in text:
            before = self.screen
            assert press(self.engine, ord(ch)) is False, "typed keys must reach the application"
            self.screen += ch if echo else feedback
            self.report(before if late else None)

    def enter(self, output: str) -> None:
        """Return, and what the program prints next (its prompt ends the screen)."""
        assert press(self.engine, RETURN) is False
        self.screen += "\n" + output
        self.report()

    def sent(self) -> list[str]:
        """Every text the worker was given."""
        return [text for _, text in self.rig.worker.requests] + self.rig.worker.prefills

    def shown(self) -> list[str]:
        """Every text the engine drew (popup, preedit)."""
        return [e[1] for e in self.out.events if e[0] in ("aux", "preedit") and e[1]]

    def assert_nothing_of(self, *secrets: str) -> None:
        for secret in secrets:
            assert not any(secret in text for text in self.sent()), "a typed secret reached the worker"
            assert secret not in self.rig.controller.buffer_text
            assert not any(secret in text for text in self.shown())

    def deliver_if_asked(self, text: str) -> None:
        """The worker answers its newest request, if it got one."""
        if self.rig.worker.requests:
            self.rig.deliver(text)


@pytest.fixture
def rig() -> Rig:
    return Rig()


def test_a_shell_line_gets_suggestions_once_the_terminal_shows_its_keys(rig):
    term = Terminal(rig)
    term.type("git sta")
    assert rig.worker.last[1].endswith("git sta")
    rig.deliver("tus")
    assert term.out.aux == "tus"
    assert press(term.engine, TAB) is True
    assert term.out.committed == ["tus"]


@pytest.mark.parametrize("prompt,feedback", [
    (SUDO, ""),  # sudo
    (SUDO, "*"),  # sudo with pwfeedback (the default of sudo-rs, and of Linux Mint)
    ("[sudo] Passwort für alice: ", ""),  # sudo, German
    ("[sudo: authenticate] Password: ", "*"),  # sudo-rs
])
def test_a_password_typed_twice_at_sudos_prompt_reaches_no_worker_and_is_never_shown(rig, prompt, feedback):
    term = Terminal(rig)
    term.type("sudo apt update")
    assert rig.worker.last[1].endswith("sudo apt update")
    term.enter(prompt)
    term.type("hunter2", echo=False, feedback=feedback)
    term.deliver_if_asked("hunter2!")
    assert term.out.aux == "" and term.out.preedit == ""
    assert rig.controller.state().blocked
    term.enter("Sorry, try again.\n" + prompt)  # a wrong password, and the prompt again
    term.type("hunter3", echo=False, feedback=feedback)
    term.deliver_if_asked("hunter3!")
    assert term.out.aux == "" and term.out.preedit == ""
    term.enter("Hit:1 http://deb.debian.org/debian sid InRelease\n" + SHELL)
    term.assert_nothing_of("hunter", "2!", "3!")
    # The shell's next line is an ordinary one again.
    term.type("git sta")
    assert rig.worker.last[1].endswith("git sta") and not rig.controller.state().blocked
    rig.deliver("tus")
    assert term.out.aux == "tus"


@pytest.mark.parametrize("command,prompt", [
    ("ssh alice@host", "alice@host's password: "),
    ("ssh-add", "Enter passphrase for /home/alice/.ssh/id_ed25519: "),
    ("passwd", "Changing password for alice.\nCurrent password: "),
    ("su -", "Passwort: "),
    ("gpg -c notes.txt", "Passphrase: "),
    ("mysql -u root -p", "Enter password: "),
    ("git push", "Password for 'https://alice@github.com': "),
    ("read -s -p 'Key: ' k", "Key: "),  # no word for a secret: echo off is enough
])
def test_a_secret_typed_at_a_prompt_with_echo_off_reaches_no_worker(rig, command, prompt):
    term = Terminal(rig)
    term.type(command)
    term.enter(prompt)
    term.type("Tr0ub4dor", echo=False)
    term.deliver_if_asked("Tr0ub4dor&3")
    assert term.out.aux == "" and term.out.preedit == ""
    term.enter(SHELL)
    term.assert_nothing_of("Tr0ub4dor", "&3")
    term.type("ls -")
    assert rig.worker.last[1].endswith("ls -")


def test_a_secret_typed_at_a_prompt_that_echoes_it_reaches_no_worker(rig):
    """``read -p "Password: "`` shows what is typed: the prompt's words decide."""
    term = Terminal(rig)
    term.type("./deploy.sh")
    term.enter("Password: ")
    term.type("hunter2")
    term.enter(SHELL)
    term.assert_nothing_of("hunter")


def test_a_backspace_at_a_prompt_with_echo_off_sends_nothing(rig):
    """Typed with echo off and taken back: a report after that shows the line as
    the prompt left it, which is not a reason to let the keys go."""
    term = Terminal(rig)
    term.type("read -s k")
    term.enter("")
    term.type("hunter2", echo=False)
    for _ in range(7):
        assert press(term.engine, BACKSPACE) is False
        term.report()
    term.enter(SHELL)
    term.assert_nothing_of("hunter")
    assert all(text.split("read -s k", 1)[1].strip() == "" for text in term.sent() if "read -s k" in text)


def test_keys_reported_late_go_on_in_order_once_the_terminal_shows_them(rig):
    term = Terminal(rig)
    term.type("git sta", late=True)
    requests = len(rig.worker.requests)
    term.report()  # now the terminal shows every key
    assert len(rig.worker.requests) > requests
    assert rig.worker.last[1].endswith("git sta") and rig.controller.buffer_text.endswith("git sta")


def test_a_late_report_of_the_line_return_ended_does_not_open_the_next_one(rig):
    """A report right after Return may still show the line the Return ended:
    the next line (sudo's prompt, perhaps) is not known yet, so nothing is
    asked for it until the terminal reports it."""
    term = Terminal(rig)
    term.type("sudo ls")
    requests = len(rig.worker.requests)
    assert press(term.engine, RETURN) is False
    term.report()  # the screen as it was before the Return
    assert len(rig.worker.requests) == requests
    term.screen += "\n" + SUDO
    term.report()
    assert rig.controller.state().blocked and len(rig.worker.requests) == requests


def test_tab_waits_while_the_terminal_has_not_shown_the_last_key(rig):
    """The suggestion continues the keys the controller has; a key the terminal
    has not shown yet is not among them, so Tab is the terminal's."""
    term = Terminal(rig)
    term.type("git sta")
    rig.deliver("tus")
    assert term.out.aux == "tus"
    assert press(term.engine, ord("x")) is False  # not shown by the terminal yet
    assert press(term.engine, TAB) is False
    assert term.out.committed == []


@pytest.mark.parametrize("setting,suggests", [("auto", False), ("suggest", True), ("skip", False)])
def test_a_terminal_that_reports_no_text_follows_ibus_terminals(setting, suggests):
    """gnome-console and gnome-terminal (VTE) report no surrounding text: their
    keys never show, so with ``auto`` none reaches the worker; ``suggest`` lets
    them go on as typed (a password typed at a prompt then reaches the model)."""
    rig = Rig(Config(debounce_ms=0, ibus_terminals=setting))
    engine, out = rig.engine("gnome-shell", caps=REPORTS_TEXT)
    engine.set_content_type(wire.PURPOSE_TERMINAL, 0)
    for ch in "sudo ls":
        press(engine, ord(ch))
    press(engine, RETURN)
    for ch in "hunter2":
        press(engine, ord(ch))
    sent = [text for _, text in rig.worker.requests] + rig.worker.prefills
    assert any("hunter2" in text for text in sent) is suggests
    assert bool(sent) is suggests


def test_a_new_field_forgets_the_keys_that_waited(rig):
    term = Terminal(rig)
    term.type("hunter2", echo=False)
    term.engine.focus_in("/ic/2", "gnome-shell")
    term.engine.set_content_type(wire.PURPOSE_TERMINAL, 0)
    term.report("alice@host:~$ hunter2")  # another terminal that happens to show the same
    assert rig.worker.requests == []  # what the first one's keys made wait went nowhere
