"""``learn = "persist"``: the memory kept across restarts in one encrypted
file whose key a real Secret Service (GNOME Keyring on a private bus,
``tests/secret_service.py``) holds; ``ghosttype forget``; and what is refused.

* nothing readable is written: a typed marker is in no file under the test's
  HOME and XDG directories, neither in clear nor in base64, and comes back
  after a restart;
* ``forget`` (the function, the command in a fresh interpreter, and a
  running keeper told through the stamp) leaves no file and no keyring item;
* a damaged, foreign, world-readable, other user's or linked file is not
  loaded: one warning without its text, an empty memory, the config untouched;
* a locked or absent keyring falls back to ``session`` with one warning and
  writes nothing;
* leaving ``persist`` deletes the file and the key; ``session`` never writes.
"""

from __future__ import annotations

import base64
import os
import pathlib
import subprocess
import sys
import time
from typing import Iterator, Optional

import pytest

from daemon.config import default_template
from daemon.memory.forget import ForgetWatcher, default_forget_stamp, forget_everything, request_forget
from daemon.memory.keystore import KeyringUnavailable, SecretServiceKeys
from daemon.memory.persist import MemoryFile, MemoryKeeper, default_memory_path, seal, unseal
from daemon.memory.store import Memory
from tests.secret_service import ghosttype_items, lock_keyring, private_bus, private_home, private_secret_service

ROOT = pathlib.Path(__file__).resolve().parents[2]
MARKER = "zqxmarker-7f3a typed in a field, never on disk"
PIECES = (MARKER, "Kind regards, Wilhelmina Oosterhuis", "the second sentence the user typed")
FAST = 0.05  # save delay in the tests


class FakeKeys:
    """An in-memory keyring, for the tests about the file itself."""

    def __init__(self, key: Optional[bytes] = None, problem: str = "") -> None:
        self.key, self.problem, self.calls = key, problem, 0

    def get(self, create: bool = False) -> Optional[bytes]:
        self.calls += 1
        if self.problem:
            raise KeyringUnavailable(self.problem)
        if self.key is None and create:
            self.key = os.urandom(32)
        return self.key

    def delete(self) -> int:
        if self.problem:
            raise KeyringUnavailable(self.problem)
        n, self.key = int(self.key is not None), None
        return n


@pytest.fixture
def keyring(tmp_path: pathlib.Path) -> Iterator[dict[str, str]]:
    with pytest.MonkeyPatch.context() as mp, private_secret_service(tmp_path, mp) as env:
        yield env


def keeper_for(memory: Memory, learn: str = "persist", **kw) -> MemoryKeeper:  # type: ignore[no-untyped-def]
    keeper = MemoryKeeper(memory, learn, save_delay_s=FAST, **kw)
    keeper.start()
    assert keeper.wait_idle()
    return keeper


def run_and_stop(pieces: tuple[str, ...], **kw) -> MemoryKeeper:  # type: ignore[no-untyped-def]
    """One run of a persisting frontend that learns ``pieces`` and stops."""
    keeper = keeper_for(Memory(), **kw)
    keeper.memory.extend(pieces)
    assert keeper.wait_idle()
    keeper.stop()
    return keeper


def files_under(root: pathlib.Path) -> list[pathlib.Path]:
    return [p for p in root.rglob("*") if p.is_file() and not p.is_symlink()]


def readable_forms(text: str) -> list[bytes]:
    """The marker as bytes, and every base64 rendering of it (at each of the three alignments)."""
    raw = text.encode("utf-8")
    forms = [raw, text.encode("utf-16-le")]
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + raw)
        forms.append(encoded[4 if shift else 0:-4])  # the part that does not depend on the neighbours
    return forms


def wait_for(condition, timeout: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


# --------------------------------------------------------------------------- with the real keyring


def test_persist_writes_nothing_readable_and_loads_it_back(keyring: dict[str, str], tmp_path: pathlib.Path) -> None:
    default_memory_path().parent.mkdir(mode=0o755, parents=True)  # made by something else
    memory = Memory()
    keeper = keeper_for(memory)
    assert keeper.mode == "persist" and not keeper.warnings
    memory.extend(PIECES)
    assert keeper.wait_idle()
    keeper.stop()
    path = default_memory_path()
    assert path.is_relative_to(pathlib.Path(keyring["XDG_DATA_HOME"])), path
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert ghosttype_items() == 1
    files = files_under(tmp_path)
    assert path in files and any(p.name == "login.keyring" for p in files)  # the keyring's own file, too
    for file in files:
        data = file.read_bytes()
        for form in readable_forms(MARKER):
            assert form not in data, f"{file} holds the typed text ({form[:12]!r}...)"
    # The next run reads it back, older than what it learns itself.
    again = Memory()
    again.add("learned before the file was read")
    keeper = keeper_for(again)
    assert again.pieces() == (*PIECES, "learned before the file was read")
    keeper.stop()


def test_forget_leaves_no_file_and_no_keyring_item(keyring: dict[str, str]) -> None:
    run_and_stop(PIECES)
    assert default_memory_path().exists() and ghosttype_items() == 1
    done = forget_everything()
    assert done.file_deleted and done.key_items == 1 and done.complete
    assert not default_memory_path().exists() and ghosttype_items() == 0
    assert SecretServiceKeys().get() is None
    again = forget_everything()  # nothing left to delete is no error
    assert not again.file_deleted and again.key_items == 0 and again.complete


def test_the_forget_command_wipes_a_running_keepers_memory_file_and_key(keyring: dict[str, str]) -> None:
    memory = Memory()
    keeper = keeper_for(memory)
    watcher = ForgetWatcher(keeper.forget)
    watcher.start()
    try:
        memory.extend(PIECES)
        assert keeper.wait_idle() and default_memory_path().exists() and ghosttype_items() == 1
        out = subprocess.run([sys.executable, "-m", "daemon", "forget"], cwd=ROOT, capture_output=True, text=True,
                             timeout=60, env={**os.environ, **keyring})
        assert out.returncode == 0, out.stdout + out.stderr
        assert "memory file deleted" in out.stdout and "1 keyring item(s) deleted" in out.stdout, out.stdout
        assert wait_for(lambda: watcher.forgets == 1), "the running keeper was not told"
        assert keeper.wait_idle()
        assert memory.pieces() == () and not default_memory_path().exists() and ghosttype_items() == 0
        assert default_forget_stamp().is_relative_to(pathlib.Path(keyring["XDG_RUNTIME_DIR"]))
        # It goes on learning, with a new key once there is something to keep.
        memory.add("typed after forgetting")
        assert keeper.wait_idle() and default_memory_path().exists() and ghosttype_items() == 1
    finally:
        watcher.stop()
        keeper.stop()


def test_a_locked_keyring_falls_back_to_session_with_one_warning(keyring: dict[str, str]) -> None:
    lock_keyring()
    memory, warned = Memory(), []
    keeper = keeper_for(memory, on_warning=warned.append)
    assert keeper.mode == "session" and keeper.wanted == "persist"
    assert len(warned) == 1 and "locked" in warned[0] and "session" in warned[0], warned
    memory.extend(PIECES)  # still learns, in memory
    assert keeper.wait_idle() and memory.pieces() == PIECES
    keeper.apply("persist")  # the same setting again (another setting saved): no second warning
    assert keeper.wait_idle()
    keeper.stop()
    assert len(warned) == 1 and MARKER not in warned[0]
    assert not default_memory_path().exists() and ghosttype_items() == 0


def test_forget_with_a_locked_keyring_deletes_the_file_and_says_the_key_stays(keyring: dict[str, str]) -> None:
    run_and_stop(PIECES)
    lock_keyring()
    done = forget_everything()
    assert done.file_deleted and not default_memory_path().exists()
    assert not done.complete and "locked" in done.keyring_problem and ghosttype_items() == 1
    assert any("run ghosttype forget again" in line for line in done.lines())


def test_an_absent_keyring_falls_back_to_session_with_one_warning(tmp_path: pathlib.Path) -> None:
    with pytest.MonkeyPatch.context() as mp:
        private_home(tmp_path, mp)  # no session bus at all
        memory, warned = Memory(), []
        keeper = keeper_for(memory, on_warning=warned.append)
        assert keeper.mode == "session" and len(warned) == 1 and "no session bus" in warned[0], warned
        memory.extend(PIECES)
        assert keeper.wait_idle()
        keeper.stop()
        assert not default_memory_path().exists() and len(warned) == 1
        with private_bus(tmp_path, mp):  # a bus without a Secret Service on it
            keeper = keeper_for(Memory(), on_warning=warned.append)
            keeper.stop()
            assert keeper.mode == "session" and len(warned) == 2 and "no keyring" in warned[1], warned
            done = forget_everything()
            assert done.complete and done.keyring_absent and not done.file_deleted
        assert files_under(tmp_path / "xdg_data_home") == []


def test_leaving_persist_deletes_the_file_and_the_key(keyring: dict[str, str]) -> None:
    memory = Memory()
    keeper = keeper_for(memory)
    memory.extend(PIECES)
    assert keeper.wait_idle() and default_memory_path().exists()
    keeper.apply("session")
    assert keeper.wait_idle()
    assert keeper.mode == "session" and memory.pieces() == PIECES  # kept for this session
    assert not default_memory_path().exists() and ghosttype_items() == 0
    memory.add("typed in session mode, never written")
    keeper.apply("persist")  # back: what is held is written again
    assert keeper.wait_idle() and keeper.mode == "persist" and default_memory_path().exists()
    keeper.apply("off")
    assert keeper.wait_idle()
    assert memory.pieces() == () and not default_memory_path().exists() and ghosttype_items() == 0
    keeper.stop()


def test_a_file_left_by_persist_is_deleted_when_ghosttype_starts_with_session(keyring: dict[str, str]) -> None:
    run_and_stop(PIECES)
    assert default_memory_path().exists()
    keeper = keeper_for(Memory(), learn="session")
    keeper.memory.extend(PIECES)
    assert keeper.wait_idle()
    keeper.stop()
    assert keeper.memory.pieces() == PIECES
    assert not default_memory_path().exists() and ghosttype_items() == 0


# --------------------------------------------------------------------------- refused files (a fake keyring)


@pytest.fixture
def saved(tmp_path: pathlib.Path) -> tuple[MemoryFile, FakeKeys, pathlib.Path]:
    """A memory file written by a keeper, its keys, and a config file beside it."""
    keys = FakeKeys()
    file = MemoryFile(tmp_path / "data" / "ghosttype" / "memory")
    run_and_stop(PIECES, file=file, keys=keys)
    assert file.path.exists() and keys.key is not None
    config = tmp_path / "config.toml"
    config.write_text('learn = "persist"\n' + default_template())
    return file, keys, config


def refused(file: MemoryFile, keys: FakeKeys, config: pathlib.Path, reason: str) -> MemoryKeeper:
    """Start a keeper on the file: it is refused for ``reason``, with one warning."""
    before = config.read_bytes()
    warned: list[str] = []
    memory = Memory()
    keeper = keeper_for(memory, file=file, keys=keys, on_warning=warned.append)
    assert memory.pieces() == (), "a refused file was loaded"
    assert len(warned) == 1 and reason in warned[0], warned
    assert "\n" not in warned[0] and not any(p[:12] in warned[0] for p in PIECES)
    assert keeper.mode == "persist"  # the keyring works: what is learned now is kept
    assert config.read_bytes() == before
    return keeper


def test_a_damaged_file_is_refused(saved) -> None:  # type: ignore[no-untyped-def]
    file, keys, config = saved
    header, body, _ = file.path.read_text().split("\n")
    flipped = body[:40] + ("A" if body[40] != "A" else "B") + body[41:]
    file.path.write_text(f"{header}\n{flipped}\n")
    keeper = refused(file, keys, config, "damaged")
    keeper.memory.add("learned after the refusal")
    keeper.stop()
    assert unseal(file.path.read_text(), keys.key) == ["learned after the refusal"]  # the next save replaced it


def test_a_truncated_or_foreign_format_file_is_refused(saved) -> None:  # type: ignore[no-untyped-def]
    file, keys, config = saved
    file.path.write_text(file.path.read_text()[:50])
    refused(file, keys, config, "damaged").stop()
    file.path.write_bytes(b"\x89PNG\r\n\x1a\n" + os.urandom(64))
    os.chmod(file.path, 0o600)
    refused(file, keys, config, "not a ghosttype memory file").stop()


def test_a_file_written_with_another_key_is_refused(saved) -> None:  # type: ignore[no-untyped-def]
    file, keys, config = saved
    file.path.write_text(seal(PIECES, os.urandom(32)))
    refused(file, keys, config, "another key").stop()


def test_a_file_others_may_read_is_refused(saved) -> None:  # type: ignore[no-untyped-def]
    file, keys, config = saved
    os.chmod(file.path, 0o644)
    refused(file, keys, config, "other users may read or change it (mode 0644)").stop()


def test_another_users_file_is_refused(saved) -> None:  # type: ignore[no-untyped-def]
    file, keys, config = saved
    if os.getuid() != 0:
        pytest.skip("giving a file to another user needs root (CI runs as root)")
    os.chown(file.path, 65534, 65534)
    refused(file, keys, config, "belongs to another user (uid 65534)").stop()


def test_a_link_is_refused_and_never_written_through(saved, tmp_path) -> None:  # type: ignore[no-untyped-def]
    file, keys, config = saved
    elsewhere = tmp_path / "elsewhere"
    file.path.rename(elsewhere)
    file.path.symlink_to(elsewhere)
    keeper = refused(file, keys, config, "symbolic link")
    keeper.memory.add("learned after the refusal")
    keeper.stop()
    assert not file.path.is_symlink() and unseal(elsewhere.read_text(), keys.key) == list(PIECES)


def test_a_file_without_its_key_is_refused(saved) -> None:  # type: ignore[no-untyped-def]
    file, keys, config = saved
    keys.key = None  # the keyring lost it (reset, another account)
    refused(file, keys, config, "holds no key").stop()


def test_forget_deletes_the_file_and_the_key_before_telling_a_running_keeper(saved) -> None:  # type: ignore[no-untyped-def]
    """A running keeper told first races the command to the same key, and the
    command then says "no key in the keyring" though it had one (CI, once)."""
    file, keys, _ = saved
    stamp = file.path.parent / "forget"
    seen: list[tuple[bool, bool]] = []

    class Watched(FakeKeys):
        def delete(self) -> int:
            seen.append((stamp.exists(), file.path.exists()))
            return super().delete()

    watched = Watched(keys.key)
    done = forget_everything(file=file, keys=watched, stamp=stamp)
    assert seen == [(False, False)], "the stamp was written before the file and the key were deleted"
    assert done.file_deleted and done.key_items == 1 and stamp.exists() and watched.key is None


def test_the_watcher_counts_a_forget_once_it_is_done(tmp_path: pathlib.Path) -> None:
    """A test (or a caller) that waits for ``forgets`` must not go on while
    the keeper is still deleting the key: a keyring torn down under it then
    warns in whatever runs next (CI: the tray test counted that warning)."""
    stamp = tmp_path / "run" / "forget"
    finished: list[bool] = []

    def slow_forget() -> None:
        time.sleep(0.3)
        finished.append(True)

    watcher = ForgetWatcher(slow_forget, stamp=stamp, debounce_s=0.01)
    watcher.start()
    try:
        request_forget(stamp)
        assert wait_for(lambda: watcher.forgets == 1)
        assert finished == [True], "counted before the forget was done"
    finally:
        watcher.stop()


# --------------------------------------------------------------------------- session and the key path


def test_session_writes_nothing_and_a_change_never_waits_for_a_save(tmp_path: pathlib.Path) -> None:
    file, keys = MemoryFile(tmp_path / "memory"), FakeKeys()
    memory = Memory()
    keeper = keeper_for(memory, learn="session", file=file, keys=keys)
    memory.extend(PIECES)
    assert keeper.wait_idle()
    keeper.stop()
    assert not file.path.exists() and keys.calls == 0

    class SlowFile(MemoryFile):
        def write(self, pieces, key):  # type: ignore[no-untyped-def]
            time.sleep(1.0)
            super().write(pieces, key)

    memory = Memory()
    keeper = keeper_for(memory, file=SlowFile(tmp_path / "slow"), keys=keys)
    memory.add(PIECES[0])
    time.sleep(FAST * 3)  # the save has begun and sleeps in write()
    started = time.monotonic()
    for n in range(50):
        memory.add(f"piece number {n} typed while saving")
    assert time.monotonic() - started < 0.5, "adding to the memory waited for the save"
    keeper.stop()
    assert len(unseal((tmp_path / "slow").read_text(), keys.key)) == 51  # the last save has all of it


def test_the_keepers_warning_becomes_one_desktop_notice(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from daemon.__main__ import main
    from daemon.notices import Notices
    from tests.daemon.test_notices import Recorder

    notifier = Recorder()
    notices = Notices(notifier)
    with pytest.MonkeyPatch.context() as mp:
        private_home(tmp_path, mp)  # no keyring here
        for _ in range(2):  # two frontends' worth of the same fallback: one notice
            keeper_for(Memory(), on_warning=notices.memory_warning).stop()
        assert len(notifier.sent) == 1 and "session only" in notifier.sent[0][1], notifier.sent
        assert main(["forget", "--path"]) == 0
        assert capsys.readouterr().out.strip() == str(default_memory_path())
        assert default_memory_path().is_relative_to(tmp_path)
