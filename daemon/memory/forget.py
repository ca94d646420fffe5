"""``ghosttype forget``: what ghosttype learned, wiped everywhere.

:func:`forget_everything` (the command, the settings window's button)
deletes the memory file (:mod:`daemon.memory.persist`) and the keyring's
key, then tells every running ghosttype to forget too, through a *stamp*: a
file named ``forget`` in the user runtime directory
(``$XDG_RUNTIME_DIR/ghosttype/forget``, a tmpfs gone at logout; the user
state directory where there is none) that holds a random token and nothing
else.  A running frontend's :class:`ForgetWatcher` watches that directory
(the :mod:`daemon.config_watch` watcher, with the token in place of a
config) and calls its
``on_forget`` (the memory keeper's :meth:`~daemon.memory.persist.MemoryKeeper.forget`)
whenever the token changes: the memory is cleared, and the file and the key
are deleted again, after any save the frontend had in flight, so a save
racing the command cannot leave a file behind.
"""

from __future__ import annotations

import logging
import os
import pathlib
import secrets
from dataclasses import dataclass
from typing import Callable, Optional, Union

from daemon.atomic_write import replace_text
from daemon.config_watch import ConfigWatcher
from daemon.memory.keystore import KeyringUnavailable, SecretServiceKeys
from daemon.memory.persist import APP_NAME, Keys, MemoryFile

log = logging.getLogger(__name__)

STAMP_FILENAME = "forget"

PathLike = Union[str, pathlib.Path]


def default_forget_stamp() -> pathlib.Path:
    """``<user runtime dir>/ghosttype/forget``; ``<user state dir>/ghosttype/forget``
    where the runtime directory cannot be made (no ``XDG_RUNTIME_DIR`` and no
    ``/run/user/<uid>``)."""
    import platformdirs

    runtime = pathlib.Path(platformdirs.user_runtime_dir(APP_NAME, appauthor=False))
    if runtime.is_dir() or (runtime.parent.is_dir() and os.access(runtime.parent, os.W_OK)):
        return runtime / STAMP_FILENAME
    return pathlib.Path(platformdirs.user_state_dir(APP_NAME, appauthor=False)) / STAMP_FILENAME


def read_stamp(stamp: pathlib.Path) -> str:
    try:
        return stamp.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def request_forget(stamp: Optional[PathLike] = None) -> pathlib.Path:
    """Tell every running ghosttype to forget (a new token in the stamp)."""
    path = pathlib.Path(stamp) if stamp is not None else default_forget_stamp()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return replace_text(path, secrets.token_hex(16) + "\n", mode=0o600)


@dataclass(frozen=True)
class Forgotten:
    """What :func:`forget_everything` did."""

    file_deleted: bool
    key_items: int  #: keyring items deleted
    keyring_problem: str = ""  #: why the keyring could not be asked ("" when it answered)
    keyring_absent: bool = False  #: there is no keyring here at all

    @property
    def complete(self) -> bool:
        """Nothing is left: no file and no key (or no keyring that could hold one)."""
        return not self.keyring_problem or self.keyring_absent

    def lines(self) -> list[str]:
        """What to tell the user."""
        out = ["a running ghosttype forgets what it learned now",
               "memory file deleted" if self.file_deleted else "no memory file"]
        if not self.keyring_problem:
            out.append(f"{self.key_items} keyring item(s) deleted" if self.key_items else "no key in the keyring")
        elif self.keyring_absent:
            out.append(f"no key to delete: {self.keyring_problem}")
        else:
            out.append(f"the keyring's key is not deleted: {self.keyring_problem} "
                       "(without the file it reads nothing; unlock the keyring and run ghosttype forget again)")
        return out


def forget_everything(file: Optional[MemoryFile] = None, keys: Optional[Keys] = None,
                      stamp: Optional[PathLike] = None) -> Forgotten:
    """Wipe what ghosttype learned: the file, the key, running frontends' memories.

    The file and the key go first, so what is reported is what this call
    deleted: a running keeper told first would race it to the same key.  The
    keeper, told next, deletes again whatever it saved in between."""
    file = file if file is not None else MemoryFile()
    keys = keys if keys is not None else SecretServiceKeys()
    try:
        deleted = file.delete()
        try:
            return Forgotten(deleted, keys.delete())
        except KeyringUnavailable as e:
            return Forgotten(deleted, 0, str(e), e.absent)
    finally:  # told whatever happened above
        try:
            request_forget(stamp)
        except OSError as e:  # the file and the key are gone all the same
            log.warning("forget: cannot tell a running ghosttype (%s)", e.strerror or e)


class ForgetWatcher(ConfigWatcher):
    """Calls ``on_forget()`` (on a timer thread) each time the stamp gets a
    new token; see the module docstring.  The config watcher's watch of a
    file's directory, debounced, with the stamp's token in place of a config;
    ``start``/``stop`` from the frontend's thread."""

    def __init__(self, on_forget: Callable[[], None], stamp: Optional[PathLike] = None,
                 debounce_s: float = 0.1) -> None:
        path = pathlib.Path(stamp) if stamp is not None else default_forget_stamp()
        super().__init__(path, on_change=lambda _: None, on_error=lambda _: None, debounce_s=debounce_s)
        self.stamp = self.path
        self._on_forget = on_forget
        self._token = ""
        self.forgets = 0

    def start(self) -> None:
        self.stamp.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._token = read_stamp(self.stamp)  # an earlier forget is not this run's
        super().start()

    def reload(self) -> None:  # type: ignore[override]
        """Forget when the stamp holds a new token."""
        token = read_stamp(self.stamp)
        with self._lock:
            if not token or token == self._token:
                return
            self._token = token
        log.info("forget requested: forgetting what was learned")
        try:
            self._on_forget()
        except Exception:  # noqa: BLE001 - the watcher outlives one failure
            log.exception("forget failed")
        finally:
            self.forgets += 1  # counted once done, so a caller waiting on it waits for the keyring too
