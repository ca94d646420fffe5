"""The terminal rules: which line asks for a secret (real prompts of sudo,
sudo-rs, su, passwd, OpenSSH, GnuPG, OpenSSL, cryptsetup, MySQL, PostgreSQL,
git and others, as they print them in English and in their common
translations), which line shows what was typed, and the IBus engine's
waiting keys built on them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.capture.events import KeyEvent, Kind
from daemon.controller.terminal_prompt import caret_line, line_before_caret, secret_prompt, shows_typed
from daemon.frontends.ibus.terminal_echo import TerminalEcho

SECRET_PROMPTS = [
    # sudo (sudo.ws) and sudo-rs
    "[sudo] password for alice: ",
    "[sudo: authenticate] Password: ",
    "Password: ",
    "[sudo] Passwort für alice: ",  # de
    "[sudo] Mot de passe de alice : ",  # fr
    "[sudo] contraseña para alice: ",  # es
    "[sudo] password di alice: ",  # it
    "[sudo] senha para alice: ",  # pt_BR
    "[sudo] wachtwoord voor alice: ",  # nl
    "[sudo] hasło użytkownika alice: ",  # pl
    "[sudo] heslo pro alice: ",  # cs
    "[sudo] пароль для alice: ",  # ru
    "[sudo] lösenord för alice: ",  # sv
    "[sudo] alice için parola: ",  # tr
    "[sudo] alice 的密码：",  # zh_CN, full-width colon
    "[sudo] alice のパスワード: ",  # ja
    "[sudo] alice의 암호: ",  # ko
    # su, login, passwd (shadow-utils, PAM)
    "Passwort: ",
    "Mot de passe : ",
    "Contraseña: ",
    "Пароль: ",
    "Current password: ",
    "(current) UNIX password: ",
    "New password: ",
    "Retype new password: ",
    "Aktuelles Passwort: ",
    "Neues Passwort: ",
    "Geben Sie das neue Passwort erneut ein: ",
    "Verification code: ",  # google-authenticator's PAM module
    # doas, run0 and polkit's text agent
    "doas (alice@host) password: ",
    "Password for alice: ",
    # OpenSSH
    "alice@host's password: ",
    "alice@192.168.1.10's password: ",
    "Enter passphrase for key '/home/alice/.ssh/id_ed25519': ",
    "Enter passphrase for /home/alice/.ssh/id_ed25519: ",
    "Enter passphrase (empty for no passphrase): ",
    "Enter same passphrase again: ",
    "Enter PIN for ED25519-SK key /home/alice/.ssh/id_ed25519_sk: ",
    "(alice@host) Password: ",
    "(alice@host) Verification code: ",
    # GnuPG (pinentry-tty), OpenSSL, cryptsetup, PIV cards
    "Passphrase: ",
    "Enter PEM pass phrase:",
    "Verifying - Enter PEM pass phrase:",
    "Enter pass phrase for server.key:",
    "Enter passphrase for /dev/nvme0n1p3: ",
    "Enter PIN for 'PIV Card Holder pin (PIV_II)': ",
    # databases, git, network tools
    "Enter password: ",
    "Password for user postgres: ",
    "Passwort für Benutzer postgres: ",
    "Password for 'https://alice@github.com': ",
    "Enter host password for user 'bob':",
    "Password for [WORKGROUP\\alice]:",
    "Enter Auth Password:",
    "Vault password: ",
    "BECOME password: ",
    "Token (will be hidden): ",
    "? Paste your authentication token: ",
    "Enter password (will not be echoed):",
    "[notes.zip] notes.txt password: ",
]

PLAIN_LINES = [
    "",
    "alice@host:~$ ",
    "alice@host:~$ ls -la",
    "alice@host:~/passwords$ ls",
    "alice@host:~/pin$ git status",
    "[alice@host ~]$ sudo apt update",
    "alice@host ~/src/secret-santa (main)> make",
    "PS /home/alice> ",
    "Username for 'https://github.com': ",
    "Login: ",
    "Benutzername: ",
    "Do you want to continue? [Y/n] ",
    "Are you sure you want to continue connecting (yes/no/[fingerprint])? ",
    "Enter file in which to save the key (/home/alice/.ssh/id_ed25519): ",
    "Overwrite (y/n)? ",
    ">>> print('hello')",
    "mysql> SELECT name FROM users;",
    "Password",  # a word, but no prompt
]


@pytest.mark.parametrize("prompt", SECRET_PROMPTS)
def test_real_prompts_ask_for_a_secret(prompt):
    assert secret_prompt(prompt)


@pytest.mark.parametrize("line", PLAIN_LINES)
def test_shell_lines_and_other_prompts_do_not(line):
    assert not secret_prompt(line)


@given(st.sampled_from(SECRET_PROMPTS), st.text(alphabet=st.characters(blacklist_categories=("Cc", "Zl", "Zp"))))
def test_a_prompt_stays_secret_whatever_follows_it(prompt, after):
    """pwfeedback's ``*``, an echoing prompt's text, anything typed after it."""
    assert secret_prompt(prompt + after)
    assert secret_prompt(prompt + "*" * len(after))


@given(st.text(alphabet=st.characters(blacklist_characters=":\uff1a\ufe55")))
def test_without_a_colon_nothing_is_a_prompt(line):
    assert not secret_prompt(line)


LINE_TEXT = st.text(alphabet=st.sampled_from("ab :*\n\r\u2028"), max_size=30)


@given(LINE_TEXT, st.data())
def test_caret_line_is_the_line_around_the_caret(text, data):
    cursor = data.draw(st.integers(0, len(text)))
    anchor = data.draw(st.integers(0, len(text)))
    line, c, a = caret_line(text, cursor, anchor)
    assert not any(ch in line for ch in "\n\r\u2028")
    assert 0 <= c <= len(line) and 0 <= a <= len(line)
    assert text[:cursor].endswith(line[:c])
    assert line_before_caret(text[:cursor]) == line[:c]
    assert text[cursor:].startswith(line[c:])


@given(st.text(max_size=20), st.text(min_size=1, max_size=10))
def test_a_line_shows_what_was_typed_only_once_it_ends_with_it(prompt, typed):
    assert shows_typed(prompt + typed, typed)
    assert shows_typed(prompt, typed) is prompt.endswith(typed)


# -- the IBus engine's waiting keys ------------------------------------------------------------

def char(c: str) -> KeyEvent:
    return KeyEvent(Kind.CHAR, char=c)


BACKSPACE, ENTER = KeyEvent(Kind.BACKSPACE), KeyEvent(Kind.ENTER)
typing = st.lists(st.one_of(st.sampled_from("hunter2 *:"), st.just("BS"), st.just("report")), max_size=40)


def run(keys, prompt: str, echo: bool, feedback: str = "") -> tuple[TerminalEcho, list[KeyEvent]]:
    """Keys typed at ``prompt`` in a terminal that echoes them or not; returns
    what went on to the controller."""
    term = TerminalEcho(256)
    went: list[KeyEvent] = []
    line = prompt
    went += term.report(line)
    for k in keys:
        if k == "report":
            went += term.report(line)
            continue
        event = BACKSPACE if k == "BS" else char(k)
        if not term.hold(event, suggest_unread=False):
            went.append(event)
        if k == "BS":
            line = line[:-1] if len(line) > len(prompt) else line
        else:
            line += k if echo else feedback
    went += term.report(line)
    return term, went


@given(typing, st.sampled_from(["Key: ", "", "> ", "Enter code: "]), st.sampled_from(["", "*", "\u2022"]))
def test_nothing_typed_with_echo_off_goes_on(keys, prompt, feedback):
    """At a prompt without words for a secret, echo off alone keeps every typed
    character from the controller, however the keys and reports interleave
    (a typed character that happens to equal the prompt's last one aside)."""
    if "*" in keys and feedback == "*":
        keys = [k for k in keys if k != "*"]
    if prompt and prompt[-1] in keys:
        keys = [k for k in keys if k != prompt[-1]]
    term, went = run(keys, prompt, echo=False, feedback=feedback)
    assert [e for e in went if e.kind is Kind.CHAR] == []
    assert term.hold(ENTER, suggest_unread=False) is True


def edit(keys) -> str:
    text = ""
    for k in keys:
        text = text[:-1] if k == "BS" else text + k
    return text


@given(typing)
def test_with_echo_the_keys_go_on_in_order_and_make_the_same_text(keys):
    """A character taken back before the terminal showed it goes nowhere,
    with its BackSpace; everything else goes on, in order."""
    term, went = run(keys, "alice@host:~$ ", echo=True)
    assert edit("BS" if e.kind is Kind.BACKSPACE else e.char for e in went) == edit(k for k in keys if k != "report")
    assert not term.waiting


@given(typing, st.sampled_from(SECRET_PROMPTS), st.booleans())
def test_at_a_secret_prompt_nothing_goes_on_even_with_echo(keys, prompt, echo):
    term, went = run(keys, prompt, echo=echo)
    assert [e for e in went if e.kind is Kind.CHAR] == []
    assert term.secret


def test_suggest_lets_the_keys_of_a_terminal_that_reported_nothing_go_on():
    term = TerminalEcho(8)
    assert term.hold(char("a"), suggest_unread=True) is False
    term.report("$ a")
    assert term.hold(char("b"), suggest_unread=True) is True  # it reports: the rules apply


def test_waiting_keys_are_bounded():
    term = TerminalEcho(8)
    term.report("$ ")
    for c in "x" * 100:
        term.hold(char(c), suggest_unread=False)
    assert len(term.report("$ " + "x" * 100)) == 8
