"""Changing the config file from a program (the settings window, "Off in
<application>"), the way a careful person would edit it by hand.

The file is edited with tomlkit, which keeps every comment, blank line and
the order of the settings: a value that is set is replaced where it stands
(its trailing comment kept); a setting that is not in the file yet goes right
below its commented default (``# key = ...``, as the first-run template has
it), or at the end.  The result is checked with the project's own validation
(:func:`daemon.config.parse_config`) before anything is written; a bad value
raises :class:`~daemon.config.ConfigError` and the file stays as it was.
Writing replaces the file in one step (:func:`daemon.atomic_write.replace_text`:
a private temporary file renamed over it), so the running daemon's watcher
never reads half a file; a config file that is a symbolic link is written
through, and keeps its permissions (0600 for a new one).
"""

from __future__ import annotations

import pathlib
import re
from typing import Any, Mapping, Optional, Union

import tomlkit
from tomlkit.exceptions import ParseError

from daemon.atomic_write import replace_text
from daemon.config import Config, default_config_path, default_template, load_config, parse_config

PathLike = Union[str, pathlib.Path]


def _read(path: pathlib.Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return default_template()


def _commented_default(key: str) -> re.Pattern:
    return re.compile(r"#\s*" + re.escape(key) + r"\s*=")


def _with_new_key(doc: tomlkit.TOMLDocument, key: str, value: Any) -> tomlkit.TOMLDocument:
    """A copy of ``doc`` with ``key`` added below its commented default (or at the end)."""
    pattern = _commented_default(key)
    out = tomlkit.document()
    placed = False
    waiting = False  #: the commented default is a list: its closing "# ]" comes first
    for name, item in doc.body:
        if name is not None:
            out.add(name, item)
            continue
        out.add(item)
        line = item.as_string().strip() if isinstance(item, tomlkit.items.Comment) else ""
        if placed or not line:
            continue
        if pattern.match(line) and line.endswith("["):
            waiting = True
        elif pattern.match(line) or waiting and re.match(r"#\s*\]$", line):
            out.add(key, value)
            placed = True
    if not placed:
        out.add(key, value)
    return out


def _toml_value(value: Any) -> Any:
    """Lists of more than a few entries are written one entry a line."""
    if isinstance(value, (list, tuple)):
        array = tomlkit.array()
        array.extend(value)
        return array.multiline(len(value) > 3)
    return value


def render(text: str, changes: Mapping[str, Any]) -> str:
    """``text`` (a config file) with ``changes`` applied, comments and order
    kept.  Raises :class:`~daemon.config.ConfigError` when ``text`` is not
    TOML (the project's own message, with the line)."""
    try:
        doc = tomlkit.parse(text)
    except ParseError:
        parse_config(text)  # raises the ConfigError that names the line
        raise
    for key, value in changes.items():
        value = _toml_value(value)
        if key in doc:
            doc[key] = value
        else:
            doc = _with_new_key(doc, key, value)
    return tomlkit.dumps(doc)


def edit_config(changes: Mapping[str, Any], path: Optional[PathLike] = None) -> Config:
    """Write ``changes`` into the config file (default: the user's) and return
    the config it now holds.  Nothing is written when the result would be
    invalid: :class:`~daemon.config.ConfigError` says why."""
    p = pathlib.Path(path) if path is not None else default_config_path()
    new_text = render(_read(p), changes)
    config = parse_config(new_text, p)
    replace_text(p, new_text)
    return config


def toggle_denied(app_id: str, path: Optional[PathLike] = None) -> tuple[bool, Config]:
    """Add ``app_id`` to the denylist, or take it off when it is on; returns
    whether it is denied now and the new config.  The denylist written is
    the one in force (the defaults included when the file had none)."""
    app = app_id.strip().lower()
    if not app:
        raise ValueError("no application to switch")
    current = load_config(path if path is not None else default_config_path())
    denied = not current.is_denied(app)
    apps = sorted(set(current.denylist) | {app}) if denied else [a for a in current.denylist if a != app]
    return denied, edit_config({"denylist": apps}, path)
