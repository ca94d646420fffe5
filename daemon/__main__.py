"""ghosttype command line: ``run`` (default), ``complete``, ``eval``, ``config``, ``doctor``,
``autostart``, ``setup``, ``ibus``, ``kde``, ``settings``, ``stats``, ``forget``, ``tune``.

Each command lives in ``daemon.commands.<name>`` and exposes ``add_parser(subparsers)``
(which sets ``func``) ; this module only dispatches.  Heavy imports (llama.cpp,
Qt, pynput) happen inside the commands that need them, so ``complete`` and
``eval`` work without a display and ``--help`` is instant.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import Optional, Sequence

from daemon import __version__
from daemon.hardening import forbid_core_dumps

COMMANDS = ("run", "complete", "eval", "config", "doctor", "autostart", "setup", "ibus", "kde", "settings", "stats", "forget", "tune")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ghosttype",
        description="System-wide local autocomplete: ghost text at the caret, Tab to accept.",
    )
    parser.add_argument("--version", action="version", version=f"ghosttype {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = importlib.import_module(f"daemon.commands.{name.replace('-', '_')}")
        module.add_parser(sub)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    # Before anything is read: every command holds typed or user-given text in memory.
    forbid_core_dumps()
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        argv = ["run", *argv]
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
