"""Whether a terminal's line asks for a secret, and whether it shows what was typed.

A terminal has no password field: ``sudo``, ``ssh``, ``su``, ``passwd``,
``gpg`` and every program that calls ``getpass`` print a prompt and switch
the terminal's echo off, and the keys typed then go to the program without
appearing.  Neither VTE (gnome-console, gnome-terminal) nor konsole tells an
input method that echo is off (VTE answers no surrounding text at all,
konsole answers only its caret rectangle), and neither does AT-SPI.  What
can be read, where the terminal gives its text (surrounding text, AT-SPI), is
the line the caret is on; two rules follow from it:

* **Echo.**  Characters typed at a prompt whose echo is off never appear on
  the caret's line (:func:`shows_typed`).  A frontend lets a terminal's typed
  characters go on only once the line shows them; until then they wait, and
  a line that never shows them (its Return came first) is dropped.  A caret
  that moves is no proof: ``sudo`` with ``pwfeedback`` (the default of
  sudo-rs and of Linux Mint) and systemd's password agent print ``*`` for
  each character.
* **Prompt words.**  A line that asks for a password, passphrase, PIN or
  one-time code (:func:`secret_prompt`) is a password field whatever it
  echoes: ``read -p "Password: "`` echoes, pwfeedback echoes ``*``.  The
  words come in the languages sudo, PAM and GnuPG are translated into most
  often (OpenSSH is not translated).

Pure functions, shared by every frontend: nothing here knows where the line
comes from, and nothing here logs (the line may hold what was typed).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Optional

#: Words that name a secret, lower case.  Whole words in alphabetic scripts;
#: any occurrence in scripts where a word runs into the next (Chinese,
#: Japanese, Thai; Korean, whose particles attach: "alice의 암호").
SECRET_WORDS: tuple[str, ...] = (
    # English: sudo, su, login, passwd, ssh, gpg, openssl, mysql, psql, git, PAM's one-time codes
    "password", "passphrase", "pass phrase", "passcode", "pin", "token", "secret", "one-time", "otp",
    "verification code", "authentication code", "security code", "2fa", "mfa",
    # German, Dutch, the Nordic languages
    "passwort", "kennwort", "geheimzahl", "wachtwoord", "lösenord", "adgangskode", "passord", "salasana",
    # Romance languages
    "mot de passe", "phrase secrète", "phrase de passe", "contraseña", "contrasenya", "clave", "senha",
    "palavra-passe", "parola", "parolă", "frase segreta",
    # Slavic, Baltic, Hungarian, Greek, Turkish
    "hasło", "heslo", "geslo", "lozinka", "jelszó", "slaptažodis", "parole", "κωδικός", "şifre",
    "пароль", "парола", "лозинка", "пин",
    # Hebrew, Arabic, Persian, Hindi, Vietnamese, Indonesian, Malay
    "סיסמה", "كلمة المرور", "كلمة السر", "رمز عبور", "पासवर्ड", "mật khẩu", "kata sandi", "kata laluan",
    # written without spaces
    "密码", "密碼", "口令", "パスワード", "暗証番号", "암호", "비밀번호", "รหัสผ่าน",
)

#: Line breaks that end a terminal line (a terminal's text may use any).
_LINE_BREAKS = re.compile(r"[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")


def _unspaced(word: str) -> bool:
    """Whether ``word`` is written in a script where words run into each other."""
    return all(unicodedata.name(ch, "").startswith(("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "THAI"))
               for ch in word)


def _alternation(words) -> str:
    return "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(words, key=len, reverse=True))


_WORD = (r"(?:(?<!\w)(?:" + _alternation(w for w in SECRET_WORDS if not _unspaced(w)) + r")(?!\w)"
         r"|(?:" + _alternation(w for w in SECRET_WORDS if _unspaced(w)) + r"))")
#: A secret word and, further on in the line, the colon that ends a prompt
#: ("[sudo] password for alice: ", "Enter passphrase for key '/home/a/.ssh/id_ed25519': ",
#: "Password for 'https://alice@github.com': ", "[sudo] alice 的密码：").
_PROMPT = re.compile(_WORD + r"[^\n]{0,200}?[:\uff1a\ufe55]", re.IGNORECASE)


def caret_line(text: str, cursor: int, anchor: int) -> tuple[str, int, int]:
    """The line of ``text`` the caret (``cursor``) is on, and the caret and
    anchor as offsets in it (an anchor on an earlier line is put at the
    line's start)."""
    cursor = max(0, min(cursor, len(text)))
    anchor = max(0, min(anchor, len(text)))
    starts = [m.end() for m in _LINE_BREAKS.finditer(text, 0, cursor)]
    start = starts[-1] if starts else 0
    end_match = _LINE_BREAKS.search(text, cursor)
    end = end_match.start() if end_match else len(text)
    line = text[start:end]
    return line, cursor - start, max(0, min(anchor, end) - start)


def line_before_caret(text_before_caret: str) -> str:
    """The caret's line up to the caret, from all the text before the caret."""
    return _LINE_BREAKS.split(text_before_caret)[-1]


def secret_prompt(line: str) -> bool:
    """Whether a terminal line (the caret's, up to the caret) asks for a
    secret: a word for a password, passphrase, PIN or one-time code, then a
    colon further on ("Password: ", "[sudo] Passwort für alice: ",
    "alice@host's password: ").  What the prompt prints after its colon
    (pwfeedback's ``*``, an echoing prompt's text) does not change the
    answer.  A command line that holds such a word and a colon after it
    (``curl -u bob:password https://...``) counts too: it holds a secret."""
    return bool(_PROMPT.search(line))


def terminal_shows(field_text: Optional[str], tracked: str) -> bool:
    """Whether a terminal's text before the caret (None: unreadable) shows
    the caret's line of ``tracked``, the text the keys made: their echo."""
    return field_text is not None and shows_typed(line_before_caret(field_text), line_before_caret(tracked))


def shows_typed(line: str, typed: str) -> bool:
    """Whether the caret's line (up to the caret) shows ``typed``, the
    characters typed on it that have not been seen on it yet: their echo.
    Where echo is off the line stays as the prompt left it (or grows by
    feedback characters), so this is False until they appear."""
    return line.endswith(typed)
