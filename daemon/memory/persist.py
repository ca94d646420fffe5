"""``learn = "persist"``: the memory kept across restarts, encrypted.

**The file.**  One file, ``memory`` in the user data directory
(platformdirs: ``~/.local/share/ghosttype/memory`` on Linux), mode 0600 in a
0700 directory, replaced whole at each save (:mod:`daemon.atomic_write`:
a reader sees the old file or the new one).  Two lines of text::

    ghosttype-memory 1 <key id>
    <base64 of a 12-byte nonce and the AES-256-GCM ciphertext>

The plaintext is the memory's pieces as JSON; the first line is the
ciphertext's associated data, so neither line can be changed unnoticed.  The
key id (16 hex digits of an HMAC of the key) tells "written with another
key" from "damaged".  The key is 32 random bytes in the desktop's keyring
(:mod:`daemon.memory.keystore`), never on disk.

**Refused files.**  A file that is not a regular file, belongs to another
user, may be read or changed by other users (group or other permission
bits), is not a ghosttype memory file, was written with another key, or
fails authentication is not loaded: one warning line that says which (never
any of its text), the memory starts empty, the config is not touched, and
the next save replaces the file.

**The keeper.**  :class:`MemoryKeeper` owns the file for one running
frontend: it loads it into the :class:`~daemon.memory.store.Memory` at
start, saves after changes (at most every :data:`SAVE_DELAY_S`, on a thread
of its own; the memory's change listener only sets a flag, so the key path
never waits on a disk or the keyring), falls back to ``session`` (one
warning, and ``on_warning`` for the desktop notice) when the keyring is
locked or absent (until ``learn`` changes or ghosttype starts again),
deletes the file and the key when ``learn`` leaves
``persist``, and wipes all of it for ``ghosttype forget``.  An empty memory
has no file.  Nothing here logs text: counts and reasons only.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import os
import pathlib
import stat
import threading
import time
from typing import Callable, Optional, Protocol, Union

from daemon.atomic_write import replace_text
from daemon.memory.keystore import KeyringUnavailable, SecretServiceKeys
from daemon.memory.store import Memory

log = logging.getLogger(__name__)

APP_NAME = "ghosttype"
MEMORY_FILENAME = "memory"
MAGIC = "ghosttype-memory"
VERSION = 1
NONCE_BYTES = 12
#: A file larger than this is not read (the default memory is at most about 1 MB on disk).
MAX_FILE_BYTES = 16 * 2**20
#: A change is saved at most this long after it was made (one save for a burst of pieces).
SAVE_DELAY_S = 5.0

PathLike = Union[str, pathlib.Path]


def default_memory_path() -> pathlib.Path:
    """``<user data dir>/ghosttype/memory`` (platformdirs)."""
    import platformdirs

    return pathlib.Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / MEMORY_FILENAME


class Keys(Protocol):
    """Where the key is kept (:class:`~daemon.memory.keystore.SecretServiceKeys`)."""

    def get(self, create: bool = False) -> Optional[bytes]: ...

    def delete(self) -> int: ...


class MemoryFileRefused(Exception):
    """The file is not loaded; ``str()`` says why in one line, without its content."""


# --------------------------------------------------------------------------- the format


def key_id(key: bytes) -> str:
    return hmac.new(key, b"ghosttype memory key id", hashlib.sha256).hexdigest()[:16]


def seal(pieces: tuple[str, ...], key: bytes) -> str:
    """The file's text for ``pieces``, encrypted and authenticated with ``key``."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    header = f"{MAGIC} {VERSION} {key_id(key)}"
    nonce = os.urandom(NONCE_BYTES)
    plain = json.dumps({"pieces": list(pieces)}, ensure_ascii=False).encode("utf-8")
    sealed = AESGCM(key).encrypt(nonce, plain, header.encode("ascii"))
    return f"{header}\n{base64.b64encode(nonce + sealed).decode('ascii')}\n"


def unseal(text: str, key: bytes) -> list[str]:
    """The pieces in a file's ``text``; :class:`MemoryFileRefused` when it is
    not ours, was written with another key, or was changed."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    lines = text.split("\n")
    fields = lines[0].split(" ")
    if len(fields) != 3 or fields[0] != MAGIC:
        raise MemoryFileRefused("not a ghosttype memory file")
    if fields[1] != str(VERSION):
        raise MemoryFileRefused(f"a memory file of another version ({fields[1][:10]!r})")
    if not hmac.compare_digest(fields[2], key_id(key)):
        raise MemoryFileRefused("written with another key than the keyring's (another account, or a keyring reset)")
    try:
        blob = base64.b64decode("".join(lines[1:]), validate=True)
        plain = AESGCM(key).decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], lines[0].encode("ascii"))
        data = json.loads(plain.decode("utf-8"))
    except (ValueError, InvalidTag, UnicodeDecodeError):
        raise MemoryFileRefused("damaged (it fails authentication)") from None
    pieces = data.get("pieces") if isinstance(data, dict) else None
    if not isinstance(pieces, list) or not all(isinstance(p, str) for p in pieces):
        raise MemoryFileRefused("damaged (no list of pieces inside)")
    return pieces


# --------------------------------------------------------------------------- the file


class MemoryFile:
    """The one file; see the module docstring."""

    def __init__(self, path: Optional[PathLike] = None) -> None:
        self.path = pathlib.Path(path) if path is not None else default_memory_path()

    def exists(self) -> bool:
        return os.path.lexists(self.path)

    def read(self, key: bytes) -> list[str]:
        """The pieces; ``FileNotFoundError`` when there is no file,
        :class:`MemoryFileRefused` when it is not loaded."""
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(self.path, flags | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            raise
        except OSError as e:
            if os.path.islink(self.path):
                raise MemoryFileRefused("a symbolic link, not a file of its own") from None
            raise MemoryFileRefused(f"cannot be read ({e.strerror or e})") from None
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            refusal = ownership_problem(info)
            if refusal:
                raise MemoryFileRefused(refusal)
            if info.st_size > MAX_FILE_BYTES:
                raise MemoryFileRefused(f"too large ({info.st_size} bytes)")
            data = f.read(MAX_FILE_BYTES + 1)
        try:
            text = data.decode("ascii")
        except UnicodeDecodeError:
            raise MemoryFileRefused("not a ghosttype memory file") from None
        return unseal(text, key)

    def write(self, pieces: tuple[str, ...], key: bytes) -> None:
        """Replace the file with ``pieces`` (0600, its folder 0700)."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        if os.name == "posix" and stat.S_IMODE(os.stat(self.path.parent).st_mode) & 0o077:
            os.chmod(self.path.parent, 0o700)  # a folder made by something else: ours alone from now on
        if os.path.islink(self.path):  # a link is never written through: the file is ours, here
            os.unlink(self.path)
        replace_text(self.path, seal(pieces, key), mode=0o600)

    def delete(self) -> bool:
        """Remove the file; True when there was one."""
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            return False
        return True


def ownership_problem(info: os.stat_result) -> str:
    """Why a file with this status is not ours alone ("" when it is)."""
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file"
    getuid = getattr(os, "getuid", None)
    if getuid is not None and info.st_uid != getuid():
        return f"it belongs to another user (uid {info.st_uid})"
    if os.name == "posix" and info.st_mode & 0o077:
        return f"other users may read or change it (mode {stat.S_IMODE(info.st_mode):04o})"
    return ""


# --------------------------------------------------------------------------- the keeper


class MemoryKeeper:
    """Loads, saves and deletes the memory file for one running frontend.

    Threads: :meth:`start`, :meth:`apply` and :meth:`stop` come from the
    frontend's (the lifecycle's) threads and return at once (``stop`` waits
    for the last save); the work runs on the keeper's thread
    (``ghosttype-memory``).  :meth:`forget` is synchronous (the forget
    watcher's thread, or a test).  The memory's change listener, on the
    controller's thread, only sets a flag under a lock no I/O holds."""

    def __init__(self, memory: Memory, learn: str, *, file: Optional[MemoryFile] = None,
                 keys: Optional[Keys] = None, on_warning: Optional[Callable[[str], None]] = None,
                 save_delay_s: float = SAVE_DELAY_S) -> None:
        self.memory = memory
        self.file = file if file is not None else MemoryFile()
        self.keys: Keys = keys if keys is not None else SecretServiceKeys()
        self.on_warning = on_warning
        self.save_delay_s = save_delay_s
        #: what ``learn`` asks for, and what is in force (``session`` after a fallback)
        self.wanted = learn
        self.mode = "session" if learn == "persist" else learn
        self.warnings: list[str] = []
        self._cond = threading.Condition()
        self._requests: list[str] = [learn]
        self._requested = learn
        self._due: Optional[float] = None  #: when the pending save is due, if one is
        self._busy = True  #: the thread has requests in hand
        self._stopping = False
        self._io = threading.Lock()  #: one of load, save, delete, forget at a time
        self._key: Optional[bytes] = None
        self._saved_generation: Optional[int] = None
        self._thread: Optional[threading.Thread] = None
        memory.on_change(self._on_memory_change)

    # -- the frontend's side -------------------------------------------------------------

    def start(self) -> None:
        """Start the keeper's thread: it loads the file (``persist``) or
        deletes one an earlier ``persist`` left (``session``, ``off``)."""
        self._thread = threading.Thread(target=self._run, name="ghosttype-memory", daemon=True)
        self._thread.start()

    def apply(self, learn: str) -> None:
        """A reloaded config's ``learn`` (returns at once; the same value as
        the last one is nothing to do, so a keyring that stays locked is
        reported once, not at every save of the config)."""
        with self._cond:
            if learn == self._requested:
                return
            self._requested = learn
            self._requests.append(learn)
            self._busy = True
            self._cond.notify()

    def stop(self, timeout: float = 5.0) -> None:
        """Save what is pending and stop the thread."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout)

    def forget(self) -> None:
        """Forget everything: the memory, the file and the keyring's key
        (``ghosttype forget``, the settings window's button).  The next save,
        once something new is learned, makes a new key."""
        with self._io:
            self.memory.clear()
            with self._cond:
                self._due = None
            self._key = None
            self._saved_generation = self.memory.generation
            deleted = self.file.delete()
            items = 0
            if self.wanted == "persist" or deleted:
                try:
                    items = self.keys.delete()
                except KeyringUnavailable as e:
                    log.warning("forget: the memory and its file are gone; the keyring's key stays: %s", e)
            log.info("forget: memory cleared, file %s, %d keyring item(s) deleted",
                     "deleted" if deleted else "absent", items)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """Until no request or save is pending (tests)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while self._busy or self._requests or self._due is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, 0.05))
        return True

    # -- the memory's side (the controller's thread) ------------------------------------

    def _on_memory_change(self) -> None:
        with self._cond:
            if self.mode == "persist" and self._due is None:
                self._due = time.monotonic() + self.save_delay_s
                self._cond.notify()

    # -- the keeper's thread -------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not (self._requests or self._stopping or self._due_now()):
                    self._busy = False
                    self._cond.notify_all()
                    timeout = None if self._due is None else max(0.0, self._due - time.monotonic())
                    self._cond.wait(timeout)
                self._busy = True
                requests, self._requests = self._requests, []
                stopping = self._stopping
            try:
                for learn in requests:
                    self._switch(learn)
                with self._cond:
                    save = self._due is not None and (stopping or self._due_now())
                    if save:
                        self._due = None
                if save:
                    self._save()
            except Exception:  # noqa: BLE001 - the keeper must outlive one bad step
                log.exception("memory keeper: a step failed")
            if stopping:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
                return

    def _due_now(self) -> bool:
        return self._due is not None and time.monotonic() >= self._due

    def _switch(self, learn: str) -> None:
        """Make ``learn`` the setting in force."""
        previous, self.wanted = self.mode, learn
        if learn == "persist":
            if previous != "persist":
                self._start_persisting()
            return
        with self._cond:
            self.mode = learn
            self._due = None
        if learn == "off":
            self.memory.clear()
        if previous == "persist" or self.file.exists():
            self._delete_persisted("learn = %r" % learn)

    def _start_persisting(self) -> None:
        with self._io:
            try:
                self._key = self.keys.get(create=False)
            except KeyringUnavailable as e:
                self._fall_back(str(e))
                return
            pieces: list[str] = []
            if self._key is not None:
                try:
                    pieces = self.file.read(self._key)
                except FileNotFoundError:
                    pass
                except MemoryFileRefused as e:
                    self._warn(f"the memory file {self.file.path} is not loaded: {e}; starting with an empty memory")
            elif self.file.exists():
                self._warn(f"the memory file {self.file.path} is not loaded: the keyring holds no key for it; "
                           "starting with an empty memory")
            generation = self.memory.prepend(pieces)
            with self._cond:
                self.mode = "persist"
                self._saved_generation = generation if pieces else None
                if len(self.memory):  # learned before the file was read, or the load trimmed it
                    self._due = self._due or time.monotonic() + self.save_delay_s
        log.info("learn = persist: %d piece(s) loaded", len(pieces))

    def _save(self) -> None:
        with self._io:
            if self.mode != "persist":
                return
            generation, pieces = self.memory.snapshot()
            if generation == self._saved_generation:
                return
            if not pieces:
                self.file.delete()
                self._saved_generation = generation
                return
            try:
                if self._key is None:
                    self._key = self.keys.get(create=True)
                assert self._key is not None
                self.file.write(pieces, self._key)
            except KeyringUnavailable as e:
                self._fall_back(str(e))
                return
            except OSError as e:
                self._warn(f"the memory file {self.file.path} cannot be written ({e.strerror or e}); "
                           "learning for this session only")
                with self._cond:
                    self.mode = "session"
                return
            self._saved_generation = generation
            log.debug("memory saved: %d piece(s), %d chars", len(pieces), sum(len(p) for p in pieces))

    def _delete_persisted(self, why: str) -> None:
        with self._io:
            self._key = None
            self._saved_generation = None
            deleted = self.file.delete()
            try:
                items = self.keys.delete()
            except KeyringUnavailable as e:
                items = 0
                log.info("%s: the keyring's key is not deleted: %s", why, e)
            if deleted or items:
                log.info("%s: the memory file and %d keyring item(s) deleted", why, items)

    def _fall_back(self, reason: str) -> None:
        with self._cond:
            self.mode = "session"
            self._due = None
        self._warn(f'learn = "persist": {reason}; learning for this session only (nothing is written)')

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        log.warning("%s", message)
        if self.on_warning is not None:
            try:
                self.on_warning(message)
            except Exception:  # noqa: BLE001 - a notice is best effort
                log.debug("memory notice failed", exc_info=True)
