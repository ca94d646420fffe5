"""The key of the memory file, kept in the desktop's keyring (``learn = "persist"``).

The key is 32 random bytes, made on the first save, stored as one item of
the default collection of the freedesktop Secret Service (GNOME Keyring,
KeePassXC, KWallet 6 speak it) with the attributes :data:`ATTRIBUTES`, and
read once when ghosttype starts.  The keyring is reached through
``secretstorage`` over the session bus.

ghosttype never asks the keyring to unlock, create a collection or show a
prompt: a locked keyring, a session without a Secret Service, a service that
has no default collection or does not answer within :data:`TIMEOUT_S` are
all :class:`KeyringUnavailable`, whose message says which in one line; the
caller falls back to ``learn = "session"``.  Each call opens its own
connection and closes it, and runs on a thread of its own with a deadline,
so a hung service costs the caller at most :data:`TIMEOUT_S` (and never the
key path: the callers are the memory keeper's thread, ``ghosttype forget``
and the settings window's button).
"""

from __future__ import annotations

import base64
import contextlib
import os
import threading
from typing import Callable, Iterator, Optional, TypeVar

#: The attributes of ghosttype's one item (what ``secret-tool search`` finds it by).
ATTRIBUTES = {"application": "ghosttype", "purpose": "memory-key"}
LABEL = "ghosttype: key of the words it learned (learn = persist)"
KEY_BYTES = 32
#: Longest wait for the Secret Service, per operation.
TIMEOUT_S = 10.0

T = TypeVar("T")


class KeyringUnavailable(Exception):
    """No key can be read or stored now; ``str()`` is one line for the user.
    ``absent``: there is no keyring at all here (no Secret Service, or no
    default collection), so none can hold a key; otherwise it is locked,
    failed or did not answer."""

    def __init__(self, message: str, absent: bool = False) -> None:
        super().__init__(message)
        self.absent = absent


class SecretServiceKeys:
    """The memory key in the default collection of the Secret Service."""

    def __init__(self, timeout_s: float = TIMEOUT_S) -> None:
        self.timeout_s = timeout_s

    def get(self, create: bool = False) -> Optional[bytes]:
        """The key; None when there is none and ``create`` is false.  With
        ``create`` a new random key is stored when there is none (or the
        item holds no key of ours), and returned."""
        return self._call(lambda collection: _get(collection, create))

    def delete(self) -> int:
        """Delete ghosttype's items; returns how many there were.  A locked
        keyring without one is nothing to do; with one it is
        :class:`KeyringUnavailable` (unlocking asks the user, which this
        never does)."""
        return self._call(_delete, unlocked=False)

    def _call(self, action: Callable[[object], T], unlocked: bool = True) -> T:
        result: list = []

        def run() -> None:
            try:
                with _default_collection(unlocked) as collection:
                    result.append((True, action(collection)))
            except BaseException as e:  # noqa: BLE001 - handed to the caller's thread
                result.append((False, e))

        thread = threading.Thread(target=run, name="ghosttype-keyring", daemon=True)
        thread.start()
        thread.join(self.timeout_s)
        if not result:
            raise KeyringUnavailable(f"the keyring (Secret Service) did not answer within {self.timeout_s:g} s")
        ok, value = result[0]
        if ok:
            return value
        raise _unavailable(value) from value


@contextlib.contextmanager
def _default_collection(unlocked: bool) -> Iterator[object]:
    """The default collection (``unlocked``: only when it is) on a connection of its own."""
    import secretstorage
    from secretstorage.exceptions import ItemNotFoundException, SecretServiceNotAvailableException

    if not (os.environ.get("DBUS_SESSION_BUS_ADDRESS") or _runtime_bus_exists()):
        raise KeyringUnavailable("no session bus, so no keyring (Secret Service)", absent=True)
    try:
        connection = secretstorage.dbus_init()
    except SecretServiceNotAvailableException as e:
        raise KeyringUnavailable("no keyring (Secret Service) on the session bus", absent=True) from e
    try:
        if not secretstorage.check_service_availability(connection):
            raise KeyringUnavailable("no keyring (Secret Service) on the session bus", absent=True)
        try:
            # Not get_default_collection(): it creates a collection where there is
            # none, which asks the user through a prompt.
            collection = secretstorage.Collection(connection)
        except ItemNotFoundException as e:
            raise KeyringUnavailable("the keyring (Secret Service) has no default collection", absent=True) from e
        if unlocked and collection.is_locked():
            raise KeyringUnavailable("the keyring is locked")
        yield collection
    finally:
        connection.close()


def _runtime_bus_exists() -> bool:
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    return bool(runtime) and os.path.exists(os.path.join(runtime, "bus"))


def _get(collection, create: bool) -> Optional[bytes]:  # type: ignore[no-untyped-def]
    for item in collection.search_items(ATTRIBUTES):
        key = _decode(item.get_secret())
        if key is not None:
            return key
    if not create:
        return None
    key = os.urandom(KEY_BYTES)
    collection.create_item(LABEL, dict(ATTRIBUTES), base64.b64encode(key), replace=True)
    return key


def _delete(collection) -> int:  # type: ignore[no-untyped-def]
    items = list(collection.search_items(ATTRIBUTES))
    if items and collection.is_locked():
        raise KeyringUnavailable("the keyring is locked")
    for item in items:
        item.delete()
    return len(items)


def _decode(secret: bytes) -> Optional[bytes]:
    try:
        key = base64.b64decode(secret, validate=True)
    except (ValueError, TypeError):
        return None
    return key if len(key) == KEY_BYTES else None


def _unavailable(error: BaseException) -> KeyringUnavailable:
    """One line for any failure of the keyring (never a secret: the
    exceptions carry D-Bus names and messages)."""
    if isinstance(error, KeyringUnavailable):
        return error
    try:
        from secretstorage.exceptions import (LockedException, PromptDismissedException,
                                              SecretServiceNotAvailableException)
    except ImportError:  # pragma: no cover - secretstorage is a dependency on Linux
        return KeyringUnavailable("the keyring library (secretstorage) is not installed")
    if isinstance(error, SecretServiceNotAvailableException):
        return KeyringUnavailable("no keyring (Secret Service) on the session bus", absent=True)
    if isinstance(error, LockedException):
        return KeyringUnavailable("the keyring is locked")
    if isinstance(error, PromptDismissedException):
        return KeyringUnavailable("the keyring asked for a prompt, which ghosttype does not show")
    if isinstance(error, ImportError):
        return KeyringUnavailable("the keyring library (secretstorage) is not installed")
    first = str(error).splitlines()[0] if str(error) else type(error).__name__
    return KeyringUnavailable(f"the keyring (Secret Service) failed: {first[:200]}")
