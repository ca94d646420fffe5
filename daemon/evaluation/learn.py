"""``ghosttype eval --learn-from``: a memory filled from the user's files.

The simulated user then types with the memory wired as the daemon wires it
(``Decoder(MemoryLM(model, memory))``, :mod:`daemon.memory.cache_lm`).  Each
file is learned as the daemon learns a stretch that typed it
(:func:`daemon.memory.learner.learn_text`: one piece, line by line, of at most
:data:`~daemon.memory.store.MAX_PIECE_CHARS`), read as the simulated user
would have typed it (prose as one paragraph, code with its lines:
:func:`daemon.evaluation.simulate.as_typed`), in the order given, a folder's
files sorted by path.

Reading is bounded, so pointing it at a huge folder is safe: at most the
memory's size in characters in all, :data:`MAX_FILE_BYTES` of each file,
:data:`MAX_FILES` files looked at and :data:`MAX_SECONDS` of walking and
reading; hidden folders (``.git``...) are not entered; binary files (a NUL
byte) and files that are not UTF-8 are skipped.  Only counts are reported.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import sys
import time
from typing import Callable, Iterable, Iterator, Optional, Sequence

from daemon.memory.cache_lm import CacheParams
from daemon.memory.history import HistoryParams
from daemon.memory.learner import learn_text
from daemon.memory.store import Memory

MAX_FILE_BYTES = 1_000_000  #: read at most this much of one file
MAX_FILES = 10_000  #: files looked at, in all
MAX_SECONDS = 5.0  #: walking and reading stop after this long


@dataclasses.dataclass
class Learned:
    """What ``--learn-from`` read (counts only)."""

    files: int = 0  #: files whose text went into the memory
    chars: int = 0  #: characters put into the memory
    skipped: int = 0  #: binary, not UTF-8, unreadable or empty files
    stopped: str = ""  #: why reading stopped early ("" when every file was read)

    def line(self) -> str:
        out = f"learned {self.chars:,} characters from {self.files} file{'s' if self.files != 1 else ''}"
        if self.skipped:
            out += f" ({self.skipped} skipped: binary, not UTF-8 or unreadable)"
        if self.stopped:
            out += f"; stopped: {self.stopped}"
        return out

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


def _walk(root: pathlib.Path) -> Iterator[pathlib.Path]:
    """The files under ``root`` in path order, hidden folders and files left out."""
    if not root.is_dir():
        yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith("."):
                yield pathlib.Path(dirpath, name)


def read_text(path: pathlib.Path, limit: int = MAX_FILE_BYTES) -> Optional[str]:
    """The first ``limit`` bytes of ``path`` as UTF-8 text (a character cut
    at the limit is dropped); None for a binary or undecodable file."""
    try:
        with open(path, "rb") as f:
            data = f.read(limit)
    except OSError:
        return None
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(data) == limit and exc.start >= len(data) - 3 and exc.reason == "unexpected end of data":
            return data[:exc.start].decode("utf-8", errors="strict")
        return None


def learn_from(paths: Sequence[str], memory: Memory, as_typed: Callable[[str, str], str],
               clock: Callable[[], float] = time.monotonic, max_seconds: float = MAX_SECONDS,
               max_files: int = MAX_FILES) -> Learned:
    """Fill ``memory`` from the files at ``paths`` (see the module docstring);
    ``as_typed(text, file_name)`` is the text as the simulated user types it."""
    learned = Learned()
    budget = memory.max_chars - len(memory)
    deadline = clock() + max_seconds
    looked = 0
    for path in _files(paths):
        if clock() > deadline:
            learned.stopped = f"after {max_seconds:g} s"
            break
        if looked >= max_files:
            learned.stopped = f"after {max_files:,} files"
            break
        if budget <= 0:
            learned.stopped = f"the memory is full ({memory.max_chars:,} characters)"
            break
        looked += 1
        raw = read_text(path)
        if raw is None:
            learned.skipped += 1
            continue
        text = as_typed(raw, path.name)[:budget]
        if learn_text(memory, text):
            learned.files += 1
            learned.chars += len(text)
            budget -= len(text)
        else:
            learned.skipped += 1
    return learned


def _files(paths: Iterable[str]) -> Iterator[pathlib.Path]:
    for name in paths:
        yield from _walk(pathlib.Path(name))


#: ``--learn-params`` names that go to :class:`~daemon.memory.history.HistoryParams` (``history.min_context=24``);
#: ``history=off`` turns history completion off
HISTORY_PREFIX = "history."


def _parse_fields(cls: type, items: list[tuple[str, str]], prefix: str = "") -> object:
    fields = {f.name: f.type for f in dataclasses.fields(cls)}
    values: dict[str, object] = {}
    for name, value in items:
        if name not in fields or not value:
            names = ", ".join(prefix + f for f in fields)
            raise ValueError(f"--learn-params takes NAME=VALUE pairs of {names}; got {prefix + name}={value}")
        kind = int if fields[name] in (int, "int") else float
        try:
            values[name] = kind(value)
        except ValueError:
            raise ValueError(f"--learn-params: {prefix + name} takes a number, got {value!r}") from None
    try:
        return cls(**values)
    except ValueError as exc:
        raise ValueError(f"--learn-params: {exc}") from None


def parse_learn_params(spec: Optional[str]) -> tuple[CacheParams, Optional[HistoryParams]]:
    """``--learn-params lam_max=0.8,beta=0.5,history.min_context=24,...``: the fields of
    :class:`~daemon.memory.cache_lm.CacheParams`, and prefixed with ``history.`` those of
    :class:`~daemon.memory.history.HistoryParams` (``history=off``: no history completion); the
    defaults without it."""
    cache: list[tuple[str, str]] = []
    history: list[tuple[str, str]] = []
    off = False
    for item in (spec or "").split(","):
        if not item.strip():
            continue
        name, _, value = (part.strip() for part in item.partition("="))
        if name == "history":
            if value not in ("off", "on"):
                raise ValueError(f"--learn-params: history takes on or off, got {value!r}")
            off = value == "off"
        elif name.startswith(HISTORY_PREFIX):
            history.append((name[len(HISTORY_PREFIX):], value))
        else:
            cache.append((name, value))
    cache_params = _parse_fields(CacheParams, cache)
    if off and history:
        raise ValueError("--learn-params: history=off leaves no history.* to set")
    return cache_params, None if off else _parse_fields(HistoryParams, history, HISTORY_PREFIX)


def parse_cache_params(spec: Optional[str]) -> CacheParams:
    """The :class:`~daemon.memory.cache_lm.CacheParams` of ``--learn-params`` (:func:`parse_learn_params`)."""
    return parse_learn_params(spec)[0]


def learned_memory(paths: Sequence[str], params_spec: Optional[str] = None) -> tuple[Memory, CacheParams, Learned]:
    """A fresh memory filled from ``paths`` as the simulated user types
    them, with the cache parameters of ``--learn-params``.  Raises
    ValueError for a path that does not exist or a bad spec."""
    from daemon.evaluation.simulate import as_typed, kind_of

    cache_params = parse_cache_params(params_spec)
    for name in paths:
        if not pathlib.Path(name).exists():
            raise ValueError(f"no such file or folder: {name}")
    memory = Memory()
    learned = learn_from(paths, memory, lambda text, name: as_typed(text, kind_of(name)))
    return memory, cache_params, learned


def eval_memory(learn_from: Optional[Sequence[str]], learn_params: Optional[str], server: bool,
                learn_typed: bool = False
                ) -> tuple[Optional[Memory], Optional[CacheParams], Optional[HistoryParams], Optional[Learned]]:
    """``ghosttype eval``'s ``--learn-from``, ``--learn-typed`` and ``--learn-params``: (memory, cache
    params, history completion's params or None where it is off, what was read or None), Nones without
    either flag; ``--learn-typed`` alone starts with an empty memory.  A mistake in them is a
    :class:`~daemon.usage.UsageError`."""
    from daemon.usage import UsageError

    if not learn_from and not learn_typed:
        if learn_params:
            raise UsageError("--learn-params goes with --learn-from or --learn-typed")
        return None, None, None, None
    if server:
        raise UsageError("--learn-from and --learn-typed mix the memory into a local model's probabilities: "
                         "give them without --server")
    try:
        cache_params, history_params = parse_learn_params(learn_params)
        memory, _, learned = learned_memory(learn_from) if learn_from else (Memory(), None, None)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if learned is not None:
        print(learned.line(), file=sys.stderr)
    return memory, cache_params, history_params, learned
