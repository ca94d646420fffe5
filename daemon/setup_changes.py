"""The settings ``ghosttype setup`` changes, and their record, so that
``ghosttype setup --undo`` takes back exactly those and nothing else.

A setting lives in a *store* (the user's GSettings, KWin's ``kwinrc``, the
autostart entry) under a key; the store reads it (None: not set) and writes it
(None, or the value the schema gives by default: back to unset).  Values are
kept as JSON values (lists, strings), so that a record read back compares
equal to what a store reads.  A :class:`Change` is one of two kinds:

* entries added to a list (``added``): undo removes those entries that are
  still there, whatever else the user changed in the list since;
* a value replaced (``added`` is None): undo puts the old value back only
  where the setting still holds the one setup wrote; a value the user changed
  since stays as it is, and undo says so.

What a run changed is recorded in ``setup.json`` in the user's state
directory (platformdirs, as the rest of ghosttype keeps its files), added to
by a later run that changes more, and deleted by ``--undo`` once every change
is taken back.  The record holds setting names and values only: nothing typed.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
from typing import Any, Callable, Mapping, Optional, Protocol

from daemon.atomic_write import replace_text

APP_NAME = "ghosttype"
RECORD_FILENAME = "setup.json"
RECORD_VERSION = 1


class SetupError(Exception):
    """A setting could not be read or written; ``code`` is the exit status."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


class Store(Protocol):
    name: str

    def get(self, key: str) -> Any:
        """The value now (None: not set)."""

    def put(self, key: str, value: Any) -> None:
        """Write ``value`` (None: unset); raises :class:`SetupError`."""

    def label(self, key: str) -> str:
        """The setting as the user would look it up."""

    def show(self, value: Any) -> str:
        """A value as the user would write it."""


def canonical(value: Any) -> Any:
    """``value`` as JSON keeps it (tuples become lists)."""
    return json.loads(json.dumps(value))


@dataclasses.dataclass
class Change:
    store: str
    key: str
    old: Any
    new: Any
    #: entries added to a list (None: the whole value replaced)
    added: Optional[list] = None

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "Change":
        return cls(str(data["store"]), str(data["key"]), data.get("old"), data.get("new"), data.get("added"))


def add_entries(store: Store, key: str, current: list, entries: list) -> Optional[Change]:
    """A change appending the ``entries`` not yet in ``current`` (None: all are there)."""
    current = canonical(current)
    missing = [e for e in canonical(entries) if e not in current]
    return Change(store.name, key, current, current + missing, missing) if missing else None


def replace_value(store: Store, key: str, current: Any, new: Any) -> Optional[Change]:
    """A change from ``current`` to ``new`` (None: it holds ``new`` already)."""
    current, new = canonical(current), canonical(new)
    return None if current == new else Change(store.name, key, current, new)


def describe(change: Change, store: Store) -> str:
    return f"{store.label(change.key)}: {store.show(change.old)} -> {store.show(change.new)}"


def apply(changes: list[Change], stores: Mapping[str, Store], done: Callable[[Change], None]) -> list[str]:
    """Make each change, calling ``done`` after each (to record it); one line
    per change.  A failure raises :class:`SetupError` with the changes made so
    far already passed to ``done``."""
    lines = []
    for change in changes:
        store = stores[change.store]
        store.put(change.key, change.new)
        done(change)
        lines.append("changed " + describe(change, store))
    return lines


def undo_one(change: Change, store: Store, dry_run: bool = False) -> str:
    """Take back one change where the setting still shows it; the line says
    what happened (with ``dry_run``: what would, and nothing is written)."""
    label = store.label(change.key)
    now = canonical(store.get(change.key))
    left_verb, changed_verb = ("would leave", "would change") if dry_run else ("left", "changed")
    if change.added is not None:
        now = now or []
        there = [e for e in change.added if e in now]
        if not there:
            return f"{left_verb} {label} as it is: {_entries(store, change.added)} no longer there"
        restored = [e for e in now if e not in there]
    elif now != change.new:
        return (f"{left_verb} {label} as it is ({store.show(now)}): changed since ghosttype setup set it to "
                f"{store.show(change.new)} (it was {store.show(change.old)})")
    else:
        restored = change.old
    if not dry_run:
        store.put(change.key, restored)
    return f"{changed_verb} {label}: {store.show(now)} -> {store.show(restored)}"


def _entries(store: Store, entries: list) -> str:
    return ", ".join(store.show(e) for e in entries)


# --------------------------------------------------------------------------- the record


@dataclasses.dataclass
class Record:
    desktop: str
    changes: list[Change] = dataclasses.field(default_factory=list)


def record_path() -> pathlib.Path:
    """``<user state dir>/ghosttype/setup.json`` (platformdirs)."""
    import platformdirs

    return pathlib.Path(platformdirs.user_state_dir(APP_NAME, appauthor=False)) / RECORD_FILENAME


def load(path: pathlib.Path) -> Optional[Record]:
    """The record at ``path``; None when there is none.  An unreadable one raises :class:`SetupError`."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Record(str(data["desktop"]), [Change.from_json(c) for c in data["changes"]])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SetupError(f"cannot read {path}: {exc}") from None


def save(path: pathlib.Path, record: Record) -> None:
    changes = ",\n".join("  " + json.dumps(c.to_json(), ensure_ascii=False) for c in record.changes)
    text = (f'{{"version": {RECORD_VERSION}, "desktop": {json.dumps(record.desktop)},\n'
            f' "changes": [\n{changes}\n ]}}\n')  # one change a line
    try:
        replace_text(path, text)
    except OSError as exc:
        raise SetupError(f"cannot write {path}: {exc.strerror or exc}") from None


def forget(path: pathlib.Path) -> None:
    path.unlink(missing_ok=True)
