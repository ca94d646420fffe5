"""A real Secret Service for the tests of ``learn = "persist"``: GNOME
Keyring (``gnome-keyring-daemon``, secrets component only) on a private
session bus, with a login keyring of its own in a temporary home, unlocked
with a password on its standard input.

The bus has no service directories, so nothing is started by D-Bus
activation: a test sees this keyring or none.  :func:`private_secret_service`
sets ``HOME``, the XDG directories and ``DBUS_SESSION_BUS_ADDRESS`` of the
test's process to the temporary ones (the user's own keyring and files are
never touched), and stops both processes by process group at the end.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import subprocess
import time
from typing import Iterator

import pytest

from tests import needs
from tests.processes import stop_group

PASSWORD = b"ghosttype-test-keyring"

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir={dir}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""

XDG = ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR")


def private_home(root: pathlib.Path, mp: pytest.MonkeyPatch) -> dict[str, str]:
    """``HOME`` and the XDG directories under ``root`` (set in this process); no session bus."""
    env = {"HOME": str(root / "home")}
    for name in XDG:
        env[name] = str(root / name.lower())
    for value in env.values():
        pathlib.Path(value).mkdir(parents=True, exist_ok=True, mode=0o700)
    for name, value in env.items():
        mp.setenv(name, value)
    mp.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    return env


@contextlib.contextmanager
def private_bus(root: pathlib.Path, mp: pytest.MonkeyPatch) -> Iterator[str]:
    """A session bus of its own (no activation), its address set in this process."""
    needs.tool("dbus-daemon", "dbus")
    config = root / "bus.conf"
    sockets = root / "bus"
    sockets.mkdir(mode=0o700, exist_ok=True)
    config.write_text(BUS_CONFIG.format(dir=sockets))
    bus = subprocess.Popen(["dbus-daemon", f"--config-file={config}", "--nofork", "--print-address=1"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        address = bus.stdout.readline().decode().strip()  # type: ignore[union-attr]
        assert address, "dbus-daemon printed no address"
        mp.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        yield address
    finally:
        stop_group(bus, timeout=5)


@contextlib.contextmanager
def private_secret_service(root: pathlib.Path, mp: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """GNOME Keyring on a private bus, its login keyring unlocked; yields the environment."""
    needs.tool("gnome-keyring-daemon", "gnome-keyring")
    env = private_home(root, mp)
    with private_bus(root, mp) as address:
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        keyring = subprocess.Popen(["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
                                   env={**os.environ, **env}, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            keyring.stdin.write(PASSWORD)  # type: ignore[union-attr]
            keyring.stdin.close()  # type: ignore[union-attr]
            _wait_unlocked()
            yield env
        finally:
            stop_group(keyring, timeout=5)


def _wait_unlocked(timeout: float = 20.0) -> None:
    """Until the default collection exists and is unlocked."""
    import secretstorage

    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            with contextlib.closing(secretstorage.dbus_init()) as connection:
                if secretstorage.check_service_availability(connection) and \
                        not secretstorage.Collection(connection).is_locked():
                    return
        except Exception as e:  # noqa: BLE001 - still starting
            last = e
        time.sleep(0.05)
    raise AssertionError(f"gnome-keyring did not come up unlocked within {timeout:g} s ({last!r})")


def lock_keyring() -> None:
    """Lock the default collection (as a screen locker or the user would)."""
    import secretstorage

    with contextlib.closing(secretstorage.dbus_init()) as connection:
        collection = secretstorage.Collection(connection)
        collection.lock()
        assert collection.is_locked()


def ghosttype_items() -> int:
    """How many items of ghosttype's the keyring holds (locked or not)."""
    import secretstorage

    from daemon.memory.keystore import ATTRIBUTES

    with contextlib.closing(secretstorage.dbus_init()) as connection:
        return len(list(secretstorage.Collection(connection).search_items(ATTRIBUTES)))
