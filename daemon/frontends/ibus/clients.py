"""What the engine knows of an IBus client and its field's text: the
application it names, whose preedit is drawn grey and private, when a
field's reported text still agrees with the keys, and masked text."""

from __future__ import annotations

import collections
import re
import time
from typing import Callable, Optional, Sequence

#: Client names whose preedit is drawn grey (the IBus module of GTK 3); every
#: other client draws it like typed text or drops its colours: GNOME Shell and
#: KWin (client ``wayland``) forward only text and cursor, GTK 4 ignores
#: colours, Qt draws it black.
_GREY_PREEDIT_PREFIXES = ("gtk3-im:",)
#: Applications whose pages can read preedit text as the field's content
#: (``textarea.value``, composition events): browsers and Electron apps.
_WEB_APPS = ("firefox", "chromium", "chrome", "brave", "msedge", "microsoft-edge", "vivaldi", "opera",
             "epiphany", "electron", "code", "codium", "cursor", "slack", "discord", "signal", "teams",
             "obsidian", "thunderbird")
#: How many of the last keys a field's reported text may lag behind.  Firefox
#: on KWin reports, right after each key, the text it had before that key, and
#: sends nothing after BackSpace: its next report can be three keys old.
LAG_KEYS = 8
#: Seconds after a key within which a field's report may be a late echo of an
#: earlier state (Firefox's come within milliseconds; a click takes longer).
ECHO_WINDOW = 0.3
#: Characters toolkits draw password fields with.  A field whose text is all
#: of these is a password field whatever purpose it declares (Firefox on
#: Wayland sends its password inputs' masked text and no password purpose).
MASK_CHARS = frozenset("\u25cf\u2022\u2219\u00b7\u25aa*")


def app_from_client(client: str) -> str:
    """The application named in an IBus client name, lower case ("" when the
    client does not name one: ``gnome-shell``, ``fake``, ``xim``...)."""
    if ":" not in client:
        return ""
    name = client.split(":", 1)[1].strip()
    return name.rsplit("/", 1)[-1].lower()


#: Programs that run another program's code: their file name does not name the application.
_RUNNERS = re.compile(r"(python|perl|ruby|node|java|gjs|mono|wine|bash|dash|sh)[\d.]*")


def app_from_plugin(ids: Sequence[str], denied: Callable[[str], bool]) -> str:
    """The application the desktop's plug-in named (its ``App``: the app id, then the program's file
    name): whichever of its names the denylist holds (a reverse-DNS app id's last part too:
    ``org.keepassxc.KeePassXC`` is ``keepassxc``), else the program's file name unless an interpreter
    runs the application, else the app id; "" when it named none (the desktop's own field)."""
    app = ids[0].strip().lower() if ids else ""
    program = ids[1].strip().lower() if len(ids) > 1 else ""
    for name in (program, app, app.rsplit(".", 1)[-1]):
        if name and denied(name):
            return name
    return program if program and not _RUNNERS.fullmatch(program) else app


def text_follows_caret(surrounding: Optional[tuple[str, int, int]]) -> bool:
    """Text other than blanks follows the caret on its line (False when the
    field sends no surrounding text: terminals, Chromium)."""
    if surrounding is None:
        return False
    text, cursor, _anchor = surrounding
    return bool(text[cursor:].split("\n", 1)[0].strip())


def continues(tracked: str, field: str) -> bool:
    """True when the field's text before the caret is what we tracked, as far
    as both go (either may be cut: our buffer is bounded, clients send a
    window or one paragraph)."""
    if field == tracked:
        return True
    if not tracked:
        return False  # we know nothing, the field does: learn it
    return field.endswith(tracked) or tracked.endswith(field)


class LateEchoes:
    """Tells a field's late report of an earlier state from an edit.

    Firefox on KWin sends, right after each key, the text it had before that
    key (at times twice), and nothing after BackSpace.  A report that comes
    within :data:`ECHO_WINDOW` of a key and equals what we tracked before one
    of the last two keys is an echo; once the field has echoed the key just
    before, one of the last :data:`LAG_KEYS`.  A report with no key just
    before it (a click back into the text just typed) is the field's news.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.reset()

    def reset(self) -> None:
        """A new field."""
        #: the tracked text before each of the last keys
        self._before: collections.deque[str] = collections.deque(maxlen=LAG_KEYS)
        self._key_at = -1e9
        self._report_after_key = False
        self._echoes = False  #: the field has reported, right after a key, its text from before it

    def key_pressed(self) -> None:
        self._key_at = self.clock()

    def key_passed(self, tracked_before: str) -> None:
        """A key goes to the application; ``tracked_before`` is our text before it."""
        self._before.append(tracked_before)

    def reported(self) -> None:
        """The field reported its text (now)."""
        self._report_after_key = self.clock() - self._key_at <= ECHO_WINDOW

    def is_echo(self, tracked: str, field: str) -> bool:
        """Whether the field's newest report (``field``: its text before the
        caret) agrees with ``tracked`` or echoes an earlier state of it."""
        if continues(tracked, field):
            self._before.clear()
            return True
        depth = len(self._before) if self._echoes else 2
        recent = list(self._before)[-depth:]
        if self._report_after_key and any(continues(earlier, field) for earlier in recent):
            self._echoes = self._echoes or continues(recent[-1], field)
            return True
        return False
